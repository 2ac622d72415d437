"""`hermes-mlx fidelity`: replay sessions with the real summarizer and report what its summaries
keep and whether they tell the truth (facts kept, faithfulness, contradictions, inventions)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    from .options import int_at_least

    p = subparsers.add_parser(
        "fidelity",
        help="replay sessions through compaction and report facts kept, faithfulness, contradictions, inventions",
        description="Replay each session (default: the shipped sessions and the adversarial set) through "
        "micro compaction (or --mode batch, which ends with a forced batch pass) with the real summarizer, "
        "then score the final summary against the session: planted facts kept (summary or live context), "
        "faithful narrative lines, constraints contradicted, names and numbers invented, and the "
        "faithfulness gate's kept/dropped counts.",
    )
    p.add_argument(
        "sessions",
        nargs="*",
        metavar="SESSION",
        help="OpenAI-format JSONL sessions (a NAME.facts.yaml beside each is used)",
    )
    p.add_argument("--mode", choices=("micro", "batch"), default="micro")
    p.add_argument(
        "--model", default=None, help="summarizer model: manifest name or mlx-lm folder (default: the embedded model)"
    )
    p.add_argument(
        "--context-limit",
        type=int_at_least(1024),
        default=32768,
        help="the main model's window in tokens (at least 1024)",
    )
    p.add_argument(
        "--tail-tokens",
        type=int_at_least(0),
        default=512,
        help="recent tokens kept out of compaction (small, so short sessions get passes; 0: the compactor's default)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object: a row per session")
    p.add_argument(
        "--real",
        action="store_true",
        help="the shipped sessions real agents wrote (benchmarks/sessions/real/) instead of the default set",
    )
    p.add_argument(
        "--ranking",
        choices=("code", "model"),
        default="code",
        help="who ranks the findings a batch summary keeps: code alone (default) or the model, one prefill a pass",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hermes_mlx.bench.fidelity import default_sessions, score_session, table
    from hermes_mlx.bench.shipped import REAL_DIR, shipped_sessions
    from hermes_mlx.compactor.sessions import SessionFormatError
    from hermes_mlx.compactor.transcript import TranscriptError
    from hermes_mlx.summarizer.summarizer import MLXSummarizer

    paths = [Path(p) for p in args.sessions] or (shipped_sessions(REAL_DIR) if args.real else default_sessions())
    if not paths:
        print("hermes-mlx fidelity: no sessions", file=sys.stderr)
        return 2
    scores, failed = [], 0
    for path in paths:
        try:
            scored = score_session(
                path,
                MLXSummarizer(model=args.model, ranking=args.ranking),
                mode=args.mode,
                context_limit=args.context_limit,
                tail_tokens=args.tail_tokens or None,
            )
        except (SessionFormatError, TranscriptError) as exc:
            print(f"hermes-mlx fidelity: {path}: {exc}", file=sys.stderr)
            failed += 1
            continue
        scores.append(scored)
        print(f"{path.stem}: {scores[-1].passes} passes", file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps({"mode": args.mode, "sessions": [s.to_dict() for s in scores]}, indent=2, default=str))
    else:
        print(table(scores))
    if failed and not scores:
        return 2
    if failed:  # the table looks complete; the status must not
        print(f"hermes-mlx fidelity: {failed} of {len(paths)} sessions failed", file=sys.stderr)
        return 1
    return 0
