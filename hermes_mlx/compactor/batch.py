"""Batch compaction: when the transcript crosses its threshold, rewrite the middle as one summary.

Compaction here is state rewriting so the agent can carry on working, in four stages: prune old
tool output (cheap, no model; enough on its own when it gets well under the threshold), choose
boundaries that never split a tool call from its result, summarize the middle into the
structured template (iteratively over the previous summary; from the unpruned output, so no
error line is lost to pruning), and reassemble a valid message list. User messages are kept byte for byte (merged into one model-view
row), and the marker is the same one micro-compaction writes, so the two interoperate.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from hermes_mlx.compactor import markers, telemetry
from hermes_mlx.compactor.micro import TAIL_RATIO, THRESHOLD_RATIO, call_summarizer, model_name, notify
from hermes_mlx.compactor.telemetry import PassResult, Totals
from hermes_mlx.compactor.transcript import (
    TranscriptError,
    clip_for_summary,
    content_text,
    head_end,
    make_counter,
    repair,
    tail_start,
    transcript_tokens,
)
from hermes_mlx.summarizer.api import Message, Summarizer

logger = logging.getLogger(telemetry.LOGGER_NAME)

PRUNED_TAG = "[tool output pruned:"
DUPLICATE_TAG = "[duplicate tool output:"
PRUNE_MIN_CHARS = 400  # shorter results cost less than their one-line summary saves
PRUNE_TARGET_RATIO = 0.75  # pruning alone must reach this share of the threshold to suffice
SUMMARY_RATIO = 0.2
SUMMARY_MIN_TOKENS = 512  # a forced pass over a short span: 256 made the budget drop its errors
SUMMARY_MAX_TOKENS = 4000


def _call_names(messages: list[Message]) -> dict[str, str]:
    names = {}
    for message in messages:
        for call in message.get("tool_calls") or []:
            names[call.get("id")] = (call.get("function") or {}).get("name", "")
    return names


def one_line(name: str, text: str) -> str:
    """A tool result reduced to what a later reader needs to know it happened."""
    lines = text.splitlines()
    first = next((line.strip() for line in lines if line.strip()), "")
    if len(first) > 120:
        first = first[:117] + "..."
    return f"{PRUNED_TAG} {name or 'tool'}, {len(lines)} lines, {len(text):,} chars; first line: {first}]"


def prune_tool_results(middle: list[Message], later: list[Message] = ()) -> tuple[list[Message], int, int]:
    """Old tool results as one-line summaries; a result repeated later says so instead.

    Returns (pruned copy, results pruned, duplicates removed). The pairing of calls and results
    is untouched: only the content of tool messages changes.
    """
    names = _call_names(list(middle) + list(later))
    seen_later = {content_text(m) for m in later if m.get("role") == "tool"}
    last_at = {content_text(m): i for i, m in enumerate(middle) if m.get("role") == "tool"}
    out: list[Message] = []
    pruned = duplicates = 0
    for i, message in enumerate(middle):
        if message.get("role") != "tool":
            out.append(message)
            continue
        text = content_text(message)
        name = names.get(message.get("tool_call_id")) or message.get("name") or "tool"
        if text.startswith((PRUNED_TAG, DUPLICATE_TAG)):
            out.append(message)
            continue
        again = text in seen_later or last_at[text] > i
        if again and len(text) >= 40:
            out.append({**message, "content": f"{DUPLICATE_TAG} {name}, identical to a later result]"})
            duplicates += 1
        elif len(text) >= PRUNE_MIN_CHARS:
            out.append({**message, "content": one_line(name, text)})
            pruned += 1
        else:
            out.append(message)
    return out, pruned, duplicates


class BatchCompactor:
    """Threshold-triggered compaction over one session (the `/compress` path when forced)."""

    def __init__(
        self,
        summarizer: Summarizer,
        *,
        context_limit: int = 32768,
        threshold_tokens: int | None = None,
        tail_tokens: int | None = None,
        protect_first_n: int = 3,
        protect_last_n: int = 2,
        summary_budget_tokens: int | None = None,
        max_chars_per_message: int = 24_000,
        session_id: str = "",
        main_model: str = "",
        on_compacted: Callable[[list[Message]], object] | None = None,
    ):
        self.summarizer = summarizer
        self.context_limit = context_limit
        self.threshold_tokens = threshold_tokens or int(context_limit * THRESHOLD_RATIO)
        self.tail_tokens = tail_tokens if tail_tokens is not None else int(self.threshold_tokens * TAIL_RATIO)
        self.protect_first_n = protect_first_n
        self.protect_last_n = protect_last_n
        self.summary_budget_tokens = summary_budget_tokens
        self.max_chars_per_message = max_chars_per_message
        self.session_id = session_id
        self.main_model = main_model
        self.on_compacted = on_compacted
        self.count = make_counter(getattr(summarizer, "count_tokens", None))
        self.totals = Totals()

    def compact(self, messages: list[Message], *, focus: str | None = None, force: bool = False) -> PassResult:
        """One pass if over the threshold (or forced). Never raises; failure returns the input."""
        started = time.monotonic()
        try:
            return self._compact(messages, focus, force, started)
        except Exception as exc:
            logger.warning("batch compaction pass failed, transcript unchanged: %s", exc, exc_info=True)
            data = None
            try:
                data = self._emit("error", messages, messages, None, None, None, 0, None, started, {})
            except Exception:
                pass
            return PassResult(messages, "error", error=f"{type(exc).__name__}: {exc}", telemetry=data)

    def _compact(self, messages, focus, force, started) -> PassResult:
        try:
            prepared, _ = repair(messages)
        except TranscriptError as exc:
            logger.warning("batch compaction skipped: %s", exc)
            data = self._emit("invalid_transcript", messages, messages, None, None, None, 0, None, started, {})
            return PassResult(messages, "invalid_transcript", error=str(exc), telemetry=data)

        tokens_before = transcript_tokens(prepared, self.count)
        if not force and tokens_before < self.threshold_tokens:
            return PassResult(messages, "below_threshold")
        head = head_end(prepared, self.protect_first_n)
        tail = tail_start(prepared, head, self.tail_tokens, self.protect_last_n, self.count)
        if head >= tail:
            return PassResult(messages, "idle")
        middle, later = prepared[head:tail], prepared[tail:]
        middle_tokens = transcript_tokens(middle, self.count)

        # Stage 1: cheap pruning. When it alone gets well under the threshold, no model is needed.
        pruned, n_pruned, n_dups = prune_tool_results(middle, later)
        counts = {"pruned_tool_results": n_pruned, "duplicates_removed": n_dups}
        if n_pruned + n_dups and not force:
            candidate = prepared[:head] + pruned + later
            tokens = transcript_tokens(candidate, self.count)
            if tokens <= self.threshold_tokens * PRUNE_TARGET_RATIO:
                notify(self.on_compacted, candidate)
                data = self._emit(
                    "pruned", messages, candidate, tokens_before, tokens, middle_tokens, 0, None, started, counts
                )
                return PassResult(candidate, "pruned", changed=True, telemetry=data, details=counts)

        # Stage 3: summarize the middle, iteratively over the last summary found there. The
        # summarizer gets the tool output unpruned: its ledger reads every error, path and
        # command there (a pruned result kept only its first line), while the model never sees
        # raw output beside prose anyway (one "Ran: cmd (exit N)" line and its first errors).
        last = markers.last_marker(middle)
        previous = markers.parse(middle[last].get("content")) if last >= 0 else ""
        turns = [m for m in markers.display_view(middle) if not markers.is_marker(m)]
        # the ratio applies to what is new: an iterative summary carries its predecessor whole
        # (20% of old summary + new turns made the budget drop the old summary's commands)
        carried = self.count(previous) if previous else 0
        budget = self.summary_budget_tokens or max(
            SUMMARY_MIN_TOKENS,
            min(SUMMARY_MAX_TOKENS, carried + int(max(middle_tokens - carried, 0) * SUMMARY_RATIO)),
        )
        clipped = clip_for_summary(turns, self.max_chars_per_message)
        result = call_summarizer(
            lambda: self.summarizer.update(previous or None, clipped, focus=focus or None, budget_tokens=budget)
        )
        aux = result.model
        if not result.ok:
            logger.info("batch summarization failed, transcript unchanged: %s", result.error)
            data = self._emit(
                "summarize_failed",
                messages,
                messages,
                tokens_before,
                tokens_before,
                middle_tokens,
                0,
                None,
                started,
                counts,
                aux,
            )
            return PassResult(messages, "summarize_failed", telemetry=data, error=result.error, details=counts)

        # Stage 4: reassemble. User turns stay verbatim (one model-view row), then the marker.
        users = [m for m in middle if markers.is_plain_user(m)]
        user_rows = markers.merge_adjacent_users(users)
        marker = markers.build(result.text, micro=False)
        out, _ = repair(prepared[:head] + user_rows + [marker] + later)
        cursor = next(i for i, m in enumerate(out) if m is marker) + 1
        tokens_after = transcript_tokens(out, self.count)
        summary_tokens = self.count(result.text)
        logger.info(
            "Batch compaction: %d -> %d messages, %d -> %d tokens", len(messages), len(out), tokens_before, tokens_after
        )
        notify(self.on_compacted, out)
        data = self._emit(
            "compacted",
            messages,
            out,
            tokens_before,
            tokens_after,
            middle_tokens,
            summary_tokens,
            cursor,
            started,
            counts,
            aux,
        )
        details = {**counts, "summary": result, "iterative": bool(previous), "focus": focus}
        return PassResult(out, "compacted", changed=True, telemetry=data, details=details)

    def _emit(
        self,
        outcome,
        before,
        after,
        tokens_before,
        tokens_after,
        span_tokens,
        summary_tokens,
        cursor,
        started,
        counts,
        aux="",
    ) -> dict:
        data = telemetry.payload(
            "batch_compaction",
            self.totals,
            outcome=outcome,
            session_id=self.session_id,
            messages_before=len(before),
            messages_after=len(after),
            tokens_before=tokens_before,
            tokens_after=tokens_after,
            exchange_tokens=span_tokens,
            rolling_summary_tokens=summary_tokens,
            cursor=cursor,
            duration_ms=int((time.monotonic() - started) * 1000),
            threshold_tokens=self.threshold_tokens,
            context_limit=self.context_limit,
            main_model=self.main_model,
            aux_model=aux or model_name(self.summarizer),
            extra={
                "pruned_tool_results": counts.get("pruned_tool_results", 0),
                "duplicates_removed": counts.get("duplicates_removed", 0),
            },
        )
        telemetry.emit(data)
        return data
