"""Recall: search what compaction removed from this session and give the lines back verbatim.

Why it exists: a summary written by a small model keeps the facts code can see (paths, commands,
errors, ids), not every line, and a fact a summary lost is gone for the main model unless it can
look. Our session store (compactor/store.py) never deletes: every row a pass replaced stays,
archived (active=0, compacted=1). This module indexes those archived rows, and only those, in an
SQLite FTS5 table and answers one tool the context engine offers the main model
(`hermes_mlx_recall`): the lines that match a query, exactly as they were written, bounded in
size and with secrets redacted (summarizer.redact, the same pass the summarizer's input gets).

The index is a table of its own (its own connection, beside the store's rows, never inside the
store's schema), filled lazily from `SessionStore.history` before each search, so nothing has to
happen at compaction time for recall to be current. A malformed call gets a JSON error string,
never an exception: Hermes hands our answer to the model as the tool result.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path

from hermes_mlx.compactor.store import SessionStore
from hermes_mlx.compactor.transcript import content_text
from hermes_mlx.errors import UsageError
from hermes_mlx.summarizer.redact import redact

logger = logging.getLogger("hermes_mlx.integrations")

TOOL_NAME = "hermes_mlx_recall"
MAX_QUERY_CHARS = 500
MAX_TERMS = 8
MAX_MATCHES = 12  # lines handed back at most
DEFAULT_MATCHES = 6
MAX_LINE_CHARS = 600  # a longer matching line is cut to a window around its first match
MAX_RESULT_CHARS = 4000  # the whole answer's text, so one call cannot flood the context
_WORD = re.compile(r"[^\s\"'`()\[\]{}<>,;:!?]+")

TOOL_SCHEMA = {
    "name": TOOL_NAME,
    "description": (
        "Search the earlier messages of this conversation that context compaction removed (the"
        " summary marker says when that happened) and get the matching lines back word for word:"
        " exact file paths, commands, error messages, ids, numbers. Use it when the summary mentions"
        " something without the detail you need. Query with a few distinctive words."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "A few distinctive words or an exact fragment to find."},
            "limit": {
                "type": "integer",
                "description": f"Most lines to return (1-{MAX_MATCHES}, default {DEFAULT_MATCHES}).",
            },
        },
        "required": ["query"],
    },
}

MARKER_NOTE = (
    f"Messages folded into this summary are kept: call the `{TOOL_NAME}` tool with a few distinctive"
    " words to get their exact lines back."
)


class RecallError(UsageError):
    """A tool call we cannot answer (its message goes back to the model as the tool's error)."""


def terms_of(query: str) -> list[str]:
    """The query's words, as the model wrote them (punctuation at their ends dropped)."""
    words = [w.strip(".-/") or w for w in _WORD.findall(query)]
    return [w for w in dict.fromkeys(words) if w][:MAX_TERMS]


def _fts_query(terms: list[str], joiner: str) -> str:
    """Each term as an FTS5 phrase (the tokenizer splits `src/a_b.py` the same way on both sides)."""
    return f" {joiner} ".join('"' + t.replace('"', '""') + '"' for t in terms)


def row_text(message: dict) -> str:
    """What a row says: its content, then the calls it made (name and arguments)."""
    parts = [content_text(message)]
    for call in message.get("tool_calls") or []:
        function = (call or {}).get("function") or {}
        parts.append(f"[tool call {function.get('name', '')}] {function.get('arguments', '')}")
    return "\n".join(p for p in parts if p)


def window(line: str, terms: Iterable[str], width: int = MAX_LINE_CHARS) -> str:
    """The line itself when short, else `width` characters around its first matching term."""
    if len(line) <= width:
        return line
    low = line.lower()
    hits = [low.find(t.lower()) for t in terms]
    at = min((h for h in hits if h >= 0), default=0)
    start = max(0, min(at - width // 3, len(line) - width))
    piece = line[start : start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(line) else "")


class RecallIndex:
    """FTS5 over one store's archived rows. Thread-safe; the index may live in the store's file
    (a table of its own) or anywhere else, since it holds its own copy of the text."""

    def __init__(self, store: SessionStore, path: str | Path = ":memory:") -> None:
        self.store = store
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(path), check_same_thread=False, timeout=5.0)
        self._conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS hermes_mlx_recall USING fts5(session UNINDEXED, role UNINDEXED, body)"
        )
        self._conn.commit()

    def refresh(self, session_id: str) -> int:
        """Index the session's archived rows not yet indexed; returns how many were added."""
        rows = [r for r in self.store.history(session_id) if not r.active and r.compacted]
        with self._lock:
            have = {
                rid
                for (rid,) in self._conn.execute(
                    "SELECT rowid FROM hermes_mlx_recall WHERE session = ?", (session_id,)
                ).fetchall()
            }
            new = [r for r in rows if r.id not in have]
            self._conn.executemany(
                "INSERT INTO hermes_mlx_recall (rowid, session, role, body) VALUES (?, ?, ?, ?)",
                [(r.id, session_id, r.message.get("role", ""), row_text(r.message)) for r in new],
            )
            self._conn.commit()
        return len(new)

    def search(self, sessions: str | list[str], query: str, limit: int = DEFAULT_MATCHES) -> dict:
        """The matching lines of the sessions' archived rows, best rows first, redacted and bounded.
        Several ids: one conversation carried across Hermes's session rotations."""
        terms = terms_of(query)
        if not terms:
            raise RecallError("query has no words to search for")
        ids = [sessions] if isinstance(sessions, str) else list(dict.fromkeys(sessions))
        for session_id in ids:
            self.refresh(session_id)
        rows: list[tuple[str, str]] = []
        marks = ", ".join("?" * len(ids))
        with self._lock:
            for joiner in ("AND", "OR"):  # every word first; any word when no row has them all
                rows = self._conn.execute(
                    f"SELECT role, body FROM hermes_mlx_recall WHERE session IN ({marks})"
                    " AND hermes_mlx_recall MATCH ? ORDER BY bm25(hermes_mlx_recall) LIMIT 50",
                    (*ids, _fts_query(terms, joiner)),
                ).fetchall()
                if rows or len(terms) == 1:
                    break
        return _answer(query, terms, rows, limit)

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _answer(query: str, terms: list[str], rows: list[tuple[str, str]], limit: int) -> dict:
    lowered = [t.lower() for t in terms]
    matches: list[dict] = []
    used = 0
    truncated = False
    seen: set[str] = set()
    for role, body in rows:
        lines = [ln for ln in body.splitlines() if ln.strip()]
        # lines with the most query words first; a row whose words span lines still gives its best line
        scored = sorted(lines, key=lambda ln: -sum(t in ln.lower() for t in lowered))
        for line in scored[:2]:
            if not any(t in line.lower() for t in lowered):
                continue
            text = window(redact(line), terms)
            if text in seen:
                continue
            if len(matches) >= limit or used + len(text) > MAX_RESULT_CHARS:
                truncated = True
                break
            seen.add(text)
            used += len(text)
            matches.append({"role": role, "text": text})
        if truncated:
            break
    answer: dict = {"query": query, "matches": matches}
    if truncated:
        answer["truncated"] = True
    if not matches:
        answer["note"] = "nothing removed by compaction in this session matches"
    return answer


def handle_call(index: RecallIndex | None, session_id: str | list[str], args: object) -> str:
    """One tool call's JSON answer; every bad input is a JSON error, nothing raises."""
    try:
        if isinstance(args, str):  # some hosts pass the raw arguments string
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError as exc:
                raise RecallError(f"arguments are not valid JSON: {exc}") from None
        if not isinstance(args, dict):
            raise RecallError("arguments must be an object with a 'query' string")
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            raise RecallError("'query' must be a non-empty string")
        if len(query) > MAX_QUERY_CHARS:
            raise RecallError(f"'query' is longer than {MAX_QUERY_CHARS} characters; use a few distinctive words")
        limit = args.get("limit", DEFAULT_MATCHES)
        if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not 1 <= int(limit) <= MAX_MATCHES:
            raise RecallError(f"'limit' must be a whole number from 1 to {MAX_MATCHES}")
        if index is None or not session_id:
            raise RecallError("nothing has been compacted in this session yet")
        return json.dumps(index.search(session_id, query, int(limit)), ensure_ascii=False)
    except RecallError as exc:
        return json.dumps({"error": f"{TOOL_NAME}: {exc}"})
    except Exception as exc:  # a store or index fault: the model is told, the turn goes on
        logger.warning("hermes-mlx recall failed: %s", exc, exc_info=True)
        return json.dumps({"error": f"{TOOL_NAME} failed: {type(exc).__name__}: {exc}"})


__all__ = [
    "MARKER_NOTE",
    "TOOL_NAME",
    "TOOL_SCHEMA",
    "RecallError",
    "RecallIndex",
    "handle_call",
    "terms_of",
]
