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
    p.add_argument("--mode", choices=("micro", "batch", "both"), default="micro", help="both: micro, then batch")
    p.add_argument(
        "--model", default=None, help="summarizer model: manifest name or mlx-lm folder (default: the embedded model)"
    )
    p.add_argument(
        "--context-limit",
        type=int_at_least(1024),
        default=None,
        help="the main model's window in tokens (at least 1024; default 32768, and with --real half of each "
        "session's own tokens, so compaction removes more than half of it)",
    )
    p.add_argument(
        "--tail-tokens",
        type=int_at_least(0),
        default=None,
        help="recent tokens kept out of compaction (default 512, so short sessions get passes; with --real "
        "the compactor's own tail; 0: the compactor's own)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object: a row per session")
    p.add_argument(
        "--real",
        action="store_true",
        help="score as real sessions: the shipped ones real agents wrote (benchmarks/sessions/real/ and real-2/) "
        "unless SESSIONs are given, at half of each session's tokens, with a per-agent table",
    )
    p.add_argument(
        "--per-agent",
        action="store_true",
        help="add the per-agent table (facts at stake kept by agent, the file name's first _ field); on with --real",
    )
    p.add_argument(
        "--ranking",
        choices=("code", "model"),
        default="code",
        help="who picks what a pass keeps: the findings ranker (default, no model call) or the model (batch: the order at the cut, one prefill; micro: the outcome sentence, a prefill a chunk)",
    )
    p.set_defaults(func=run)


RUN_MODES = {"micro": ("micro",), "batch": ("batch",), "both": ("micro", "batch")}


def run(args: argparse.Namespace) -> int:
    from hermes_mlx.bench.agents import agent_table, per_agent, real_sessions
    from hermes_mlx.bench.fidelity import default_sessions, score_session, table
    from hermes_mlx.compactor.sessions import SessionFormatError
    from hermes_mlx.compactor.transcript import TranscriptError
    from hermes_mlx.summarizer.summarizer import MLXSummarizer

    from . import compact

    # --real with SESSIONs scores those as the shipped real ones are (window rule, the compactor's
    # own tail, per-agent rows): how a user measures a session of an agent the corpus lacks
    paths = [Path(p) for p in args.sessions] or (real_sessions() if args.real else default_sessions())
    if not paths:
        print("hermes-mlx fidelity: no sessions", file=sys.stderr)
        return 2
    context_limit = args.context_limit or (None if args.real else 32768)
    tail_tokens = args.tail_tokens if args.tail_tokens is not None else (0 if args.real else 512)
    compact.build_summarizer(args)  # an absent or broken model is one error (exit 2) before any pass
    scores, failed = [], []
    for mode in RUN_MODES[args.mode]:
        for path in paths:
            if path in failed:  # one error a session, not one a mode
                continue
            try:
                scored = score_session(
                    path,
                    MLXSummarizer(model=args.model, ranking=args.ranking),
                    mode=mode,
                    context_limit=context_limit,
                    tail_tokens=tail_tokens or None,
                )
            except (SessionFormatError, TranscriptError) as exc:
                print(f"hermes-mlx fidelity: {path}: {exc}", file=sys.stderr)
                failed.append(path)
                continue
            scores.append(scored)
            print(f"{path.stem} ({mode}): {scored.passes} passes", file=sys.stderr, flush=True)
    agents = per_agent(scores) if args.real or args.per_agent else []
    if args.json:
        out = {"mode": args.mode, "sessions": [s.to_dict() for s in scores]}
        if agents:
            out["agents"] = [r.to_dict() for r in agents]
        print(json.dumps(out, indent=2, default=str))
    else:
        print(table(scores))
        if agents:
            print("\nfacts at stake kept, by agent:\n" + agent_table(agents))
    return _status(scores, len(failed), len(paths))


def _status(scores: list, failed: int, runs: int) -> int:
    """2 when no session could be replayed, 1 when some could not or any pass failed (the table
    looks complete; the status must not), else 0."""
    if failed and not scores:
        return 2
    if failed:
        print(f"hermes-mlx fidelity: {failed} of {runs} sessions failed", file=sys.stderr)
        return 1
    passes_failed = sum(len(s.failures) for s in scores)
    if passes_failed:
        print(
            f"hermes-mlx fidelity: {passes_failed} passes failed in {sum(bool(s.failures) for s in scores)} sessions",
            file=sys.stderr,
        )
        return 1
    return 0
