"""Micro-compaction: after each turn, fold the oldest unabsorbed exchange into one rolling summary.

The cost of compaction is paid in small instalments instead of one long stall at the threshold.
The rules are the seeds': user messages are never absorbed, head and tail are never touched, one
rolling marker replaces the old, the transcript is the source of truth for the cursor, a failed
pass changes nothing, and no exception ever escapes a pass.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from hermes_mlx.compactor import markers, telemetry
from hermes_mlx.compactor.telemetry import PassResult, Totals
from hermes_mlx.compactor.transcript import (
    TranscriptError,
    clip_for_summary,
    find_exchange,
    head_end,
    make_counter,
    repair,
    tail_start,
    transcript_tokens,
)
from hermes_mlx.summarizer.api import Message, Summarizer, SummaryResult
from hermes_mlx.summarizer.budget import MICRO_LOW, hermes_tokens, micro_budget

logger = logging.getLogger(telemetry.LOGGER_NAME)

THRESHOLD_RATIO = 0.8  # compaction threshold as a share of the context window
TAIL_RATIO = 0.2  # protected tail budget as a share of the threshold (the seeds' 64K of 320K)
MAX_CONSECUTIVE_FAILURES = 3

# Outcomes of a turn on which no pass ran; they emit no telemetry.
WAITING = "waiting"  # cadence counter not reached
IDLE = "idle"  # nothing absorbable between head and tail


def clamp_every_n(value: object) -> int:
    """Cadence below 1 (or unreadable) means every turn, never 'disabled'."""
    try:
        return max(1, int(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 1


def model_name(summarizer: object) -> str:
    for attr in ("model_name", "model"):
        value = getattr(summarizer, attr, None)
        if isinstance(value, str):
            return value
    return ""


def call_summarizer(call: Callable[[], SummaryResult]) -> SummaryResult:
    """A summarizer call that cannot raise: exceptions and empty text become failed results."""
    try:
        result = call()
    except Exception as exc:
        return SummaryResult(ok=False, error=f"{type(exc).__name__}: {exc}")
    if not isinstance(result, SummaryResult):
        return SummaryResult(ok=False, error=f"summarizer returned {type(result).__name__}")
    if result.ok and not (result.text or "").strip():
        return SummaryResult(ok=False, error="empty summary", model=result.model)
    return result


def notify(on_compacted: Callable[[list[Message]], object] | None, messages: list[Message]) -> None:
    """Keep the session store in step; a failed write is logged and the session goes on."""
    if on_compacted is None:
        return
    try:
        on_compacted(messages)
    except Exception as exc:
        logger.warning("compaction store write failed, session continues: %s", exc)


class MicroCompactor:
    """Rolling micro-compaction over one session. Call `compact(messages)` once per finished turn."""

    def __init__(
        self,
        summarizer: Summarizer,
        *,
        every_n_turns: int = 1,
        defrag_threshold_tokens: int = 2000,
        context_limit: int = 32768,
        threshold_tokens: int | None = None,
        tail_tokens: int | None = None,
        protect_first_n: int = 3,
        protect_last_n: int = 2,
        max_chars_per_message: int = 24_000,
        session_id: str = "",
        main_model: str = "",
        on_compacted: Callable[[list[Message]], object] | None = None,
    ):
        self.summarizer = summarizer
        self.every_n_turns = clamp_every_n(every_n_turns)
        self.defrag_threshold_tokens = defrag_threshold_tokens
        self.context_limit = context_limit
        self.threshold_tokens = threshold_tokens or int(context_limit * THRESHOLD_RATIO)
        self.tail_tokens = tail_tokens if tail_tokens is not None else int(self.threshold_tokens * TAIL_RATIO)
        self.protect_first_n = protect_first_n
        self.protect_last_n = protect_last_n
        self.max_chars_per_message = max_chars_per_message
        self.session_id = session_id
        self.main_model = main_model
        self.on_compacted = on_compacted
        self.count = make_counter(getattr(summarizer, "count_tokens", None))
        self.totals = Totals()
        self.turns_since_pass = 0
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

    # -----------------------------------------------------------------------------------------

    def compact(self, messages: list[Message]) -> PassResult:
        """One turn's pass. Never raises; on any failure the input list comes back unchanged."""
        started = time.monotonic()
        try:
            return self._compact(messages, started)
        except Exception as exc:  # best effort: the turn must always complete
            logger.warning("micro-compaction pass failed, transcript unchanged: %s", exc, exc_info=True)
            data = None
            try:
                data = self._emit("error", messages, messages, None, None, None, started)
            except Exception:
                pass
            return PassResult(messages, "error", error=f"{type(exc).__name__}: {exc}", telemetry=data)

    def _compact(self, messages: list[Message], started: float) -> PassResult:
        if self.every_n_turns > 1:
            self.turns_since_pass += 1
            if self.turns_since_pass < self.every_n_turns:
                return PassResult(messages, WAITING)
            self.turns_since_pass = 0

        try:
            prepared, _ = repair(messages)
        except TranscriptError as exc:
            logger.warning("micro-compaction skipped: %s", exc)
            data = self._emit("invalid_transcript", messages, messages, None, None, None, started)
            return PassResult(messages, "invalid_transcript", error=str(exc), telemetry=data)

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
        clipped = clip_for_summary(exchange, self.max_chars_per_message)
        budget = micro_budget(self.defrag_threshold_tokens, hermes_tokens(self.rolling_summary))
        result = call_summarizer(
            lambda: self.summarizer.merge(self.rolling_summary or None, clipped, budget_tokens=budget)
        )
        self._aux_model = result.model or self._aux_model
        if not result.ok:
            outcome = self._record_failure(first, end, result.error)
            data = self._emit(outcome, messages, messages, tokens_before, tokens_before, exchange_tokens, started)
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
        notify(self.on_compacted, out)
        data = self._emit("absorbed", messages, out, tokens_before, tokens_after, exchange_tokens, started)
        return PassResult(out, "absorbed", changed=True, telemetry=data, details={"summary": result})

    # -----------------------------------------------------------------------------------------

    def _next_exchange(self, messages: list[Message]):
        """(head, messages, exchange span) for the next unabsorbed exchange, or None.

        `messages` may come back as a copy whose recovered marker is flagged as absorbed.
        """
        head = head_end(messages, self.protect_first_n)
        tail = tail_start(messages, head, self.tail_tokens, self.protect_last_n, self.count)
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
        if not self.rolling_summary.strip():
            return False
        size = hermes_tokens(self.rolling_summary)  # Hermes's own count decides its defrag
        return size >= self.defrag_threshold_tokens and size > self._defrag_retry_above

    def _defrag(self, messages, prepared, tokens_before, started) -> PassResult:
        """Re-summarize the rolling summary itself; the transcript's structure is not touched."""
        old = self.rolling_summary
        budget = int(self.defrag_threshold_tokens * MICRO_LOW)
        result = call_summarizer(lambda: self.summarizer.defrag(old, budget_tokens=budget))
        self._aux_model = result.model or self._aux_model
        if not result.ok:
            self._defrag_failures += 1
            if self._defrag_failures >= MAX_CONSECUTIVE_FAILURES:
                # Stop retrying every turn: absorb again until the summary grows by another quarter.
                self._defrag_retry_above = int(hermes_tokens(old) * 1.25)
                self._defrag_failures = 0
            data = self._emit("defrag_failed", messages, messages, tokens_before, tokens_before, None, started)
            return PassResult(messages, "defrag_failed", telemetry=data, error=result.error)
        self.rolling_summary = result.text.strip()
        self._defrag_failures, self._defrag_retry_above = 0, 0
        size = hermes_tokens(self.rolling_summary)
        if size >= self.defrag_threshold_tokens:
            # A summarizer that ignores the budget may not get under the threshold; without this
            # every later pass would defrag again and no exchange would be absorbed.
            self._defrag_retry_above = int(size * 1.25)
        self.failures, self._failure_at = 0, -1
        out = list(prepared)
        for i in range(len(out) - 1, -1, -1):
            if markers.is_micro_marker(out[i]) or (
                self._rehydrated_from is not None and out[i].get("content") == self._rehydrated_from
            ):
                out[i] = {**out[i], "content": markers.render(self.rolling_summary), markers.MICRO_KEY: True}
                self._rehydrated_from = out[i]["content"]
                break
        logger.info(
            "Micro-compaction defrag: rolling summary re-summarized (%d -> %d chars)",
            len(old),
            len(self.rolling_summary),
        )
        tokens_after = transcript_tokens(out, self.count)
        notify(self.on_compacted, out)
        data = self._emit("defrag", messages, out, tokens_before, tokens_after, None, started)
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

    def _emit(self, outcome, before, after, tokens_before, tokens_after, exchange_tokens, started) -> dict:
        data = telemetry.payload(
            "micro_compaction",
            self.totals,
            outcome=outcome,
            session_id=self.session_id,
            messages_before=len(before),
            messages_after=len(after),
            tokens_before=tokens_before,
            tokens_after=tokens_after,
            exchange_tokens=exchange_tokens,
            rolling_summary_tokens=self.count(self.rolling_summary) if self.rolling_summary else 0,
            cursor=self.cursor,
            duration_ms=int((time.monotonic() - started) * 1000),
            threshold_tokens=self.threshold_tokens,
            context_limit=self.context_limit,
            main_model=self.main_model,
            aux_model=self._aux_model or model_name(self.summarizer),
        )
        telemetry.emit(data)
        return data
