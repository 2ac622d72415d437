"""What every compaction pass shares: it never raises, it skips a transcript it cannot repair, and it
writes one telemetry line. Micro and batch passes differ only in what they do in between.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from hermes_mlx.compactor import telemetry
from hermes_mlx.compactor.settings import CompactorSettings
from hermes_mlx.compactor.telemetry import PassResult, Totals
from hermes_mlx.compactor.transcript import TranscriptError, make_counter, repair
from hermes_mlx.summarizer.api import Message, Summarizer, SummaryResult

logger = logging.getLogger(telemetry.LOGGER_NAME)


def summarizer_model(summarizer: object) -> str:
    """The summarizer's model name for telemetry, when it says one."""
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


class Compactor:
    """One session's compactor. A subclass names its telemetry `event` and log `label`, and runs its
    pass through `guarded`, which owns the never-raise rule, the repair step and the error line.

    Options come as a CompactorSettings, or as its field names (`Compactor(summarizer, tail_tokens=300)`);
    an unknown option is a TypeError naming it.
    """

    event = ""  # telemetry event name
    label = ""  # how log lines name the pass

    def __init__(self, summarizer: Summarizer, settings: CompactorSettings | None = None, **options) -> None:
        self.summarizer = summarizer
        self.settings = CompactorSettings.of(settings, **options)
        self.count = make_counter(getattr(summarizer, "count_tokens", None))
        self.totals = Totals()

    def guarded(self, messages: list[Message], run: Callable[[list[Message], float], PassResult]) -> PassResult:
        """`run(repaired, started)` as one pass that cannot raise: an unrepairable transcript and
        any exception come back as the input unchanged, with a telemetry line."""
        started = time.monotonic()
        try:
            try:
                prepared, _ = repair(messages)
            except TranscriptError as exc:
                logger.warning("%s skipped: %s", self.label, exc)
                data = self.emit("invalid_transcript", messages, messages, started)
                return PassResult(messages, "invalid_transcript", error=str(exc), telemetry=data)
            return run(prepared, started)
        except Exception as exc:  # best effort: the turn must always complete
            logger.warning("%s pass failed, transcript unchanged: %s", self.label, exc, exc_info=True)
            data = None
            try:
                data = self.emit("error", messages, messages, started)
            except Exception:
                pass
            return PassResult(messages, "error", error=f"{type(exc).__name__}: {exc}", telemetry=data)

    def state_figures(self) -> dict:
        """Telemetry figures the compactor's own state supplies on every line (overridden)."""
        return {}

    def emit(self, outcome: str, before: list[Message], after: list[Message], started: float, **figures) -> dict:
        """Log one pass's telemetry line and return its payload. `figures` are telemetry.payload's
        measured fields by name (tokens_before, tokens_after, exchange_tokens, rolling_summary_tokens,
        cursor, aux_model, extra); those not given come from `state_figures()`, then payload's defaults."""
        named = {"tokens_before": None, "tokens_after": None, **self.state_figures(), **figures}
        s = self.settings
        data = telemetry.payload(
            self.event,
            self.totals,
            outcome=outcome,
            session_id=s.session_id,
            messages_before=len(before),
            messages_after=len(after),
            duration_ms=int((time.monotonic() - started) * 1000),
            threshold_tokens=s.threshold,
            context_limit=s.context_limit,
            main_model=s.main_model,
            **{**named, "aux_model": named.get("aux_model") or summarizer_model(self.summarizer)},
        )
        telemetry.emit(data)
        return data
