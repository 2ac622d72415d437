"""`hermes-mlx`: a thin command line over the library. Each subcommand lives in hermes_mlx/commands/."""

from __future__ import annotations

import argparse
import atexit
import importlib
import logging
import os
import sys
import traceback

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
    `hermes-mlx <command>: <message>` on stderr, exit 2 for bad input, 1 for a runtime failure.

    With no `argv` this is the `hermes-mlx` process itself, and it ends here (see _end)."""
    if argv is not None:
        return _run(argv)
    try:
        code = _run(None)
    except SystemExit:
        raise  # argparse: --help and usage errors, before any model work
    except BaseException:  # a bug: its traceback, and exit 1 as Python would give
        traceback.print_exc()
        code = 1
    _end(code)
    return code


def _end(code: int) -> None:
    """End the process with `code` once MLX is loaded, skipping the interpreter's teardown.

    MLX can abort the process in that teardown once a thread other than the engine's used it
    ("terminate called without an active exception", exit 134 instead of the command's
    status): seen here on Ctrl-C to `serve`, which counts tokens on pool threads (1 in 22
    tries), and in about half the runs of a script whose thread counted tokens. Exit handlers
    still run first (the engine quiesces its worker, bench stops its contention processes,
    logging flushes its files); only the teardown after them is skipped.
    """
    if "mlx.core" not in sys.modules:
        return
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if run_exit_handlers is not None:
        run_exit_handlers()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said
            pass
    os._exit(code)


def _run(argv: list[str] | None) -> int:
    from hermes_mlx.errors import HermesMLXError

    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except HermesMLXError as exc:  # engine errors included: each class carries its exit code
        code = exc.exit_code
        message = " ".join(str(exc).split()) or type(exc).__name__
        print(f"hermes-mlx {args.command}: {message}", file=sys.stderr)
        return code


if __name__ == "__main__":
    sys.exit(main())
