"""Content-free telemetry lines, byte-compatible with the ones Hermes writes to agent.log.

One line a pass, so a log alone answers "is compaction keeping the window low, and at what
cost". Counts only: no transcript text may ever reach a payload.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field

from hermes_mlx.summarizer.api import Message

LOGGER_NAME = "agent.context_compressor"
logger = logging.getLogger(LOGGER_NAME)

MICRO_PREFIX = "micro compaction telemetry: "
BATCH_PREFIX = "batch compaction telemetry: "
MARKER = "compaction telemetry:"  # in both prefixes, and in Hermes's batch line
_DECODER = json.JSONDecoder()

# Exactly the fields Hermes's micro-compaction emits.
MICRO_FIELDS = (
    "aux_model",
    "context_limit",
    "cursor",
    "duration_ms",
    "event",
    "exchange_tokens",
    "main_model",
    "messages_after",
    "messages_before",
    "occupancy_pct",
    "outcome",
    "passes_total",
    "rolling_summary_tokens",
    "session_id",
    "threshold_tokens",
    "tokens_after",
    "tokens_before",
    "tokens_delta",
    "tokens_saved_total",
)


@dataclass
class Totals:
    """Per-session running counters: the last line of a run summarizes the whole run."""

    passes: int = 0
    tokens_saved: int = 0


@dataclass
class PassResult:
    """What one compaction pass did. `telemetry` is None when no pass ran (cadence, nothing to do)."""

    messages: list[Message]
    outcome: str
    changed: bool = False
    telemetry: dict | None = None
    error: str | None = None
    details: dict = field(default_factory=dict)


def _int(value: object) -> int:
    try:
        return int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0


def payload(
    event: str,
    totals: Totals,
    *,
    outcome: str,
    session_id: str = "",
    messages_before: int,
    messages_after: int,
    tokens_before: int | None,
    tokens_after: int | None,
    exchange_tokens: int | None = None,
    rolling_summary_tokens: int = 0,
    cursor: int | None = None,
    duration_ms: int | None = None,
    threshold_tokens: int | None = None,
    context_limit: int | None = None,
    main_model: str = "",
    aux_model: str = "",
    extra: dict | None = None,
) -> dict:
    """Build one pass's payload and advance the session totals (as Hermes does, on every pass)."""
    known = tokens_before is not None and tokens_after is not None
    delta = tokens_after - tokens_before if known else None  # type: ignore[operator]
    totals.passes += 1
    totals.tokens_saved -= delta or 0
    occupancy = (
        round(tokens_after / threshold_tokens * 100, 1)
        if threshold_tokens and tokens_after is not None and threshold_tokens > 0
        else None
    )
    data = {
        "event": event,
        "session_id": session_id or "",
        "outcome": outcome,
        "messages_before": _int(messages_before),
        "messages_after": _int(messages_after),
        "tokens_before": _int(tokens_before),
        "tokens_after": _int(tokens_after),
        "tokens_delta": _int(delta),
        "exchange_tokens": _int(exchange_tokens),
        "rolling_summary_tokens": _int(rolling_summary_tokens),
        "cursor": _int(cursor),
        "passes_total": totals.passes,
        "tokens_saved_total": totals.tokens_saved,
        "duration_ms": _int(duration_ms),
        "threshold_tokens": _int(threshold_tokens),
        "context_limit": _int(context_limit),
        "occupancy_pct": occupancy,
        "main_model": main_model or "",
        "aux_model": aux_model or "",
    }
    if extra:
        data.update({k: _int(v) for k, v in extra.items()})
    return data


def format_line(data: dict) -> str:
    prefix = MICRO_PREFIX if data.get("event") == "micro_compaction" else BATCH_PREFIX
    return prefix + json.dumps(data, sort_keys=True, separators=(",", ":"))


def emit(data: dict) -> None:
    """Log the line on Hermes's logger; telemetry must never be what breaks a turn."""
    try:
        logger.info("%s", format_line(data))
    except Exception as exc:  # pragma: no cover - logging itself failing
        logger.debug("failed to emit compaction telemetry: %s", exc)


def parse_line(line: str, strict: bool = False) -> dict | None:
    """The payload of a telemetry line, ours or Hermes's (found by its marker inside whatever
    prefix a log formatter adds), or None for other lines. A marker followed by a payload that
    is not a JSON object gives None, or ValueError when `strict` (a report counts those)."""
    at = line.find(MARKER)
    if at < 0:
        return None
    rest = line[at + len(MARKER) :].lstrip()
    if not rest.startswith(("{", "[")):
        return None  # e.g. "failed to emit micro-compaction telemetry: <error>"
    try:
        payload, _ = _DECODER.raw_decode(rest)
    except json.JSONDecodeError as exc:
        if strict:
            raise ValueError(f"telemetry payload is not valid JSON: {exc.msg}") from exc
        return None
    except (RecursionError, ValueError) as exc:  # [[[[... 100k deep; an integer of 5,000 digits
        if strict:
            raise ValueError("telemetry payload is nested too deeply or holds a number too long") from exc
        return None
    if not isinstance(payload, dict):
        if strict:
            raise ValueError("telemetry payload is not a JSON object")
        return None
    return payload
