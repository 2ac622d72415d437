import json
import logging

import pytest
from fakes import ScriptedSummarizer, session, tool_pairs_valid

from hermes_mlx import cli
from hermes_mlx.bench.shipped import shipped_sessions
from hermes_mlx.compactor import markers, telemetry
from hermes_mlx.compactor.replay import format_table, replay
from hermes_mlx.compactor.sessions import SessionFormatError, load_session
from hermes_mlx.compactor.sessions import save_jsonl as save_session
from hermes_mlx.compactor.transcript import (
    TranscriptError,
    split_turns,
)

SESSIONS = shipped_sessions()


def check_invariants(result, caplog=None):
    assert markers.user_messages(result.messages) == markers.user_messages(result.original)
    assert len([m for m in result.messages if markers.is_marker(m)]) <= 1
    assert tool_pairs_valid(result.messages)
    if caplog is not None:
        lines = [r.getMessage() for r in caplog.records if "compaction telemetry: " in r.getMessage()]
        payloads = [telemetry.parse_line(line) for line in lines]
        assert payloads and all(p is not None for p in payloads)
        assert len(payloads) == len(result.records)


def test_micro_replay_compacts_turn_by_turn(caplog):
    passes, turns = [], []
    with caplog.at_level(logging.INFO, logger="agent.context_compressor"):
        result = replay(
            session(20),
            ScriptedSummarizer(),
            context_limit=4000,
            tail_tokens=300,
            on_pass=passes.append,
            on_turn=lambda done, total: turns.append((done, total)),
        )
    assert result.turns == 20 and turns[-1] == (20, 20)
    assert passes == result.records and result.records
    assert {r.mode for r in result.records} == {"micro"}
    assert {r.outcome for r in result.records} == {"absorbed"}
    assert [r.number for r in result.records] == list(range(1, len(result.records) + 1))
    assert len(result.messages) < len(result.original)
    assert result.tokens_saved > 0
    check_invariants(result, caplog)


def test_micro_replay_cadence():
    every = replay(session(20), ScriptedSummarizer(), context_limit=4000, tail_tokens=300)
    third = replay(session(20), ScriptedSummarizer(), context_limit=4000, tail_tokens=300, every_n_turns=3)
    assert {r.turn % 3 for r in third.records} == {0}
    assert len(third.records) < len(every.records)


def test_batch_fires_behind_micro_when_micro_cannot_keep_up():
    fake = ScriptedSummarizer([False] * 200)  # every merge fails; batch summary succeeds? no: all fail
    result = replay(session(20), fake, context_limit=2000, tail_tokens=300)
    kinds = {(r.mode, r.outcome) for r in result.records}
    assert ("micro", "summarize_failed") in kinds
    assert any(mode == "batch" for mode, _ in kinds)
    check_invariants(result)


def test_batch_replay(caplog):
    with caplog.at_level(logging.INFO, logger="agent.context_compressor"):
        result = replay(session(20), ScriptedSummarizer(), mode="batch", context_limit=2000, tail_tokens=300)
    assert result.records and {r.mode for r in result.records} == {"batch"}
    assert {r.outcome for r in result.records} <= {"compacted", "pruned"}
    check_invariants(result, caplog)


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError):
        replay(session(2), ScriptedSummarizer(), mode="mega")


def test_replay_reads_files_with_the_one_session_loader(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text('{"role": "user", "content": "a"}\n\n{"role": "assistant", "content": "b"}\n{oops\n')
    with pytest.raises(SessionFormatError, match="s.jsonl:4: invalid JSON"):
        replay(path, ScriptedSummarizer())
    path.write_text('{"role": "user", "content": "a"}\n[1, 2]\n')
    with pytest.raises(SessionFormatError, match="s.jsonl:2: expected a JSON object"):
        replay(path, ScriptedSummarizer())
    path.write_text("\n")
    with pytest.raises(SessionFormatError, match="no messages"):
        replay(path, ScriptedSummarizer())


def test_replay_refuses_uninterpretable_sessions_with_the_index():
    messages = session(3)
    messages[5] = {"role": "narrator", "content": "x"}
    with pytest.raises(TranscriptError, match="message 5"):
        replay(messages, ScriptedSummarizer())


def test_replay_repairs_and_reports():
    messages = session(6)
    messages.insert(7, {"role": "tool", "tool_call_id": "nobody", "content": "stray"})
    result = replay(messages, ScriptedSummarizer(), context_limit=4000, tail_tokens=300)
    assert [r.kind for r in result.repairs] == ["synthesized_call"]
    assert any(m.get("content") == "stray" for m in result.original)
    check_invariants(result)


def test_session_file_round_trip(tmp_path):
    path = tmp_path / "my-session.jsonl"
    save_session(session(3) + [{"role": "user", "content": "ünïcode ✓"}], path)
    assert load_session(path)[-1]["content"] == "ünïcode ✓"
    result = replay(path, ScriptedSummarizer())
    assert result.original == load_session(path)


def test_format_table():
    result = replay(session(20), ScriptedSummarizer(), context_limit=4000, tail_tokens=300)
    table = format_table(result.records)
    lines = table.splitlines()
    assert lines[0].split() == [
        "pass",
        "turn",
        "mode",
        "outcome",
        "messages",
        "tokens",
        "delta",
        "occupancy",
        "duration",
    ]
    assert len(lines) == len(result.records) + 2
    first = result.records[0]
    assert f"{first.messages_before} -> {first.messages_after}" in lines[2]
    assert f"{first.tokens_delta:+,}" in lines[2] and "%" in lines[2]
    assert format_table([]) == "no compaction passes ran"


@pytest.mark.parametrize("path", SESSIONS, ids=[p.stem for p in SESSIONS])
@pytest.mark.parametrize("mode", ["micro", "batch"])
def test_shipped_sessions_keep_the_invariants(path, mode, caplog):
    with caplog.at_level(logging.INFO, logger="agent.context_compressor"):
        result = replay(path, ScriptedSummarizer(), mode=mode, context_limit=8192)
    assert result.records
    assert len(split_turns(result.original)) == result.turns
    check_invariants(result, caplog)


# ---------------------------------------------------------------------------------------------
# The command


@pytest.fixture
def fake_cli(monkeypatch):
    from hermes_mlx.commands import compact

    fake = ScriptedSummarizer()
    monkeypatch.setattr(compact, "build_summarizer", lambda args: fake)
    return fake


def test_compact_command(tmp_path, fake_cli, capsys):
    src, out, log = tmp_path / "s.jsonl", tmp_path / "out.jsonl", tmp_path / "agent.log"
    save_session(session(20), src)
    code = cli.main(["compact", str(src), "--context-limit", "4000", "--out", str(out), "--log", str(log)])
    assert code == 0
    printed = capsys.readouterr().out
    assert printed.splitlines()[0].split()[:2] == ["pass", "turn"]
    assert "passes" in printed and f"wrote {out}" in printed
    final = load_session(out)
    assert markers.user_messages(final) == markers.user_messages(load_session(src))
    payloads = [telemetry.parse_line(line) for line in log.read_text().splitlines() if "telemetry: " in line]
    assert payloads and all(p and p["session_id"] == "s" for p in payloads)


def test_compact_command_batch_mode_with_focus(tmp_path, fake_cli, capsys):
    src = tmp_path / "s.jsonl"
    save_session(session(20), src)
    code = cli.main(
        ["compact", str(src), "--mode", "batch", "--context-limit", "2000", "--focus", "auth", "--no-progress"]
    )
    assert code == 0
    assert any(args.get("focus") == "auth" for name, args in fake_cli.calls if name == "update")


def test_compact_command_bad_input(tmp_path, fake_cli, capsys):
    src = tmp_path / "bad.jsonl"
    src.write_text(json.dumps({"role": "user", "content": "a"}) + "\n" + json.dumps({"role": "ghost"}) + "\n")
    assert cli.main(["compact", str(src)]) == 2
    assert "message 1: role is 'ghost'" in capsys.readouterr().err
    assert cli.main(["compact", str(tmp_path / "missing.jsonl")]) == 2
    src.write_text('{"role": "user", "content": "a"}\n{broken\n')
    assert cli.main(["compact", str(src)]) == 2
    assert ":2: invalid JSON" in capsys.readouterr().err
    assert fake_cli.calls == []


@pytest.mark.real_model
def test_real_model_replay_of_a_shipped_session_keeps_the_invariants(caplog):
    """The embedded default model on the first turns of a shipped session (kept short: on CPU a
    pass takes tens of seconds)."""
    from hermes_mlx.summarizer.summarizer import MLXSummarizer

    path = next(p for p in SESSIONS if p.stem.startswith("tidewatch"))
    turns = split_turns(load_session(path))[:6]
    with caplog.at_level(logging.INFO, logger="agent.context_compressor"):
        result = replay(sum(turns, []), MLXSummarizer(), context_limit=3000, every_n_turns=3)
    assert result.records
    check_invariants(result, caplog)


def test_replay_keeps_a_session_store_in_step(tmp_path):
    from hermes_mlx.compactor.store import SessionStore

    with SessionStore(tmp_path / "state.db") as store:
        result = replay(
            session(12), ScriptedSummarizer(), context_limit=4000, tail_tokens=300, session_id="s1", store=store
        )
        assert any(r.outcome == "absorbed" for r in result.records)
        assert store.load_active("s1") == result.messages  # resume sees only the compacted set
        archived = [row for row in store.history("s1") if not row.active]
        assert archived  # the rows each pass replaced stay in the database
        first_assistant = next(m for m in result.original if m["role"] == "assistant")
        needle = (first_assistant.get("content") or "")[:20]
        if needle:
            assert store.search("s1", needle)


def test_compact_command_with_store(tmp_path, fake_cli, capsys):
    path = tmp_path / "s.jsonl"
    save_session(session(8), path)
    db = tmp_path / "state.db"
    assert cli.main(["compact", str(path), "--context-limit", "4000", "--store", str(db), "--no-progress"]) == 0
    from hermes_mlx.compactor.store import SessionStore

    with SessionStore(db) as store:
        assert store.load_active("s")


# ---------------------------------------------------------------------------------------------
# resuming from the store


class Killed(BaseException):
    """An in-process kill: nothing under test catches a BaseException."""


def test_an_interrupted_replay_resumes_where_the_store_stopped(tmp_path):
    from hermes_mlx.compactor.store import SessionStore

    messages = session(12)
    db = tmp_path / "state.db"
    with SessionStore(db) as store, pytest.raises(Killed):
        replay(
            messages,
            ScriptedSummarizer([True] * 4 + [Killed()]),
            context_limit=4000,
            tail_tokens=300,
            session_id="s1",
            store=store,
        )
    with SessionStore(db) as store:
        state = store.progress("s1")
        assert state.pending  # killed during the passes of turn `state.turns`
        fake = ScriptedSummarizer()
        result = replay(messages, fake, context_limit=4000, tail_tokens=300, session_id="s1", store=store)
        assert result.resumed_at_turn == state.turns and result.turns == 12
        assert result.records[0].turn == state.turns  # the pending passes ran first
        assert result.records[0].number == state.passes + 1
        assert store.load_active("s1") == result.messages
        check_invariants(result)
        # Done: a third run does nothing.
        again = replay(messages, fake, context_limit=4000, tail_tokens=300, session_id="s1", store=store)
        assert again.resumed_at_turn == 12 and again.records == [] and again.messages == result.messages


def test_a_grown_transcript_continues_and_a_different_one_is_refused(tmp_path):
    from hermes_mlx.compactor.replay import ResumeMismatch
    from hermes_mlx.compactor.store import SessionStore

    with SessionStore(tmp_path / "state.db") as store:
        replay(session(6), ScriptedSummarizer(), context_limit=4000, tail_tokens=300, session_id="s1", store=store)
        grown = replay(
            session(9), ScriptedSummarizer(), context_limit=4000, tail_tokens=300, session_id="s1", store=store
        )
        assert grown.resumed_at_turn == 6 and grown.turns == 9
        other = session(9)
        other[1] = {"role": "user", "content": "something else entirely"}
        with pytest.raises(ResumeMismatch, match="--restart"):
            replay(other, ScriptedSummarizer(), session_id="s1", store=store)
        fresh = replay(
            other, ScriptedSummarizer(), context_limit=4000, tail_tokens=300, session_id="s1", store=store, resume=False
        )
        assert fresh.resumed_at_turn is None and store.load_active("s1") == fresh.messages


def test_store_failures_are_counted_and_the_replay_gives_up_writing(tmp_path):
    from hermes_mlx.compactor.store import SessionStore

    with SessionStore(tmp_path / "state.db") as store:
        store._conn.close()  # every write now fails
        result = replay(
            session(6),
            ScriptedSummarizer(),
            context_limit=4000,
            tail_tokens=300,
            session_id="s1",
            store=store,
            resume=False,
        )
    assert result.turns == 6 and result.messages  # the replay itself completed
    reasons = result.store_failures
    assert sum(n for r, n in reasons.items() if "closed database" in r) == 3
    assert any("skipped after 3 failed in a row" in r for r in reasons)
