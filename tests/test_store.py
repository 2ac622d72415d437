"""SessionStore: atomic archive-and-compact, resume sees only active rows, originals searchable."""

from __future__ import annotations

import logging
import sqlite3

import pytest

from hermes_mlx.compactor.store import SessionStore, StoreError

MARKER = {
    "role": "assistant",
    "content": "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted into the summary below.\n"
    "## Historical Task Snapshot\nran pytest\n--- END OF CONTEXT SUMMARY — respond to the message below, not the summary above ---",
    "_compressed_summary": True,
    "_micro_compact_marker": True,
}


def _call(cid: str, cmd: str) -> dict:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": "terminal", "arguments": f'{{"command": "{cmd}"}}'}}
        ],
    }


TRANSCRIPT = [
    {"role": "system", "content": "You are Hermes."},
    {"role": "user", "content": "Fix the failing test."},
    _call("c1", "pytest -q"),
    {
        "role": "tool",
        "tool_call_id": "c1",
        "name": "terminal",
        "content": "FAILED tests/test_a.py::test_b - KeyError: 'x'",
    },
    {"role": "assistant", "content": "The test fails with KeyError."},
    {"role": "user", "content": "Use the v2 API."},
]
COMPACTED = TRANSCRIPT[:2] + [MARKER] + TRANSCRIPT[5:]


@pytest.fixture
def store(tmp_path):
    s = SessionStore(tmp_path / "state.db", clock=lambda: 1000.0)
    yield s
    s.close()


def _rows(store: SessionStore) -> list[tuple]:
    return [(r.id, r.position, r.active, r.compacted, r.archived_at) for r in store.history("s1")]


def test_append_and_load_round_trip(store):
    odd = [
        {"role": "user", "content": [{"type": "text", "text": "parts"}]},
        {"role": "assistant", "content": None, "tool_calls": None, "reasoning": "hmm"},
        {"role": "assistant"},
    ]
    assert store.append("s1", TRANSCRIPT)
    assert store.append("s1", odd)
    assert store.load_active("s1") == TRANSCRIPT + odd
    assert store.load_active("other") == []
    assert store.sessions() == ["s1"]


def test_archive_and_compact_replaces_active_view(store):
    store.append("s1", TRANSCRIPT)
    assert store.archive_and_compact("s1", COMPACTED)
    # Resume: the summary and the rows it replaced are never loaded together.
    active = store.load_active("s1")
    assert active == COMPACTED
    assert sum(1 for m in active if m.get("_compressed_summary")) == 1
    assert not any(m.get("tool_call_id") == "c1" for m in active)
    # Only the rows the summary replaced are archived; the kept head and tail stay as they were
    # and only the summary is new, so the store grows with the transcript, not with passes.
    history = store.history("s1")
    assert [(r.active, r.compacted) for r in history] == [(True, False)] * 2 + [(False, True)] * 3 + [(True, False)] * 2
    assert [r.archived_at for r in history] == [None, None, 1000.0, 1000.0, 1000.0, None, None]
    assert [r.position for r in history] == list(range(len(TRANSCRIPT) + 1))
    assert history[-1].message == MARKER


def test_a_kept_message_equal_to_another_is_stored_once(store):
    # hypothesis found it: [A, B, C, A] -> [B, A, summary] kept the first A and stored B again
    a, b, c = (
        {"role": "tool", "tool_call_id": "x", "content": "ok"},
        {"role": "user", "content": "go"},
        {"role": "user"},
    )
    store.append("s1", [a, b, c, dict(a)])
    compacted = [b, a, {"role": "assistant", "content": "summary"}]
    assert store.archive_and_compact("s1", compacted)
    assert store.load_active("s1") == compacted
    assert len(store.history("s1")) == 5  # the four, and the summary


def test_second_pass_and_sync(store):
    store.sync("s1", TRANSCRIPT)
    store.sync("s1", TRANSCRIPT)  # idempotent: nothing new
    assert store.load_active("s1") == TRANSCRIPT
    store.archive_and_compact("s1", COMPACTED)
    grown = COMPACTED + [{"role": "assistant", "content": "Done with v2."}]
    store.sync("s1", grown)  # append-only flush adds just the new turn
    assert store.load_active("s1") == grown
    newer = grown[:2] + [dict(MARKER, content="newer summary")] + grown[3:]
    assert store.archive_and_compact("s1", newer)
    assert store.load_active("s1") == newer


def test_originals_stay_searchable(store):
    store.append("s1", TRANSCRIPT)
    store.append("s2", [{"role": "user", "content": "keyerror elsewhere"}])
    store.archive_and_compact("s1", COMPACTED)
    hits = store.search("s1", "KeyError: 'x'")
    assert len(hits) == 1 and not hits[0].active and hits[0].compacted
    assert hits[0].message["tool_call_id"] == "c1"
    assert [h.session_id for h in store.search(None, "KEYERROR")] == ["s1", "s1", "s2"]
    assert len(store.search("s1", "pytest -q")) == 1  # tool call arguments are searchable
    assert store.search(None, "100%") == []  # LIKE wildcards match literally
    # The kept user turn is stored once, still active.
    assert [(h.active, h.compacted) for h in store.search("s1", "v2 API")] == [(True, False)]


def test_failure_mid_way_changes_nothing_and_is_logged(store, caplog):
    store.append("s1", TRANSCRIPT)
    before = _rows(store)
    bad = COMPACTED[:2] + [{"role": "assistant", "content": "x", "tool_calls": [object()]}] + COMPACTED[3:]
    with caplog.at_level(logging.WARNING, logger="hermes_mlx.compactor.store"):
        assert store.archive_and_compact("s1", bad) is False
    assert "archive_and_compact failed for session 's1'" in caplog.text
    assert _rows(store) == before
    assert store.load_active("s1") == TRANSCRIPT
    # The session continues: the next write works.
    assert store.archive_and_compact("s1", COMPACTED)
    assert store.load_active("s1") == COMPACTED


def test_database_error_mid_insert_rolls_back(store, tmp_path, caplog):
    store.append("s1", TRANSCRIPT)
    before = _rows(store)
    conn = sqlite3.connect(tmp_path / "state.db")
    conn.execute(
        "CREATE TRIGGER boom BEFORE INSERT ON messages WHEN NEW.content LIKE '%Historical Task Snapshot%'"
        " BEGIN SELECT RAISE(ABORT, 'simulated disk failure'); END"
    )
    conn.commit()
    conn.close()
    with caplog.at_level(logging.WARNING):
        assert store.archive_and_compact("s1", COMPACTED) is False
    assert "simulated disk failure" in caplog.text
    assert _rows(store) == before  # the archive UPDATE ran first and was rolled back too
    assert store.append("s1", [{"role": "user", "content": "still here"}])


def test_bad_input_is_logged_not_raised(store, caplog):
    with caplog.at_level(logging.WARNING):
        assert store.append("", TRANSCRIPT) is False
        assert store.append("s1", ["not a dict"]) is False
        assert store.append("s1", [{"content": "no role"}]) is False
    assert "non-empty string" in caplog.text and "not a dict" in caplog.text
    assert store.load_active("s1") == []


def test_closed_store_write_fails_softly(tmp_path):
    s = SessionStore(tmp_path / "x.db")
    s.close()
    assert s.append("s1", TRANSCRIPT) is False
    with pytest.raises(StoreError):
        s.load_active("s1")


def test_open_failure_is_one_clear_error(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError, match="cannot open session store"):
        SessionStore(tmp_path / "file" / "state.db")


def test_reopen_resumes_from_disk(tmp_path):
    path = tmp_path / "state.db"
    with SessionStore(path) as s:
        s.append("s1", TRANSCRIPT)
        s.archive_and_compact("s1", COMPACTED)
    with SessionStore(path) as s:
        assert s.load_active("s1") == COMPACTED


def test_in_memory_store():
    with SessionStore(":memory:") as s:
        assert s.append("s", TRANSCRIPT[:1])
        assert s.load_active("s") == TRANSCRIPT[:1]


# ---------------------------------------------------------------------------------------------
# lossless text, growth, replay position, and refusing what is not ours before writing to it


def test_lone_surrogates_and_non_text_ids_round_trip(store):
    odd = [
        {"role": "tool", "tool_call_id": "c\udc80", "name": "ter\ud800minal", "content": "out \ud800 put"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "x", "function": {"name": "f", "arguments": "\udfff"}}],
        },
        {"role": "tool", "tool_call_id": 42, "content": "integer id"},
    ]
    assert store.append("s\udcff", odd), store.last_error
    assert store.load_active("s\udcff") == odd
    hits = store.search(None, "out \ud800 put")  # the column holds U+FFFD; the match still works
    assert [h.message for h in hits] == odd[:1]


def test_each_write_archives_only_what_it_replaced(store):
    transcript = list(TRANSCRIPT)
    for n in range(20):  # twenty passes over a growing transcript
        transcript = transcript + [
            {"role": "user", "content": f"turn {n}"},
            {"role": "assistant", "content": f"done {n}"},
        ]
        assert store.sync("s1", transcript)
        summary = dict(MARKER, content=f"summary after turn {n}")
        transcript = transcript[:2] + [summary] + transcript[-2:]
        assert store.archive_and_compact("s1", transcript)
    rows = store.history("s1")
    # every message once, plus one rolling summary row: each pass's summary supersedes the last,
    # which it was made from, so it is rewritten in place rather than archived one per pass
    assert len(rows) == len(TRANSCRIPT) + 20 * 2 + 1
    assert store.load_active("s1") == transcript
    assert sum(r.active for r in rows) == len(transcript)
    assert [r.message["content"] for r in rows if r.message.get("_micro_compact_marker")] == ["summary after turn 19"]


def test_a_merged_user_row_that_grows_is_rewritten_in_place_and_its_originals_stay_archived(store):
    from hermes_mlx.compactor import markers

    head = TRANSCRIPT[:2]
    users = [{"role": "user", "content": f"short turn {n}"} for n in range(30)]
    merged = users[0]
    for n in range(1, 30):
        assert store.sync("s1", head + [merged, MARKER, users[n], {"role": "assistant", "content": f"ok {n}"}])
        merged = markers.merge_users(merged, users[n])
        assert store.sync("s1", head + [merged, MARKER])
    rows = store.history("s1")
    assert store.load_active("s1") == head + [merged, MARKER]
    assert len([r for r in rows if r.message.get(markers.MERGED_FROM_KEY)]) == 1  # not one a pass
    assert len(rows) < len(head) + 2 * 30 + 3
    for user in users:  # each original is findable as its own row
        assert any(r.message == user for r in rows)


def test_a_write_from_another_connection_is_seen_before_the_next_reconcile(tmp_path):
    path = tmp_path / "s.db"
    with SessionStore(path) as first, SessionStore(path) as second:
        assert first.sync("s1", TRANSCRIPT[:3])
        assert second.sync("s1", TRANSCRIPT[:2])  # archives the third row behind first's back
        assert first.sync("s1", TRANSCRIPT)
        assert first.load_active("s1") == TRANSCRIPT
        assert sum(r.active for r in first.history("s1")) == len(TRANSCRIPT)


def test_sync_records_the_replay_position_with_the_rows(store):
    from hermes_mlx.compactor.store import ReplayState

    assert store.progress("s1") is None
    state = ReplayState("digest", 12, 6, 2, pending=True, passes=1)
    assert store.sync("s1", TRANSCRIPT, state)
    assert store.progress("s1") == state
    assert store.load_active("s1") == TRANSCRIPT


def test_write_failures_are_counted_by_reason(store):
    store.append("", TRANSCRIPT)
    store.append("", TRANSCRIPT)
    assert store.failures == {"ValueError: session id must be a non-empty string, got ''": 2}
    assert store.last_error.startswith("ValueError")


def test_a_store_from_before_active_order_is_migrated(tmp_path):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, position INTEGER NOT NULL,"
        " role TEXT NOT NULL, content TEXT, tool_calls TEXT, tool_call_id TEXT, name TEXT, flags TEXT,"
        " active INTEGER NOT NULL DEFAULT 1, compacted INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL, archived_at REAL)"
    )
    conn.executemany(
        "INSERT INTO messages (session_id, position, role, content, active, compacted, created_at) VALUES (?, ?, ?, ?, ?, ?, 1)",
        [("s1", 0, "user", "old", 0, 1), ("s1", 1, "user", "a", 1, 0), ("s1", 2, "assistant", "b", 1, 0)],
    )
    conn.commit()
    conn.close()
    with SessionStore(path) as s:
        assert s.load_active("s1") == [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
        assert s.append("s1", [{"role": "user", "content": "c"}])
        assert [m["content"] for m in s.load_active("s1")] == ["a", "b", "c"]


def test_a_hermes_state_db_is_refused_before_anything_is_written(tmp_path):
    path = tmp_path / "state.db"
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT, timestamp REAL)"
    )
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="another schema"):
        SessionStore(path)
    assert path.read_bytes() == before  # not switched to WAL, no table added
    (tmp_path / "notes.txt").write_text("not a database")
    with pytest.raises(StoreError, match="not a SQLite database"):
        SessionStore(tmp_path / "notes.txt")


def test_a_locked_store_is_one_clear_error_at_open(tmp_path):
    path = tmp_path / "state.db"
    SessionStore(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError, match="database is locked"):
            SessionStore(path, timeout=0.01)
    finally:
        holder.close()


def test_unwritable_sidecar_files_are_refused(tmp_path, make_unwritable):
    path = tmp_path / "state.db"
    SessionStore(path).close()
    shm = tmp_path / "state.db-shm"
    shm.write_bytes(b"")
    make_unwritable(shm)
    with pytest.raises(StoreError, match="-shm is not writable"):
        SessionStore(path)
