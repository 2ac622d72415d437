"""Replay a recorded session turn by turn, compacting as it goes, as a live agent would.

This is how the benchmark, the `compact` command and the tests drive exactly the code path
Hermes users get: the session grows one agent turn at a time and a pass runs after each turn.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from hermes_mlx.compactor.batch import BatchCompactor
from hermes_mlx.compactor.micro import MicroCompactor
from hermes_mlx.compactor.sessions import load_session
from hermes_mlx.compactor.settings import CompactorSettings
from hermes_mlx.compactor.store import ReplayState, SessionStore
from hermes_mlx.compactor.telemetry import PassResult
from hermes_mlx.compactor.transcript import (
    Repair,
    make_counter,
    repair,
    split_turns,
    transcript_tokens,
)
from hermes_mlx.errors import UsageError
from hermes_mlx.summarizer.api import Message, Summarizer

MODES = ("micro", "batch")
GIVE_UP_AFTER = 3  # store writes failing in a row: the rest are skipped (a locked DB costs a timeout each)


class ResumeMismatch(UsageError):
    """The store holds a replay of this session id made from a different transcript."""


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
    error: str | None = None  # why a failed pass failed (None when it did its job)

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
    resumed_at_turn: int | None = None  # turns a previous, interrupted run had finished
    store_failures: dict[str, int] = field(default_factory=dict)  # reason -> failed store writes

    @property
    def tokens_saved(self) -> int:
        return sum(-r.tokens_delta for r in self.records)

    @property
    def pass_failures(self) -> dict[str, int]:
        """'outcome: reason' -> passes that failed so."""
        return dict(Counter(f"{r.outcome}: {r.error}" for r in self.records if r.error))

    @property
    def all_passes_failed(self) -> bool:
        return bool(self.records) and all(r.error for r in self.records)


class _StoreWriter:
    """The replay's writes to a session store: failures counted by reason, and after a few in a
    row the rest are skipped (the store resumes from its last good write on the next run)."""

    def __init__(self, store: SessionStore, session_id: str) -> None:
        self.store, self.session_id = store, session_id
        self.failures: Counter[str] = Counter()
        self.in_a_row = 0
        self.state: ReplayState | None = None  # recorded with every write: rows and position agree

    def write(self, transcript: list[Message], state: ReplayState | None = None) -> bool:
        state = self.state = state or self.state
        if self.in_a_row >= GIVE_UP_AFTER:
            self.failures[f"skipped after {GIVE_UP_AFTER} failed in a row"] += 1
            return False
        if self.store.sync(self.session_id, transcript, state):
            self.in_a_row = 0
            return True
        self.in_a_row += 1
        self.failures[self.store.last_error or "unknown error"] += 1
        return False


def source_digest(hasher: hashlib._Hash, messages: list[Message]) -> str:
    """Fold `messages` into the running digest of the source and return it so far."""
    for message in messages:
        hasher.update(json.dumps(message, sort_keys=True, default=repr).encode("utf-8") + b"\n")
    return hasher.hexdigest()


def replay(
    session: list[Message] | str | Path,
    summarizer: Summarizer,
    *,
    mode: str = "micro",
    focus: str | None = None,
    on_pass: Callable[[PassRecord], object] | None = None,
    on_turn: Callable[[int, int], object] | None = None,
    before_pass: Callable[[], object] | None = None,
    max_passes: int | None = None,
    store: SessionStore | None = None,
    resume: bool = True,
    settings: CompactorSettings | None = None,
    **options,
) -> ReplayResult:
    """Feed the session one agent turn at a time and run a pass after each turn.

    In micro mode the threshold-triggered batch pass still stands behind micro-compaction, as in
    Hermes: it fires only when micro passes could not keep the transcript under the threshold.
    Raises TranscriptError (naming the message index) for a session that cannot be interpreted.

    Both compactors get the same CompactorSettings: `settings`, with `options` (its field names:
    context_limit, every_n_turns, session_id, on_compacted, ...) applied; an unknown option is a
    TypeError. A session read from a file without a session_id is named after the file.

    With a `store` (a SessionStore), each turn is written to it before its passes and each pass
    archives the rows it replaced, as Hermes keeps state.db in step. Every write also records
    how many source messages the stored transcript holds (and a digest of them), so a run that
    was killed resumes (`resume=True`) from the store where it stopped instead of starting over;
    a store whose record was made from a different transcript raises ResumeMismatch.

    `before_pass` runs before each compactor call, outside its timing (the bench unloads the
    model there, or checks its load processes); after `max_passes` passes the replay stops at
    the next turn, so the result holds the session only that far.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    settings = CompactorSettings.of(settings, **options)
    messages = load_session(session) if isinstance(session, (str, Path)) else list(session)
    if not settings.session_id and isinstance(session, (str, Path)):
        settings = replace(settings, session_id=Path(session).stem)
    session_id = settings.session_id
    original, repairs = repair(messages)
    turns = split_turns(original)
    writer = _StoreWriter(store, session_id) if store is not None else None
    if writer is not None:
        user_callback = settings.on_compacted

        def on_compacted(compacted: list[Message]) -> None:
            writer.write(compacted)
            if user_callback is not None:
                user_callback(compacted)

        settings = replace(settings, on_compacted=on_compacted)
    batch = BatchCompactor(summarizer, settings)
    micro = MicroCompactor(summarizer, settings) if mode == "micro" else None
    count = make_counter(getattr(summarizer, "count_tokens", None))

    live: list[Message] = []
    records: list[PassRecord] = []
    hasher = hashlib.sha256()
    done, pending, passes_before, resumed_at = 0, False, 0, None
    if writer is not None and resume:
        state = store.progress(session_id)
        if state is not None:
            done, pending, passes_before = _resume_point(state, turns, hasher, session_id)
            live, resumed_at, writer.state = store.load_active(session_id), done, state
    consumed = sum(len(t) for t in turns[:done])

    def record(turn: int, kind: str, result: PassResult, before: list[Message], started: float) -> None:
        data = result.telemetry or {}
        rec = PassRecord(
            number=passes_before + len(records) + 1,
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
            error=result.error,
        )
        records.append(rec)
        if on_pass is not None:
            on_pass(rec)

    def may_pass() -> bool:
        """False once `max_passes` passes ran; otherwise runs the `before_pass` hook first."""
        if max_passes is not None and len(records) >= max_passes:
            return False
        if before_pass is not None:
            before_pass()
        return True

    def passes(number: int) -> None:
        nonlocal live
        if micro is not None and may_pass():
            started = time.monotonic()
            result = micro.compact(live)
            if result.telemetry is not None:
                record(number, "micro", result, live, started)
            live = result.messages
        if not may_pass():
            return
        started = time.monotonic()
        result = batch.compact(live, focus=focus)
        if result.telemetry is not None:
            record(number, "batch", result, live, started)
            if result.changed and micro is not None:
                micro.reset()  # the transcript was rewritten under it; recover from the marker
        live = result.messages

    def checkpoint(number: int, digest: str, pending: bool) -> None:
        if writer is not None:
            state = ReplayState(digest, len(original), consumed, number, pending, passes_before + len(records))
            writer.write(live, state)

    digest = hasher.hexdigest()
    if pending:  # killed between storing turn `done` and finishing its passes
        passes(done)
        checkpoint(done, digest, False)
    for number in range(done + 1, len(turns) + 1):
        if max_passes is not None and len(records) >= max_passes:
            break
        turn = turns[number - 1]
        live = live + turn
        consumed += len(turn)
        digest = source_digest(hasher, turn)
        checkpoint(number, digest, True)
        passes(number)
        checkpoint(number, digest, False)
        if on_turn is not None:
            on_turn(number, len(turns))
    return ReplayResult(
        messages=live,
        original=original,
        records=records,
        turns=len(turns),
        repairs=repairs,
        resumed_at_turn=resumed_at,
        store_failures=dict(writer.failures) if writer else {},
    )


def _resume_point(state: ReplayState, turns: list[list[Message]], hasher, session_id: str) -> tuple[int, bool, int]:
    """(turns done, passes pending, passes so far) from a stored state that matches `turns`."""
    consumed = 0
    digest = hasher.hexdigest()
    for done in range(len(turns) + 1):
        if consumed == state.consumed and done == state.turns and digest == state.source_digest:
            return done, state.pending, state.passes
        if done == len(turns) or consumed > state.consumed:
            break
        consumed += len(turns[done])
        digest = source_digest(hasher, turns[done])
    raise ResumeMismatch(
        f"the session store already holds session {session_id!r} replayed from a different transcript"
        f" ({state.turns} turns, {state.consumed} messages in); pass --restart to replay this one from the start"
        " (the stored rows stay, archived), or another --session-id"
    )


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
    lines = [
        "  ".join(cell.ljust(widths[i]) if i < 4 else cell.rjust(widths[i]) for i, cell in enumerate(row))
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in lines)
