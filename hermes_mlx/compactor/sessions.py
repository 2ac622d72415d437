"""Load recorded sessions: JSONL transcripts and Hermes `state.db` files.

A recorded session is the input of `hermes-mlx compact`, the benchmarks and the tests, so a bad
file must fail here with its line number rather than somewhere deep inside a compaction pass.
Structural rules (tool pairs, roles, sizes) are the compactor's to check or repair; this module
only turns files into lists of OpenAI-format message dicts, losing nothing.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from contextlib import closing
from pathlib import Path

from hermes_mlx.compactor.store_rows import encodable, row_to_message
from hermes_mlx.errors import UsageError
from hermes_mlx.files import atomic_write

Message = dict

SQLITE_MAGIC = b"SQLite format 3\x00"
MAX_DEPTH = 100  # no chat message nests deeper; far deeper would overflow Python's stack later


class SessionFormatError(UsageError):
    """A session or facts file that cannot be read; the message names the file and line."""


def load_session(path: str | Path, session_id: str | None = None) -> list[Message]:
    """Messages of a recorded session: a JSONL file, or one session of a Hermes `state.db`.

    SQLite files are recognised by their header, so a `state.db` under any name works. Only a
    regular file (or a link to one) is read: `/dev/zero` or a `.jsonl` link to it would be read
    until memory ran out, and a FIFO would block the command for ever.
    """
    path = Path(path)
    check_regular(path)
    try:
        with path.open("rb") as fh:
            head = fh.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise SessionFormatError(f"{path}: cannot read session file: {exc.strerror or exc}") from exc
    if head == SQLITE_MAGIC:
        return load_state_db(path, session_id)
    if session_id is not None:
        raise SessionFormatError(f"{path}: a session id only applies to a SQLite state.db")
    return load_jsonl(path)


_KINDS = {stat.S_IFDIR: "a folder", stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a device"}
_KINDS[stat.S_IFBLK] = "a device"


def check_regular(path: Path) -> None:
    """SessionFormatError unless `path` is a regular file (links followed); reads nothing."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise SessionFormatError(f"{path}: cannot read session file: {exc.strerror or exc}") from exc
    if not stat.S_ISREG(mode):
        kind = _KINDS.get(stat.S_IFMT(mode), "not a file")
        raise SessionFormatError(f"{path}: not a regular file ({kind}); a session is a .jsonl file or a state.db")


def load_jsonl(path: str | Path) -> list[Message]:
    """One JSON object with a string `role` per line; blank lines are allowed, an empty file is not.

    The one reader of JSONL sessions (the command, replay, bench and tests all use it), so every
    caller applies the same rule.
    """
    path = Path(path)
    check_regular(path)
    messages: list[Message] = []
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SessionFormatError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except OSError as exc:
        raise SessionFormatError(f"{path}: cannot read session file: {exc.strerror or exc}") from exc
    # Lines end at "\n" only: str.splitlines() would also cut at U+2028, U+0085 and friends,
    # which json.dumps(ensure_ascii=False) writes raw inside strings.
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SessionFormatError(f"{path}:{lineno}: invalid JSON: {exc.msg} (column {exc.colno})") from exc
        except RecursionError:
            raise SessionFormatError(
                f"{path}:{lineno}: JSON nested too deeply (more than {MAX_DEPTH} levels)"
            ) from None
        if too_deep(obj):
            raise SessionFormatError(f"{path}:{lineno}: JSON nested too deeply (more than {MAX_DEPTH} levels)")
        if not isinstance(obj, dict):
            raise SessionFormatError(
                f"{path}:{lineno}: expected a JSON object (one chat message), got {type(obj).__name__}"
            )
        if not isinstance(obj.get("role"), str):
            raise SessionFormatError(f"{path}:{lineno}: message has no string 'role'")
        messages.append(obj)
    if not messages:
        raise SessionFormatError(f"{path}: no messages")
    return messages


def too_deep(value: object, limit: int = MAX_DEPTH) -> bool:
    """True when lists/dicts nest more than `limit` levels (checked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            if depth > limit:
                return True
            stack.extend((child, depth + 1) for child in item if isinstance(child, (dict, list)))
    return False


def to_line(message: Message) -> str:
    """One JSONL line: non-ASCII kept readable, lone surrogates escaped (json reads them back)."""
    text = json.dumps(message, ensure_ascii=False)
    return (text if encodable(text) else json.dumps(message)) + "\n"


def save_jsonl(messages: list[Message], path: str | Path) -> None:
    """Write messages one per line (the format `load_jsonl` reads), UTF-8, non-ASCII kept.

    Atomic: a temporary file beside the target, fsynced, then renamed over it, so the target is
    either the old file or the whole new one, never half of it (this is what makes `compact
    --in-place` safe). A symlink is written through to its target and stays a link; an existing
    file keeps its permissions; a path naming a device, a FIFO or a folder is refused
    (files.NotAFileTarget) instead of being replaced.
    """

    def fill(fh) -> None:
        for message in messages:
            fh.write(to_line(message))

    atomic_write(path, fill)


# ---------------------------------------------------------------------------------------------
# Hermes state.db: table `messages` (id, session_id, role, content, tool_call_id, tool_calls JSON,
# tool_name, timestamp, _compressed_summary, active, compacted, display_metadata, ...). Newer
# schemas have more columns and older ones fewer, so columns are probed, not assumed.


def list_state_db_sessions(path: str | Path) -> list[str]:
    """Session ids with at least one message, oldest first (rows without an id are left out)."""
    with _open_ro(path) as conn:
        rows = _query(
            path,
            conn,
            "SELECT session_id FROM messages WHERE session_id IS NOT NULL GROUP BY session_id ORDER BY MIN(rowid)",
        )
    return [_id_text(r[0]) for r in rows]


def load_state_db(path: str | Path, session_id: str | None = None) -> list[Message]:
    """The active (model-facing) messages of one session, in order.

    With no id, a database holding exactly one session is read; otherwise the error lists ids.
    Ids are compared as text, so a session stored under the integer 5 is `--session-id 5`.
    """
    path = Path(path)
    with _open_ro(path) as conn:
        cols = {r[1] for r in _query(path, conn, "PRAGMA table_info(messages)")}
        if not cols:
            raise SessionFormatError(f"{path}: no 'messages' table (not a Hermes state.db?)")
        missing = {"session_id", "role", "content"} - cols
        if missing:
            raise SessionFormatError(f"{path}: its messages table has no {', '.join(sorted(missing))} column")
        if session_id is None:
            ids = [r[0] for r in _query(path, conn, "SELECT DISTINCT session_id FROM messages LIMIT 6")]
            if ids == [None]:
                raise SessionFormatError(f"{path}: its messages have no session_id (NULL)")
            ids = [_id_text(i) for i in ids if i is not None]
            if len(ids) != 1:
                shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
                raise SessionFormatError(
                    f"{path}: holds {'no' if not ids else 'several'} sessions; pass a session id"
                    + (f" (one of: {shown})" if ids else "")
                )
            session_id = ids[0]
        where = "CAST(session_id AS TEXT) = ?"
        if _OURS <= cols:  # a file written by our SessionStore
            order = "active_order, position" if "active_order" in cols else "position"
            rows = _query(
                path,
                conn,
                "SELECT rowid, role, content, tool_calls, tool_call_id, name, flags FROM messages"
                f" WHERE {where} AND active = 1 ORDER BY {order}",
                (session_id,),
            )
            messages = [_store_row(path, row) for row in rows]
        else:
            name_col = "tool_name" if "tool_name" in cols else ("name" if "name" in cols else "NULL")
            order = "timestamp, rowid" if "timestamp" in cols else "rowid"
            where += " AND active = 1" if "active" in cols else ""
            extra = [c for c in ("_compressed_summary", "display_metadata") if c in cols]
            select = ", ".join(
                [
                    "rowid",
                    "role",
                    "content",
                    *(c if c in cols else "NULL" for c in ("tool_call_id", "tool_calls")),
                    name_col,
                    *extra,
                ]
            )
            rows = _query(path, conn, f"SELECT {select} FROM messages WHERE {where} ORDER BY {order}", (session_id,))
            messages = [_row_to_message(path, row, extra) for row in rows]
    if not messages:
        raise SessionFormatError(f"{path}: session {session_id!r} has no active messages")
    return messages


_OURS = {"position", "flags", "name", "active"}


def _id_text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _query(path: Path | str, conn: sqlite3.Connection, sql: str, args: tuple = ()) -> list[tuple]:
    try:
        return conn.execute(sql, args).fetchall()
    except sqlite3.Error as exc:
        raise SessionFormatError(f"{path}: cannot read as a state.db: {exc}") from exc


def _open_ro(path: str | Path) -> closing[sqlite3.Connection]:
    """A read-only connection that closes on leaving `with` (sqlite3's own context manager
    commits but never closes)."""
    path = Path(path)
    if not path.is_file():
        raise SessionFormatError(f"{path}: no such state.db")
    conn = None
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1")
    except sqlite3.Error as exc:
        if conn is not None:
            conn.close()
        raise SessionFormatError(f"{path}: cannot open as SQLite: {exc}") from exc
    return closing(conn)


def _text(path: Path, rowid: int, column: str, value: object, required: bool = False) -> str | None:
    """A column that must hold text (or NULL): anything else is a clear error naming the row."""
    if value is None and not required:
        return None
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError:
            raise SessionFormatError(f"{path}: row {rowid}: {column} is binary, not UTF-8 text") from None
    if not isinstance(value, str):
        kind = "NULL" if value is None else type(value).__name__
        raise SessionFormatError(f"{path}: row {rowid}: {column} is {kind}, not text")
    return value


def _store_row(path: Path, row: tuple) -> Message:
    rowid, *cols = row
    try:
        return row_to_message(*cols)
    except (TypeError, ValueError) as exc:
        raise SessionFormatError(f"{path}: row {rowid} cannot be read: {exc}") from exc


def _row_to_message(path: Path, row: tuple, extra: list[str]) -> Message:
    rowid, role, content, tool_call_id, tool_calls, name, *rest = row
    role = _text(path, rowid, "role", role, required=True)
    msg: Message = {"role": role, "content": _text(path, rowid, "content", content)}
    tool_calls = _text(path, rowid, "tool_calls", tool_calls)
    if tool_calls:
        try:
            msg["tool_calls"] = json.loads(tool_calls)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise SessionFormatError(f"{path}: row {rowid}: tool_calls is not JSON: {exc}") from exc
        if too_deep(msg["tool_calls"]):
            raise SessionFormatError(f"{path}: row {rowid}: tool_calls nested too deeply")
    tool_call_id = _text(path, rowid, "tool_call_id", tool_call_id)
    if tool_call_id:
        msg["tool_call_id"] = tool_call_id
    name = _text(path, rowid, "tool name", name)
    if name:
        msg["name"] = name
    for col, value in zip(extra, rest):
        if col == "_compressed_summary" and value:
            msg["_compressed_summary"] = True
        elif col == "display_metadata" and value:
            try:
                msg["display_metadata"] = json.loads(value)
                if too_deep(msg["display_metadata"]):
                    raise ValueError("nested too deeply")
            except (TypeError, ValueError, RecursionError):
                msg["display_metadata"] = value
    return msg
