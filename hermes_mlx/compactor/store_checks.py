"""What opening a session store file checks before SQLite touches it, and the store's errors.

Why a module of its own: these checks (not a Hermes state.db, writable, not a device, no
read-only -wal/-shm that SQLite would mmap into a SIGBUS) are about the file, not the rows, and
the store's module stays about keeping rows in step with compaction.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from hermes_mlx.errors import HermesMLXError, UsageError
from hermes_mlx.files import NotAFileTarget, write_target

SQLITE_MAGIC = b"SQLite format 3\x00"
SIDECARS = ("-wal", "-shm", "-journal")

_OURS = {"position", "flags", "name", "active", "compacted"}


class StoreError(HermesMLXError, RuntimeError):
    """The store cannot be opened or read (writes never raise; they return False)."""


class RowDecodeError(StoreError):
    """One row's columns do not decode to a message (the file is otherwise readable)."""


class StoreFormatError(StoreError, UsageError):
    """The file is not a hermes-mlx session store (a Hermes state.db, not SQLite at all)."""


def check_writable(path: Path) -> None:
    """Raise StoreError unless SQLite can write `path` and the files it keeps beside it.

    Checked before opening because SQLite falls back to a read-only -shm mapping it cannot grow
    (SIGBUS, the process dies) and otherwise reports a read-only file only at the first write.
    """
    if path.is_dir():
        raise StoreError(f"session store {path} is a directory")
    try:  # a link to a device would pass the checks below and leave SQLite's journal beside the device
        write_target(path, "session store")
    except NotAFileTarget as exc:
        raise StoreError(str(exc)) from None
    if not path.parent.is_dir():
        raise StoreError(f"session store {path}: folder {path.parent} does not exist")
    for candidate in [path] + [Path(str(path) + s) for s in SIDECARS]:
        if candidate.exists() and not os.access(candidate, os.R_OK | os.W_OK):
            raise StoreError(f"session store {path}: {candidate} is not writable (read-only or immutable)")
    if not os.access(path.parent, os.W_OK | os.X_OK):
        raise StoreError(
            f"session store {path}: folder {path.parent} is not writable (SQLite keeps its journal beside the file)"
        )


def check_schema(path: Path) -> None:
    """Refuse, read-only and before any PRAGMA, a file that is not (or cannot become) our store."""
    if not path.is_file() or path.stat().st_size == 0:
        return
    with path.open("rb") as fh:
        if fh.read(len(SQLITE_MAGIC)) != SQLITE_MAGIC:
            raise StoreFormatError(f"session store {path} exists and is not a SQLite database")
    conn = None
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        cols = {r[1] for r in conn.execute("PRAGMA table_info(messages)")}
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open session store at {path}: {reason_of(exc)}") from exc
    finally:
        if conn is not None:
            conn.close()
    if cols and not _OURS <= cols:
        raise StoreFormatError(
            f"{path} has a messages table of another schema (a Hermes state.db?); it was left untouched:"
            " give --store a new file (a state.db can be the session to replay instead)"
        )


def reason_of(exc: BaseException) -> str:
    if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
        return f"{exc} (another connection holds it)"
    if isinstance(exc, sqlite3.Error):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
