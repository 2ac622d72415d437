"""Replay a recorded session turn by turn, compacting as it goes, as a live agent would.

This is how the benchmark, the `compact` command and the tests drive exactly the code path
Hermes users get: the session grows one agent turn at a time and a pass runs after each turn.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from hermes_mlx.compactor.batch import BatchCompactor
from hermes_mlx.compactor.micro import MicroCompactor
from hermes_mlx.compactor.telemetry import PassResult
from hermes_mlx.compactor.transcript import (
    Repair,
    TranscriptError,
    make_counter,
    repair,
    split_turns,
    transcript_tokens,
)
from hermes_mlx.summarizer.api import Message, Summarizer

MODES = ("micro", "batch")


@dataclass
class PassRecord:
    """One pass that ran (cadence skips and idle turns are not passes)."""

    number: int
    turn: int
    mode: str  # micro | batch (a batch pass can also fire in micro mode, as in Hermes)
    outcome: str
    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int
    occupancy_pct: float | None
    duration_s: float
    telemetry: dict = field(default_factory=dict)

    @property
    def tokens_delta(self) -> int:
        return self.tokens_after - self.tokens_before


@dataclass
class ReplayResult:
    messages: list[Message]  # the final compacted transcript
    original: list[Message]  # the session as loaded (after repairs)
    records: list[PassRecord]
    turns: int
    repairs: list[Repair] = field(default_factory=list)

    @property
    def tokens_saved(self) -> int:
        return sum(-r.tokens_delta for r in self.records)


def load_session(path: str | Path) -> list[Message]:
    """One OpenAI chat message object a line; blank lines are allowed. Errors name the message."""
    messages: list[Message] = []
    with open(path, encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError as exc:
                raise TranscriptError(len(messages), f"line {line_no} is not valid JSON ({exc.msg})") from None
            if not isinstance(message, dict):
                raise TranscriptError(len(messages), f"line {line_no} is not a JSON object")
            messages.append(message)
    return messages


def save_session(messages: list[Message], path: str | Path) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for message in messages:
            handle.write(json.dumps(message, ensure_ascii=False) + "\n")


def replay(
    session: list[Message] | str | Path,
    summarizer: Summarizer,
    *,
    mode: str = "micro",
    every_n_turns: int = 1,
    context_limit: int = 32768,
    focus: str | None = None,
    session_id: str = "",
    main_model: str = "",
    on_pass: Callable[[PassRecord], object] | None = None,
    on_turn: Callable[[int, int], object] | None = None,
    on_compacted: Callable[[list[Message]], object] | None = None,
    store=None,
    **compactor_options,
) -> ReplayResult:
    """Feed the session one agent turn at a time and run a pass after each turn.

    In micro mode the threshold-triggered batch pass still stands behind micro-compaction, as in
    Hermes: it fires only when micro passes could not keep the transcript under the threshold.
    Raises TranscriptError (naming the message index) for a session that cannot be interpreted.
    With a `store` (a SessionStore), each turn is flushed to it and each pass archives the rows
    it replaced, as Hermes keeps state.db in step.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    messages = load_session(session) if isinstance(session, (str, Path)) else list(session)
    if not session_id and isinstance(session, (str, Path)):
        session_id = Path(session).stem
    original, repairs = repair(messages)
    turns = split_turns(original)
    if store is not None and on_compacted is None:
        on_compacted = lambda compacted: store.archive_and_compact(session_id, compacted)
    common = dict(context_limit=context_limit, session_id=session_id, main_model=main_model, on_compacted=on_compacted)
    batch_options = {k: v for k, v in compactor_options.items() if k != "defrag_threshold_tokens"}
    micro_options = {k: v for k, v in compactor_options.items() if k != "summary_budget_tokens"}
    batch = BatchCompactor(summarizer, **common, **batch_options)
    micro = MicroCompactor(summarizer, every_n_turns=every_n_turns, **common, **micro_options) if mode == "micro" else None
    count = make_counter(getattr(summarizer, "count_tokens", None))

    live: list[Message] = []
    records: list[PassRecord] = []

    def record(turn: int, kind: str, result: PassResult, before: list[Message], started: float) -> None:
        data = result.telemetry or {}
        rec = PassRecord(
            number=len(records) + 1,
            turn=turn,
            mode=kind,
            outcome=result.outcome,
            messages_before=len(before),
            messages_after=len(result.messages),
            tokens_before=int(data.get("tokens_before") or transcript_tokens(before, count)),
            tokens_after=int(data.get("tokens_after") or transcript_tokens(result.messages, count)),
            occupancy_pct=data.get("occupancy_pct"),
            duration_s=time.monotonic() - started,
            telemetry=data,
        )
        records.append(rec)
        if on_pass is not None:
            on_pass(rec)

    for number, turn in enumerate(turns, 1):
        live = live + turn
        if store is not None:
            store.sync(session_id, live)
        if micro is not None:
            started = time.monotonic()
            result = micro.compact(live)
            if result.telemetry is not None:
                record(number, "micro", result, live, started)
            live = result.messages
        started = time.monotonic()
        result = batch.compact(live, focus=focus)
        if result.telemetry is not None:
            record(number, "batch", result, live, started)
            if result.changed and micro is not None:
                micro.reset()  # the transcript was rewritten under it; recover from the marker
        live = result.messages
        if on_turn is not None:
            on_turn(number, len(turns))
    return ReplayResult(messages=live, original=original, records=records, turns=len(turns), repairs=repairs)


def format_table(records: list[PassRecord]) -> str:
    """The per-pass table, in the shape of the seeds' five-pass example."""
    header = ("pass", "turn", "mode", "outcome", "messages", "tokens", "delta", "occupancy", "duration")
    rows = [header]
    for r in records:
        occupancy = "-" if r.occupancy_pct is None else f"{r.occupancy_pct:.1f}%"
        rows.append(
            (
                str(r.number),
                str(r.turn),
                r.mode,
                r.outcome,
                f"{r.messages_before} -> {r.messages_after}",
                f"{r.tokens_before:,} -> {r.tokens_after:,}",
                f"{r.tokens_delta:+,}",
                occupancy,
                f"{r.duration_s:.1f}s",
            )
        )
    if len(rows) == 1:
        return "no compaction passes ran"
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(widths[i]) if i < 4 else cell.rjust(widths[i]) for i, cell in enumerate(row)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in lines)
