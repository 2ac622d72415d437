"""Does a long session of short turns stay under its threshold, and does its store grow with the
transcript rather than with passes? Replay N short turns through `hermes-mlx compact` (micro, a
4,096-token window, with `--store`) and report the store's size and rows and the transcript's
share of its threshold at the end.

    python benchmarks/bench_long_session.py [--turns 1500] [--context-limit 4096] [--mode micro]

Why it exists: issue 20 item 5 measured, after ~1,500 short turns, a transcript at 613% of its
threshold (the merged user turns were kept verbatim and no batch pass brought it down) and a
69 MB store of 7,265 rows for ~30 KB of input (the merged user row and every superseded summary
saved again on every pass).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hermes_mlx.compactor import telemetry
from hermes_mlx.compactor.sessions import load_session
from hermes_mlx.compactor.transcript import make_counter, transcript_tokens


def session(turns: int) -> list[dict]:
    """Short turns, as a user steering an agent step by step: about 20 characters a message."""
    out = [{"role": "system", "content": "You are a coding agent."}]
    for n in range(turns):
        out += [{"role": "user", "content": f"step {n}: go on"}, {"role": "assistant", "content": f"Did step {n}."}]
    return out


def _counter():
    """The count the compactor used: the default model's tokenizer (Hermes's estimate without one)."""
    from hermes_mlx.summarizer.summarizer import MLXSummarizer

    return make_counter(MLXSummarizer().count_tokens)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1500)
    parser.add_argument("--context-limit", type=int, default=4096)
    parser.add_argument("--mode", choices=("micro", "batch"), default="micro")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        src, out, db, log = (work / n for n in ("long.jsonl", "out.jsonl", "store.db", "compact.log"))
        src.write_text("".join(json.dumps(m) + "\n" for m in session(args.turns)))
        cmd = [sys.executable, "-m", "hermes_mlx.cli", "compact", str(src), "--mode", args.mode, "--no-progress"]
        cmd += ["--context-limit", str(args.context_limit), "--store", str(db), "--out", str(out), "--log", str(log)]
        started = time.monotonic()
        done = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.monotonic() - started
        if done.returncode != 0:
            print(done.stderr[-2000:])
            return 1
        with sqlite3.connect(db) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            rows, active, markers_archived = conn.execute(
                "SELECT COUNT(*), SUM(active), SUM(active = 0 AND flags LIKE '%_compressed_summary%') FROM messages"
            ).fetchone()
        size = sum(p.stat().st_size for p in work.glob("store.db*"))
        payloads = [p for p in map(telemetry.parse_line, log.read_text().splitlines()) if p]
        final = load_session(out)
        threshold = int(args.context_limit * 0.8)
        share = transcript_tokens(final, _counter()) / threshold
        figures = {
            "turns": args.turns,
            "input_kb": round(src.stat().st_size / 1000, 1),
            "store_mb": round(size / 1e6, 2),
            "rows": rows,
            "active_rows": active,
            "archived_summaries": markers_archived,
            "passes": len(payloads),
            "batch_passes": sum(p.get("event") == "batch_compaction" for p in payloads),
            "final_share_of_threshold_pct": round(100 * share, 1),
            "max_occupancy_pct": max((p.get("occupancy_pct") or 0 for p in payloads), default=0),
            "wall_s": round(wall, 1),
            "turns_per_s": round(args.turns / wall, 1),
        }
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("HERMES_MLX_HOME", str(Path(__file__).resolve().parents[1] / ".hermes-mlx-test-home"))
    sys.exit(main())
