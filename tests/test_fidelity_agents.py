"""Facts at stake kept per agent on both real corpora (benchmarks/sessions/real/ and real-2/),
and how `hermes-mlx fidelity --real` reports them; plus the command's refusals (a model that
cannot load, failed passes, unreadable facts files, a session that is no regular file)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from summarizer_fakes import FakeModel, count, facts_are_in_their_session

from hermes_mlx.bench.agents import OVERALL, agent_of, agent_table, per_agent, real_sessions, real_window
from hermes_mlx.bench.fidelity import SessionScore, score_session
from hermes_mlx.bench.shipped import REAL2_DIR, REAL_DIR, load_facts
from hermes_mlx.cli import main
from hermes_mlx.commands import compact
from hermes_mlx.compactor.sessions import SessionFormatError, load_session
from hermes_mlx.compactor.transcript import transcript_tokens

# Batch compaction, findings ranked by code, each session at half its own tokens: the share of
# facts at stake (every message holding them compacted away) the summary keeps, per agent, in %.
# Raise them as the rules improve, never lower them. The target: 80 for every agent, 90
# overall. Set when summaries came within Hermes's own budget for the span (issue 27: about 2,000
# tokens at these windows, where they had reached 3,600): before that, with summaries over it,
# cursor kept 21/45, codex 9/18, gemini 6/8, claudecode 39/43, overall 109/176.
BATCH_FLOORS = {
    "aider": 80,  # 12/15 (11/15 before a command that makes something kept twelve results, not four)
    "claudecode": 95,  # 43/45 (42/45 before a short list was read with its lead-in; 41/45 before the lines a short edit adds were code the agent wrote; 40/45 before code the agent shows in a short block or a span was an identifier)
    "codex": 88,  # 16/18 (15/18 before a choice said in an announcement's words was a finding; 14/18 before a batch pass with room kept the next best findings; 13/18 before a file another entry names was told from one only Files lists; 12/18 before a status script's readout with notes after it was its result; 11/18 before the change a finding led to stayed with it; 10/18 before typographic apostrophes read as straight ones; 7/18 before the working folder and chained reads; 8/18 before questions asked by a tool)
    "copilot": 87,  # 7/8 (3/5 before a summary in a small window had Hermes's 2,000-token floor; 1/5)
    "cursor": 71,  # 30/42 (29/42 before a change the agent says it made was a feature of its finding; 28/42 before a sentence too long for a line kept what its lead-in introduces; 27/42 before a fault a review finds in plain words was no musing; 26/42 before a batch pass with room kept the next best findings; 23/42 before a summary in a small window had Hermes's 2,000-token floor; 21/42 before a file another entry names was told from one only Files lists; 19/42 before a count that moved and a run's verdict in prose were outcomes; 18/42 before what the tail still shows was let go first; 17/42 before questions asked by a tool carried what the user chose)
    "gemini": 87,  # 7/8 (6/8 before something made or shipped in prose was an outcome; 5/8 before a message's later findings came after another's best)
    "hermes": 63,  # 7/11 (6/11 before a message's later findings came after another's best; 4/11; 1/11 when the issue was filed)
    "minisweagent": 96,  # 30/31 (29/31 before a script's few verdicts were each kept; 27/31 before a message's later findings came after another's best; was 23/31)
    OVERALL: 85,  # 152/178 (151/178 before a change the agent says it made was a feature of its finding; 150/178 before a short list was read with its lead-in; 149/178 before a command that makes something kept twelve results, not four; 148/178 before a sentence too long for a line kept what its lead-in introduces; 147/178 before a fault a review finds in plain words was no musing; 146/178 before a choice said in an announcement's words was a finding; 144/178 before a batch pass with room kept the next best findings; 143/178 before the lines a short edit adds were code the agent wrote; 136/175 before a summary in a small window had Hermes's 2,000-token floor; 133/175 before a file another entry names was told from one only Files lists; 132/175 before a script's few verdicts were each kept; 131/175 before a status readout with notes was a result; 130/175 before code the agent shows was an identifier; 129/175 before a finding kept the change it led to; 126/175 before outcomes in prose; 112/175)
}
# Micro compaction, the findings ranker picking each exchange's lines (the default: the model's
# picks kept 43/71 on ten of these sessions where code kept 44/72, at 2.6 s a pass against 0.02 s), every
# session as above.
MICRO_FLOORS = {
    # 15/17: a user turn of nothing but aider's answered questions is the harness's, no request, so
    # one fact stays in the transcript and is no longer at stake (16/18 with it kept by the summary)
    "aider": 94,  # 16/17 (15/17 before a command that makes something kept twelve results, not four)
    "claudecode": 93,  # 42/45 (41/45 before the lines a short edit adds were code the agent wrote; 40/45 before code the agent shows in a short block or a span was an identifier)
    # 14/16: a pruned output's first line is now what Codex printed, past its `Chunk ID:` header, so
    # `Extension zip not found: …` stays in the transcript and is no longer at stake (it was 15/17 with
    # that fact kept by the summary): nothing the agent sees was lost, the ratio moved by one out of both
    "codex": 87,  # 14/16 (15/17; 14/17 before a choice said in an announcement's words was a finding; 13/17 before a batch pass with room kept the next best findings; 12/17 before a status script's readout with notes after it was its result; 11/17 before the change a finding led to stayed with it; 8/17 while the rolling summary was cut to 60% of Hermes's threshold each time it reached 90%; 6/17 before agents' output wrappers were unwrapped and diffs counted as reads)
    # 7/8 since a change the agent says it made is a feature: the last exchange's "**Added state setter:**
    # `const setSeriesList = …`" outranks the symptom the user reported ("When you manually press F5 …")
    "copilot": 87,  # 7/8 (8/8; 7/8 before a short list was read with its lead-in; 6/8 before code the agent shows in a short block was an identifier)
    "cursor": 80,  # 32/40 (30/40 before a change the agent says it made was a feature of its finding; 29/40 before a sentence too long for a line kept what its lead-in introduces; 28/39 before every micro exchange spent the room its rolling summary had left; 27/39 before a fault a review finds in plain words was no musing; 24/36 before an exchange too long for its ten added findings spent the room left; 22/36 before a batch summary in a small window had Hermes's 2,000-token floor; 21/36 before a file another entry names was told from one only Files lists; 18/36 before outcomes in prose; 16/36 before what the transcript around an exchange still shows was let go first; 14/36 before Russian sentences split at their capitals and tool questions)
    # gemini 3/8: 4/8 until an exchange's best finding was kept whatever its length (its long findings
    # then took the rolling summary's room, and the budget let files go that held a fact), and again
    # between Gradle errors carrying their cause and URLs losing XML namespaces (two fewer URLs moved
    # a defrag, and `SettingsStateManager` went with it)
    # 7/8 since a short list is read with its lead-in: the last exchange's finding "App Widgets do not
    # support the `app:` namespace attributes" lost its room to a longer line (8/8 before)
    "gemini": 87,  # 7/8 (8/8; 7/8 before a reasoning summary's narration was an announcement; 6/8 before a long exchange added one finding per four assistant turns, not six; 5/8 before something made or shipped in prose was an outcome; since what the transcript still shows goes first)
    "hermes": 77,  # 7/9 (6/9 before a file named in plain words counted as code a finding names; 4/9 before a musing lead-in joined its next sentence and a list of results was one line; 2/9 before short findings left room for more in an exchange)
    "minisweagent": 96,  # 30/31 (29/31 before a script's few verdicts were each kept; 27/31 before a message's later findings came after another's best)
    OVERALL: 89,  # 155/174 (154/174 before a file named in plain words counted as code a finding names; 153/174 before a change the agent says it made was a feature of its finding; 152/174 before a command that makes something kept twelve results, not four; 151/174 before a sentence too long for a line kept what its lead-in introduces; 150/173 before every micro exchange spent the room left, and 151/174 before a user turn of only aider's answered questions was the harness's; 150/174 before a fault a review finds in plain words was no musing; 151/175 while Codex's `Extension zip not found` was at stake; 150/175 before a choice said in an announcement's words was a finding; 147/172 before an exchange too long for its ten added findings spent the room left; 146/172 before a reasoning summary's narration was an announcement; 145/172 before a batch pass with room kept the next best findings; 144/172 before a long exchange added one finding per four assistant turns, not six; 143/172 before the lines a short edit adds were code the agent wrote; 141/172 before a batch summary in a small window had Hermes's 2,000-token floor; 140/172 before a file another entry names was told from one only Files lists; 139/172 before a script's few verdicts were each kept; 138/172 before a status readout with notes was a result; 136/172 before code the agent shows was an identifier; 135/172 before a finding kept the change it led to; 130/172 before this round's rules; 126/172 with the 60% cut; 115/172)
}


def test_both_real_corpora_ship_with_facts_and_licences():
    second = [p for p in real_sessions() if p.parent == REAL2_DIR]
    assert len(second) == 13 and len(real_sessions()) == 24
    for path in second:
        assert facts_are_in_their_session(path), path.name
    assert len(list((REAL2_DIR / "LICENSES").glob("*.txt"))) == 12
    assert (REAL2_DIR / "README.md").is_file() and (REAL2_DIR / "stats.json").is_file()
    # the corpus adds agents; `compact --example` still lists the first corpus only
    assert {agent_of(p) for p in real_sessions()} == set(BATCH_FLOORS) - {OVERALL}
    assert main(["compact", "--example"]) == 0


@pytest.mark.parametrize(
    "name,agent",
    [
        ("claudecode_opus_spotter_0zw.jsonl", "claudecode"),
        ("cursor_claude-4.6-opus-high-thinking_alpamayo-gpu-driver.jsonl", "cursor"),
        ("/x/y/minisweagent_deepseek_astroid_1866.jsonl", "minisweagent"),
        ("mysession.jsonl", "mysession"),
        ("state.db", "state"),
    ],
)
def test_the_agent_is_the_file_names_first_field(name, agent):
    assert agent_of(name) == agent


def test_the_window_is_half_the_sessions_tokens():
    path = REAL_DIR / "claudecode_opus_spotter_0zw.jsonl"
    tokens = transcript_tokens(load_session(path))
    assert real_window(load_session(path)) == tokens // 2 and tokens > 4096
    assert real_window([{"role": "user", "content": "hi"}]) == 1024  # never below the smallest window


def _score(session: str, mode: str, stake: int, kept: int, tokens: int, passes: list) -> SessionScore:
    s = SessionScore(session, mode, len(passes), 0, 0, [], 0, [], [], [], [], [], {}, pass_s=passes)
    s.stake, s.stake_kept, s.summary_tokens = stake, kept, tokens
    return s


def test_per_agent_rows_sum_each_agent_and_all_per_mode():
    scores = [
        _score("aider_a_x", "micro", 4, 3, 100, [1.0, 3.0]),
        _score("aider_b_y", "micro", 6, 3, 300, [2.0]),
        _score("codex_c_z", "micro", 0, 0, 50, []),
        _score("aider_a_x", "batch", 4, 4, 80, [0.1]),
    ]
    rows = {(r.agent, r.mode): r for r in per_agent(scores)}
    aider = rows["aider", "micro"]
    assert (aider.sessions, aider.stake, aider.stake_kept, aider.kept_pct) == (2, 10, 6, 60.0)
    assert aider.summary_tokens_p50 == 200 and aider.pass_s_p50 == 2.0
    assert rows["codex", "micro"].kept_pct is None and rows["codex", "micro"].pass_s_p50 is None
    assert rows[OVERALL, "micro"].stake_kept == 6 and rows[OVERALL, "batch"].kept_pct == 100.0
    text = agent_table(per_agent(scores))
    assert "| aider | micro | 2 | 6/10 (60%) | 200 | 2.00 | 0 |" in text
    assert "| codex | micro | 1 | 0/0 (-) | 50 | - | 0 |" in text


def _scripted(monkeypatch, model: FakeModel | None = None) -> None:
    """The command's summarizer on a scripted model, and no model load."""
    import hermes_mlx.summarizer.summarizer as summ

    fake = model or FakeModel(*["Type check, lint and all 7 tests pass."] * 400)

    class Scripted(summ.MLXSummarizer):
        def __init__(self, model=None, ranking="code"):
            super().__init__(score=fake.score, count_tokens=count, context_window=4096, ranking=ranking)

    monkeypatch.setattr(summ, "MLXSummarizer", Scripted)
    monkeypatch.setattr(compact, "build_summarizer", lambda args: None)


def test_fidelity_real_scores_given_sessions_at_the_window_rule_per_agent(monkeypatch, capsys):
    _scripted(monkeypatch)
    path = REAL_DIR / "claudecode_opus_spotter_create_beads.jsonl"
    assert main(["fidelity", "--real", "--mode", "both", "--json", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["mode"] for r in out["sessions"]] == ["micro", "batch"]
    window = real_window(load_session(path))
    for row in out["sessions"]:
        assert row["context_limit"] == window and row["removed_pct"] >= 50
    assert [(r["agent"], r["mode"]) for r in out["agents"]] == [
        ("claudecode", "micro"),
        (OVERALL, "micro"),
        ("claudecode", "batch"),
        (OVERALL, "batch"),
    ]
    # without --real: the fixed window, no per-agent rows unless asked for
    assert main(["fidelity", "--mode", "batch", str(path)]) == 0
    text = capsys.readouterr().out
    assert "32768" in text and "by agent" not in text
    assert main(["fidelity", "--mode", "batch", "--per-agent", str(path)]) == 0
    assert "| claudecode | batch | 1 |" in capsys.readouterr().out


def test_fidelity_refuses_a_model_it_cannot_load(capsys):
    path = REAL_DIR / "claudecode_opus_spotter_create_beads.jsonl"
    assert main(["fidelity", "--model", "nonexistent-model", str(path)]) == 2
    err = capsys.readouterr().err
    assert "nonexistent-model" in err and "Traceback" not in err


def test_fidelity_exits_1_when_passes_failed(monkeypatch, capsys):
    _scripted(monkeypatch, FakeModel(error=RuntimeError("model went away")))
    path = REAL_DIR / "claudecode_opus_spotter_create_beads.jsonl"
    assert main(["fidelity", "--mode", "micro", "--ranking", "model", "--tail-tokens", "256", str(path)]) == 1
    captured = capsys.readouterr()
    assert "passes failed" in captured.err and "pass failed:" in captured.out


@pytest.mark.parametrize(
    "suffix,body",
    [
        (".facts.json", b'{"facts": [{"kind": "file", "text": "caf\xe9"}]}'),
        (".facts.yaml", b"paths: [caf\xe9]\n"),
        (".facts.json", b"[" * 100_000),
        (".facts.yaml", b"[" * 100_000),
    ],
)
def test_a_facts_file_that_cannot_be_read_is_one_error_naming_it(tmp_path, capsys, monkeypatch, suffix, body):
    _scripted(monkeypatch)
    session = tmp_path / "s.jsonl"
    session.write_text(json.dumps({"role": "user", "content": "hello"}) + "\n")
    facts = tmp_path / f"s{suffix}"
    facts.write_bytes(body)
    with pytest.raises(SessionFormatError, match="s.facts"):
        load_facts(facts)
    assert main(["fidelity", "--mode", "both", str(session)]) == 2  # one error, not one a mode
    err = capsys.readouterr().err
    assert str(facts) in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_fidelity_refuses_a_session_that_is_no_regular_file(tmp_path, capsys, monkeypatch):
    _scripted(monkeypatch)
    link = tmp_path / "zero.jsonl"
    link.symlink_to("/dev/zero")
    for path in ("/dev/zero", str(link)):
        assert main(["fidelity", path]) == 2
        err = capsys.readouterr().err
        assert path in err and len(err.strip().splitlines()) == 1


@pytest.mark.real_model  # the default model's tokenizer counts the tokens; ranking by code, no decode
def test_every_agent_keeps_its_floor_of_facts_at_stake_in_batch():
    from hermes_mlx.summarizer.summarizer import MLXSummarizer

    scores = [
        score_session(p, MLXSummarizer(ranking="code"), mode="batch", context_limit=None, tail_tokens=None)
        for p in real_sessions()
    ]
    assert all(s.removed_pct >= 50 for s in scores), [(s.session, s.removed_pct) for s in scores]
    assert not any(s.failures for s in scores)
    got = {r.agent: r for r in per_agent(scores)}
    below = {a: (got[a].stake_kept, got[a].stake) for a, floor in BATCH_FLOORS.items() if got[a].kept_pct < floor}
    assert not below, f"under the floor: {below}\n{agent_table(list(got.values()))}"
    # issue 27's zero figures on every agent's summary (bench.hygiene)
    unclean = {(s.session, k): bad for s in scores for k, bad in s.hygiene.items() if bad}
    assert not unclean, unclean


@pytest.mark.real_model  # the default model's tokenizer counts the tokens; ranking by code, no model call
def test_every_agent_keeps_its_floor_of_facts_at_stake_in_micro():
    from hermes_mlx.summarizer.summarizer import MLXSummarizer

    scores = [
        score_session(p, MLXSummarizer(), mode="micro", context_limit=None, tail_tokens=None) for p in real_sessions()
    ]
    assert not any(s.failures for s in scores), [(s.session, s.failures) for s in scores if s.failures]
    got = {r.agent: r for r in per_agent(scores)}
    below = {a: (got[a].stake_kept, got[a].stake) for a, floor in MICRO_FLOORS.items() if got[a].kept_pct < floor}
    assert not below, f"under the floor: {below}\n{agent_table(list(got.values()))}"
    unclean = {(s.session, k): bad for s in scores for k, bad in s.hygiene.items() if bad}
    assert not unclean, unclean


HELD_OUT = Path(__file__).resolve().parent.parent / "benchmarks" / "sessions" / "held-out"


@pytest.mark.real_model  # the default model's tokenizer counts the tokens; ranking by code
def test_held_out_sessions_carry_their_facts_and_compact_clean_in_both_modes():
    # agents no rule was written on (benchmarks/sessions/held-out): no floor binds them, but every
    # fact is in its session, each has a licence, and both modes compact them with no failed pass
    # and none of the lines issue 27 counts as unclean
    from hermes_mlx.summarizer.summarizer import MLXSummarizer

    paths = sorted(HELD_OUT.glob("*.jsonl"))
    assert paths and len(list((HELD_OUT / "LICENSES").glob("*.txt"))) >= 1
    for path in paths:
        assert facts_are_in_their_session(path), path.name
        assert agent_of(path) not in BATCH_FLOORS
        for mode in ("batch", "micro"):
            s = score_session(path, MLXSummarizer(), mode=mode, context_limit=None, tail_tokens=None)
            assert not s.failures and s.removed_pct >= 50, (path.stem, mode, s.failures, s.removed_pct)
            assert not {k: bad for k, bad in s.hygiene.items() if bad}, (path.stem, mode, s.hygiene)
