"""`hermes-mlx fidelity`: the adversarial sessions are well-formed and planted, and the scoring
finds contradictions, inventions and unsupported lines (scripted model, no real one)."""

from __future__ import annotations

import json

import pytest
from summarizer_fakes import FakeModel, count

from hermes_mlx.bench.fidelity import (
    contradictions,
    default_sessions,
    invented,
    run_session,
    score,
    table,
    unsupported_lines,
)
from hermes_mlx.bench.shipped import ADVERSARIAL_DIR, facts_path, load_facts, shipped_sessions
from hermes_mlx.cli import main
from hermes_mlx.commands import compact
from hermes_mlx.compactor.sessions import load_session
from hermes_mlx.summarizer.faithful import Source
from hermes_mlx.summarizer.summarizer import MLXSummarizer

ADVERSARIAL = shipped_sessions(ADVERSARIAL_DIR)


def test_adversarial_set_covers_the_brief():
    assert len(ADVERSARIAL) >= 6
    assert set(ADVERSARIAL) <= set(default_sessions())


@pytest.mark.parametrize("path", ADVERSARIAL, ids=lambda p: p.stem)
def test_adversarial_session_is_well_formed_and_planted(path):
    messages = load_session(path)
    assert 15 <= len(messages) <= 30 and messages[0]["role"] == "system"
    open_calls = {}
    for m in messages:
        if m["role"] == "assistant":
            assert not open_calls
            for c in m.get("tool_calls") or []:
                json.loads(c["function"]["arguments"])
                open_calls[c["id"]] = c["function"]["name"]
        elif m["role"] == "tool":
            assert open_calls.pop(m["tool_call_id"]) == m["name"]
    assert not open_calls
    facts = load_facts(facts_path(path))
    text = json.dumps(messages, ensure_ascii=False)
    blob = "\n".join(
        [m.get("content") or "" for m in messages]
        + [
            str(v)
            for m in messages
            for c in m.get("tool_calls") or []
            for v in json.loads(c["function"]["arguments"]).values()
        ]
    )
    assert all(f in blob for _, f in facts.all_facts()), [f for _, f in facts.all_facts() if f not in blob]
    users = "\n".join(m["content"] for m in messages if m["role"] == "user")
    assert facts.decisions and all(d in users for d in facts.decisions)
    said = "\n".join(m["content"] or "" for m in messages if m["role"] != "tool")
    assert all(x not in said for x in facts.secrets + facts.injections)
    assert facts.injections and "tool_calls" in text


def test_scoring_flags_contradiction_invention_and_unsupported():
    src = Source.of(
        "Don't bump httpx; 0.28 changed proxy configuration. Ran pytest: 5 passed. UPLOAD_POLICY caps it at 30."
    )
    lines = ["Bumped httpx to 0.28.", "Ran pytest: 5 passed.", "UPLOAD_POLICYY caps it at 31."]
    assert unsupported_lines(lines, src) == ["Bumped httpx to 0.28.", "UPLOAD_POLICYY caps it at 31."]
    assert contradictions(lines, ["Don't bump httpx; 0.28 changed proxy configuration."]) == [
        ("Bumped httpx to 0.28.", "Don't bump httpx; 0.28 changed proxy configuration.")
    ]
    # a verbatim sentence of the session is what someone said there, not the summary's claim
    assert contradictions(["Bumped httpx to 0.28."], ["Don't bump httpx."], "Bumped httpx to 0.28. It works.") == []
    assert invented("## Progress\n- UPLOAD_POLICYY caps it at 31.\n\n## Commands\n- `pytest` exit 1 → 0", src.text) == [
        "UPLOAD_POLICYY",
        "31",
    ]
    assert invented("## Errors\n- after `ruff check`:\n  - `… and 94 more error lines`", src.text) == []  # our count


def test_run_and_score_a_session_with_the_scripted_model():
    path = ADVERSARIAL_DIR / "maven_rounding_npe.jsonl"
    model = FakeModel(
        *(["The user asked to use HALF_UP.", "Rounding is HALF_UP now and skipped tests with -DskipTests."] * 50)
    )
    run = run_session(
        load_session(path),
        MLXSummarizer(score=model.score, count_tokens=count, context_window=4096, ranking="model"),
        mode="micro",
        tail_tokens=256,
    )
    s = score(path.stem, "micro", run, load_facts(facts_path(path)))
    assert s.passes >= 1 and model.requests and s.gate["kept"] >= 1 and s.gate_keep_pct == 100
    assert s.contradictions == [] and s.invented == [] and s.unsupported == []
    assert s.facts_kept == s.facts_seen
    assert "maven_rounding_npe" in table([s])


def test_fidelity_command_json(capsys, monkeypatch):
    import hermes_mlx.summarizer.summarizer as summ

    class Scripted(summ.MLXSummarizer):
        def __init__(self, model=None, ranking="code"):
            super().__init__(
                score=FakeModel(*["Type check, lint and all 7 tests pass."] * 50).score,
                count_tokens=count,
                context_window=4096,
                ranking=ranking,
            )

    monkeypatch.setattr(summ, "MLXSummarizer", Scripted)
    monkeypatch.setattr(compact, "build_summarizer", lambda args: None)  # no model load
    path = ADVERSARIAL_DIR / "ts_fetch_retry.jsonl"
    assert main(["fidelity", str(path), "--json", "--tail-tokens", "256"]) == 0
    out = json.loads(capsys.readouterr().out)
    row = out["sessions"][0]
    assert row["session"] == "ts_fetch_retry" and row["contradictions"] == [] and row["invented"] == []
    assert row["gate_keep_pct"] is not None


def test_fidelity_command_bad_session(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(compact, "build_summarizer", lambda args: None)  # no model load
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    assert main(["fidelity", str(bad)]) == 2
    assert "bad.jsonl" in capsys.readouterr().err


def test_a_shared_word_alone_is_no_contradiction():
    constraint = "The 50 ms budget is a hard requirement, don't touch the latency test."
    assert contradictions(["The race is fixed, but a latency test now fails."], [constraint]) == []
    assert contradictions(["Touched the latency test to relax it."], [constraint]) == [
        ("Touched the latency test to relax it.", constraint)
    ]


@pytest.mark.real_model  # the default model's tokenizer counts the tokens; ranking by code, no model call
@pytest.mark.parametrize("mode", ["micro", "batch"])
def test_every_planted_fact_of_the_synthetic_and_adversarial_sessions_is_kept(mode):
    """`hermes-mlx fidelity --mode micro|batch` as a user runs it (32K window, 512-token tail):
    every fact planted in the shipped sessions is in the summary or the live context, and the
    summary contradicts no constraint and names nothing the session never said."""
    from hermes_mlx.bench.fidelity import score_session

    summarizer = MLXSummarizer(ranking="code")
    scores = [score_session(p, summarizer, mode=mode, tail_tokens=512) for p in default_sessions()]
    lost = {s.session: s.lost for s in scores if s.lost}
    assert not lost and sum(s.facts_seen for s in scores) >= 200, lost
    assert not any(s.contradictions or s.invented or s.failures for s in scores)
