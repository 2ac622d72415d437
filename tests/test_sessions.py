"""The shipped recorded sessions are well-formed transcripts, and the loader fails clearly."""

from __future__ import annotations

import json
import sqlite3

import pytest

from hermes_mlx.bench.shipped import SessionFacts, facts_path, load_facts, shipped_sessions
from hermes_mlx.compactor.sessions import (
    SessionFormatError,
    list_state_db_sessions,
    load_session,
    save_jsonl,
)

SESSIONS = shipped_sessions()
ROLES = {"system", "user", "assistant", "tool"}
REQUIRED = ("paths", "commands", "errors", "urls", "identifiers", "decisions", "secrets")


def _exchanges(messages: list[dict]) -> int:
    """Assistant turns that follow a user message (an exchange runs up to the next user turn)."""
    return sum(1 for prev, cur in zip(messages, messages[1:]) if prev["role"] == "user" and cur["role"] == "assistant")


def _text(messages: list[dict]) -> str:
    parts = []
    for m in messages:
        parts.append(m.get("content") or "")
        for call in m.get("tool_calls") or []:
            parts.append(call["function"]["name"])
            parts.append(json.dumps(json.loads(call["function"]["arguments"]), ensure_ascii=False))
            parts.extend(str(v) for v in json.loads(call["function"]["arguments"]).values())
    return "\n".join(parts)


def test_at_least_two_sessions_ship():
    assert len(SESSIONS) >= 2


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.stem)
def test_session_is_well_formed(path):
    messages = load_session(path)
    assert messages[0]["role"] == "system"
    assert 40 <= len(messages) <= 140
    assert _exchanges(messages) >= 20
    assert {m["role"] for m in messages} <= ROLES

    open_calls: dict[str, str] = {}
    for i, m in enumerate(messages):
        assert isinstance(m.get("content"), str), f"message {i} has no text content"
        if m["role"] in ("user", "system"):
            assert not open_calls, f"message {i}: calls {sorted(open_calls)} unanswered before a {m['role']} turn"
        if m["role"] == "assistant":
            assert not open_calls, f"message {i}: calls {sorted(open_calls)} unanswered"
            for call in m.get("tool_calls") or []:
                assert call["type"] == "function" and call["id"] not in open_calls
                assert isinstance(json.loads(call["function"]["arguments"]), dict)
                open_calls[call["id"]] = call["function"]["name"]
        if m["role"] == "tool":
            assert m["tool_call_id"] in open_calls, f"message {i} answers no open call"
            assert m["name"] == open_calls.pop(m["tool_call_id"])
    assert not open_calls

    big = [m for m in messages if m["role"] == "tool" and len(m["content"]) >= 2500]
    assert len(big) >= 3, "a few tool outputs of several KB"
    assert any("exit code" in m["content"] for m in messages if m["role"] == "tool")


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.stem)
def test_facts_are_planted(path):
    messages = load_session(path)
    facts = load_facts(facts_path(path))
    for cat in REQUIRED:
        assert getattr(facts, cat), f"{cat} is empty"
    text = _text(messages)
    missing = [(cat, fact) for cat, fact in facts.all_facts() if fact not in text]
    assert not missing
    # Planted secrets and injections live in tool output only: the agent never repeats them.
    said = "\n".join(m["content"] for m in messages if m["role"] != "tool")
    for fact in facts.secrets + facts.injections:
        assert fact not in said
    assert any("ignore previous instructions" in f.lower() for f in facts.injections)
    # The user's decisions are the user's words.
    users = "\n".join(m["content"] for m in messages if m["role"] == "user")
    assert all(d in users for d in facts.decisions)


# ---------------------------------------------------------------------------------------------
# loader errors and round trips


def test_jsonl_round_trip_and_blank_lines(tmp_path):
    msgs = [{"role": "user", "content": "héllo"}, {"role": "assistant", "content": None}]
    p = tmp_path / "s.jsonl"
    save_jsonl(msgs, p)
    p.write_text(p.read_text() + "\n\n")
    assert load_session(p) == msgs


@pytest.mark.parametrize(
    "line, needle",
    [
        ('{"role": "user", "content": ', "invalid JSON"),
        ('["user", "hi"]', "expected a JSON object"),
        ('{"content": "hi"}', "message has no string 'role'"),
    ],
)
def test_bad_line_is_named(tmp_path, line, needle):
    p = tmp_path / "bad.jsonl"
    p.write_text('{"role": "system", "content": "s"}\n\n' + line + "\n")
    with pytest.raises(SessionFormatError) as err:
        load_session(p)
    assert f"bad.jsonl:3: {needle}" in str(err.value)


def test_missing_and_empty_files(tmp_path):
    with pytest.raises(SessionFormatError, match="cannot read"):
        load_session(tmp_path / "nope.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(SessionFormatError, match="no messages"):
        load_session(tmp_path / "empty.jsonl")
    (tmp_path / "bin.jsonl").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(SessionFormatError, match="not UTF-8"):
        load_session(tmp_path / "bin.jsonl")


def _hermes_db(path):
    """A cut-down Hermes state.db messages table (the columns the loader reads)."""
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,"
        " role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,"
        " timestamp REAL NOT NULL, _compressed_summary INTEGER NOT NULL DEFAULT 0,"
        " active INTEGER NOT NULL DEFAULT 1, compacted INTEGER NOT NULL DEFAULT 0, display_metadata TEXT)"
    )
    calls = json.dumps([{"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}])
    rows = [
        ("s1", "system", "sys", None, None, None, 1.0, 0, 1, 0),
        ("s1", "user", "hi", None, None, None, 2.0, 0, 1, 0),
        ("s1", "assistant", "old", None, calls, None, 3.0, 0, 0, 1),
        ("s1", "tool", "out", "c1", None, "terminal", 4.0, 0, 0, 1),
        ("s1", "assistant", "[CONTEXT COMPACTION] ...", None, None, None, 5.0, 1, 1, 0),
        ("s1", "assistant", "next", None, calls, None, 6.0, 0, 1, 0),
        ("s1", "tool", "out2", "c1", None, "terminal", 7.0, 0, 1, 0),
        ("s2", "user", "other", None, None, None, 1.5, 0, 1, 0),
    ]
    conn.executemany(
        "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp,"
        " _compressed_summary, active, compacted) VALUES (?,?,?,?,?,?,?,?,?,?)",
        rows,
    )
    conn.commit()
    conn.close()


def test_state_db_loads_active_rows_only(tmp_path):
    db = tmp_path / "state.db"
    _hermes_db(db)
    assert list_state_db_sessions(db) == ["s1", "s2"]
    msgs = load_session(db, "s1")
    assert [m["content"] for m in msgs] == ["sys", "hi", "[CONTEXT COMPACTION] ...", "next", "out2"]
    assert msgs[2]["_compressed_summary"] is True
    assert msgs[3]["tool_calls"][0]["function"]["name"] == "terminal"
    assert msgs[4] == {"role": "tool", "content": "out2", "tool_call_id": "c1", "name": "terminal"}


def test_state_db_errors(tmp_path):
    db = tmp_path / "state.db"
    _hermes_db(db)
    with pytest.raises(SessionFormatError, match="several sessions"):
        load_session(db)
    with pytest.raises(SessionFormatError, match="no active messages"):
        load_session(db, "missing")
    with pytest.raises(SessionFormatError, match="only applies"):
        load_session(SESSIONS[0], "s1")


def test_facts_file_checks(tmp_path):
    p = tmp_path / "x.facts.yaml"
    p.write_text("paths: [a]\nsecrets:\n")
    assert load_facts(p) == SessionFacts(paths=["a"])
    assert load_facts(p).must_keep() == [("paths", "a")]
    p.write_text("colours: [red]\n")
    with pytest.raises(SessionFormatError, match="unknown category 'colours'"):
        load_facts(p)
    p.write_text("paths: [1, 2]\n")
    with pytest.raises(SessionFormatError, match="list of strings"):
        load_facts(p)
    assert facts_path(tmp_path / "a.b.jsonl").name == "a.b.facts.yaml"


def test_a_session_store_file_loads_as_a_session(tmp_path):
    from hermes_mlx.compactor.store import SessionStore

    msgs = load_session(SESSIONS[0])[:6]
    marker = {"role": "assistant", "content": "summary", "_compressed_summary": True, "_micro_compact_marker": True}
    with SessionStore(tmp_path / "ours.db") as store:
        store.append("run-1", msgs)
        store.archive_and_compact("run-1", msgs[:2] + [marker] + msgs[5:])
    assert load_session(tmp_path / "ours.db") == msgs[:2] + [marker] + msgs[5:]


# ---------------------------------------------------------------------------------------------
# one loader, one rule; deep JSON; malformed state.db rows; atomic writes


def test_line_separators_inside_strings_round_trip(tmp_path):
    msgs = [{"role": "user", "content": "a\u2028b\u2029c\x85d"}, {"role": "assistant", "content": "lone \ud800"}]
    p = tmp_path / "s.jsonl"
    save_jsonl(msgs, p)
    assert load_session(p) == msgs


def test_deeply_nested_json_is_named(tmp_path):
    p = tmp_path / "deep.jsonl"
    p.write_text('{"role": "user", "content": "a"}\n{"role": "user", "x": ' + "[" * 50_000 + "]" * 50_000 + "}\n")
    with pytest.raises(SessionFormatError, match=r"deep.jsonl:2: JSON nested too deeply"):
        load_session(p)


def test_save_is_atomic_and_keeps_permissions(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_text("old\n")
    p.chmod(0o640)
    save_jsonl([{"role": "user", "content": "new"}], p)
    assert load_session(p) == [{"role": "user", "content": "new"}]
    assert p.stat().st_mode & 0o777 == 0o640
    with pytest.raises(TypeError):
        save_jsonl([{"role": "user", "content": object()}], p)
    assert load_session(p) == [{"role": "user", "content": "new"}]  # a failed write leaves the old file
    assert [q.name for q in tmp_path.iterdir()] == ["s.jsonl"]


def _loose_db(path, rows):
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id, role, content, tool_calls, timestamp REAL)"
    )
    conn.executemany(
        "INSERT INTO messages (session_id, role, content, tool_calls, timestamp) VALUES (?, ?, ?, ?, 1.0)", rows
    )
    conn.commit()
    conn.close()


@pytest.mark.parametrize(
    "row, needle",
    [
        ((None, "user", "hi", None), "have no session_id"),
        (("a", None, "hi", None), "row 1: role is NULL, not text"),
        (("a", 5, "hi", None), "row 1: role is int, not text"),
        (("a", "user", 3.5, None), "row 1: content is float, not text"),
        (("a", "user", b"\xff", None), "row 1: content is binary, not UTF-8 text"),
        (("a", "assistant", "x", "{not json"), "row 1: tool_calls is not JSON"),
    ],
)
def test_malformed_state_db_rows_are_named(tmp_path, row, needle):
    db = tmp_path / "state.db"
    _loose_db(db, [row])
    with pytest.raises(SessionFormatError, match=needle):
        load_session(db)


def test_integer_session_ids_are_read_as_text(tmp_path):
    db = tmp_path / "state.db"
    _loose_db(db, [(7, "user", "hi", None), (7, "assistant", b"utf-8 bytes", None), (None, "user", "orphan", None)])
    assert list_state_db_sessions(db) == ["7"]
    assert (
        load_session(db)
        == load_session(db, "7")
        == [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "utf-8 bytes"}]
    )
