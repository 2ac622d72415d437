"""The README's main command, read from README.md itself, for CI's newcomer check and the tests.

The command sits between `<!-- main-command -->` and `<!-- /main-command -->` in README.md, so
the line a new user copies is the line CI runs (issue 23): they cannot drift apart.

As a script (.ci/run): run that command the way a new user would, with the `hermes-mlx` of the
given bin folder first on PATH, a fresh HERMES_MLX_HOME (so the model is fetched and converted)
and an empty working folder (so nothing comes from this checkout); exit non-zero unless the
command succeeds and prints a non-empty summary.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hermes_mlx.commands.compact import SUMMARY_HEADING

README = Path(__file__).resolve().parent.parent / "README.md"
START, END = "<!-- main-command -->", "<!-- /main-command -->"


def main_command(readme: Path = README) -> str:
    """The one command line inside the README's main-command block (its ```bash fence dropped)."""
    text = readme.read_text(encoding="utf-8")
    if text.count(START) != 1 or text.count(END) != 1:
        raise ValueError(f"{readme}: expected one {START} ... {END} block")
    block = text.split(START, 1)[1].split(END, 1)[0]
    lines = [line.strip() for line in block.splitlines()]
    commands = [line for line in lines if line and not line.startswith(("```", "#"))]
    if len(commands) != 1:
        raise ValueError(f"{readme}: the main-command block must hold one command line, found {commands}")
    return commands[0]


def main_argv(readme: Path = README) -> list[str]:
    return shlex.split(main_command(readme))


def printed_summary(stdout: str) -> str:
    """The summary `compact` printed after its heading; empty when there is none."""
    if SUMMARY_HEADING not in stdout:
        return ""
    return stdout.split(SUMMARY_HEADING, 1)[1].strip()


def run_as_newcomer(bin_dir: Path, timeout: float) -> int:
    argv = main_argv()
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as cwd:
        env = {**os.environ, "HERMES_MLX_HOME": home, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
        env.pop("PYTHONPATH", None)  # the wheel's own files, not a checkout's
        print(f"newcomer: {shlex.join(argv)} (fresh HERMES_MLX_HOME, from {bin_dir})", flush=True)
        started = time.monotonic()
        proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
        elapsed = time.monotonic() - started
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr[-4000:])
    summary = printed_summary(proc.stdout)
    if proc.returncode != 0:
        print(f"newcomer: the README's main command exited {proc.returncode}", file=sys.stderr)
        return 1
    if not summary:
        print("newcomer: the README's main command printed no summary", file=sys.stderr)
        return 1
    print(f"newcomer: ok in {elapsed:.0f}s, a {len(summary)}-character summary", flush=True)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", type=Path, required=True, help="the folder holding the hermes-mlx to run")
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    sys.exit(run_as_newcomer(args.bin.resolve(), args.timeout))
