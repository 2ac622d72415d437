"""A SQLite session store that stays in step with compaction, modelled on Hermes's `state.db`.

Why it exists: an append-only store leaves the originals of a compacted exchange active, so a
resumed session would load the summary *and* the messages it replaced and overflow its window.
Each write therefore brings the session's active rows in line with the transcript in one
transaction: rows the transcript no longer holds are soft-archived (active=0, compacted=1, as
Hermes does), rows new to it are inserted, rows in both stay as they are. Archived rows are
never deleted, so nothing is lost and the store grows with the transcript, not with passes.

Writes never raise (a pass must not die on a store), but every failure is counted in
`failures` so callers can report it and exit non-zero; the next write that succeeds puts the
store right again, because it reconciles against the whole transcript. Opening checks, before
anything is written, that the file is ours and writable: a Hermes state.db, a read-only or
immutable file (or -wal/-shm beside it, which SQLite would otherwise mmap into a SIGBUS) and a
locked database are each one clear StoreError.
"""

from __future__ import annotations

import contextlib
import difflib
import logging
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from hermes_mlx.compactor.store_checks import (  # the errors and checks callers import from here
    RowDecodeError,
    StoreError,
    StoreFormatError,  # noqa: F401
    check_schema,
    check_writable,
    reason_of,
)
from hermes_mlx.compactor.store_rows import clean, encode, equal_rows, rewritten_rows, row_to_message, session_key

logger = logging.getLogger(__name__)

Message = dict

SCHEMA = [
    """CREATE TABLE IF NOT EXISTS messages (
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
    archived_at REAL,
    active_order INTEGER
)""",
    "CREATE INDEX IF NOT EXISTS idx_messages_session_active ON messages(session_id, active, position)",
    """CREATE TABLE IF NOT EXISTS replay_state (
    session_id TEXT PRIMARY KEY,
    source_digest TEXT NOT NULL,
    source_messages INTEGER NOT NULL,
    consumed INTEGER NOT NULL,
    turns INTEGER NOT NULL,
    pending INTEGER NOT NULL DEFAULT 0,
    passes INTEGER NOT NULL DEFAULT 0,
    updated_at REAL NOT NULL
)""",
]


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


@dataclass
class ReplayState:
    """How far a replay of one source transcript got: written with the rows it describes.

    `consumed` source messages (`turns` whole turns) are in the active rows; `pending` means the
    passes after the last of those turns had not finished, so a resumed replay runs them first.
    """

    source_digest: str
    source_messages: int
    consumed: int
    turns: int
    pending: bool = False
    passes: int = 0


class SessionStore:
    """Messages of many sessions in one SQLite file (or ":memory:").

    `position` only grows within a session (the order rows were written, for audit);
    `active_order` is a row's index in the session's current transcript (NULL once archived).
    """

    def __init__(self, path: str | Path, *, clock: Callable[[], float] = time.time, timeout: float = 5.0) -> None:
        self.path = str(path)
        self._clock = clock
        self._lock = threading.Lock()
        self.failures: Counter[str] = Counter()  # reason -> failed writes
        self.last_error: str | None = None
        # session -> (data_version, active rows as last committed here): no re-reading 50 MB a write
        self._active: dict[str, tuple[int, list[tuple]]] = {}
        conn = None
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
                check_writable(Path(self.path))
                check_schema(Path(self.path))
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=timeout)
            if self.path != ":memory:":
                conn.execute("PRAGMA journal_mode=WAL")
            with write_transaction(conn) as cur:  # also proves we can take the write lock now
                for statement in SCHEMA:
                    cur.execute(statement)
                cols = {r[1] for r in cur.execute("PRAGMA table_info(messages)")}
                if "active_order" not in cols:  # a store written before active_order existed
                    cur.execute("ALTER TABLE messages ADD COLUMN active_order INTEGER")
                    cur.execute("UPDATE messages SET active_order = position WHERE active = 1")
        except (OSError, sqlite3.Error) as exc:
            if conn is not None:
                conn.close()
            raise StoreError(f"cannot open session store at {self.path}: {reason_of(exc)}") from exc
        self._conn = conn

    # -- writes: counted and logged, never raised ----------------------------------------------

    def append(self, session_id: str, messages: Iterable[Message]) -> bool:
        """Append messages as active rows after the session's current transcript."""

        def work(cur: sqlite3.Cursor) -> None:
            (start,) = cur.execute(
                "SELECT COALESCE(MAX(active_order), -1) + 1 FROM messages WHERE session_id = ? AND active = 1",
                (session_key(session_id),),
            ).fetchone()
            self._active.pop(session_key(session_id), None)
            self._insert(cur, session_id, list(enumerate(messages, start=start)))

        return self._write(session_id, "append", work)

    def archive_and_compact(self, session_id: str, new_messages: Iterable[Message]) -> bool:
        """Make `new_messages` the session's active view, atomically.

        Rows it replaced become active=0, compacted=1 (kept and searchable); rows new to it are
        inserted; rows it kept stay. On any failure nothing changes.
        """
        return self._sync("archive_and_compact", session_id, list(new_messages), None)

    def sync(self, session_id: str, transcript: list[Message], state: ReplayState | None = None) -> bool:
        """Bring the active rows in line with `transcript` (and record `state` with them).

        After a compaction this inserts only the new turns, as Hermes's append-only flush does;
        after a failed write it also archives what the transcript dropped meanwhile.
        """
        return self._sync("sync", session_id, transcript, state)

    def _sync(self, what: str, session_id: str, transcript: list[Message], state: ReplayState | None) -> bool:
        def work(cur: sqlite3.Cursor) -> None:
            self._reconcile(cur, session_id, transcript)
            if state is not None:
                cur.execute(
                    "INSERT OR REPLACE INTO replay_state (session_id, source_digest, source_messages, consumed,"
                    " turns, pending, passes, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        session_key(session_id),
                        state.source_digest,
                        state.source_messages,
                        state.consumed,
                        state.turns,
                        int(state.pending),
                        state.passes,
                        self._clock(),
                    ),
                )

        return self._write(session_id, what, work)

    def _write(self, session_id: str, what: str, work: Callable[[sqlite3.Cursor], None]) -> bool:
        with self._lock:
            try:
                if not isinstance(session_id, str) or not session_id:
                    raise ValueError(f"session id must be a non-empty string, got {session_id!r}")
                with write_transaction(self._conn) as cur:
                    work(cur)
                return True
            except Exception as exc:  # noqa: BLE001 - a store failure must never end the session
                self._active.clear()  # rolled back: what it cached was never committed
                reason = reason_of(exc)
                self.failures[reason] += 1
                self.last_error = reason
                logger.warning(
                    "session store %s failed for session %r (%s); nothing was written, the session continues",
                    what,
                    session_id,
                    reason,
                )
                return False

    def _reconcile(self, cur: sqlite3.Cursor, session_id: str, messages: list[Message]) -> None:
        key = session_key(session_id)
        encoded = [encode(m, i) for i, m in enumerate(messages)]
        rows = self._active_rows(cur, key)
        matcher = difflib.SequenceMatcher(None, [r[2] for r in rows], encoded, autojunk=False)
        kept: dict[int, int] = {}  # row index -> transcript index
        for a, b, size in matcher.get_matching_blocks():
            kept.update((a + k, b + k) for k in range(size))
        rewritten = rewritten_rows(rows, messages, matcher.get_opcodes())  # row index -> transcript index
        kept.update(equal_rows(rows, encoded, kept, rewritten))
        now = self._clock()
        cur.executemany(
            "UPDATE messages SET active = 0, compacted = 1, archived_at = ?, active_order = NULL WHERE id = ?",
            [(now, row[0]) for i, row in enumerate(rows) if i not in kept and i not in rewritten],
        )
        cur.executemany(
            "UPDATE messages SET active_order = ? WHERE id = ?",
            [(j, rows[i][0]) for i, j in kept.items() if rows[i][1] != j],
        )
        cur.executemany(
            "UPDATE messages SET role = ?, content = ?, tool_calls = ?, tool_call_id = ?, name = ?, flags = ?,"
            " active_order = ? WHERE id = ?",
            [(*encoded[j], j, rows[i][0]) for i, j in rewritten.items()],
        )
        taken = set(kept.values()) | set(rewritten.values())
        last = self._insert(
            cur, session_id, [(j, encoded[j]) for j in range(len(encoded)) if j not in taken], encoded=True
        )
        ids = {j: rows[i][0] for i, j in (*kept.items(), *rewritten.items())}
        ids.update(
            (order, rid)
            for rid, order in cur.execute(
                "SELECT id, active_order FROM messages WHERE session_id = ? AND position > ?", (key, last)
            )
        )
        (version,) = cur.execute("PRAGMA data_version").fetchone()
        self._active[key] = (version, [(ids[j], j, encoded[j]) for j in range(len(encoded))])

    def _active_rows(self, cur: sqlite3.Cursor, key: str) -> list[tuple]:
        """(id, active_order, encoded columns) of the session's active rows, in order: from what this
        connection last committed while no other connection has written, else read back."""
        (version,) = cur.execute("PRAGMA data_version").fetchone()
        cached = self._active.get(key)
        if cached is not None and cached[0] == version:
            return cached[1]
        return [
            (r[0], r[1], tuple(r[2:]))
            for r in cur.execute(
                "SELECT id, active_order, role, content, tool_calls, tool_call_id, name, flags FROM messages"
                " WHERE session_id = ? AND active = 1 ORDER BY active_order, position",
                (key,),
            ).fetchall()
        ]

    def _insert(
        self, cur: sqlite3.Cursor, session_id: str, items: list[tuple[int, object]], encoded: bool = False
    ) -> int:
        """Insert (active_order, message) pairs after the session's last position (returned)."""
        key = session_key(session_id)
        (last,) = cur.execute(
            "SELECT COALESCE(MAX(position), -1) FROM messages WHERE session_id = ?", (key,)
        ).fetchone()
        now = self._clock()
        rows = []
        for offset, (order, message) in enumerate(items, start=1):
            values = message if encoded else encode(message, order)  # type: ignore[arg-type]
            rows.append((key, last + offset, *values, now, order))
        cur.executemany(
            "INSERT INTO messages (session_id, position, role, content, tool_calls, tool_call_id, name,"
            " flags, active, compacted, created_at, active_order) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, 0, ?, ?)",
            rows,
        )
        return last

    # -- reads: a clear StoreError on failure ---------------------------------------------------

    def load_active(self, session_id: str) -> list[Message]:
        """The session as the model should see it on resume: active rows only, in order."""
        rows = self._select("session_id = ? AND active = 1", (session_key(session_id),), order="active_order, position")
        return [r.message for r in rows]

    def history(self, session_id: str) -> list[StoredMessage]:
        """Every row of a session, archived ones included, in the order written (for audit)."""
        return self._select("session_id = ?", (session_key(session_id),))

    def archived_ids(self, session_id: str) -> list[int]:
        """Ids of the session's archived rows, oldest first. Ids only, read from the index alone
        (no row, no text): a caller keeping its own copy in step (the recall index) asks this on
        every call and reads only the rows it has not seen. Archived rows never change again."""
        rows = self._read(
            "SELECT id FROM messages WHERE session_id = ? AND active = 0 ORDER BY position", (session_key(session_id),)
        )
        return [r[0] for r in rows]

    def rows(self, ids: list[int]) -> list[StoredMessage]:
        """The rows with these ids (any session), in id order."""
        ids = [int(i) for i in ids]
        return self._select(f"id IN ({', '.join('?' * len(ids))})", tuple(ids), order="id") if ids else []

    def progress(self, session_id: str) -> ReplayState | None:
        """Where the last replay of this session stopped (None if none was recorded)."""
        rows = self._read(
            "SELECT source_digest, source_messages, consumed, turns, pending, passes FROM replay_state"
            " WHERE session_id = ?",
            (session_key(session_id),),
        )
        if not rows:
            return None
        digest, total, consumed, turns, pending, passes = rows[0]
        return ReplayState(digest, total, consumed, turns, bool(pending), passes)

    def search(self, session_id: str | None, text: str, *, limit: int = 100) -> list[StoredMessage]:
        """Rows whose content, tool calls or tool name contain `text` (case-insensitive for ASCII).

        Archived originals are included: compaction shortens what the model sees, never what
        can be found. A plain LIKE keeps substring semantics exact (paths, hashes, error lines),
        which an FTS tokenizer would not.
        """
        text = clean(text)
        pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        match = (
            "(content LIKE ? ESCAPE '\\' OR tool_calls LIKE ? ESCAPE '\\' OR name LIKE ? ESCAPE '\\'"
            " OR flags LIKE ? ESCAPE '\\')"
        )
        args: tuple = (pattern,) * 4
        if session_id is not None:
            match = "session_id = ? AND " + match
            args = (session_key(session_id), *args)
        return self._select(match, args, limit=limit)

    def sessions(self) -> list[str]:
        """Session ids, oldest first."""
        rows = self._read("SELECT session_id FROM messages GROUP BY session_id ORDER BY MIN(id)", ())
        return [r[0] for r in rows]

    def integrity_check(self) -> str:
        """SQLite's own verdict on the file ("ok" when sound)."""
        return "; ".join(str(r[0]) for r in self._read("PRAGMA integrity_check", ()))

    def _select(
        self, where: str, args: tuple, limit: int | None = None, order: str = "position"
    ) -> list[StoredMessage]:
        sql = (
            "SELECT id, session_id, position, active, compacted, created_at, archived_at,"
            f" role, content, tool_calls, tool_call_id, name, flags FROM messages WHERE {where}"
            f" ORDER BY session_id, {order}" + (f" LIMIT {int(limit)}" if limit is not None else "")
        )
        out = []
        for row in self._read(sql, args):
            rid, sid, pos, active, compacted, created, archived, *cols = row
            try:
                message = row_to_message(*cols)
            except (TypeError, ValueError) as exc:
                raise RowDecodeError(f"session store {self.path}: row {rid} cannot be read: {exc}") from exc
            out.append(StoredMessage(rid, sid, pos, bool(active), bool(compacted), created, archived, message))
        return out

    def _read(self, sql: str, args: tuple) -> list[tuple]:
        with self._lock:
            try:
                return self._conn.execute(sql, args).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"cannot read session store at {self.path}: {reason_of(exc)}") from exc

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@contextlib.contextmanager
def write_transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Cursor]:
    """BEGIN IMMEDIATE ... COMMIT on `conn` (opened with isolation_level=None), rolled back on any
    error, a Python one included, before it propagates.

    Every write to engine.db goes through this one helper (the store's, the recall index's): an
    error raised after BEGIN that nothing rolled back (a lone surrogate the driver could not
    encode) once kept the file's write lock for the life of the process, and every other
    session's archive write then timed out."""
    cur = conn.cursor()
    try:
        cur.execute("BEGIN IMMEDIATE")
        yield cur
        cur.execute("COMMIT")
    except BaseException:
        try:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass
        raise
    finally:
        cur.close()
