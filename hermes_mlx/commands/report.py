"""`hermes-mlx report`: summarize compaction telemetry from our logs or Hermes's agent.log."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys

from hermes_mlx.compactor import log_report as report
from hermes_mlx.integrations.hermes_config import agent_log_path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "report",
        help="summarize compaction telemetry (pass count, outcomes, tokens saved, durations, occupancy)",
        description="Read `micro compaction telemetry: {json}` and batch `compaction telemetry: {json}` "
        "lines from log files and print pass count, outcome mix, net tokens saved, mean absorbed "
        "exchange size, pass duration p50/p95/max and occupancy over passes.",
    )
    p.add_argument(
        "logs",
        nargs="*",
        metavar="LOG",
        help="log files (`-` for stdin, .gz allowed); default: $HERMES_HOME/logs/agent.log",
    )
    p.add_argument("--per-session", action="store_true", help="one summary and table per session_id")
    p.add_argument("--json", action="store_true", help="print the summary (and per-session summaries) as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    paths = args.logs or [str(agent_log_path())]
    try:
        result = report.read_logs(paths)
    except OSError as exc:
        name = exc.filename or paths[0]
        print(f"hermes-mlx report: cannot read {name}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if args.json:
        out = {"bad_lines": result.bad_lines, "summary": dataclasses.asdict(report.summarize(result.records))}
        if args.per_session:
            out["sessions"] = {
                sid: dataclasses.asdict(report.summarize(recs))
                for sid, recs in report.group_by_session(result.records).items()
            }
        text = json.dumps(out, indent=2)
    else:
        text = report.format_report(result, per_session=args.per_session)
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `hermes-mlx report | head` is fine
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
