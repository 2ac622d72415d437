"""The `hermes-mlx` subcommands: each parses its arguments and calls the layers below; only cli.py imports them."""
