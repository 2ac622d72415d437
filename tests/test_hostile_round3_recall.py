"""Issue 28, hostile round three: the recall tool and the archive under it (items 1, 2, 3, 5, 6,
7 and 11). Each test names the item it holds to.

1. recall stays in its conversation: Hermes's /new, /resume and /branch (reset_session_state)
   end the lineage a rotation built (here in-process and through Hermes 0.22's own agent);
2. one bad row cannot lock engine.db: every write rolls back on any error, the index holds the
   store's cleaned text;
3. recall hands back no secret: the whole redaction corpus (tests/secrets_corpus.py, so shapes
   added there are tried here too) and the multi-line shapes, queried by their words and values;
5. a pass whose store write fails leaves no recall note, and what it folded is archived with the
   next write that succeeds;
6. no store: recall says the archive is unavailable and why; markers carry no note;
7. recall is incremental and redacts a window, not a 50 MB line (benchmarks/bench_recall.py
   has the figures);
11. odd input: one message naming what is wrong; words past the 8th, CJK and emoji found; old
   summary markers not matched; an index of the first layout rebuilt.
"""

from __future__ import annotations

import json
import logging
import sqlite3

import pytest
from fakes import ScriptedSummarizer, assistant, session, tool, user
from secrets_corpus import B64, Gen, _jwt, _wrap, build_corpus

from hermes_mlx.compactor import markers
from hermes_mlx.compactor.store import SessionStore, write_transaction
from hermes_mlx.integrations import recall, recall_index
from hermes_mlx.integrations.context_engine import STORE_FILE, EngineCore

RUN = 8  # a secret leaks when any 8-character run of it comes back (as in test_redaction_e2e)
FACT = "Traceback: ZeroDivisionError in src/ledger_rounding.py line 88"


@pytest.fixture(autouse=True)
def no_ahead(monkeypatch):
    monkeypatch.setenv("HERMES_MLX_AHEAD", "0")


def engine(tmp_path, sid="s1", summarizer=None):
    e = EngineCore(summarizer or ScriptedSummarizer(), home=tmp_path)
    e.context_length, e.threshold_tokens = 4000, 1500
    e._micro_compact_enabled = True
    e.on_session_start(sid, hermes_home=str(tmp_path), model="stub-main")
    return e


def fact_session():
    messages = session(turns=6, size=300)
    messages[7] = tool("call_1", FACT)
    return messages


def ask(e, query, **more):
    return json.loads(e.handle_tool_call(recall.TOOL_NAME, {"query": query, **more}))


def texts(answer):
    return [m["text"] for m in answer.get("matches", [])]


def archive(tmp_path, rows_by_session: dict[str, list[dict]], name="engine.db"):
    """A store whose sessions' rows are all archived, and a recall index beside them."""
    path = tmp_path / name
    store = SessionStore(path, timeout=0.5)
    for sid, rows in rows_by_session.items():
        assert store.sync(sid, rows) and store.archive_and_compact(sid, [user("later")])
    return store, recall.RecallIndex(store, path)


def leaks(secrets, text):
    return [s[i : i + RUN] for s in secrets for i in range(len(s) - RUN + 1) if s[i : i + RUN] in text]


# ------------------------------------------------------------------ 1. lineage


def test_1_a_reset_or_a_new_id_ends_the_lineage_a_rotation_built(tmp_path):
    e = engine(tmp_path, sid="parent")
    e.compress(fact_session())
    e.on_session_start("child", boundary_reason="compression", old_session_id="parent")
    assert FACT in texts(ask(e, "ZeroDivisionError ledger_rounding"))  # the rotation keeps it
    # /new, as Hermes's reset_session_state does it: on_session_reset, then the new id bound
    e.on_session_reset()
    e.bind_session_state(None, "fresh")
    assert texts(ask(e, "ZeroDivisionError ledger_rounding")) == []
    # a start under another id that is not a compaction boundary (/resume, /branch) ends it too
    e2 = engine(tmp_path, sid="parent2")
    e2.compress(fact_session())
    e2.on_session_start("child2", boundary_reason="compression", old_session_id="parent2")
    e2.on_session_start("branched", old_session_id="child2")
    assert texts(ask(e2, "ZeroDivisionError ledger_rounding")) == []
    e2.bind_session_state(None, "branched")  # the same id bound again keeps what it has
    assert e2._session_id == "branched" and e.failures == e2.failures == 0


RESET_DRIVER = """
    import os
    sys.path.insert(0, sys.argv[3])
    from fakes import ScriptedSummarizer, session, tool
    from run_agent import AIAgent
    from hermes_state import SessionDB
    from hermes_mlx.integrations import recall

    port = int(sys.argv[2])
    agent = AIAgent(base_url=f"http://127.0.0.1:{port}/v1", api_key="stub-key", provider="custom",
                    model="stub-main", enabled_toolsets=["context_engine"], quiet_mode=True, platform="cli",
                    skip_context_files=True, skip_memory=True, skip_background_review=True,
                    session_db=SessionDB())
    engine = agent.context_compressor
    engine._summarizer = ScriptedSummarizer()
    engine.context_length, engine.threshold_tokens = 4000, 1500
    fact = sys.argv[4]

    def conversation():
        messages = session(turns=6, size=300)
        messages[7] = tool("call_1", fact)
        return messages

    def ask():
        answer = json.loads(engine.handle_tool_call(recall.TOOL_NAME, {"query": "ZeroDivisionError ledger_rounding"}))
        return [m["text"] for m in answer.get("matches", [])]

    def rotate():  # what Hermes does with compression.in_place: false (agent/conversation_compression.py)
        parent = agent.session_id
        out = engine.compress(conversation())
        agent.session_id = parent + "-child"
        engine.on_session_start(agent.session_id, boundary_reason="compression", old_session_id=parent)
        return out

    result = {"engine": engine.name}
    rotate()
    result["rotated"] = ask()
    agent.session_id = "after-new"  # /new: the CLI sets the new id, then resets (cli_session_mixin.py)
    agent.reset_session_state()
    result["after_new"] = ask()
    out = rotate()
    result["rotated_again"] = ask()
    old = agent.session_id  # /branch: the transition lifecycle, with the old id and its messages
    agent.session_id = "branched"
    agent.reset_session_state(previous_messages=out, old_session_id=old)
    result["after_branch"] = ask()
    result["failures"] = engine.failures
    emit(result)
    sys.stdout.flush(); sys.stderr.flush()
    os._exit(0)
"""


def test_1_hermes_reset_session_state_ends_the_lineage(tmp_path):
    """Through Hermes 0.22's own AIAgent.reset_session_state (its /new and /branch), with our
    engine registered from config.yaml; the summarizer is scripted (no model needed)."""
    from hermes_engine_session import ENGINE_CONFIG
    from hermes_envs import EnvBuildError, ensure_envs
    from hermes_session import HERE, drive
    from test_hermes_e2e import H22

    python = ensure_envs([H22])[H22]
    if isinstance(python, EnvBuildError):
        pytest.skip(f"could not build a venv with {H22[0]}=={H22[1]}: {python}")
    driver = ("reset_driver.py", RESET_DRIVER)
    result, _log = drive(
        python,
        tmp_path,
        ENGINE_CONFIG,
        "stub_recall_model.py",
        600,
        driver,
        [str(HERE), FACT],
        600,
        {"HERMES_MLX_AHEAD": "0"},
    )
    assert result["engine"] == "hermes-mlx"
    assert FACT in result["rotated"] and FACT in result["rotated_again"]
    assert result["after_new"] == [] and result["after_branch"] == []
    assert result["failures"] == 0


# ------------------------------------------------------------------ 2. one bad row, no lock


def test_2_a_lone_surrogate_row_and_a_recall_call_leave_the_archive_writable(tmp_path):
    e = engine(tmp_path)
    messages = fact_session()
    messages[9] = tool("call_2", "odd bytes \udc80\ud800 in the quokka_report output")
    fold(e, messages)
    answer = ask(e, "quokka_report")
    assert "error" not in answer and any("\ufffd" in t and "quokka_report" in t for t in texts(answer))
    other = SessionStore(tmp_path / STORE_FILE, timeout=0.2)  # another process's writer
    assert other.sync("another-session", [user("hello"), assistant("hi")])
    assert other.archive_and_compact("another-session", [user("hello")])


def test_2_every_write_transaction_rolls_back_on_any_error(tmp_path, monkeypatch):
    path = tmp_path / "engine.db"
    store = SessionStore(path, timeout=0.2)
    conn = sqlite3.connect(str(path), isolation_level=None, timeout=0.2)
    with pytest.raises(UnicodeEncodeError), write_transaction(conn) as cur:
        cur.execute("CREATE TABLE t (x TEXT)")
        "\ud800".encode()  # a Python error after BEGIN
    assert not conn.in_transaction and store.sync("s", [user("written at once")])
    # the recall index's refresh goes through the same helper
    assert store.sync("s2", [user("to fold"), assistant("the pangolin_line")])
    assert store.archive_and_compact("s2", [user("later")])
    index = recall.RecallIndex(store, path)

    def broken(message):
        raise RuntimeError("a row the index cannot take")

    monkeypatch.setattr(recall_index, "prepared", broken)
    answer = json.loads(recall.handle_call(index, "s2", {"query": "pangolin_line"}))
    assert "error" in answer
    assert store.sync("s3", [user("still writable")])  # nothing holds the lock
    monkeypatch.undo()
    assert "the pangolin_line" in texts(index.search("s2", "pangolin_line"))


def fold(e, messages, passes=3):
    for _ in range(passes):
        messages = e._micro_compact(messages)
    return messages


# ------------------------------------------------------------------ 3. no secret comes back

CORPUS = build_corpus()


def test_3_recall_never_hands_back_a_secret_of_the_redaction_corpus(tmp_path):
    rows = []
    for i, case in enumerate(CORPUS):
        rows.append(tool(f"c{i}", case.text) if i % 2 else assistant(case.text))
    store, index = archive(tmp_path, {"s": rows})
    found = []
    for case in CORPUS:
        queries = [" ".join(recall.terms_of(case.text)[:6]), *case.secrets]
        for query in queries:
            query = query[: recall.MAX_QUERY_CHARS]
            if not recall.terms_of(query):
                continue
            for text in texts(index.search("s", query, recall.MAX_MATCHES)):
                found += [(case.rule, query[:40], run) for run in leaks(case.secrets, text)]
    assert found == []


def multiline_cases(g: Gen) -> list[tuple[str, str, tuple[str, ...], list[str]]]:
    """(name, archived text, secrets, queries): shapes that span lines, and plain queries."""
    pem_body = [g.s(B64, 64) for _ in range(5)]
    pem = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(pem_body) + "\n-----END RSA PRIVATE KEY-----"
    ssh_body = ["b3BlbnNzaC1rZXktdjE" + g.s(B64, 51)] + [g.s(B64, 70) for _ in range(4)]
    ssh = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(ssh_body) + "\n-----END OPENSSH PRIVATE KEY-----"
    putty_body = [g.s(B64, 64) for _ in range(4)]
    putty = "PuTTY-User-Key-File-3: ssh-rsa\nPrivate-Lines: 4\n" + "\n".join(putty_body) + "\nPrivate-MAC: ab12"
    jwt = _jwt(g)
    password = g.password()
    docker, vault = g.password(), g.password()
    return [
        (
            "pem",
            f"$ cat deploy.pem\n{pem}\n$ chmod 600 deploy.pem",
            tuple(pem_body),
            ["BEGIN PRIVATE KEY", "deploy.pem", pem_body[2]],
        ),
        ("openssh", f"$ cat ~/.ssh/id_ed25519\n{ssh}", tuple(ssh_body), ["OPENSSH", "id_ed25519", ssh_body[1][:20]]),
        ("putty", f"$ cat key.ppk\n{putty}", tuple(putty_body), ["Private-Lines", "PuTTY", putty_body[3][:16]]),
        ("jwt-wrapped", "the session token:\n" + _wrap(g, jwt), (jwt[:30], jwt[-30:]), ["session token", jwt[-20:]]),
        ("password-next-line", f"password:\n  {password}\nthanks", (password,), ["password", "thanks", password]),
        (
            "docker-hub",
            f"Docker Hub login: docker login -u ops --password {docker}",
            (docker,),
            ["Docker Hub", "docker login"],
        ),
        (
            "vault",
            f"vault login -method=userpass username=admin password={vault}",
            (vault,),
            ["vault login", "userpass"],
        ),
    ]


def test_3_multi_line_shapes_and_plain_queries_come_back_redacted(tmp_path):
    cases = multiline_cases(Gen(2804))
    rows = [tool(f"c{i}", text) for i, (_, text, _, _) in enumerate(cases)]
    store, index = archive(tmp_path, {"s": rows})
    for name, _text, secrets, queries in cases:
        for query in queries:
            answer = index.search("s", query, recall.MAX_MATCHES)
            for text in texts(answer):
                assert not leaks(secrets, text), (name, query, text)
    assert any("docker login" in t for t in texts(index.search("s", "Docker Hub")))  # the line itself comes back


def test_3_a_row_too_large_to_redact_whole_is_redacted_around_each_hit(tmp_path, monkeypatch):
    monkeypatch.setattr(recall_index, "WHOLE_MAX", 20_000)
    g = Gen(5)
    password, token = g.password(), "sk-proj-" + g.s(B64, 40).replace("/", "x").replace("+", "y")
    filler = "".join(f"step {i} ok; " for i in range(6000))  # ~70 KB on one line
    text = (
        filler + f" db password: {password} for the wombat_job;" + filler + f" export OPENAI_API_KEY={token} wombat_job"
    )
    store, index = archive(tmp_path, {"s": [tool("c1", text)]})
    answer = index.search("s", "wombat_job", recall.MAX_MATCHES)
    assert texts(answer) and all("wombat_job" in t for t in texts(answer))
    assert not any(leaks((password, token), t) for t in texts(answer))


# ------------------------------------------------------------------ 5. a failed store write


def test_5_a_pass_whose_store_write_fails_leaves_no_recall_note(tmp_path, monkeypatch):
    e = engine(tmp_path)
    real = SessionStore._reconcile

    def disk_full(self, cur, session_id, messages):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(SessionStore, "_reconcile", disk_full)
    out = fold(e, fact_session())
    marker = next(m for m in out if markers.is_marker(m))
    assert recall.MARKER_NOTE not in marker["content"]  # nothing of this pass is archived
    assert e._store.failures
    monkeypatch.setattr(SessionStore, "_reconcile", real)
    out = e._micro_compact(out + [user("one more question"), assistant("one more answer " * 40)])
    marker = next(m for m in out if markers.is_marker(m))
    assert recall.MARKER_NOTE in marker["content"]
    assert FACT in texts(ask(e, "ZeroDivisionError ledger_rounding"))  # kept until a write succeeded


def test_5_a_batch_pass_whose_store_write_fails_leaves_no_recall_note(tmp_path, monkeypatch):
    e = engine(tmp_path)
    monkeypatch.setattr(
        SessionStore, "_reconcile", lambda *a: (_ for _ in ()).throw(sqlite3.OperationalError("locked"))
    )
    out = e.compress(fact_session())
    assert not any(recall.MARKER_NOTE in (m.get("content") or "") for m in out)


# ------------------------------------------------------------------ 6. no store


def test_6_a_store_that_cannot_be_opened_is_named_and_markers_carry_no_note(tmp_path, caplog):
    (tmp_path / STORE_FILE.parent).write_text("a file where the folder should be")
    e = engine(tmp_path)
    assert e.failures == 0  # on_session_start went through
    out = e.compress(fact_session())
    assert any(markers.is_marker(m) for m in out)
    assert not any(recall.MARKER_NOTE in (m.get("content") or "") for m in out)
    error = ask(e, "ZeroDivisionError")["error"]
    assert "archive is unavailable" in error and str(tmp_path / STORE_FILE.parent) in error
    assert "nothing has been compacted" not in error


def test_6_a_store_that_fails_at_search_time_is_one_message_without_a_traceback(tmp_path, monkeypatch, caplog):
    e = engine(tmp_path)
    e.compress(fact_session())

    def gone(*a, **k):
        from hermes_mlx.compactor.store import StoreError

        raise StoreError("cannot read session store at x: disk I/O error")

    monkeypatch.setattr(e._store, "archived_ids", gone)
    with caplog.at_level(logging.WARNING):
        error = ask(e, "ZeroDivisionError")["error"]
    assert "archive is unavailable" in error and "disk I/O error" in error
    assert not any(r.exc_info for r in caplog.records)


# ------------------------------------------------------------------ 7. incremental, windowed


def test_7_a_call_reads_only_rows_it_has_not_indexed(tmp_path, monkeypatch):
    e = engine(tmp_path)
    fold(e, fact_session())
    read = []
    real_rows, real_history = e._store.rows, e._store.history
    monkeypatch.setattr(e._store, "rows", lambda ids: read.append(list(ids)) or real_rows(ids))
    monkeypatch.setattr(e._store, "history", lambda sid: read.append(["history"]) or real_history(sid))
    assert FACT in texts(ask(e, "ZeroDivisionError ledger_rounding"))
    first = len(read)
    assert first and ["history"] not in read
    assert FACT in texts(ask(e, "ZeroDivisionError ledger_rounding"))
    assert len(read) == first  # nothing read again


def test_7_a_huge_row_is_windowed_before_it_is_redacted(tmp_path, monkeypatch):
    monkeypatch.setattr(recall_index, "WHOLE_MAX", 50_000)
    sizes = []
    real = recall_index.redact
    monkeypatch.setattr(recall_index, "redact", lambda text: sizes.append(len(text)) or real(text))
    line = "x=1; " * 60_000 + "the marmot_error is here; " + "y=2; " * 60_000  # 600 KB, one line
    store, index = archive(tmp_path, {"s": [tool("c1", line)]})
    assert any("marmot_error" in t for t in texts(index.search("s", "marmot_error")))
    assert sizes and max(sizes) <= 2 * recall_index.MARGIN
    sizes.clear()
    index.search("s", "marmot_error")
    assert max(sizes) <= 2 * recall_index.MARGIN


def test_7_a_huge_row_is_indexed_in_parts_each_its_own_transaction(tmp_path, monkeypatch):
    monkeypatch.setattr(recall_index, "PART_CHARS", 10_000)
    monkeypatch.setattr(recall_index, "INDEX_BATCH_CHARS", 20_000)
    commits = []
    real = recall_index.write_transaction

    def counted(conn):
        commits.append(1)
        return real(conn)

    monkeypatch.setattr(recall_index, "write_transaction", counted)
    filler = "".join(f"entry_{i} " for i in range(10_000))  # ~100 KB
    cut = recall_index.PART_CHARS - 5  # a phrase across the first cut between parts
    text = filler[:cut] + " split phrase_here " + filler[cut:] + " last_word_gnu"
    store, index = archive(tmp_path, {"s": [tool("c1", text)]})
    assert any("last_word_gnu" in t for t in texts(index.search("s", "last_word_gnu")))
    assert len(commits) >= 5  # ~100 KB in parts of 10 KB, 20 KB a transaction
    assert texts(index.search("s", "split phrase_here"))
    assert len(texts(index.search("s", "entry_1", 12))) <= 12


# ------------------------------------------------------------------ 11. odd input, scripts, markers


@pytest.mark.parametrize(
    ("args", "named"),
    [
        ({"query": "ledger\x00rounding"}, "NUL"),
        ({"query": "ledger \ud800"}, "lone surrogate"),
        ('{"query": "ledger", "limit": NaN}', "'limit'"),
        ('{"query": "ledger", "limit": Infinity}', "'limit'"),
        ({"query": "ledger", "limit": float("inf")}, "'limit'"),
        ({"query": "ledger", "limit": 2.5}, "'limit'"),
        ("[" * 100_000 + "]" * 100_000, "longer than"),
        ('{"query": ' + "[" * 5000 + "]" * 5000 + "}", "nested too deeply"),
        ({"query": {"nested": [[[["deep"]]]]}}, "'query'"),
    ],
)
def test_11_odd_input_is_one_message_naming_what_is_wrong(tmp_path, caplog, args, named):
    e = engine(tmp_path)
    e.compress(fact_session())
    with caplog.at_level(logging.WARNING):
        answer = json.loads(e.handle_tool_call(recall.TOOL_NAME, args))
    assert answer["error"].startswith(recall.TOOL_NAME + ":") and named in answer["error"], answer
    assert not any(r.exc_info for r in caplog.records)


def test_11_a_whole_number_limit_written_as_a_float_is_taken(tmp_path):
    e = engine(tmp_path)
    e.compress(fact_session())
    assert FACT in texts(ask(e, "ZeroDivisionError", limit=3.0))


def test_11_words_past_the_eighth_are_searched_and_past_the_limit_named(tmp_path):
    store, index = archive(tmp_path, {"s": [tool("c1", "the ninth word is aardvark_zeta")]})
    query = "alpha beta gamma delta epsilon zeta eta theta aardvark_zeta"
    assert texts(index.search("s", query)) == ["the ninth word is aardvark_zeta"]
    many = " ".join(f"w{i}" for i in range(recall.MAX_TERMS)) + " aardvark_zeta"
    answer = index.search("s", many)
    assert answer["words_not_searched"] == ["aardvark_zeta"]


@pytest.mark.parametrize(
    ("archived", "query"),
    [
        ("数据库连接失败，请检查配置文件", "连接"),
        ("数据库连接失败，请检查配置文件", "配置文件"),
        ("ファイルが見つかりません: config.yaml", "見つかり"),
        ("설정파일을찾을수없습니다", "설정파일"),
        ("deploy 🚀 finished in 3m", "🚀"),
        ("tests green✅ on main", "✅"),
    ],
)
def test_11_cjk_words_inside_a_run_and_emoji_are_found(tmp_path, archived, query):
    store, index = archive(tmp_path, {"s": [tool("c1", archived)]})
    assert texts(index.search("s", query)) == [archived]


def test_11_an_old_summary_marker_is_not_a_match(tmp_path):
    old = markers.build("- the build used quixotic_flag and passed", micro=False)
    store, index = archive(tmp_path, {"s": [old, tool("c1", "unrelated output")]})
    assert texts(index.search("s", "quixotic_flag")) == []


def test_11_an_index_of_the_first_layout_is_dropped_and_rebuilt(tmp_path):
    path = tmp_path / "engine.db"
    store = SessionStore(path)
    assert store.sync("s", [tool("c1", "数据库连接失败"), user("q")]) and store.archive_and_compact("s", [user("q")])
    conn = sqlite3.connect(str(path))
    conn.execute("CREATE VIRTUAL TABLE hermes_mlx_recall USING fts5(session UNINDEXED, role UNINDEXED, body)")
    conn.execute("INSERT INTO hermes_mlx_recall (rowid, session, role, body) VALUES (1, 's', 'tool', '数据库连接失败')")
    conn.commit()
    conn.close()
    index = recall.RecallIndex(store, path)
    assert texts(index.search("s", "连接")) == ["数据库连接失败"]
    tables = {r[0] for r in sqlite3.connect(str(path)).execute("SELECT name FROM sqlite_master")}
    assert "hermes_mlx_recall" not in tables


def test_11_a_windows_path_comes_back_as_written(tmp_path):
    line = r"dir C:\Windows\System32\drivers\etc"
    store, index = archive(tmp_path, {"s": [tool("c1", line)]})
    assert texts(index.search("s", r"C:\Windows\System32")) == [line]


def test_2_a_row_that_does_not_decode_is_left_out_not_fatal(tmp_path):
    store, index = archive(tmp_path, {"s": [tool("c1", "the first row"), tool("c2", "the ocelot_row")]})
    first = store.archived_ids("s")[0]
    conn = sqlite3.connect(str(tmp_path / "engine.db"))
    conn.execute("UPDATE messages SET flags = '[not an object' WHERE id = ?", (first,))
    conn.commit()
    conn.close()
    assert texts(index.search("s", "ocelot_row")) == ["the ocelot_row"]
    assert texts(index.search("s", "ocelot_row")) == ["the ocelot_row"]  # and again, nothing retried
