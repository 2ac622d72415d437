"""The context engine's archive: our session store and recall index under Hermes's home, and
what belongs to one conversation's recall.

Why apart from the engine: the engine is Hermes's hooks; this is the rules that keep recall
honest (issue 28). Recall searches this conversation's ids only, the ones before its compaction
rotations included, never another conversation's (Hermes's /new, /resume and /branch start
one). A marker offers the recall tool only when what its pass folded is in the store: the
pass's input is written before its output goes anywhere; when that write fails (disk full,
locked) the folded messages are kept here and written with the next write that succeeds, and
that pass's marker carries no note. With no store at all, no marker carries it and recall says
why.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path
from typing import Any

from hermes_mlx.compactor import markers
from hermes_mlx.compactor.store import SessionStore, StoreError

from . import recall

logger = logging.getLogger("hermes_mlx.integrations")

STORE_FILE = Path("hermes-mlx") / "engine.db"  # under Hermes's home: our archive and the recall index
MAX_UNSTORED = 2000  # messages folded while the store failed, kept to archive at the next good write
_KEEP_PRIVATE = {markers.SUMMARY_KEY, markers.MICRO_KEY, markers.HAS_USER_TURN_KEY, markers.MERGED_FROM_KEY}
_STORES: dict[str, tuple[SessionStore, recall.RecallIndex]] = {}
_STORES_LOCK = threading.Lock()


def open_store(home: str | Path) -> tuple[SessionStore, recall.RecallIndex]:
    """The store and recall index under a Hermes home, one per file for the process (engines
    cloned per agent share them, as Hermes's clone_for_agent contract asks)."""
    path = str(Path(home).expanduser() / STORE_FILE)
    with _STORES_LOCK:
        if path not in _STORES:
            store = SessionStore(path)
            try:
                index = recall.RecallIndex(store, path)
            except sqlite3.Error as exc:
                store.close()
                raise StoreError(f"cannot open the recall index in {path}: {exc}") from exc
            _STORES[path] = (store, index)
        return _STORES[path]


def for_store(message: dict) -> dict:
    """A message as our store keeps it: Hermes's bookkeeping keys (row ids, persisted marks) left out,
    so the same message always encodes the same way."""
    return {k: v for k, v in message.items() if not k.startswith("_") or k in _KEEP_PRIVATE}


def with_note(message: dict) -> dict:
    """A marker that tells the main model the recall tool exists (after the end line, so a marker
    parsed back into a rolling or previous summary never carries the note into it)."""
    content = message.get("content")
    if not isinstance(content, str) or recall.MARKER_NOTE in content:
        return message
    return {**message, "content": f"{content}\n\n{recall.MARKER_NOTE}"}


class Archive:
    """One engine's store and index (shared per file) and its conversation's recall state."""

    def __init__(self) -> None:
        self.store: SessionStore | None = None
        self.index: recall.RecallIndex | None = None
        self.home_known = False
        self.error = ""  # why there is no store, when opening it failed
        self.lineage: list[str] = []  # earlier ids of this conversation (Hermes's rotations)
        self.unstored: list[dict] = []  # what passes folded while the store could not be written
        self.gap = False  # some folded messages never reached the store: no marker offers recall

    def open(self, home: str | Path) -> None:
        self.home_known = True
        try:
            self.store, self.index = open_store(home)
            self.error = ""
        except StoreError as exc:  # recall says so; markers carry no recall note
            self.error = str(exc)
            logger.warning("hermes-mlx context engine: no archive, recall is off: %s", exc)

    def new_conversation(self) -> None:
        """Another conversation: its own lineage, nothing carried over from the one before."""
        self.lineage = []
        self.unstored = []
        self.gap = False

    def before_pass(self, session_id: str, before: list[dict], after: list[dict]) -> bool:
        """The pass's input (and whatever earlier failed passes folded) written to the store; True
        when it was. Then what the pass removes is in the store, archived by after_pass or, if
        that write fails, by the next one that succeeds."""
        if self.store is None or not session_id:
            return False
        if self.store.sync(session_id, [*self.unstored, *(for_store(m) for m in before)]):
            self.unstored = []
            return True
        kept = {id(m) for m in after}
        self.unstored.extend(for_store(m) for m in before if id(m) not in kept)
        if len(self.unstored) > MAX_UNSTORED:
            self.unstored = self.unstored[-MAX_UNSTORED:]
            self.gap = True
        return False

    def noted(self, stored: bool) -> bool:
        """Whether the pass's markers may offer the recall tool."""
        return stored and not self.gap

    def after_pass(self, session_id: str, after: list[dict], stored: bool) -> None:
        if stored and self.store is not None:
            self.store.archive_and_compact(session_id, [for_store(m) for m in after])

    def recall(self, session_id: str, args: Any) -> str:
        """One recall tool call, over this conversation's ids, newest first."""
        ids = [session_id, *reversed(self.lineage)] if session_id else []
        why = self.error or ("" if self.home_known else "no Hermes home was given to keep it in")
        return recall.handle_call(self.index, ids, args, unavailable=why or None)


__all__ = ["MAX_UNSTORED", "STORE_FILE", "Archive", "for_store", "open_store", "with_note"]
