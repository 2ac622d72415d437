"""The context engine's core (integrations/context_engine.py) and recall (integrations/recall.py),
without Hermes: a scripted summarizer, the hooks Hermes calls, in the order it calls them.
Hermes's own session loop drives the engine in tests/test_hermes_context_engine.py."""

from __future__ import annotations

import copy
import json

import pytest
from fakes import ScriptedSummarizer, assistant, session, tool, user

from hermes_mlx.compactor import markers
from hermes_mlx.integrations import recall
from hermes_mlx.integrations.context_engine import EngineCore
from hermes_mlx.integrations.hermes_settings import from_config

SECRET = "sk-proj-" + "Q7x9" * 10


@pytest.fixture(autouse=True)
def no_ahead(monkeypatch):
    monkeypatch.setenv("HERMES_MLX_AHEAD", "0")


def engine(tmp_path, summarizer=None, sid="s1"):
    e = EngineCore(summarizer or ScriptedSummarizer(), home=tmp_path)
    e.context_length, e.threshold_tokens = 4000, 1500  # tail: 20% of the threshold
    e._micro_compact_enabled = True
    e.on_session_start(sid, hermes_home=str(tmp_path), model="stub-main")
    return e


def fact_session():
    messages = session(turns=6, size=300)
    messages[7] = tool("call_1", f"Traceback: ZeroDivisionError in src/ledger_rounding.py line 88\nexport KEY={SECRET}")
    return messages


def fold(e, messages, passes=3):
    """Hermes's finalizer, turn after turn: each pass's output is the next one's input."""
    for _ in range(passes):
        messages = e._micro_compact(messages)
    return messages


def test_micro_pass_archives_what_it_folds_and_recall_returns_the_exact_line(tmp_path):
    e = engine(tmp_path)
    messages = fact_session()
    out = fold(e, messages)
    assert len(out) < len(messages)
    marker = next(m for m in out if markers.is_marker(m))
    assert recall.MARKER_NOTE in marker["content"] and markers.END_MARKER in marker["content"]
    assert recall.MARKER_NOTE not in markers.parse(marker["content"])  # the note never enters a summary
    answer = json.loads(e.handle_tool_call(recall.TOOL_NAME, {"query": "ZeroDivisionError ledger_rounding"}))
    texts = [m["text"] for m in answer["matches"]]
    assert "Traceback: ZeroDivisionError in src/ledger_rounding.py line 88" in texts
    secret = json.loads(e.handle_tool_call(recall.TOOL_NAME, {"query": "export KEY"}))
    assert secret["matches"] and all(SECRET not in m["text"] for m in secret["matches"])
    assert e._flush_scan_cursor_invalidated


def test_recall_finds_only_what_compaction_removed(tmp_path):
    e = engine(tmp_path)
    messages = fact_session() + [user("the tail mentions quixotic_marker_word"), assistant("ok")]
    fold(e, messages)
    answer = json.loads(e.handle_tool_call(recall.TOOL_NAME, {"query": "quixotic_marker_word"}))
    assert answer["matches"] == [] and "note" in answer  # still in context: not recalled


def test_batch_compress_is_forced_and_returns_a_clean_list(tmp_path):
    e = engine(tmp_path)
    messages = [dict(m, _db_persisted=True) for m in fact_session()]
    out = e.compress(messages, current_tokens=2000)
    assert len(out) < len(messages) and e.compression_count == 1
    assert not any("_db_persisted" in m for m in out)  # Hermes's invariant for compress()
    assert sum(markers.is_marker(m) for m in out) == 1
    assert [m["content"] for m in out if markers.is_plain_user(m)]  # user turns kept
    assert json.loads(e.handle_tool_call(recall.TOOL_NAME, {"query": "ledger_rounding"}))["matches"]


def test_malformed_recall_calls_get_a_clear_tool_error(tmp_path):
    e = engine(tmp_path)
    fold(e, fact_session())
    for args in (
        None,
        [],
        "not json",
        {},
        {"query": ""},
        {"query": 3},
        {"query": "x" * 600},
        {"query": "ok", "limit": 0},
        {"query": "ok", "limit": "5"},
        {"query": "!!! ???"},
    ):
        answer = json.loads(e.handle_tool_call(recall.TOOL_NAME, args))
        assert answer["error"].startswith(recall.TOOL_NAME), args
    assert "Unknown" in json.loads(e.handle_tool_call("other_tool", {"query": "x"}))["error"]
    assert json.loads(e.handle_tool_call(recall.TOOL_NAME, '{"query": "ledger_rounding"}'))["matches"]


def test_recall_before_any_compaction_is_an_error_not_an_exception(tmp_path):
    e = EngineCore(ScriptedSummarizer())
    assert "error" in json.loads(e.handle_tool_call(recall.TOOL_NAME, {"query": "anything"}))


def test_answers_are_bounded(tmp_path):
    e = engine(tmp_path)
    messages = session(turns=6, size=300)
    messages[7] = tool("call_1", "\n".join(f"needle line {i} " + "y" * 900 for i in range(40)))
    fold(e, messages)
    answer = json.loads(e.handle_tool_call(recall.TOOL_NAME, {"query": "needle", "limit": 12}))
    assert sum(len(m["text"]) for m in answer["matches"]) <= recall.MAX_RESULT_CHARS
    assert all(len(m["text"]) <= recall.MAX_LINE_CHARS + 2 for m in answer["matches"])


def test_a_failing_summarizer_leaves_the_conversation_unchanged(tmp_path):
    e = engine(tmp_path, ScriptedSummarizer([RuntimeError("boom")] * 5))
    messages = fact_session()
    assert e._micro_compact(messages) is messages
    assert e.compress(messages) is messages


def test_every_hook_contains_its_exception(tmp_path, monkeypatch, caplog):
    e = engine(tmp_path)

    def broken(*a, **k):
        raise RuntimeError("engine bug")

    monkeypatch.setattr(e, "_compactors", broken)
    messages = fact_session()
    assert e._micro_compact(messages) is messages
    assert e.compress(messages) is messages
    assert e.on_turn_complete(messages, usage=None) is None
    assert e.should_compress("not a number") is False
    assert e.update_from_response({"prompt_tokens": "x"}) is None
    assert "engine bug" in caplog.text and e.failures >= 3


def test_micro_off_means_no_pass(tmp_path):
    e = engine(tmp_path)
    e._micro_compact_enabled = False
    messages = fact_session()
    assert e._micro_compact(messages) is messages


def test_should_compress_uses_the_threshold(tmp_path):
    e = engine(tmp_path)
    assert not e.should_compress(1499) and e.should_compress(1500)
    e.update_from_response({"prompt_tokens": 1600, "completion_tokens": 10, "total_tokens": 1610})
    assert e.should_compress()


def test_clones_share_the_store_and_copy_budgets(tmp_path):
    e = engine(tmp_path)
    clone = e.clone_for_agent()
    assert clone is not e and clone.threshold_tokens == e.threshold_tokens and clone._lock is not e._lock
    assert copy.deepcopy(e)._summarizer is e._summarizer
    clone.on_session_start("s1", hermes_home=str(tmp_path))
    assert clone._store is e._store


def test_the_config_line_selects_the_engine():
    assert from_config({"context": {"engine": "hermes-mlx"}}).engine
    assert not from_config({"context": {"engine": "compressor"}}).engine
    assert not from_config({}).engine
    assert not from_config({"context": "hermes-mlx"}).engine


def test_terms_keep_paths_and_identifiers_whole():
    assert recall.terms_of("src/ledger_rounding.py, 'line 88'!") == ["src/ledger_rounding.py", "line", "88"]


def test_setup_writes_the_engine_line_beside_the_provider_lines(tmp_path):
    from hermes_mlx.integrations import hermes_config as hc

    hc.write_config(tmp_path, "in-process", engine=True)
    config = hc.read_config(tmp_path)
    assert from_config(config).engine
    assert config["auxiliary"]["compression"]["provider"] == "mlx"  # Hermes's own compressor's fallback route
    assert config["compression"]["micro_compact"] is True
    from hermes_mlx.integrations.hermes_checks import engine_findings

    assert not engine_findings(config, "in-process")


def test_doctor_names_an_engine_line_that_cannot_work():
    from hermes_mlx.integrations.hermes_checks import config_findings

    config = {"context": {"engine": "hermes-mlx"}, "auxiliary": {"compression": {"provider": "mlx"}}}
    loopback = [f.key for f in config_findings(config, "loopback")]
    assert "context.engine" in loopback
    in_process = [f.key for f in config_findings(config, "in-process")]
    assert "compression.micro_compact" in in_process and "plugins.enabled" in in_process
    assert "context.engine" not in [f.key for f in config_findings({}, "loopback")]


def test_setup_hermes_refuses_engine_on_the_loopback_path(tmp_path, capsys):
    from hermes_mlx.cli import main

    assert main(["setup-hermes", "--hermes-home", str(tmp_path), "--path", "loopback", "--engine", "--no-check"]) == 2
    assert "--engine needs the in-process path" in capsys.readouterr().err


def test_a_batch_pass_still_running_makes_the_micro_pass_wait_a_turn_not_block(tmp_path):
    import threading

    e = engine(tmp_path)
    held, release = threading.Event(), threading.Event()

    def abandoned_batch():  # a compress() Hermes's timeout gave up on, still working
        with e._lock:
            held.set()
            release.wait(10)

    worker = threading.Thread(target=abandoned_batch)
    worker.start()
    held.wait(10)
    messages = fact_session()
    try:
        assert e._micro_compact(messages) is messages
    finally:
        release.set()
        worker.join()
    assert len(fold(e, messages)) < len(messages)


def test_the_engine_model_is_the_one_the_provider_would_use():
    aux = {"auxiliary": {"compression": {"provider": "mlx", "model": "qwen-small"}}}
    plugin = {"plugins": {"entries": {"hermes-mlx": {"settings": {"model": "/models/mine"}}}}}
    assert from_config(aux).model == "qwen-small"
    assert from_config(plugin).model == "/models/mine" == from_config(plugin).plugin_model
    assert from_config({"auxiliary": {"compression": {"provider": "openrouter", "model": "x"}}}).model is None
    assert from_config({}).model is None and from_config(None).model is None


def test_recall_follows_the_conversation_across_a_session_rotation(tmp_path):
    """compression.in_place: false: Hermes moves the conversation to a child session and tells
    the engine (on_session_start with boundary_reason="compression")."""
    e = engine(tmp_path, sid="parent")
    e.compress(fact_session())
    e.on_session_start("child", boundary_reason="compression", old_session_id="parent")
    answer = json.loads(e.handle_tool_call(recall.TOOL_NAME, {"query": "ZeroDivisionError ledger_rounding"}))
    assert any("ledger_rounding.py line 88" in m["text"] for m in answer["matches"])
    assert e.failures == 0
