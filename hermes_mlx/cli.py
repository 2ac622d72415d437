"""`hermes-mlx`: a thin command line over the library. Each subcommand lives in hermes_mlx/commands/."""

from __future__ import annotations

import argparse
import importlib
import sys

# Each module has `register(subparsers)`, which adds its parser(s) and sets `func(args) -> int`.
COMMANDS = [
    "generate",
    "models",
    "doctor",
    "compact",
    "report",
    "serve",
    "setup_hermes",
    "bench",
    "fidelity",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hermes-mlx", description=__doc__)
    subparsers = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"hermes_mlx.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"hermes_mlx.commands.{name}":
                raise
            continue
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command. The project's expected errors are caught here, once: one line
    `hermes-mlx <command>: <message>` on stderr, exit 2 for bad input, 1 for a runtime failure."""
    from hermes_mlx.engine.errors import (
        EngineError,
        InvalidRequest,
        ModelNotFound,
        UnsupportedModel,
    )
    from hermes_mlx.errors import HermesMLXError

    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (HermesMLXError, EngineError) as exc:
        if isinstance(exc, HermesMLXError):
            code = exc.exit_code
        else:
            code = 2 if isinstance(exc, (InvalidRequest, ModelNotFound, UnsupportedModel)) else 1
        message = " ".join(str(exc).split()) or type(exc).__name__
        print(f"hermes-mlx {args.command}: {message}", file=sys.stderr)
        return code


if __name__ == "__main__":
    sys.exit(main())
