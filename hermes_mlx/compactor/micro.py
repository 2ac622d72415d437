"""Micro-compaction: after each turn, fold the oldest unabsorbed exchange into one rolling summary.

The cost of compaction is paid in small instalments instead of one long stall at the threshold.
The rules are the seeds': user messages are never absorbed, head and tail are never touched, one
rolling marker replaces the old, the transcript is the source of truth for the cursor, a failed
pass changes nothing, and no exception ever escapes a pass.

With `ahead` on, the next pass's one summarizer call starts in the background as soon as its
input is known (compactor/ahead.py): the oldest exchange not yet absorbed that a user message
has closed, the rolling summary and the budget. The pass takes the answer when its own input is
exactly that, and otherwise discards it and calls the summarizer itself, so its result is the
same either way; only the wait moves into the user's think time.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable

from hermes_mlx.compactor import ahead, markers, telemetry
from hermes_mlx.compactor.passes import Compactor, call_summarizer, notify
from hermes_mlx.compactor.settings import CompactorSettings
from hermes_mlx.compactor.telemetry import PassResult
from hermes_mlx.compactor.transcript import (
    clip_for_summary,
    find_exchange,
    head_end,
    kept_for_summary,
    tail_start,
    transcript_tokens,
)
from hermes_mlx.summarizer.api import Message, Summarizer, SummaryResult
from hermes_mlx.summarizer.budget import hermes_tokens, micro_budget

logger = logging.getLogger(telemetry.LOGGER_NAME)

MAX_CONSECUTIVE_FAILURES = 3

# Outcomes of a turn on which no pass ran; they emit no telemetry.
WAITING = "waiting"  # cadence counter not reached
IDLE = "idle"  # nothing absorbable between head and tail


class MicroCompactor(Compactor):
    """Rolling micro-compaction over one session. Call `compact(messages)` once per finished turn."""

    event = "micro_compaction"
    label = "micro-compaction"

    def __init__(self, summarizer: Summarizer, settings: CompactorSettings | None = None, **options) -> None:
        super().__init__(summarizer, settings, **options)
        self.turns_since_pass = 0
        self._ahead_session = f"{_ahead_prefix(self.settings.session_id)}{id(self)}"  # its slot in ahead.CACHE
        self._ahead_used: dict = {}  # how this pass's summarizer call went with `ahead` on
        self.reset()

    def reset(self) -> None:
        """Forget the cursor and rolling summary (after a batch pass rewrote the transcript)."""
        self.cursor: int | None = None
        self.rolling_summary = ""
        self._rehydrated_from: str | None = None
        self.failures = 0
        self._failure_at = -1
        self._defrag_failures = 0
        self._defrag_retry_above = 0
        self._aux_model = ""
        if self.settings.ahead:  # the guess was made from the state just forgotten
            ahead.CACHE.discard(self._ahead_session)

    def state_figures(self) -> dict:
        return {
            "rolling_summary_tokens": self.count(self.rolling_summary) if self.rolling_summary else 0,
            "cursor": self.cursor,
            "aux_model": self._aux_model,
        }

    # -----------------------------------------------------------------------------------------

    def compact(self, messages: list[Message]) -> PassResult:
        """One turn's pass. Never raises; on any failure the input list comes back unchanged."""
        self._ahead_used = {}
        result = self._compact(messages)
        if self.settings.ahead:
            self._look_ahead(result.messages)
        return result

    def _compact(self, messages: list[Message]) -> PassResult:
        every = self.settings.every_n_turns
        if every > 1:
            self.turns_since_pass += 1
            if self.turns_since_pass < every:
                return PassResult(messages, WAITING)
            self.turns_since_pass = 0
        return self.guarded(messages, lambda prepared, started: self._pass(messages, prepared, started))

    def emit(self, outcome: str, before: list[Message], after: list[Message], started: float, **figures) -> dict:
        """The logged line keeps exactly Hermes's fields; the payload handed back to the caller
        (replay, the bench) also says how the pass's call went with `ahead` on: "ahead" is hit,
        waited or miss, "ahead_ms" the milliseconds of its work done before compact() was called,
        "ahead_key" the guess used (ahead.current_key() in its engine calls)."""
        data = super().emit(outcome, before, after, started, **figures)
        data.update(self._ahead_used)
        return data

    def _pass(self, messages: list[Message], prepared: list[Message], started: float) -> PassResult:
        span = self._next_exchange(prepared) if len(prepared) >= 4 else None
        if span is None:
            return PassResult(messages, IDLE)
        head, prepared, (first, end) = span
        tokens_before = transcript_tokens(prepared, self.count)

        if self._needs_defrag():
            return self._defrag(messages, prepared, tokens_before, started)

        exchange = prepared[first:end]
        exchange_tokens = transcript_tokens(exchange, self.count)
        cumulative = bool(self.rolling_summary.strip())
        key, call = self._merge_call(self.rolling_summary, exchange, prepared[:first] + prepared[end:])
        result = self._summarize(key, call, started)
        self._aux_model = result.model or self._aux_model
        if not result.ok:
            outcome = self._record_failure(first, end, result.error)
            data = self.emit(
                outcome,
                messages,
                messages,
                started,
                tokens_before=tokens_before,
                tokens_after=tokens_before,
                exchange_tokens=exchange_tokens,
            )
            return PassResult(messages, outcome, telemetry=data, error=result.error, details={"summary": result})

        self.rolling_summary = result.text.strip()
        self.failures, self._failure_at = 0, -1
        marker = markers.build(self.rolling_summary, micro=True)
        out = prepared[:first] + [marker] + prepared[end:]
        if cumulative:
            out = [
                m for i, m in enumerate(out) if not (head <= i < first and markers.is_marker(m) and self._superseded(m))
            ]
        out = markers.merge_adjacent_users(out, head)
        self.cursor = next(i for i, m in enumerate(out) if m is marker) + 1
        self._rehydrated_from = None
        tokens_after = transcript_tokens(out, self.count)
        logger.info("Micro-compaction: %d -> %d messages", len(messages), len(out))
        notify(self.settings.on_compacted, out)
        data = self.emit(
            "absorbed",
            messages,
            out,
            started,
            tokens_before=tokens_before,
            tokens_after=tokens_after,
            exchange_tokens=exchange_tokens,
        )
        return PassResult(out, "absorbed", changed=True, telemetry=data, details={"summary": result})

    # ---------------------------------------------------------------- the summarizer call, maybe ahead

    def _merge_call(
        self, summary: str, exchange: list[Message], around: list[Message]
    ) -> tuple[str, Callable[[], SummaryResult]]:
        """(fingerprint of its inputs, the call) for absorbing `exchange` into `summary`: what the
        call asks depends on these alone, so it can run ahead of the pass on another thread.
        `around` (the transcript's other messages) tells the summarizer what stays verbatim; it is
        no part of the fingerprint: a guess saw fewer of them (the turn that came since), all of
        which are still there, so what it let go first is still shown."""
        clipped = clip_for_summary(exchange, self.settings.max_chars_per_message)
        budget = micro_budget(self.settings.defrag_threshold_tokens)
        summarizer = self.summarizer
        kept = kept_for_summary(around, self.settings.max_chars_per_message)

        def call() -> SummaryResult:
            return call_summarizer(lambda: summarizer.merge(summary or None, clipped, budget_tokens=budget, kept=kept))

        return _fingerprint("merge", summary, clipped, budget), call

    def _defrag_call(self, summary: str, around: list[Message]) -> tuple[str, Callable[[], SummaryResult]]:
        """As `_merge_call`, for shortening `summary` beside the transcript `around` it."""
        budget = micro_budget(self.settings.defrag_threshold_tokens)
        summarizer = self.summarizer
        kept = kept_for_summary(around, self.settings.max_chars_per_message)

        def call() -> SummaryResult:
            return call_summarizer(lambda: summarizer.defrag(summary, budget_tokens=budget, kept=kept))

        return _fingerprint("defrag", summary, budget), call

    def _summarize(self, key: str, call: Callable[[], SummaryResult], started: float) -> SummaryResult:
        """The pass's call: the answer computed ahead for exactly these inputs (waited for while it
        runs), else the call itself, after dropping a guess that no longer fits."""
        if not self.settings.ahead:
            return call()
        value, how = ahead.CACHE.take_status(key, self._ahead_owner(), accept=_usable)
        if value is None:
            ahead.CACHE.discard(self._ahead_session)  # a wrong guess: stop it spending the engine
            self._ahead_used = {"ahead": "miss"}
            return call()
        result, began, ended = value
        done_before = int(max(min(ended, started) - began, 0.0) * 1000)
        self._ahead_used = {"ahead": how, "ahead_ms": done_before, "ahead_key": key}
        return result

    def _ahead_owner(self) -> tuple:
        """Who may take a guess: a compactor with the same summarizer (the same inputs then give
        the same answer). The object itself, not its id(): a finished guess holds no other
        reference to it, so a new summarizer (another model) could get the same id."""
        return ("micro", self.summarizer)

    def _look_ahead(self, messages: list[Message]) -> None:
        """Guess the next pass's call from the transcript just handed back and start it: a defrag
        when the summary is due one, else a merge of the next exchange after the cursor that a
        user message has closed (it can no longer grow). Best effort: a failure only logs."""
        try:
            cursor = self.cursor
            if cursor is None:  # no pass has run yet: it will start after the head
                head = head_end(messages, self.settings.protect_first_n)
                if markers.last_marker(messages, head, len(messages)) >= 0:
                    return  # it will recover its summary from the marker first: leave that to it
                cursor = head
            if self._needs_defrag():
                key, call = self._defrag_call(self.rolling_summary, messages)
            else:
                span = find_exchange(messages, cursor, len(messages), markers.is_marker)
                if span is None:
                    return
                exchange, kept = messages[span[0] : span[1]], messages[: span[0]] + messages[span[1] :]
                key, call = self._merge_call(self.rolling_summary, exchange, kept)
            ahead.CACHE.schedule(self._ahead_session, key, self._ahead_owner(), lambda: _timed(call))
        except Exception as exc:
            logger.info("Micro-compaction: could not start the next pass ahead: %s", exc)

    # -----------------------------------------------------------------------------------------

    def _next_exchange(self, messages: list[Message]):
        """(head, messages, exchange span) for the next unabsorbed exchange, or None.

        `messages` may come back as a copy whose recovered marker is flagged as absorbed.
        """
        head = head_end(messages, self.settings.protect_first_n)
        tail = tail_start(messages, head, self.settings.tail, self.settings.protect_last_n, self.count)
        if head >= tail:
            return None
        cursor = self.cursor
        if cursor is None or not head < cursor < tail:
            cursor, messages = self._recover_cursor(messages, head, tail)
        if cursor >= tail:
            return None
        span = find_exchange(messages, cursor, tail, markers.is_marker)
        return None if span is None else (head, messages, span)

    def _recover_cursor(self, messages: list[Message], head: int, tail: int) -> tuple[int, list[Message]]:
        """The transcript is the source of truth: resume just past its last summary marker."""
        last = markers.last_marker(messages, head, tail)
        if last < 0:
            self.cursor = head
            return head, messages
        self.cursor = last + 1
        marker = messages[last]
        if not self.rolling_summary.strip():
            recovered = markers.parse(marker.get("content"))
            if recovered:
                # Rehydrating proves the marker's content is inside the rolling summary, so it may
                # be superseded by the next marker (Hermes flags it for the same reason).
                self.rolling_summary = recovered
                self._rehydrated_from = marker.get("content")
                messages = list(messages)
                messages[last] = {**marker, markers.MICRO_KEY: True}
                logger.info("Micro-compaction: recovered rolling summary from transcript (%d chars)", len(recovered))
        return last + 1, messages

    def _superseded(self, marker: Message) -> bool:
        return markers.is_micro_marker(marker) or (
            self._rehydrated_from is not None and marker.get("content") == self._rehydrated_from
        )

    def _needs_defrag(self) -> bool:
        """The rolling summary is at Hermes's defrag threshold. One just recovered from a batch pass's
        marker is not defragged: Hermes sizes that summary at its own batch budget, whose 2,000-token
        floor is the default defrag threshold, and the merge that absorbs the next exchange fits it to
        the micro budget anyway (a summary a token over the threshold had cost a pass and two facts)."""
        if not self.rolling_summary.strip() or self._rehydrated_from is not None:
            return False
        size = hermes_tokens(self.rolling_summary)  # Hermes's own count decides its defrag
        return size >= self.settings.defrag_threshold_tokens and size > self._defrag_retry_above

    def _defrag(self, messages, prepared, tokens_before, started) -> PassResult:
        """Shorten the rolling summary itself (summarizer.defrag: entries condensed or dropped,
        never rewritten); the transcript's structure is not touched."""
        old = self.rolling_summary
        result = self._summarize(*self._defrag_call(old, prepared), started)
        self._aux_model = result.model or self._aux_model
        if not result.ok:
            self._defrag_failures += 1
            if self._defrag_failures >= MAX_CONSECUTIVE_FAILURES:
                # Stop retrying every turn: absorb again until the summary grows by another quarter.
                self._defrag_retry_above = int(hermes_tokens(old) * 1.25)
                self._defrag_failures = 0
            data = self.emit(
                "defrag_failed", messages, messages, started, tokens_before=tokens_before, tokens_after=tokens_before
            )
            return PassResult(messages, "defrag_failed", telemetry=data, error=result.error)
        self.rolling_summary = result.text.strip()
        self._defrag_failures, self._defrag_retry_above = 0, 0
        size = hermes_tokens(self.rolling_summary)
        if size >= self.settings.defrag_threshold_tokens:
            # A summarizer that ignores the budget may not get under the threshold; without this
            # every later pass would defrag again and no exchange would be absorbed.
            self._defrag_retry_above = int(size * 1.25)
        self.failures, self._failure_at = 0, -1
        out = list(prepared)
        for i in range(len(out) - 1, -1, -1):
            if self._superseded(out[i]):
                out[i] = {**out[i], "content": markers.render(self.rolling_summary), markers.MICRO_KEY: True}
                self._rehydrated_from = out[i]["content"]
                break
        logger.info(
            "Micro-compaction defrag: rolling summary shortened, least worth first (%d -> %d chars)",
            len(old),
            len(self.rolling_summary),
        )
        tokens_after = transcript_tokens(out, self.count)
        notify(self.settings.on_compacted, out)
        data = self.emit("defrag", messages, out, started, tokens_before=tokens_before, tokens_after=tokens_after)
        return PassResult(out, "defrag", changed=True, telemetry=data, details={"summary": result})

    def _record_failure(self, first: int, end: int, error: str | None) -> str:
        """Count a failure on this exchange; after three in a row, move past it for good."""
        self.failures = self.failures + 1 if first == self._failure_at else 1
        self._failure_at = first
        logger.info("micro-summarization failed at cursor %d: %s", first, error)
        if self.failures < MAX_CONSECUTIVE_FAILURES:
            return "summarize_failed"
        logger.info(
            "Micro-compaction: skipping exchange at cursor %d after %d consecutive failures", first, self.failures
        )
        self.cursor = end  # left in the transcript for batch compaction
        self.failures, self._failure_at = 0, -1
        return "exchange_skipped"


def discard_ahead(session_id: str | None) -> None:
    """Drop the guesses of this session's micro compactors: its replay ended, so no pass will take
    them, and they would otherwise run inside whatever is measured next."""
    prefix = _ahead_prefix(session_id)
    for slot in ahead.CACHE.held():
        if slot.startswith(prefix):
            ahead.CACHE.discard(slot)


def _ahead_prefix(session_id: str | None) -> str:
    return f"micro:{session_id or ''!r}:"


def _fingerprint(*inputs: object) -> str:
    """One summarizer call's inputs, exactly, as a short key."""
    return hashlib.sha256(json.dumps(inputs, sort_keys=True, default=repr).encode("utf-8")).hexdigest()


def _usable(value: tuple[SummaryResult, float, float]) -> bool:
    result = value[0]
    return ahead.whole(failed=not result.ok, model_calls_skipped=(result.details or {}).get("model_calls_skipped") or 0)


def _timed(call: Callable[[], SummaryResult]) -> tuple[SummaryResult, float, float]:
    began = time.monotonic()
    result = call()
    return result, began, time.monotonic()
