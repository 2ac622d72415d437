"""Engine layer: load, cache and run MLX models. Lower layers never import higher ones.

Importing this package does not import MLX; the heavy modules load on first use so that the
CPU BLAS can be put in place first (see blas.py).
"""
