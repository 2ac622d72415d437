"""`hermes-mlx compact`: replay a recorded session turn by turn, compacting as it goes.

Everything that can be checked is checked before the first pass (a replay can take an hour on
a CPU): the output, log and store paths, the context limit and the model. Problems are raised
as the project's errors, which `cli.main` prints as one line; a run whose store fell out of
step, or whose every pass failed, ends non-zero with each distinct reason once, counted.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from hermes_mlx.compactor import telemetry
from hermes_mlx.errors import HermesMLXError, UsageError
from hermes_mlx.files import write_target

SUMMARY_HEADING = "final summary (what the agent reads in place of the compacted turns):"
MIN_CONTEXT_LIMIT = 1024  # below this no main model could hold a system prompt and one turn


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "compact",
        help="replay a recorded session (OpenAI-format JSONL) with compaction",
        description="Replay SESSION.jsonl one agent turn at a time, compacting after each turn as an "
        "agent would, then print the per-pass table.",
    )
    p.add_argument(
        "session",
        nargs="?",
        metavar="SESSION.jsonl",
        help="one OpenAI chat message object a line (or a Hermes state.db); or use --example",
    )
    p.add_argument(
        "--example",
        nargs="?",
        const="",
        default=None,
        metavar="NAME",
        help="replay a real session shipped with hermes-mlx instead of SESSION.jsonl (no NAME: list them)",
    )
    p.add_argument("--session-id", default=None, help="which session of a state.db to replay")
    p.add_argument(
        "--model", default=None, help="summarizer model: manifest name or mlx-lm folder (default: the embedded model)"
    )
    p.add_argument("--mode", choices=("micro", "batch"), default="micro")
    p.add_argument("--every-n-turns", type=int, default=1, help="micro cadence (values below 1 mean 1)")
    p.add_argument(
        "--context-limit",
        type=int,
        default=32768,
        help=f"the main model's window in tokens (at least {MIN_CONTEXT_LIMIT})",
    )
    p.add_argument("--focus", default=None, help="batch: a topic to keep in most detail")
    p.add_argument("--out", default=None, metavar="OUT.jsonl", help="write the final transcript here (atomically)")
    p.add_argument(
        "--in-place",
        action="store_true",
        help="write the final transcript over SESSION.jsonl itself (atomically); needed when --out is the input",
    )
    p.add_argument(
        "--store",
        default=None,
        metavar="DB",
        help="keep a SQLite session store in step (originals stay searchable); a killed run resumes from it",
    )
    p.add_argument("--restart", action="store_true", help="with --store: replay from the start instead of resuming")
    p.add_argument("--log", default=None, metavar="LOG", help="append telemetry lines to this file")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def build_summarizer(args: argparse.Namespace):
    """The real summarizer, imported late: loading MLX is slow and not needed for --help.

    The model is resolved and loaded here, before the first pass: an absent or broken model
    would otherwise fail every pass one by one and the run would look like it worked.
    """
    from hermes_mlx.engine.errors import (
        CorruptModel,
        EngineError,
        ModelNotFound,
        UnsupportedModel,
    )
    from hermes_mlx.engine.generate import generate, model_info
    from hermes_mlx.summarizer.summarizer import MLXSummarizer

    name = args.model or "the default model"
    try:
        model_info(args.model)
        generate([{"role": "user", "content": "ok"}], model=args.model, max_tokens=1)
    except (ModelNotFound, UnsupportedModel, CorruptModel) as exc:
        raise UsageError(f"cannot use {name} as the summarizer: {exc}") from exc
    except (EngineError, OSError, ValueError, RuntimeError) as exc:
        raise HermesMLXError(f"cannot load {name} as the summarizer: {type(exc).__name__}: {exc}") from exc
    return MLXSummarizer(model=args.model)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return a.resolve() == b.resolve()


def _head(path: Path) -> bytes:
    try:
        with path.open("rb") as fh:
            return fh.read(16)
    except OSError:
        return b""


def check_target(path: str, option: str) -> Path:
    """A file this run will write: its folder must exist and be writable, and it must not be a
    folder. --out and --store are replaced or rewritten, so a symlink counts as the file it
    names, and a device, FIFO or socket is refused (a rename would replace the node itself)."""
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{option} {path} is a directory")
    folder = target.parent
    if option != "--log":  # the log is appended to: /dev/stderr is a fair --log
        folder = write_target(path, option).parent
    if not folder.is_dir():
        raise UsageError(f"{option} {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"{option} {path}: folder {folder} is not writable")
    if target.exists() and not os.access(target, os.W_OK):
        raise UsageError(f"{option} {path} is not writable (read-only or immutable)")
    return target


def check_args(args: argparse.Namespace) -> None:
    """Every argument problem, before any work: one UsageError for the first found."""
    if args.context_limit < MIN_CONTEXT_LIMIT:
        raise UsageError(f"--context-limit must be at least {MIN_CONTEXT_LIMIT} tokens, got {args.context_limit}")
    if args.restart and not args.store:
        raise UsageError("--restart only applies with --store")
    source = Path(args.session)
    if args.in_place:
        if args.out is None:
            args.out = args.session
        elif not _same_file(Path(args.out), source):
            raise UsageError("--in-place writes over SESSION itself; drop --out, or --in-place to write elsewhere")
        if source.is_file() and _head(source) == b"SQLite format 3\x00":
            raise UsageError(f"--in-place cannot write a JSONL transcript over the SQLite file {args.session}")
    targets = {}
    for option in ("--out", "--log", "--store"):
        value = getattr(args, option[2:])
        if value is None:
            continue
        path = check_target(value, option)
        if _same_file(path, source) and not (option == "--out" and args.in_place):
            hint = "; add --in-place to overwrite it (atomically)" if option == "--out" else ""
            raise UsageError(f"{option} {value} is the session file itself{hint}")
        for other, other_path in targets.items():
            if _same_file(path, other_path):
                raise UsageError(f"{option} and {other} are the same file ({value})")
        targets[option] = path
    if args.store:
        from hermes_mlx.compactor.store import StoreError, check_schema, check_writable

        try:  # read-only checks now; the store is opened (and written) after the model loads
            check_writable(targets["--store"])
            check_schema(targets["--store"])
        except StoreError as exc:
            raise UsageError(str(exc)) from exc


def pick_example(args: argparse.Namespace) -> bool:
    """--example NAME: a shipped session stands in for SESSION.jsonl, so the README's first
    command needs no file of the user's. True when there is nothing to replay: --example alone
    lists the names. A wrong name is a UsageError (exit 2) that lists them too."""
    from hermes_mlx.bench.shipped import example_names, example_session

    if args.example is None:
        if args.session is None:
            raise UsageError(
                "give SESSION.jsonl to replay, or --example NAME for a shipped session (--example lists them)"
            )
        return False
    if args.session is not None:
        raise UsageError("give SESSION.jsonl or --example NAME, not both")
    if args.in_place:
        raise UsageError("--in-place would write over a shipped example; use --out")
    names = example_names()
    if not args.example:
        print("sessions shipped for `hermes-mlx compact --example NAME`:")
        print("\n".join(f"  {name}" for name in names))
        return True
    path = example_session(args.example)
    if path is None:
        raise UsageError(f"no shipped session named {args.example!r}; the shipped ones: {', '.join(names)}")
    args.session = str(path)
    return False


def print_outcome(result, summarizer) -> None:
    """What the agent would read: the transcript's tokens before and after, then the summary
    itself (the last summary marker's body), so a first run shows the product, not only a table."""
    from hermes_mlx.compactor.markers import last_marker, parse
    from hermes_mlx.compactor.transcript import make_counter, transcript_tokens

    count = make_counter(getattr(summarizer, "count_tokens", None))
    before, after = transcript_tokens(result.original, count), transcript_tokens(result.messages, count)
    print(f"tokens {before:,} before -> {after:,} after")
    i = last_marker(result.messages)
    summary = parse(result.messages[i].get("content")) if i >= 0 else ""
    print(f"\n{SUMMARY_HEADING}\n{summary}" if summary else "\nno summary: no pass compacted the session")


def _log_handler(path: str) -> logging.Handler:
    try:
        handler = logging.FileHandler(path, encoding="utf-8", errors="backslashreplace")
    except OSError as exc:
        raise UsageError(f"--log {path}: cannot open: {exc.strerror or exc}") from exc
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.setLevel(logging.INFO)
    return handler


def _failure_lines(result) -> tuple[list[str], bool]:
    """One line per distinct failure (counted) and whether the run must end non-zero."""
    lines = []
    for reason, n in result.store_failures.items():
        writes = f"{n} store write{'s' if n > 1 else ''}"
        lines.append(f"{writes} {reason}" if reason.startswith("skipped") else f"{writes} failed: {reason}")
    every = result.all_passes_failed
    if every:
        lines.append(f"every pass failed ({len(result.records)} passes)")
    for reason, n in result.pass_failures.items():
        lines.append(f"{n} of {len(result.records)} passes failed: {reason}")
    return lines, bool(result.store_failures) or every


def run(args: argparse.Namespace) -> int:
    from hermes_mlx.compactor.replay import format_table, replay
    from hermes_mlx.compactor.sessions import load_session, save_jsonl
    from hermes_mlx.compactor.transcript import TranscriptError, repair

    if pick_example(args):
        return 0
    check_args(args)
    messages = load_session(args.session, args.session_id)
    try:
        repair(messages)  # fail fast on a transcript that cannot be interpreted
    except TranscriptError as exc:
        raise UsageError(f"{args.session}: {exc}") from exc
    summarizer = build_summarizer(args)

    store = None
    if args.store:
        from hermes_mlx.compactor.store import SessionStore

        store = SessionStore(args.store)
    logger = logging.getLogger(telemetry.LOGGER_NAME)
    handler = None
    previous_level = logger.level
    bar = None
    try:
        handler = _log_handler(args.log) if args.log else None
        if handler is not None:
            logger.addHandler(handler)
            if logger.getEffectiveLevel() > logging.INFO:
                logger.setLevel(logging.INFO)
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
            resume=not args.restart,
        )
    except TranscriptError as exc:
        raise UsageError(f"{args.session}: {exc}") from exc
    finally:
        if bar is not None:
            bar.close()
        if store is not None:
            store.close()
        if handler is not None:
            logger.removeHandler(handler)
            handler.close()
            logger.setLevel(previous_level)

    session_name = args.session_id or Path(args.session).stem
    if result.resumed_at_turn is not None:
        if result.resumed_at_turn >= result.turns and not result.records:
            print(
                f"session {session_name!r} was already replayed to the end in {args.store}; nothing to do"
                " (--restart replays it again)"
            )
        else:
            print(
                f"resumed session {session_name!r} from {args.store} after turn {result.resumed_at_turn}"
                f" of {result.turns}"
            )
    print(format_table(result.records))
    print(
        f"\n{result.turns} turns, {len(result.records)} passes, "
        f"{len(result.original)} -> {len(result.messages)} messages, "
        f"net tokens saved {result.tokens_saved:+,}"
        + (f", {len(result.repairs)} repairs to the input" if result.repairs else "")
    )
    print_outcome(result, summarizer)
    if args.out:
        try:
            save_jsonl(result.messages, args.out)
        except OSError as exc:
            raise HermesMLXError(f"cannot write --out {args.out}: {exc.strerror or exc}") from exc
        print(f"wrote {args.out}")
    lines, failed = _failure_lines(result)
    for line in lines:
        print(f"hermes-mlx compact: {line}", file=sys.stderr)
    return 1 if failed else 0
