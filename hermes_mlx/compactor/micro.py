"""Micro-compaction: after each turn, fold the oldest unabsorbed exchange into one rolling summary.

The cost of compaction is paid in small instalments instead of one long stall at the threshold.
The rules are the seeds': user messages are never absorbed, head and tail are never touched, one
rolling marker replaces the old, the transcript is the source of truth for the cursor, a failed
pass changes nothing, and no exception ever escapes a pass.
"""

from __future__ import annotations

import logging

from hermes_mlx.compactor import markers, telemetry
from hermes_mlx.compactor.passes import Compactor, call_summarizer, notify
from hermes_mlx.compactor.settings import CompactorSettings
from hermes_mlx.compactor.telemetry import PassResult
from hermes_mlx.compactor.transcript import (
    clip_for_summary,
    find_exchange,
    head_end,
    tail_start,
    transcript_tokens,
)
from hermes_mlx.summarizer.api import Message, Summarizer, SummaryResult
from hermes_mlx.summarizer.budget import MICRO_LOW, hermes_tokens, micro_budget

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

    def state_figures(self) -> dict:
        return {
            "rolling_summary_tokens": self.count(self.rolling_summary) if self.rolling_summary else 0,
            "cursor": self.cursor,
            "aux_model": self._aux_model,
        }

    # -----------------------------------------------------------------------------------------

    def compact(self, messages: list[Message]) -> PassResult:
        """One turn's pass. Never raises; on any failure the input list comes back unchanged."""
        every = self.settings.every_n_turns
        if every > 1:
            self.turns_since_pass += 1
            if self.turns_since_pass < every:
                return PassResult(messages, WAITING)
            self.turns_since_pass = 0
        return self.guarded(messages, lambda prepared, started: self._pass(messages, prepared, started))

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
        clipped = clip_for_summary(exchange, self.settings.max_chars_per_message)
        budget = micro_budget(self.settings.defrag_threshold_tokens, hermes_tokens(self.rolling_summary))
        result = self._merge(clipped, budget)
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

    def _merge(self, exchange: list[Message], budget: int) -> SummaryResult:
        """The absorbing pass's one summarizer call: what it asks depends only on the rolling
        summary and the exchange, so it is the seam for running it ahead of the pass."""
        return call_summarizer(
            lambda: self.summarizer.merge(self.rolling_summary or None, exchange, budget_tokens=budget)
        )

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
        if not self.rolling_summary.strip():
            return False
        size = hermes_tokens(self.rolling_summary)  # Hermes's own count decides its defrag
        return size >= self.settings.defrag_threshold_tokens and size > self._defrag_retry_above

    def _defrag(self, messages, prepared, tokens_before, started) -> PassResult:
        """Re-summarize the rolling summary itself; the transcript's structure is not touched."""
        old = self.rolling_summary
        budget = int(self.settings.defrag_threshold_tokens * MICRO_LOW)
        result = call_summarizer(lambda: self.summarizer.defrag(old, budget_tokens=budget))
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
