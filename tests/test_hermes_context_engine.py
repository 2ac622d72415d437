"""hermes-mlx as Hermes 0.22's context engine, the way users run it: Hermes's own
`AIAgent.run_conversation` loop, turn after turn, with `context.engine: hermes-mlx`, a stub main
model on 127.0.0.1 (stub_recall_model.py, which calls our recall tool when asked) and the
embedded summarizer; then a resume from Hermes's session DB on a fresh agent.

Micro on (12 turns; 40 in the `slow` variant), micro off with batch compactions, and the
fallbacks: the plugin disabled, the engine failing to copy for an agent, every hook raising.
"""

from __future__ import annotations

import json

import pytest
from hermes_engine_session import ENGINE_CONFIG, run_engine_session
from hermes_envs import EnvBuildError, ensure_envs
from hermes_session import USER_TURNS
from stub_main_model import reply_for
from test_hermes_e2e import H22, check_tool_pairs

from hermes_mlx.compactor.markers import END_MARKER, MARKER_TAG
from hermes_mlx.integrations.recall import MARKER_NOTE

pytestmark = pytest.mark.real_model

RESUME_TURNS = ["Continue with module 11 the same way.", "And module 12, please."]


@pytest.fixture(scope="module")
def python():
    env = ensure_envs([H22])[H22]
    if isinstance(env, EnvBuildError):
        pytest.skip(f"could not build a venv with {H22[0]}=={H22[1]}: {env}")
    return env


def turn_two_line() -> str:
    """The first line of the stub's answer to turn 2: it names `expected 14 got 15`. Turn 2's
    answer is the first exchange a micro pass folds (Hermes protects the first three messages)."""
    users = [{"role": "user", "content": USER_TURNS[0]}, {"role": "user", "content": USER_TURNS[1]}]
    return reply_for(users, 6000).split("\n\n")[0]


def users_of(messages: list[dict]) -> str:
    return "\n".join(m["content"] for m in messages if m.get("role") == "user" and isinstance(m.get("content"), str))


def markers_of(messages: list[dict]) -> list[str]:
    return [m["content"] for m in messages if isinstance(m.get("content"), str) and MARKER_TAG in m["content"]]


def loaded_again(line: str, messages: list[dict]) -> bool:
    """The line as a message of its own in the context (not a marker, a tool result or the stub's
    quote of one): the archived original loaded back."""
    return any(
        line in (m.get("content") or "")
        for m in messages
        if m.get("role") == "assistant"
        and isinstance(m.get("content"), str)
        and MARKER_TAG not in m["content"]
        and not m["content"].startswith("Recall result")
    )


def check_session(turns: list[dict], messages: list[dict], users: list[str]) -> None:
    """Every turn done on our engine, one marker that names the tool, every user message kept."""
    assert all(t["completed"] for t in turns), [(t["user"], t["error"]) for t in turns if not t["completed"]]
    assert {t["engine"] for t in turns} == {"hermes-mlx"}
    found = markers_of(messages)
    assert len(found) == 1, [m[:100] for m in found]
    assert END_MARKER in found[0] and MARKER_NOTE in found[0]
    kept = users_of(messages)
    for text in users:
        assert text in kept, f"user message lost: {text!r}"
    check_tool_pairs([m for m in messages if m.get("role") != "system"])


def test_engine_session_micro_recall_and_resume(python, tmp_path):
    users = list(USER_TURNS[:10]) + ["RECALL: expected 14 got 15", "RECALLBAD: no query"]
    result, log = run_engine_session(python, tmp_path, ENGINE_CONFIG, users, resume_users=RESUME_TURNS)
    assert "registered context engine: hermes-mlx" in log
    assert result["tool_names"] == ["hermes_mlx_recall"]
    turns = result["turns"]
    check_session(turns, result["messages"], users)
    records = [r for t in turns for r in t["telemetry"]]
    assert any(r["kind"] == "micro" and r["outcome"] == "absorbed" for r in records), records
    assert all(t["compressions"] == 0 for t in turns)  # micro keeps the session under the threshold
    # passes ahead: on_turn_complete started each next pass; the passes took those answers
    ahead = {k: sum(t["ahead"].get(k, 0) for t in turns) for k in ("scheduled", "hits", "misses")}
    absorbed = sum(r["outcome"] == "absorbed" for r in records)
    assert ahead["scheduled"] >= absorbed and ahead["hits"] >= absorbed - 1, (ahead, absorbed)

    # recall: the main model called the tool and got turn 2's line back, word for word
    line = turn_two_line()
    assert not loaded_again(line, result["messages"])  # compacted away
    answer = json.loads(result["tools"][0])
    assert line in [m["text"] for m in answer["matches"]], answer
    assert line in turns[-2]["final"]
    # a malformed call: a clear tool error, and the turn still ended with an answer
    assert "error" in json.loads(result["tools"][1]) and turns[-1]["completed"]

    # resume from the session DB: one marker, no archived exchange loaded again, no user lost
    resumed = result["resumed"]
    restored = resumed["restored"]
    assert resumed["session_id"] == result["session_id"]
    assert len(markers_of(restored)) == 1
    assert [m.get("content") for m in restored] == [m.get("content") for m in result["messages"]]
    assert not loaded_again(line, restored)
    kept = users_of(restored)
    assert all(text in kept for text in users)
    check_session(resumed["turns"], resumed["messages"], users + RESUME_TURNS)
    assert any(r["outcome"] == "absorbed" for t in resumed["turns"] for r in t["telemetry"])


def test_engine_batch_compactions_with_micro_off(python, tmp_path):
    config = {**ENGINE_CONFIG, "compression": {"micro_compact": False}}
    users = list(USER_TURNS[:10])
    result, _ = run_engine_session(python, tmp_path, config, users, reply_chars=30000, resume_users=RESUME_TURNS[:1])
    turns = result["turns"]
    check_session(turns, result["messages"], users)
    restored = result["resumed"]["restored"]  # Hermes committed our batch result: the same rows come back
    assert [m.get("content") for m in restored] == [m.get("content") for m in result["messages"]]
    check_session(result["resumed"]["turns"], result["resumed"]["messages"], users + RESUME_TURNS[:1])
    assert max(t["compressions"] for t in turns) >= 1
    records = [r for t in turns for r in t["telemetry"]]
    assert records and {r["kind"] for r in records} == {"batch"}
    assert any(r["outcome"] == "compacted" for r in records), [r["outcome"] for r in records]


@pytest.mark.parametrize(
    ("config_patch", "fault", "expected_log"),
    [
        ({"plugins": {"enabled": []}}, None, "Context engine 'hermes-mlx' not found"),
        ({}, "clone", "could not be safely copied"),
    ],
    ids=["plugin-disabled", "engine-copy-fails"],
)
def test_without_our_engine_hermes_compressor_carries_the_session(python, tmp_path, config_patch, fault, expected_log):
    env = {"HERMES_MLX_TEST_ENGINE_FAULT": fault} if fault else {}
    users = list(USER_TURNS[:3])
    result, log = run_engine_session(
        python, tmp_path, {**ENGINE_CONFIG, **config_patch}, users, reply_chars=800, env=env
    )
    assert expected_log in log
    assert all(t["completed"] for t in result["turns"])
    assert {t["engine"] for t in result["turns"]} == {"compressor"}


def test_every_hook_raising_leaves_the_conversation_unchanged(python, tmp_path):
    users = list(USER_TURNS[:8])
    result, log = run_engine_session(
        python, tmp_path, ENGINE_CONFIG, users, env={"HERMES_MLX_TEST_ENGINE_FAULT": "hooks"}
    )
    turns = result["turns"]
    assert all(t["completed"] for t in turns) and {t["engine"] for t in turns} == {"hermes-mlx"}
    assert "injected engine fault" in log and "conversation unchanged" in log
    assert not markers_of(result["messages"]) and len(result["messages"]) == 2 * len(users)


@pytest.mark.slow
def test_engine_session_40_turns(python, tmp_path):
    users = [USER_TURNS[i % len(USER_TURNS)] + f" (round {i // len(USER_TURNS) + 1})" for i in range(40)]
    result, _ = run_engine_session(python, tmp_path, ENGINE_CONFIG, users, timeout=5400)
    check_session(result["turns"], result["messages"], users)
    absorbed = [r for t in result["turns"] for r in t["telemetry"] if r["outcome"] == "absorbed"]
    assert len(absorbed) >= 25


@pytest.mark.slow
def test_turn_close_latency_engine_vs_provider(python, tmp_path):
    """The README figure: what the user waits for after each answer (HERMES_SESSION_THINK_S
    between turns, default 15 s), engine mode vs provider mode, both with passes computed ahead."""
    import os
    import statistics

    from hermes_session import run_session
    from test_hermes_session import README_IN_PROCESS

    think = float(os.environ.get("HERMES_SESSION_THINK_S", "15"))
    users = list(USER_TURNS[:12])
    (tmp_path / "engine").mkdir()
    (tmp_path / "provider").mkdir()
    engine, _ = run_engine_session(python, tmp_path / "engine", ENGINE_CONFIG, users, think_s=think)
    provider, _ = run_session(
        python, tmp_path / "provider", README_IN_PROCESS, turns=12, reply_chars=6000, think_s=think
    )
    figures = {}
    for name, run in (("engine", engine), ("provider", provider)):
        waits = sorted(t["answer_to_close_s"] for t in run["turns"] if t["answer_to_close_s"] is not None)
        figures[name] = {
            "p50_s": round(statistics.median(waits), 3),
            "p95_s": round(statistics.quantiles(waits, n=20)[-1], 3),
            "passes": sum(1 for t in run["turns"] for r in t["telemetry"] if r["outcome"] == "absorbed"),
        }
    print(f"\nturn-close wait, think {think:g} s: {json.dumps(figures)}")
    assert all(t["completed"] for t in engine["turns"])
