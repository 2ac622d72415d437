"""hermes-mlx: an offline summarizer for Hermes Agent's context compaction, on MLX."""

__version__ = "0.1.0"
