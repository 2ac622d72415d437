"""`hermes-mlx bench`: per-pass latency under contention, side by side with the alternatives.

run.py plans and runs it, shipped.py finds the shipped sessions and their planted facts,
contention.py starts and always stops the load processes, harness.py runs the passes,
baselines.py runs what users do today (mlx_lm.server with Hermes's prompt; a load per pass),
results.py writes JSON, markdown and plots, fidelity.py scores what the summaries keep.
"""
