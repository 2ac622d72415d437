"""What does one recall call cost when the archive holds a huge one-line tool output? Time
`RecallIndex.search` on a session whose archived tool result is one N MB line, and report each
call's wall time and the process's peak resident memory.

    python benchmarks/bench_recall.py [--mb 20,50] [--calls 3]

Why it exists: issue 28 item 7 measured 4-5 s a call for 20 MB and 12-13 s (0.65 GB) for 50 MB,
because every call re-read the session's whole history and redacted a whole matching line before
cutting its window. Each size runs in its own process, so peak RSS is that size's alone. The
first call includes indexing the archived rows (done once); the later calls are what every
recall after it costs.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hermes_mlx.compactor.store import SessionStore
from hermes_mlx.integrations.recall import RecallIndex

NEEDLE = "src/parser.c:88: error: expected ';' before 'return'"


def one_line(mb: float) -> str:
    """A minified build report of about `mb` megabytes on one line, the needle near the end."""
    target = int(mb * 1_000_000)
    unit = '{"module":"module_%d.c","status":"ok","ms":%d},'
    parts, size, i = [], 0, 0
    while size < target:
        part = unit % (i, i % 997)
        parts.append(part)
        size += len(part)
        i += 1
    parts.insert(len(parts) - 40, json.dumps({"error": NEEDLE}) + ",")
    return "[" + "".join(parts) + "]"


def child(mb: float, calls: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "engine.db"
        store = SessionStore(path)
        before = [
            {"role": "system", "content": "You are a coding agent."},
            {"role": "user", "content": "Build it and tell me what fails."},
            {"role": "assistant", "content": "Running the build.", "tool_calls": [_call()]},
            {"role": "tool", "tool_call_id": "c1", "content": one_line(mb)},
            {"role": "assistant", "content": "The parser fails to compile."},
            {"role": "user", "content": "Fix it."},
        ]
        after = [before[0], {"role": "assistant", "content": "[CONTEXT COMPACTION] summary"}, before[5]]
        assert store.sync("s1", before) and store.archive_and_compact("s1", after)
        index = RecallIndex(store, path)
        times = []
        found = False
        for _ in range(calls):
            started = time.perf_counter()
            answer = index.search("s1", "expected before return parser.c")
            times.append(round(time.perf_counter() - started, 3))
            found = found or any("parser.c:88" in m["text"] for m in answer["matches"])
        index.close()
        store.close()
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"mb": mb, "calls_s": times, "found": found, "peak_rss_mb": round(peak_kb / 1024)}


def _call() -> dict:
    return {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": '{"command": "make"}'}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", default="20,50", help="sizes of the one-line output, comma-separated")
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--child", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child, args.calls)))
        return
    for mb in (float(x) for x in args.mb.split(",")):
        cmd = [sys.executable, __file__, "--child", str(mb), "--calls", str(args.calls)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        r = json.loads(out)
        first, *rest = r["calls_s"]
        later = f"{max(rest):.3f} s" if rest else "-"
        print(
            f"{r['mb']:g} MB one-line output: first call {first:.3f} s (indexes), later calls at most {later},"
            f" peak RSS {r['peak_rss_mb']} MB, needle found: {r['found']}"
        )


if __name__ == "__main__":
    main()
