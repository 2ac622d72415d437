"""`hermes-mlx report` at scale: time and peak memory over many distinct session ids, and over
telemetry lines that carry a large payload (issue 28: 80,000 ids took 80 s when each new id was
looked up in a list; 1,500 one-MiB lines held 1.5 GB when every payload was kept).

    PYTHONPATH=. python benchmarks/bench_report.py [--ids 80000] [--big-lines 1500] [--line-kib 1000]

Prints, for each log: lines, seconds to read and summarize, and the peak of Python allocations
(tracemalloc) while doing it. The logs are written to a temporary folder and removed.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import tracemalloc
from pathlib import Path

from hermes_mlx.compactor import log_report as report


def line(session_id: str, pad: int = 0) -> str:
    payload = {"outcome": "absorbed", "session_id": session_id, "tokens_before": 900, "tokens_after": 400}
    if pad:
        payload["note"] = "x" * pad  # a field report does not read: it must not be kept
    return "micro compaction telemetry: " + json.dumps(payload) + "\n"


def measure(path: Path) -> tuple[float, float, int]:
    """(seconds, peak MiB, sessions) for reading `path` and formatting its report: timed in one
    run, its allocations traced in another (tracemalloc slows every allocation)."""

    def once() -> int:
        result = report.read_logs([path])
        report.format_report(result, per_session=False)
        return len(report.summarize(result.records).sessions)

    started = time.perf_counter()
    sessions = once()
    seconds = time.perf_counter() - started
    tracemalloc.start()
    once()
    peak = tracemalloc.get_traced_memory()[1] / (1 << 20)
    tracemalloc.stop()
    return seconds, peak, sessions


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ids", type=int, default=80_000, help="distinct session ids, one line each")
    ap.add_argument("--big-lines", type=int, default=1_500, help="lines with a large payload")
    ap.add_argument("--line-kib", type=int, default=1_000, help="payload size of each large line (KiB, under 1 MiB)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ids = Path(tmp) / "ids.log"
        ids.write_text("".join(line(f"session-{i:08d}") for i in range(args.ids)))
        big = Path(tmp) / "big.log"
        with big.open("w") as fh:
            for i in range(args.big_lines):
                fh.write(line(f"s{i % 7}", pad=args.line_kib * 1024 - 200))
        for name, path, lines in (("distinct ids", ids, args.ids), ("large lines", big, args.big_lines)):
            seconds, peak, sessions = measure(path)
            size = path.stat().st_size / (1 << 20)
            print(
                f"{name}: {lines:,} lines ({size:,.0f} MiB), {sessions:,} sessions: {seconds:.2f} s, peak {peak:.1f} MiB"
            )


if __name__ == "__main__":
    main()
