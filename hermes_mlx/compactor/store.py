"""A SQLite session store that stays in step with compaction, modelled on Hermes's `state.db`.

Why it exists: an append-only store leaves the originals of a compacted exchange active, so a
resumed session would load the summary *and* the messages it replaced and overflow its window.
Each pass therefore soft-archives the active rows (active=0, compacted=1) and inserts the
compacted set in one transaction. Archived rows are never deleted: they stay searchable, so
nothing is lost. Writes never raise: a failed write is logged and returns False, and the
session carries on (a later pass or batch compaction puts the store right again).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

Message = dict

# Columns of their own; every other key of a message dict (the `_compressed_summary` and
# `_micro_compact_marker` flags, display_metadata, reasoning, ...) goes into `flags` as JSON.
_COLUMNS = ("role", "content", "tool_calls", "tool_call_id", "name")

SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    role TEXT NOT NULL,
    content TEXT,
    tool_calls TEXT,
    tool_call_id TEXT,
    name TEXT,
    flags TEXT,
    active INTEGER NOT NULL DEFAULT 1,
    compacted INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    archived_at REAL
);
CREATE INDEX IF NOT EXISTS idx_messages_session_active ON messages(session_id, active, position);
"""


class StoreError(RuntimeError):
    """The store cannot be opened or read (writes never raise; they return False)."""


@dataclass
class StoredMessage:
    """One row: the message plus where it sits in the session's history."""

    id: int
    session_id: str
    position: int
    active: bool
    compacted: bool
    created_at: float
    archived_at: float | None
    message: Message


class SessionStore:
    """Messages of many sessions in one SQLite file (or ":memory:").

    Row order is `position`, which only grows within a session: a compacted set is inserted
    after everything already stored, so the active rows always read back in transcript order.
    """

    def __init__(self, path: str | Path, *, clock: Callable[[], float] = time.time) -> None:
        self.path = str(path)
        self._clock = clock
        self._lock = threading.Lock()
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=5.0)
            if self.path != ":memory:":
                self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.executescript(SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open session store at {self.path}: {exc}") from exc

    # -- writes: logged, never raised ----------------------------------------------------------

    def append(self, session_id: str, messages: Iterable[Message]) -> bool:
        """Append messages as active rows after the session's last row."""
        return self._write(session_id, "append", lambda cur: self._insert(cur, session_id, messages))

    def archive_and_compact(self, session_id: str, new_messages: Iterable[Message]) -> bool:
        """Replace the active view of a session with `new_messages`, atomically.

        The previously active rows become active=0, compacted=1 (kept and searchable); the
        compacted set is inserted as the new active rows. On any failure nothing changes.
        """

        def work(cur: sqlite3.Cursor) -> None:
            cur.execute(
                "UPDATE messages SET active = 0, compacted = 1, archived_at = ? WHERE session_id = ? AND active = 1",
                (self._clock(), session_id),
            )
            self._insert(cur, session_id, new_messages)

        return self._write(session_id, "archive_and_compact", work)

    def sync(self, session_id: str, transcript: list[Message]) -> bool:
        """Append-only flush: store the messages of `transcript` beyond those already active.

        Mirrors Hermes marking persisted messages: after `archive_and_compact` the active rows
        equal the compacted transcript, so the next flush adds only the new turns.
        """

        def work(cur: sqlite3.Cursor) -> None:
            (count,) = cur.execute(
                "SELECT COUNT(*) FROM messages WHERE session_id = ? AND active = 1", (session_id,)
            ).fetchone()
            self._insert(cur, session_id, transcript[count:])

        return self._write(session_id, "sync", work)

    def _write(self, session_id: str, what: str, work: Callable[[sqlite3.Cursor], None]) -> bool:
        with self._lock:
            cur = None
            try:
                if not isinstance(session_id, str) or not session_id:
                    raise ValueError(f"session id must be a non-empty string, got {session_id!r}")
                cur = self._conn.cursor()
                cur.execute("BEGIN IMMEDIATE")
                work(cur)
                cur.execute("COMMIT")
                return True
            except Exception as exc:  # noqa: BLE001 - a store failure must never end the session
                try:
                    if self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                logger.warning(
                    "session store %s failed for session %r (%s: %s); nothing was written, the session continues",
                    what, session_id, type(exc).__name__, exc,
                )
                return False
            finally:
                if cur is not None:
                    cur.close()

    def _insert(self, cur: sqlite3.Cursor, session_id: str, messages: Iterable[Message]) -> None:
        (last,) = cur.execute(
            "SELECT COALESCE(MAX(position), -1) FROM messages WHERE session_id = ?", (session_id,)
        ).fetchone()
        now = self._clock()
        for offset, message in enumerate(messages, start=1):
            cur.execute(
                "INSERT INTO messages (session_id, position, role, content, tool_calls, tool_call_id, name,"
                " flags, active, compacted, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, 0, ?)",
                (session_id, last + offset, *_encode(message, last + offset), now),
            )

    # -- reads: a clear StoreError on failure ---------------------------------------------------

    def load_active(self, session_id: str) -> list[Message]:
        """The session as the model should see it on resume: active rows only, in order."""
        rows = self._select("session_id = ? AND active = 1", (session_id,))
        return [r.message for r in rows]

    def history(self, session_id: str) -> list[StoredMessage]:
        """Every row of a session, archived ones included (for display and audit)."""
        return self._select("session_id = ?", (session_id,))

    def search(self, session_id: str | None, text: str, *, limit: int = 100) -> list[StoredMessage]:
        """Rows whose content, tool calls or tool name contain `text` (case-insensitive for ASCII).

        Archived originals are included: compaction shortens what the model sees, never what
        can be found. A plain LIKE keeps substring semantics exact (paths, hashes, error lines),
        which an FTS tokenizer would not.
        """
        pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        match = (
            "(content LIKE ? ESCAPE '\\' OR tool_calls LIKE ? ESCAPE '\\' OR name LIKE ? ESCAPE '\\'"
            " OR flags LIKE ? ESCAPE '\\')"
        )
        args: tuple = (pattern,) * 4
        if session_id is not None:
            match = "session_id = ? AND " + match
            args = (session_id, *args)
        return self._select(match, args, limit=limit)

    def sessions(self) -> list[str]:
        """Session ids, oldest first."""
        rows = self._read("SELECT session_id FROM messages GROUP BY session_id ORDER BY MIN(id)", ())
        return [r[0] for r in rows]

    def _select(self, where: str, args: tuple, limit: int | None = None) -> list[StoredMessage]:
        sql = (
            "SELECT id, session_id, position, active, compacted, created_at, archived_at,"
            f" role, content, tool_calls, tool_call_id, name, flags FROM messages WHERE {where}"
            " ORDER BY session_id, position" + (f" LIMIT {int(limit)}" if limit is not None else "")
        )
        out = []
        for row in self._read(sql, args):
            rid, sid, pos, active, compacted, created, archived, *cols = row
            out.append(StoredMessage(rid, sid, pos, bool(active), bool(compacted), created, archived, row_to_message(*cols)))
        return out

    def _read(self, sql: str, args: tuple) -> list[tuple]:
        with self._lock:
            try:
                return self._conn.execute(sql, args).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"cannot read session store at {self.path}: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _encode(message: Message, position: int) -> tuple:
    """Message dict -> (role, content, tool_calls, tool_call_id, name, flags) column values."""
    if not isinstance(message, dict):
        raise TypeError(f"message at position {position} is a {type(message).__name__}, not a dict")
    role = message.get("role")
    if not isinstance(role, str):
        raise ValueError(f"message at position {position} has no string role")
    extra = {k: v for k, v in message.items() if k not in _COLUMNS}
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        extra["content"] = content  # a list of parts, kept whole
        content = None
    elif "content" not in message:
        extra["_no_content"] = True
    for key in ("tool_calls", "tool_call_id", "name"):
        if key in message and message[key] is None:
            extra[key] = None  # an explicit None reads back as one
    tool_calls = message.get("tool_calls")
    return (
        role,
        content,
        json.dumps(tool_calls, ensure_ascii=False) if tool_calls is not None else None,
        message.get("tool_call_id"),
        message.get("name"),
        json.dumps(extra, ensure_ascii=False, sort_keys=True) if extra else None,
    )


def row_to_message(role: str, content, tool_calls, tool_call_id, name, flags) -> Message:
    """Column values -> the message dict that was stored (also used to read a store file as a session)."""
    extra = json.loads(flags) if flags else {}
    message: Message = {"role": role}
    if not extra.pop("_no_content", False):
        message["content"] = content
    if tool_calls is not None:
        message["tool_calls"] = json.loads(tool_calls)
    if tool_call_id is not None:
        message["tool_call_id"] = tool_call_id
    if name is not None:
        message["name"] = name
    message.update(extra)
    return message
