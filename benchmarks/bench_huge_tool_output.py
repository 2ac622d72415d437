"""Does compaction's cost follow the size of one tool output? Time `hermes-mlx compact` on a session
whose one tool result is N MB, and report its peak resident memory and wall time.

    python benchmarks/bench_huge_tool_output.py [--mb 50] [--modes micro,batch] [--context-limit 8192]

Why it exists: issue 20 item 4 measured 12.8 GB and 262 s for one 49 MB tool output, because every
count tokenized the whole text. The target is under 1.5 GB and 30 s for 50 MB on the 2-core machine.
Each mode runs `compact` as its own process (with `--store` and `--out`), so the figures are that
process's alone: peak RSS is the child's ru_maxrss, time is wall time including the model load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hermes_mlx.compactor import telemetry

LINE = "2026-01-01T00:00:{s:02d}Z build[{i}] compiling module_{i}.c -> obj/module_{i}.o ok ({i} of many)\n"


def tool_output(mb: float) -> str:
    """A build log of about `mb` megabytes, with one error line near the end (a fact to keep)."""
    target = int(mb * 1_000_000)
    lines, size, i = [], 0, 0
    while size < target:
        line = LINE.format(s=i % 60, i=i)
        lines.append(line)
        size += len(line)
        i += 1
    lines.insert(len(lines) - 3, "src/parser.c:88: error: expected ';' before 'return'\n")
    return "".join(lines)


def session(mb: float) -> list[dict]:
    """A short session around one huge tool result: enough later turns that micro has the
    exchange to absorb (a user message closes it, the tail moves past it) and batch is over its
    threshold. tests/test_huge_tool_output.py compacts the same session (5 MB), spying on the
    tokenizer."""

    def call(cid: str, command: str) -> dict:
        return {
            "id": cid,
            "type": "function",
            "function": {"name": "terminal", "arguments": json.dumps({"command": command})},
        }

    out = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Set up the project."},  # the protected head: the huge output is after it
        {"role": "assistant", "content": "Checked out; ready to build."},
        {"role": "user", "content": "Build the project and tell me what fails."},
        {"role": "assistant", "content": "Running the build.", "tool_calls": [call("c1", "make all")]},
        {"role": "tool", "tool_call_id": "c1", "content": tool_output(mb)},
        {"role": "assistant", "content": "The build fails in src/parser.c line 88: a missing semicolon."},
    ]
    for k in range(2, 8):
        out += [
            {"role": "user", "content": f"Step {k}: look at the next file and report."},
            {"role": "assistant", "content": f"Reading file {k}.", "tool_calls": [call(f"c{k}", f"cat src/f{k}.c")]},
            {"role": "tool", "tool_call_id": f"c{k}", "content": f"int f{k}(void) {{ return {k}; }}\n" * 20},
            {"role": "assistant", "content": f"File {k} defines f{k}, which returns {k}."},
        ]
    return out


def run_mode(path: Path, mode: str, context_limit: int, work: Path) -> dict:
    """One `compact` run in a child process; its peak RSS comes from RUSAGE_CHILDREN, so each
    mode runs under its own short-lived parent to keep the figures apart."""
    code = (
        "import resource, subprocess, sys, json, time\n"
        "t = time.monotonic()\n"
        "rc = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
        "print(json.dumps({'rc': rc, 'wall_s': round(time.monotonic() - t, 1),"
        " 'peak_rss_mb': round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)}))\n"
    )
    cmd = [
        sys.executable,
        "-m",
        "hermes_mlx.cli",
        "compact",
        str(path),
        "--mode",
        mode,
        "--context-limit",
        str(context_limit),
        "--no-progress",
        "--store",
        str(work / f"{mode}.db"),
        "--out",
        str(work / f"{mode}.jsonl"),
        "--log",
        str(work / f"{mode}.log"),
    ]
    done = subprocess.run([sys.executable, "-c", code, *cmd], capture_output=True, text=True, check=True)
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    log = (work / f"{mode}.log").read_text() if (work / f"{mode}.log").exists() else ""
    payloads = [telemetry.parse_line(line) for line in log.splitlines()]
    outcomes = [p.get("outcome") for p in payloads if p]
    return {"mode": mode, **figures, "passes": len(outcomes), "outcomes": sorted(set(outcomes))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50.0, help="size of the one tool output (MB)")
    parser.add_argument("--modes", default="micro,batch")
    parser.add_argument("--context-limit", type=int, default=8192)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        path = work / "huge.jsonl"
        started = time.monotonic()
        with path.open("w") as fh:
            for message in session(args.mb):
                fh.write(json.dumps(message) + "\n")
        print(f"session: {path.stat().st_size / 1e6:.1f} MB written in {time.monotonic() - started:.1f} s", flush=True)
        results = [run_mode(path, mode, args.context_limit, work) for mode in args.modes.split(",")]
    for r in results:
        print(
            f"{r['mode']:5}  rc {r['rc']}  peak RSS {r['peak_rss_mb']:,} MB  wall {r['wall_s']} s"
            f"  passes {r['passes']} ({', '.join(r['outcomes']) or '-'})"
        )
    print(json.dumps({"mb": args.mb, "context_limit": args.context_limit, "results": results}))
    return 0 if all(r["rc"] == 0 for r in results) else 1


if __name__ == "__main__":
    os.environ.setdefault("HERMES_MLX_HOME", str(Path(__file__).resolve().parents[1] / ".hermes-mlx-test-home"))
    sys.exit(main())
