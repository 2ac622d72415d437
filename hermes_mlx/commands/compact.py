"""`hermes-mlx compact`: replay a recorded session turn by turn, compacting as it goes."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from hermes_mlx.compactor import telemetry


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "compact",
        help="replay a recorded session (OpenAI-format JSONL) with compaction",
        description="Replay SESSION.jsonl one agent turn at a time, compacting after each turn as an "
        "agent would, then print the per-pass table.",
    )
    p.add_argument("session", metavar="SESSION.jsonl", help="one OpenAI chat message object a line (or a Hermes state.db)")
    p.add_argument("--session-id", default=None, help="which session of a state.db to replay")
    p.add_argument("--model", default=None, help="summarizer model: manifest name or mlx-lm folder (default: the embedded model)")
    p.add_argument("--mode", choices=("micro", "batch"), default="micro")
    p.add_argument("--every-n-turns", type=int, default=1, help="micro cadence (values below 1 mean 1)")
    p.add_argument("--context-limit", type=int, default=32768, help="the main model's window in tokens")
    p.add_argument("--focus", default=None, help="batch: a topic to keep in most detail")
    p.add_argument("--out", default=None, metavar="OUT.jsonl", help="write the final transcript here")
    p.add_argument("--store", default=None, metavar="DB", help="keep a SQLite session store in step (originals stay searchable)")
    p.add_argument("--log", default=None, metavar="LOG", help="append telemetry lines to this file")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def build_summarizer(args: argparse.Namespace):
    """The real summarizer, imported late: loading MLX is slow and not needed for --help."""
    from hermes_mlx.summarizer.summarizer import MLXSummarizer

    return MLXSummarizer(model=args.model)


def _log_handler(path: str) -> logging.Handler:
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.setLevel(logging.INFO)
    return handler


def run(args: argparse.Namespace) -> int:
    from hermes_mlx.compactor.replay import format_table, replay, save_session
    from hermes_mlx.compactor.sessions import SessionFormatError, load_session
    from hermes_mlx.compactor.transcript import TranscriptError, repair

    try:
        messages = load_session(args.session, args.session_id)
        repair(messages)  # fail fast on a transcript that cannot be interpreted
    except SessionFormatError as exc:
        print(f"hermes-mlx compact: {exc}", file=sys.stderr)
        return 2
    except TranscriptError as exc:
        print(f"hermes-mlx compact: {args.session}: {exc}", file=sys.stderr)
        return 2

    try:
        summarizer = build_summarizer(args)
    except Exception as exc:
        print(f"hermes-mlx compact: cannot load the summarizer: {exc}", file=sys.stderr)
        return 1

    logger = logging.getLogger(telemetry.LOGGER_NAME)
    handler = _log_handler(args.log) if args.log else None
    previous_level = logger.level
    if handler is not None:
        logger.addHandler(handler)
        if logger.getEffectiveLevel() > logging.INFO:
            logger.setLevel(logging.INFO)

    store = None
    if args.store:
        from hermes_mlx.compactor.store import SessionStore, StoreError

        try:
            store = SessionStore(args.store)
        except StoreError as exc:
            print(f"hermes-mlx compact: {exc}", file=sys.stderr)
            return 2

    bar = None
    if not args.no_progress:
        from tqdm import tqdm

        bar = tqdm(total=None, unit="turn", desc="compact", file=sys.stderr, leave=False)

    def on_turn(done: int, total: int) -> None:
        if bar is not None:
            bar.total = total
            bar.update(done - bar.n)

    def on_pass(record) -> None:
        if bar is not None:
            bar.set_postfix_str(f"passes {record.number}, {record.outcome}")

    try:
        result = replay(
            messages,
            summarizer,
            mode=args.mode,
            every_n_turns=args.every_n_turns,
            context_limit=args.context_limit,
            focus=args.focus,
            session_id=args.session_id or Path(args.session).stem,
            main_model="",
            on_pass=on_pass,
            on_turn=on_turn,
            store=store,
        )
    except TranscriptError as exc:
        print(f"hermes-mlx compact: {args.session}: {exc}", file=sys.stderr)
        return 2
    finally:
        if bar is not None:
            bar.close()
        if store is not None:
            store.close()
        if handler is not None:
            logger.removeHandler(handler)
            handler.close()
            logger.setLevel(previous_level)

    print(format_table(result.records))
    print(
        f"\n{result.turns} turns, {len(result.records)} passes, "
        f"{len(result.original)} -> {len(result.messages)} messages, "
        f"net tokens saved {result.tokens_saved:+,}"
        + (f", {len(result.repairs)} repairs to the input" if result.repairs else "")
    )
    if args.out:
        save_session(result.messages, args.out)
        print(f"wrote {args.out}")
    return 0
