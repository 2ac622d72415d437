"""Turn compaction telemetry log lines into answers: how often, how much, how long, how full.

Both we and Hermes log one content-free JSON line per pass (`micro compaction telemetry: {...}`
on logger `agent.context_compressor`; batch passes `... compaction telemetry: {...}`). The
lines sit inside whatever prefix a log formatter adds, so they are found by their marker, not
by position. Occupancy over passes is the number that matters most: a session holding steady
well under its threshold is working even when the net tokens saved look small.
"""

from __future__ import annotations

import errno
import gzip
import math
import os
import stat
import sys
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from hermes_mlx.compactor import telemetry

MAX_LINE = 1 << 20  # characters of one log line looked at
MAX_NUMBER = 1e15  # above any token count or duration a pass can log
MAX_NAME = 200  # characters of a session id or outcome kept: ids are uuids, a 1 MiB one is noise


@dataclass
class TelemetryRecord:
    """One telemetry line: its numbers (None where the line had null or no value) and two short
    names. The payload itself is not kept: a log of 1,500 one-MiB lines would hold 1.5 GB."""

    kind: str  # "micro" or "batch"
    outcome: str
    session_id: str
    messages_before: int | None = None
    messages_after: int | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None
    tokens_delta: int | None = None
    exchange_tokens: int | None = None
    duration_ms: float | None = None
    occupancy_pct: float | None = None
    threshold_tokens: int | None = None
    context_limit: int | None = None
    source: str = ""  # "file:line"


@dataclass
class ParseResult:
    records: list[TelemetryRecord] = field(default_factory=list)
    bad_lines: int = 0  # lines with the marker and a payload that did not parse
    lines_read: int = 0


@dataclass
class ReportSummary:
    passes: int
    kinds: dict[str, int]
    outcomes: dict[str, int]
    tokens_saved: int  # net: minus the sum of tokens_delta
    mean_absorbed_exchange_tokens: float | None
    absorbed_passes: int
    duration_p50_ms: float | None
    duration_p95_ms: float | None
    duration_max_ms: float | None
    occupancy_last_pct: float | None
    occupancy_peak_pct: float | None
    threshold_tokens: int | None
    sessions: list[str]


# ---------------------------------------------------------------------------------------------
# parsing


def parse_record(line: str, source: str = "") -> TelemetryRecord | None:
    """The record in one log line; None when the line carries no telemetry.

    Raises ValueError when the marker is followed by a payload that is not a JSON object.
    """
    payload = telemetry.parse_line(line, strict=True)
    if payload is None:
        return None
    at = line.find(telemetry.MARKER)
    event = str(payload.get("event") or "")
    micro = event.startswith("micro") or line[:at].rstrip().lower().endswith("micro")
    rec = TelemetryRecord(
        kind="micro" if micro else "batch",
        outcome=str(payload.get("outcome") or "unknown")[:MAX_NAME],
        session_id=str(payload.get("session_id") or "")[:MAX_NAME],
        source=source,
    )
    for name in (
        "messages_before",
        "messages_after",
        "tokens_before",
        "tokens_after",
        "tokens_delta",
        "exchange_tokens",
        "threshold_tokens",
        "context_limit",
    ):
        value = _number(payload.get(name))
        setattr(rec, name, int(value) if value is not None else None)
    rec.duration_ms = _number(payload.get("duration_ms"))
    rec.occupancy_pct = _number(payload.get("occupancy_pct"))
    if rec.tokens_delta is None and rec.tokens_before is not None and rec.tokens_after is not None:
        rec.tokens_delta = rec.tokens_after - rec.tokens_before
    return rec


def _number(value) -> float | None:
    """A usable number, or None when absent; ValueError (a bad line) for one no pass could
    log: 1e400 and Infinity parse as inf, which int() and the percentiles cannot take."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not (isinstance(value, int) or math.isfinite(value)) or abs(value) > MAX_NUMBER:
        raise ValueError(f"telemetry number out of range: {value!r:.40}")
    return value


def parse_lines(lines: Iterable[str], source: str = "") -> ParseResult:
    result = ParseResult()
    for lineno, line in enumerate(lines, start=1):
        result.lines_read += 1
        try:
            rec = parse_record(line, f"{source}:{lineno}")
        except ValueError:
            result.bad_lines += 1
            continue
        if rec is not None:
            result.records.append(rec)
    return result


def read_logs(paths: Iterable[str | Path]) -> ParseResult:
    """Records of all files in order; `-` is standard input, `.gz` files are read compressed.

    A file that cannot be read (absent, a device, corrupt gzip data) raises OSError naming it
    (the caller reports it); odd bytes are replaced; memory stays bounded (bounded_lines).
    """
    total = ParseResult()
    for path in paths:
        part = _read_one(str(path))
        total.records.extend(part.records)
        total.bad_lines += part.bad_lines
        total.lines_read += part.lines_read
    return total


def _read_one(name: str) -> ParseResult:
    if name == "-":
        return parse_lines(bounded_lines(sys.stdin), "<stdin>")
    if stat.S_IFMT(os.stat(name).st_mode) in (stat.S_IFCHR, stat.S_IFBLK):  # /dev/zero: read for ever
        raise OSError(errno.EINVAL, "a device, not a log file", name)
    opener = gzip.open if name.endswith(".gz") else open
    try:
        with opener(name, "rt", encoding="utf-8", errors="replace") as fh:
            return parse_lines(bounded_lines(fh), name)
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise OSError(errno.EINVAL, f"corrupt or truncated gzip data ({exc})", name) from None


def bounded_lines(fh: IO[str]) -> Iterator[str]:
    """The file's lines, each cut at MAX_LINE characters and the rest of it skipped, so memory
    stays bounded whatever the file holds (a gzip bomb of one endless line, a file of zeros).
    Telemetry lines are a few hundred bytes; a cut one counts as a bad line if it had the marker."""
    while line := fh.readline(MAX_LINE):
        if len(line) == MAX_LINE and not line.endswith("\n"):
            while (rest := fh.readline(MAX_LINE)) and not rest.endswith("\n"):
                pass
        yield line


# ---------------------------------------------------------------------------------------------
# aggregation


def percentile(values: list[float], pct: float) -> float | None:
    """Linear interpolation between closest ranks (numpy's default); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * pct / 100.0
    lo = int(rank)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (rank - lo)


def summarize(records: list[TelemetryRecord]) -> ReportSummary:
    absorbed = [r.exchange_tokens for r in records if r.outcome == "absorbed" and r.exchange_tokens is not None]
    durations = [r.duration_ms for r in records if r.duration_ms is not None]
    occupancy = [r.occupancy_pct for r in records if r.occupancy_pct is not None]
    thresholds = [r.threshold_tokens for r in records if r.threshold_tokens]
    sessions = list(dict.fromkeys(r.session_id for r in records))  # first-seen order, one hash each
    return ReportSummary(
        passes=len(records),
        kinds=dict(Counter(r.kind for r in records).most_common()),
        outcomes=dict(Counter(r.outcome for r in records).most_common()),
        tokens_saved=-sum(r.tokens_delta for r in records if r.tokens_delta is not None),
        mean_absorbed_exchange_tokens=sum(absorbed) / len(absorbed) if absorbed else None,
        absorbed_passes=len(absorbed),
        duration_p50_ms=percentile(durations, 50),
        duration_p95_ms=percentile(durations, 95),
        duration_max_ms=max(durations) if durations else None,
        occupancy_last_pct=occupancy[-1] if occupancy else None,
        occupancy_peak_pct=max(occupancy) if occupancy else None,
        threshold_tokens=thresholds[-1] if thresholds else None,
        sessions=sessions,
    )


def group_by_session(records: list[TelemetryRecord]) -> dict[str, list[TelemetryRecord]]:
    groups: dict[str, list[TelemetryRecord]] = {}
    for r in records:
        groups.setdefault(r.session_id, []).append(r)
    return groups


# ---------------------------------------------------------------------------------------------
# formatting


def fmt_duration(ms: float | None) -> str:
    if ms is None:
        return "-"
    return f"{ms / 1000:.1f}s" if ms >= 1000 else f"{ms:.0f}ms"


def shown(name: str) -> str:
    """A logged name as the terminal may show it: control characters (ESC, BEL, NUL, bidi
    overrides) written as escapes, so a session id cannot move the cursor or retitle the window."""
    if name.isprintable():
        return name
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in name)


def _n(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def format_summary(s: ReportSummary, bad_lines: int = 0) -> str:
    kinds = ", ".join(f"{k} {v}" for k, v in s.kinds.items())
    lines = [
        f"passes: {s.passes}" + (f" ({kinds})" if kinds else ""),
        "outcomes: " + (", ".join(f"{shown(k)} {v}" for k, v in s.outcomes.items()) or "-"),
        f"net tokens saved: {s.tokens_saved:,}",
        "mean absorbed exchange: "
        + (
            f"{s.mean_absorbed_exchange_tokens:,.0f} tokens over {s.absorbed_passes} absorbed passes"
            if s.mean_absorbed_exchange_tokens is not None
            else "-"
        ),
        f"pass duration: p50 {fmt_duration(s.duration_p50_ms)}, p95 {fmt_duration(s.duration_p95_ms)},"
        f" max {fmt_duration(s.duration_max_ms)}",
    ]
    if s.occupancy_last_pct is not None:
        of = f" of the {s.threshold_tokens:,}-token threshold" if s.threshold_tokens else " of the threshold"
        lines.append(f"occupancy: last {s.occupancy_last_pct:.1f}%, peak {s.occupancy_peak_pct:.1f}%{of}")
    if len(s.sessions) > 1:
        lines.append(f"sessions: {len(s.sessions)}")
    if bad_lines:
        lines.append(f"skipped bad lines: {bad_lines}")
    return "\n".join(lines)


def telemetry_table(records: list[TelemetryRecord], show_session: bool = False) -> str:
    """Occupancy over passes, one row per pass, in log order."""
    header = ["pass", "outcome", "messages", "tokens", "delta", "occupancy", "duration"]
    if show_session:
        header.insert(1, "session")
    rows = []
    for i, r in enumerate(records, start=1):
        delta = "?" if r.tokens_delta is None else f"{r.tokens_delta:+,}"
        row = [
            str(i),
            shown(r.outcome) if r.kind == "micro" else f"{shown(r.outcome)} (batch)",
            f"{_n(r.messages_before)} -> {_n(r.messages_after)}",
            f"{_n(r.tokens_before)} -> {_n(r.tokens_after)}",
            delta,
            "-" if r.occupancy_pct is None else f"{r.occupancy_pct:.1f}%",
            fmt_duration(r.duration_ms),
        ]
        if show_session:
            row.insert(1, shown(r.session_id) or "-")
        rows.append(row)
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]
    left = {"outcome", "session"}

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if h in left else c.rjust(w) for c, w, h in zip(cells, widths, header)).rstrip()

    return "\n".join([line(header)] + [line(r) for r in rows])


def format_report(result: ParseResult, per_session: bool = False) -> str:
    """The whole text report: summary, then the per-pass table (per session when asked)."""
    if not result.records:
        msg = "no compaction telemetry found"
        return msg + (f" (skipped bad lines: {result.bad_lines})" if result.bad_lines else "")
    if not per_session:
        s = summarize(result.records)
        return format_summary(s, result.bad_lines) + "\n\n" + telemetry_table(result.records, len(s.sessions) > 1)
    blocks = []
    for sid, recs in group_by_session(result.records).items():
        blocks.append(
            f"== session {shown(sid) or '(none)'} ==\n"
            + format_summary(summarize(recs))
            + "\n\n"
            + telemetry_table(recs)
        )
    if len(blocks) > 1:
        blocks.append("== all sessions ==\n" + format_summary(summarize(result.records)))
    if result.bad_lines:
        blocks.append(f"skipped bad lines: {result.bad_lines}")
    return "\n\n".join(blocks)
