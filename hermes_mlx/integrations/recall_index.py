"""The recall index: SQLite FTS5 over one store's archived rows, kept in step incrementally, and
the lines a query finds, redacted before they leave.

Why it is built this way (issue 28):
- Incremental. Each call asks the store for the session's archived row ids (the store's own index
  answers, no text is read) and reads and indexes only the rows it has not seen; archived rows
  never change again. A call no longer re-reads the session's whole history.
- Redacted as `compact` redacts: the whole row at once, before any line is cut, so the secrets
  that span lines (PEM and OpenSSH key bodies, PuTTY Private-Lines, a JWT wrapped over lines, a
  value on the line after `password:`) are found; then every line handed back goes through the
  summary verifier's own check (`has_secret`) and is redacted again or dropped. A row up to
  WHOLE_MAX characters is redacted once, at indexing, and that text is what is indexed and cut;
  a larger one (a 50 MB tool output) is indexed as stored and, per call, only a window of
  MARGIN characters around each hit is redacted, with TRIM characters dropped at each cut edge
  so no secret loses the words that mark it.
- Searchable in every script: CJK and emoji characters are indexed one token each (the same
  spacing is applied to the query), so a word inside a CJK run is a phrase of its characters.
- Short write transactions: a row's text is indexed in parts (PART_CHARS, overlapping), a few
  MB per transaction, so indexing a 50 MB output never holds engine.db's write lock for long
  (the store's writes for other sessions wait at most 5 s).
- Summary markers (an earlier pass's summary, archived by a later batch pass) are not indexed:
  the model already has what they say.
- Clean text only: the store keeps lone surrogates exactly, but what is indexed and queried is
  the store's cleaned copy (U+FFFD), and every write goes through the store's one rolled-back
  transaction helper, so one odd row can neither fail a refresh nor hold engine.db's lock.

The tables are ours (`hermes_mlx_recall_*`), beside the store's rows in engine.db or anywhere
else; they hold derived data, so the earlier single-table layout is dropped and rebuilt lazily.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

from hermes_mlx.compactor import markers
from hermes_mlx.compactor.store import RowDecodeError, SessionStore, write_transaction
from hermes_mlx.compactor.store_rows import clean, session_key
from hermes_mlx.compactor.transcript import content_text
from hermes_mlx.errors import UsageError
from hermes_mlx.summarizer.redact import has_secret, redact

MAX_TERMS = 32  # words searched; more are named in the answer's note, never dropped silently
MAX_MATCHES = 12  # lines handed back at most
DEFAULT_MATCHES = 6
MAX_LINE_CHARS = 600  # a longer matching line is cut to a window around its first match
MAX_RESULT_CHARS = 4000  # the whole answer's text, so one call cannot flood the context
CANDIDATE_ROWS = 50  # best-ranked rows looked at per call
WHOLE_MAX = 1_000_000  # rows up to this many characters are redacted whole, once, at indexing
MARGIN = 16_384  # a larger row: characters redacted either side of a hit, per call
TRIM = 4_096  # ... of which this much is dropped at each cut edge after redacting
INDEX_BATCH_CHARS = 4_000_000  # text prepared per write transaction (redaction runs outside it)
PART_CHARS = 1_000_000  # a row's text is indexed in parts this long, each its own transaction ...
PART_OVERLAP = 400  # ... overlapping by this much, so a phrase across a cut is whole in one part

logger = logging.getLogger("hermes_mlx.integrations")

ROWS = "hermes_mlx_recall_rows"  # one per archived row: its kind and the redacted text to cut
PARTS = "hermes_mlx_recall_parts"  # indexed part -> archived row
TERMS = "hermes_mlx_recall_terms"  # FTS5 over the parts (contentless: the text is not kept twice)
# Row kinds: how the lines handed back are found (data, not branches spread over the module).
WHOLE, HUGE, SKIPPED = "whole", "huge", "marker"
SCHEMA = [
    "DROP TABLE IF EXISTS hermes_mlx_recall",  # the first layout: raw bodies, CJK runs as one token
    f"CREATE TABLE IF NOT EXISTS {ROWS} (id INTEGER PRIMARY KEY, session TEXT NOT NULL, role TEXT NOT NULL,"
    " kind TEXT NOT NULL, body TEXT)",
    f"CREATE INDEX IF NOT EXISTS {ROWS}_session ON {ROWS}(session)",
    f"CREATE TABLE IF NOT EXISTS {PARTS} (part INTEGER PRIMARY KEY, id INTEGER NOT NULL)",
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {TERMS} USING fts5(body, content='',"
    " tokenize=\"unicode61 categories 'L* N* Co So'\")",
]

_WORD = re.compile(r"[^\s\"'`()\[\]{}<>,;:!?]+")
# Scripts written without spaces, and emoji/symbols: one token per character on both sides.
_ONE_EACH = (
    "\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff\u2e80-\u2fff\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\u0e00-\u0e7f\U0001f000-\U0001faff\U00020000-\U0002fa1f"
)
_SPLIT = re.compile(f"([{_ONE_EACH}])")
_TOKEN_CHAR = re.compile(f"[^\\W_]|[{_ONE_EACH}]")


class RecallError(UsageError):
    """A tool call we cannot answer (its message goes back to the model as the tool's error)."""


def words_of(query: str) -> list[str]:
    """Every distinct word of the query, as the model wrote it (punctuation at its ends dropped)."""
    words = [w.strip(".-/") or w for w in _WORD.findall(clean(query))]
    return [w for w in dict.fromkeys(words) if w]


def terms_of(query: str) -> list[str]:
    """The words searched: the first MAX_TERMS."""
    return words_of(query)[:MAX_TERMS]


def spaced(text: str) -> str:
    """Text as it is indexed and queried: each CJK or emoji character a token of its own."""
    if text.isascii() or not _SPLIT.search(text):  # isascii is O(1): a 50 MB log is not copied
        return text
    return _SPLIT.sub(r" \1 ", text)


def _phrase(term: str) -> str:
    """A term as an FTS5 phrase ('' when the tokenizer would find no token in it)."""
    if not _TOKEN_CHAR.search(term):
        return ""
    return '"' + spaced(term).replace('"', '""') + '"'


def row_text(message: dict) -> str:
    """What a row says: its content, then the calls it made (name and arguments)."""
    parts = [content_text(message)]
    for call in message.get("tool_calls") or []:
        function = (call.get("function") if isinstance(call, dict) else None) or {}
        if not isinstance(function, dict):
            function = {}
        parts.append(f"[tool call {function.get('name', '')}] {function.get('arguments', '')}")
    return "\n".join(p for p in parts if isinstance(p, str) and p)


def prepared(message: dict) -> tuple[str, str | None, str]:
    """(kind, text kept to cut lines from, text indexed) for one archived row."""
    if markers.is_marker(message):
        return SKIPPED, None, ""
    text = clean(row_text(message))
    if len(text) <= WHOLE_MAX:
        shown = redact(text)
        return WHOLE, shown, shown
    return HUGE, None, text


def parts_of(text: str) -> Iterator[str]:
    """The text to index in parts of PART_CHARS (spaced for the tokenizer), overlapping."""
    for start in range(0, max(len(text), 1), PART_CHARS):
        yield spaced(text[start : start + PART_CHARS + PART_OVERLAP])


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


def safe(text: str) -> str | None:
    """The text as it may be handed back: redacted again if the verifier's check still sees a
    secret in it, None when even that is not enough."""
    if not has_secret(text):
        return text
    text = redact(text)
    return None if has_secret(text) else text


def first_hits(text: str, terms: list[str], most: int = 4) -> list[int]:
    """Where each term first occurs in `text` (case-insensitive), at most `most` places that are
    MARGIN apart."""
    low = text.lower()
    exact = len(low) == len(text)  # lower() can lengthen a few letters; then positions are searched
    hits = []
    for term in sorted(terms, key=len, reverse=True):  # the most telling words first
        if exact:
            at = low.find(term.lower())
        else:
            m = re.search(re.escape(term), text, re.IGNORECASE)
            at = m.start() if m else -1
        if at >= 0 and all(abs(at - h) > MARGIN for h in hits):
            hits.append(at)
    return sorted(hits)[:most]


def huge_lines(text: str, terms: list[str]) -> list[str]:
    """The redacted lines around the hits of a row too large to redact whole: a window of MARGIN
    either side of each hit is redacted, then TRIM dropped at each edge that cut the text."""
    lines: list[str] = []
    for at in first_hits(text, terms):
        start, end = max(0, at - MARGIN), min(len(text), at + MARGIN)
        piece = redact(text[start:end])
        piece = piece[TRIM if start else 0 : len(piece) - (TRIM if end < len(text) else 0)]
        lines.extend(piece.splitlines())
    return lines


class RecallIndex:
    """FTS5 over one store's archived rows. Thread-safe; the index may live in the store's file
    (tables of its own) or anywhere else, since it keeps its own copy of the text."""

    def __init__(self, store: SessionStore, path: str | Path = ":memory:", *, timeout: float = 5.0) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._known: dict[str, set[int]] = {}  # session -> archived row ids indexed (or skipped)
        self._conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=timeout)
        try:
            with write_transaction(self._conn) as cur:
                for statement in SCHEMA:
                    cur.execute(statement)
        except BaseException:
            self._conn.close()
            raise

    def refresh(self, session_id: str) -> int:
        """Index the session's archived rows not indexed yet; returns how many were added."""
        key = session_key(session_id)
        ids = self.store.archived_ids(session_id)
        with self._lock:
            known = self._known.setdefault(key, set())
            fresh = [i for i in ids if i not in known]
            have = self._indexed(fresh)
            missing = [i for i in fresh if i not in have]
            entries: list[tuple] = []
            parts: list[tuple[int, str]] = []
            size = 0
            for wanted in missing:
                for row_id, role, message in self._rows(wanted):  # one at a time: a row may be 50 MB
                    kind, body, text = prepared(message)
                    entries.append((row_id, key, role, kind, body))
                    for part in parts_of(text) if text else ():
                        parts.append((row_id, part))
                        size += len(part)
                        if size >= INDEX_BATCH_CHARS:  # a huge row: its parts written a few at a time,
                            self._write([], parts)  # so engine.db's write lock is never held long
                            parts, size = [], 0
                if size >= INDEX_BATCH_CHARS or len(entries) >= 500:
                    self._write(entries, parts)
                    entries, parts, size = [], [], 0
            self._write(entries, parts)  # a row is entered after its last part: a crash re-indexes it
            known.update(fresh)
        return len(missing)

    def _rows(self, row_id: int) -> list[tuple[int, str, dict]]:
        """(id, role, message) of one archived row; a row that does not decode is left out of the
        index (logged once), so it cannot fail every later call."""
        try:
            return [(r.id, str(r.message.get("role") or ""), r.message) for r in self.store.rows([row_id])]
        except RowDecodeError as exc:
            logger.warning("hermes-mlx recall: %s; it is not searchable", exc)
            return [(row_id, "", {"role": "", "content": ""})]

    def _indexed(self, ids: list[int]) -> set[int]:
        have: set[int] = set()
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            marks = ", ".join("?" * len(chunk))
            have.update(r[0] for r in self._conn.execute(f"SELECT id FROM {ROWS} WHERE id IN ({marks})", chunk))
        return have

    def _write(self, entries: list[tuple], parts: list[tuple[int, str]]) -> None:
        if not entries and not parts:
            return
        with write_transaction(self._conn) as cur:
            for row_id, text in parts:
                cur.execute(f"INSERT INTO {TERMS} (body) VALUES (?)", (text,))
                cur.execute(f"INSERT INTO {PARTS} (part, id) VALUES (?, ?)", (cur.lastrowid, row_id))
            # another process may have entered a row meanwhile: its parts are then found twice,
            # which the search folds into one
            cur.executemany(
                f"INSERT OR IGNORE INTO {ROWS} (id, session, role, kind, body) VALUES (?, ?, ?, ?, ?)", entries
            )

    def search(self, sessions: str | list[str], query: str, limit: int = DEFAULT_MATCHES) -> dict:
        """The matching lines of the sessions' archived rows, best rows first, redacted and bounded.
        Several ids: one conversation carried across Hermes's session rotations."""
        words = words_of(query)
        terms = words[:MAX_TERMS]
        phrases = [p for p in dict.fromkeys(_phrase(t) for t in terms) if p]
        if not phrases:
            raise RecallError("query has no words to search for")
        ids = [sessions] if isinstance(sessions, str) else list(dict.fromkeys(sessions))
        for session_id in ids:
            self.refresh(session_id)
        keys = [session_key(s) for s in ids]
        marks = ", ".join("?" * len(keys))
        found: list[tuple] = []
        with self._lock:
            for joiner in ("AND", "OR"):  # every word first; any word when no row has them all
                hits = self._conn.execute(
                    f"SELECT r.id, r.role, r.kind FROM {TERMS} t JOIN {PARTS} p ON p.part = t.rowid"
                    f" JOIN {ROWS} r ON r.id = p.id WHERE {TERMS} MATCH ? AND r.session IN ({marks})"
                    f" ORDER BY bm25({TERMS}) LIMIT {4 * CANDIDATE_ROWS}",
                    (f" {joiner} ".join(phrases), *keys),
                ).fetchall()
                found = list(dict.fromkeys(hits))[:CANDIDATE_ROWS]  # a row's best part ranks it
                if found or len(phrases) == 1:
                    break
        answer = _answer(query, terms, self._candidates(found, terms), limit)
        if words[MAX_TERMS:]:
            answer["words_not_searched"] = words[MAX_TERMS:]
        return answer

    def _candidates(self, found: list[tuple], terms: list[str]) -> Iterator[tuple[str, list[str]]]:
        """(role, redacted lines) of each row found, read only as the answer needs them."""
        for row_id, role, kind in found:
            if kind == WHOLE:
                with self._lock:
                    row = self._conn.execute(f"SELECT body FROM {ROWS} WHERE id = ?", (row_id,)).fetchone()
                yield role, (row[0] or "").splitlines() if row else []
            elif kind == HUGE:
                for stored in self.store.rows([row_id]):
                    yield role, huge_lines(clean(row_text(stored.message)), terms)

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _answer(query: str, terms: list[str], rows: Iterable[tuple[str, list[str]]], limit: int) -> dict:
    lowered = [t.lower() for t in terms]
    matches: list[dict] = []
    used = 0
    truncated = False
    seen: set[str] = set()
    for role, lines in rows:
        lines = [ln for ln in lines if ln.strip()]
        # lines with the most query words first; a row whose words span lines still gives its best line
        scored = sorted(lines, key=lambda ln: -sum(t in ln.lower() for t in lowered))
        for line in scored[:2]:
            if not any(t in line.lower() for t in lowered):
                continue
            text = safe(window(line, terms))
            if text is None or text in seen:
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


__all__ = ["RecallError", "RecallIndex", "row_text", "spaced", "terms_of", "window", "words_of"]
