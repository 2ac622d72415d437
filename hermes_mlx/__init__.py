"""hermes-mlx: an offline summarizer for Hermes Agent's context compaction, on MLX."""

from hermes_mlx.engine.blas import ensure_fast_blas

__version__ = "0.1.0"

# Before anything in this process runs an MLX matmul on the CPU (see engine/blas.py).
ensure_fast_blas()
