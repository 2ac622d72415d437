"""Property-based tests: whatever a transcript file, a state.db or a message list holds, the
loaders, `repair` and the session store either give a faithful result or raise the project's
clear error type (SessionFormatError, TranscriptError), never anything else."""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest
from fakes import tool_pairs_valid
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_mlx.compactor.sessions import (
    SessionFormatError,
    load_jsonl,
    load_session,
    load_state_db,
    save_jsonl,
)
from hermes_mlx.compactor.store import SessionStore
from hermes_mlx.compactor.transcript import (
    ROLES,
    TranscriptError,
    repair,
)

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Text as JSON can carry it: any code point, lone surrogates and line separators included.
ODD = st.sampled_from(["\ud800", "\udfff", "\u2028", "\u2029", "\x85", "\x00", "\r", "é", "☃", "\U0001f600"])
TEXT = st.text(st.characters() | ODD, max_size=12)
SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT
JSON = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3), max_leaves=12
)

CALL_IDS = st.sampled_from(["c1", "c2", "c3", "", None])
CALL = (
    st.fixed_dictionaries(
        {
            "id": CALL_IDS,
            "type": st.just("function"),
            "function": st.fixed_dictionaries({"name": st.sampled_from(["terminal", "read_file"]), "arguments": TEXT}),
        }
    )
    | JSON
)
MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(ROLES) | TEXT},
    optional={
        "content": st.none()
        | TEXT
        | st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": TEXT}) | JSON, max_size=2)
        | JSON,
        "tool_calls": st.lists(CALL, max_size=3) | JSON,
        "tool_call_id": CALL_IDS | JSON,
        "name": TEXT,
        "_compressed_summary": st.booleans(),
        "extra": JSON,
    },
)
MESSAGES = st.lists(MESSAGE | JSON, max_size=10)


WORK: list[Path] = []


@pytest.fixture(scope="module", autouse=True)
def workdir():
    """One folder for the whole module: hypothesis runs each test body many times."""
    WORK.append(Path(tempfile.mkdtemp(prefix="hermes-props-")))
    yield
    shutil.rmtree(WORK.pop(), ignore_errors=True)


def _tmp() -> Path:
    for old in WORK[0].iterdir():
        old.unlink()
    return WORK[0]


# ---------------------------------------------------------------------------------------------
# repair


@SETTINGS
@given(MESSAGES)
def test_repair_gives_a_valid_transcript_or_a_transcript_error(messages):
    try:
        out, repairs = repair(messages)
    except TranscriptError as exc:
        assert 0 <= exc.index < len(messages)
        return
    assert tool_pairs_valid(out)
    assert repair(out)[1] == []  # a repaired transcript needs no more repair
    assert len(out) >= len(messages)  # repair adds, never removes
    assert [m for m in out if m["role"] == "user"] == [m for m in messages if m["role"] == "user"]
    if not repairs:
        assert out is messages


# ---------------------------------------------------------------------------------------------
# JSONL


@SETTINGS
@given(st.lists(JSON | MESSAGE, max_size=8), st.booleans())
def test_jsonl_loads_what_was_written_or_names_the_bad_line(values, ascii_only):
    path = _tmp() / "s.jsonl"
    text = "".join(json.dumps(v, ensure_ascii=ascii_only) + "\n" for v in values)
    path.write_text(text, "utf-8", "surrogatepass")
    utf8 = not any("\ud800" <= ch <= "\udfff" for ch in text)  # a lone surrogate written raw is no UTF-8
    try:
        loaded = load_jsonl(path)
    except SessionFormatError as exc:
        good = [v for v in values if isinstance(v, dict) and isinstance(v.get("role"), str)]
        assert len(good) < len(values) or not values or (not utf8 and "not UTF-8" in str(exc)), exc
        assert str(path) in str(exc)
        return
    assert utf8
    assert loaded == values
    again = path.with_name("again.jsonl")
    save_jsonl(loaded, again)
    assert load_jsonl(again) == values


@SETTINGS
@given(st.binary(max_size=200) | st.builds(lambda b: b"SQLite format 3\x00" + b, st.binary(max_size=200)))
def test_any_bytes_load_or_raise_session_format_error(data):
    path = _tmp() / "s.jsonl"
    path.write_bytes(data)
    try:
        messages = load_session(path)
    except SessionFormatError:
        return
    assert messages and all(isinstance(m, dict) and isinstance(m["role"], str) for m in messages)


def test_deep_nesting_is_a_clear_error():
    path = _tmp() / "deep.jsonl"
    for depth in (150, 5000, 200_000):
        path.write_text('{"role": "user", "content": ' + "[" * depth + "]" * depth + "}\n")
        with pytest.raises(SessionFormatError, match="nested too deeply"):
            load_session(path)


# ---------------------------------------------------------------------------------------------
# Hermes state.db rows of any SQLite type

SQL_VALUE = (
    st.none()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=8)
    | st.binary(max_size=8)
)
ROW = st.tuples(
    st.sampled_from(["a", "b", 7, None]) | SQL_VALUE,
    st.sampled_from(["user", "assistant", "tool"]) | SQL_VALUE,
    st.text(max_size=8) | SQL_VALUE,
    SQL_VALUE,
    SQL_VALUE,
    SQL_VALUE,
    SQL_VALUE,
)


@SETTINGS
@given(st.lists(ROW, max_size=6), st.sampled_from([None, "a", "7"]))
def test_state_db_rows_load_or_raise_session_format_error(rows, session_id):
    path = _tmp() / "state.db"
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id, role, content, tool_call_id,"
        " tool_calls, tool_name, display_metadata, timestamp REAL)"
    )
    conn.executemany(
        "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name,"
        " display_metadata, timestamp) VALUES (?, ?, ?, ?, ?, ?, ?, 1.0)",
        rows,
    )
    conn.commit()
    conn.close()
    try:
        messages = load_state_db(path, session_id)
    except SessionFormatError:
        return
    for m in messages:
        assert isinstance(m["role"], str) and (m["content"] is None or isinstance(m["content"], str))


# ---------------------------------------------------------------------------------------------
# the session store keeps every message exactly

STORE_MESSAGE = st.fixed_dictionaries(
    {"role": TEXT},
    optional={
        "content": st.none() | TEXT | st.lists(JSON, max_size=2),
        "tool_calls": JSON,
        "tool_call_id": JSON,
        "name": TEXT | JSON,
        "reasoning": JSON,
        "_compressed_summary": st.booleans(),
    },
)


@SETTINGS
@given(st.lists(STORE_MESSAGE, max_size=8), st.randoms(use_true_random=False))
def test_store_round_trips_any_message(messages, rnd):
    with SessionStore(":memory:") as store:
        assert store.append("s", messages), store.last_error
        assert store.load_active("s") == messages
        compacted = [m for m in messages if rnd.random() < 0.5] + [{"role": "assistant", "content": "summary \ud800"}]
        assert store.archive_and_compact("s", compacted), store.last_error
        assert store.load_active("s") == compacted
        stored = [r.message for r in store.history("s")]
        assert all(m in stored for m in messages)  # the originals stay, archived or active
        assert len(stored) == len(messages) + 1  # and only the new row was added
