"""`hermes-mlx bench`: pass latency on this machine, under contention, next to the alternatives.

The arguments only; hermes_mlx/bench/run.py plans and runs the benchmark.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from hermes_mlx.bench.run import DEFAULT_SCENARIOS


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "bench",
        help="time compaction passes under contention, next to mlx_lm.server and a load per pass",
        description="Replay recorded sessions through micro-compaction and time every pass: with no "
        "contention, busy CPUs, a memory-bandwidth hog, a concurrent main model, a GPU load (Apple "
        "Silicon only); after idle gaps; cold; and side by side with Hermes's own micro prompt on "
        "mlx_lm.server and with a model load per pass. Writes bench.json and bench.md (and PNGs "
        "when matplotlib is installed: pip install 'hermes-mlx[bench]').",
    )
    p.add_argument(
        "sessions",
        nargs="*",
        metavar="SESSION",
        help="transcripts (.jsonl) or Hermes state.db (default: the shipped sessions)",
    )
    p.add_argument("--session-id", default=None, help="which session of a Hermes state.db to replay")
    p.add_argument("--model", default=None, help="summarizer model: manifest name or mlx-lm folder (default: embedded)")
    p.add_argument(
        "--scenarios",
        default=None,
        help="comma-separated: none, cpuN (N busy loops), membw, main-model, gpu, sessions-N (N sessions at once), "
        f"alternating-N (N sessions taking turns) (default: {DEFAULT_SCENARIOS}; with --quick: none,cpu2)",
    )
    p.add_argument(
        "--quick", action="store_true", help="1 session, 4 passes a scenario, 1 mlx_lm.server pass (<10 min)"
    )
    p.add_argument("--out", default="bench-results", help="output folder (default: ./bench-results)")
    p.add_argument("--max-passes", type=int, default=None, help="passes per scenario and session")
    p.add_argument(
        "--idle-gaps",
        default=None,
        metavar="S,S,...",
        help="seconds of idle before each idle probe; 0 first (default: 0,1,5,30)",
    )
    p.add_argument(
        "--think-s",
        type=float,
        default=0.0,
        metavar="S",
        help="the user's think time: seconds of pause between turns in every replay of ours (default: 0)",
    )
    p.add_argument(
        "--ahead",
        action="store_true",
        help="compute each micro pass ahead, as soon as its input is known (in the think time with --think-s); "
        "visible_s is then what the caller still waits",
    )
    p.add_argument("--no-baselines", action="store_true", help="skip mlx_lm.server and load-per-pass")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="check the sessions and print what would run; no model is resolved or loaded",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hermes_mlx.bench import run as bench
    from hermes_mlx.errors import UsageError

    if not 0 <= args.think_s < float("inf"):
        raise UsageError(f"--think-s must be 0 or more seconds, got {args.think_s}")
    check_out(Path(args.out))
    plan = bench.make_plan(args.quick, args.max_passes, args.idle_gaps)
    scenarios = bench.choose_scenarios(args.scenarios, args.quick)
    paths = [Path(s) for s in args.sessions]
    sessions = bench.load_sessions(paths, args.session_id, args.quick)
    # many sessions at once draw on every session, --quick or not
    pool = bench.load_sessions(paths, args.session_id) if bench.many(scenarios) else sessions
    options = bench.Options(
        model=args.model,
        out=Path(args.out),
        quick=args.quick,
        baselines=not args.no_baselines,
        progress=not args.no_progress,
        think_s=args.think_s,
        ahead=args.ahead,
    )
    if args.dry_run:
        print(bench.describe(plan, scenarios, sessions, options, pool))
        return 0
    return bench.run(options, plan, scenarios, sessions, bench.resolve(args.model), pool)


def check_out(out: Path) -> None:
    """--out is a folder bench creates or adds to; checked before any work, since a run takes
    minutes to hours and its results are written only at the end."""
    import os

    from hermes_mlx.errors import UsageError

    if out.exists() and not out.is_dir():
        raise UsageError(
            f"--out {out} exists and is not a folder (bench writes bench.json, bench.md and plots into one)"
        )
    existing = out
    while not existing.exists() and existing != existing.parent:  # the folder that will hold the new ones
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"--out {out}: {existing} is not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"--out {out}: {existing} is not writable")
