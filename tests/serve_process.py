"""`hermes-mlx serve` as a real process on a port of its choosing, for tests and benchmarks alike
(no pytest here: benchmarks/ imports it too, as it does tiny.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# `hermes-mlx serve` whether or not cli.COMMANDS lists it yet.
LAUNCH = (
    "import argparse, sys, hermes_mlx; from hermes_mlx.commands import serve; "
    "p = argparse.ArgumentParser(prog='hermes-mlx'); serve.register(p.add_subparsers()); "
    "a = p.parse_args(); sys.exit(a.func(a))"
)


def start_server(*args: str) -> tuple[subprocess.Popen, int]:
    """`hermes-mlx serve --port 0 *args` as a real process; returns it and the port it bound."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", LAUNCH, "serve", "--port", "0", *args],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=ROOT,
    )
    line = proc.stderr.readline()
    if "serving" not in line:
        proc.kill()
        raise AssertionError(f"server did not start: {line}{proc.stderr.read()}")
    port = int(line.rsplit(":", 1)[1].split("/")[0])
    return proc, port


def stop_server(proc: subprocess.Popen) -> None:
    """SIGTERM first (serve's own orderly shutdown), SIGKILL if it lingers: no run leaves a server behind."""
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
