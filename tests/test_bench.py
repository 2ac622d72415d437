"""hermes-mlx bench: contention processes always stopped, bad inputs, report shape (no timings)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

import hermes_mlx  # noqa: F401  (BLAS before mlx)
from hermes_mlx.bench import contention as ct
from hermes_mlx.bench import results
from hermes_mlx.bench.fidelity import leaked
from hermes_mlx.cli import main
from hermes_mlx.integrations.hermes_wire import hermes_serialize


def ran_tests(call_id: str, text: str) -> dict:
    """An assistant message that runs the tests through Hermes's terminal tool."""
    call = {"name": "terminal", "arguments": '{"cmd": "pytest -q"}'}
    return {"role": "assistant", "content": text, "tool_calls": [{"id": call_id, "type": "function", "function": call}]}


TINY_SESSION = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Fix the failing export test in src/export/writer.py."},
    ran_tests("c1", "Running the tests."),
    {"role": "tool", "tool_call_id": "c1", "content": "FAILED tests/test_export.py::test_csv - KeyError: 'amount'"},
    {"role": "assistant", "content": "The writer reads `amount` but the row has `total`."},
    {"role": "user", "content": "Rename it in src/export/writer.py then."},
    ran_tests("c2", "Renamed; tests pass now."),
    {"role": "tool", "tool_call_id": "c2", "content": "3 passed in 0.4s"},
    {"role": "assistant", "content": "Done."},
    {"role": "user", "content": "Thanks. Now update docs/export.md."},
    {"role": "assistant", "content": "Updated docs/export.md with the new column name."},
    {"role": "user", "content": "Good."},
]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie counts as gone
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return True


@pytest.fixture()
def session_file(tmp_path):
    path = tmp_path / "tiny.jsonl"
    path.write_text("\n".join(json.dumps(m) for m in TINY_SESSION) + "\n")
    (tmp_path / "tiny.facts.yaml").write_text("paths:\n  - src/export/writer.py\n  - docs/export.md\n")
    return path


def test_contention_processes_start_and_stop():
    with ct.Contention("cpu2", settle_s=0.2) as load:
        pids = [p.pid for p in load.procs]
        assert len(pids) == 2 and load.alive() == 2
    assert not any(alive(pid) for pid in pids)


def test_contention_stopped_after_an_exception():
    pids = []
    with pytest.raises(RuntimeError, match="boom"), ct.Contention("cpu1", settle_s=0.1) as load:
        pids = [p.pid for p in load.procs]
        raise RuntimeError("boom")
    assert pids and not any(alive(pid) for pid in pids)
    assert not ct._LIVE


def test_dead_contention_process_is_noted():
    load = ct.Contention("cpu1", settle_s=0.1).start()
    try:
        load.procs[0].kill()
        load.procs[0].wait()
        load.check()
        load.check()
        assert len(load.notes) == 1 and "exited" in load.notes[0]
    finally:
        load.stop()


def test_contention_that_cannot_start_is_an_error(monkeypatch):
    monkeypatch.setattr(ct, "commands", lambda s, m: [[sys.executable, "-c", "raise SystemExit(3)"]])
    with pytest.raises(RuntimeError, match="did not start"):
        ct.Contention("cpu1", settle_s=0.3).start()
    assert not ct._LIVE


def test_signal_stops_contention(tmp_path):
    """A bench process killed with SIGTERM takes its contention processes with it."""
    pidfile = tmp_path / "pids"
    code = (
        "import time, sys\nfrom hermes_mlx.bench import contention as ct\n"
        "c = ct.Contention('cpu1', settle_s=0.1).start()\n"
        f"open({str(pidfile)!r}, 'w').write(str(c.procs[0].pid))\ntime.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code])
    for _ in range(100):
        if pidfile.exists() and pidfile.read_text():
            break
        subprocess.run(["sleep", "0.1"])
    child = int(pidfile.read_text())
    proc.terminate()
    proc.wait(timeout=10)
    for _ in range(50):
        if not alive(child):
            break
        subprocess.run(["sleep", "0.1"])
    assert not alive(child)


def test_unknown_scenario_is_one_clear_error(capsys, session_file):
    assert main(["bench", str(session_file), "--scenarios", "none,disco"]) == 2
    err = capsys.readouterr().err
    assert "unknown scenario 'disco'" in err and "Traceback" not in err


def test_not_a_transcript(capsys, tmp_path):
    bad = tmp_path / "notes.jsonl"
    bad.write_text("this is not json\n")
    assert main(["bench", str(bad)]) == 2
    assert "notes.jsonl:1: invalid JSON" in capsys.readouterr().err


def test_state_db_with_several_sessions_needs_an_id(capsys, tmp_path):
    import sqlite3

    db = tmp_path / "state.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE messages (session_id TEXT, role TEXT, content TEXT)")
        conn.executemany("INSERT INTO messages VALUES (?, ?, ?)", [("a", "user", "hi"), ("b", "user", "yo")])
    assert main(["bench", str(db)]) == 2
    assert "pass a session id (one of: a, b)" in capsys.readouterr().err


def test_bad_idle_gaps_are_one_clear_error(capsys, session_file):
    assert main(["bench", str(session_file), "--idle-gaps", "1,soon"]) == 2
    assert "--idle-gaps" in capsys.readouterr().err


def test_absent_model(capsys, session_file, tmp_path):
    assert main(["bench", str(session_file), "--model", str(tmp_path / "nope")]) == 1
    assert "model" in capsys.readouterr().err


@pytest.fixture()
def short_session(tmp_path):
    """A shipped session cut short (micro passes need exchanges that leave the protected tail)."""
    from hermes_mlx.bench.shipped import shipped_sessions

    source = next(p for p in shipped_sessions() if p.stem == "tidewatch_retry_429")
    session = tmp_path / source.name
    session.write_text("".join(source.read_text().splitlines(keepends=True)[:40]))
    return session


def test_bench_end_to_end_on_the_tiny_model(tiny_model, short_session, tmp_path, capsys):
    session = short_session
    out = tmp_path / "out"
    code = main(
        [
            "bench",
            str(session),
            "--model",
            tiny_model,
            "--scenarios",
            "none,cpu1,gpu,sessions-2",
            "--max-passes",
            "2",
            "--quick",
            "--out",
            str(out),
            "--no-progress",
            "--no-baselines",
            "--idle-gaps",
            "0.1,0.2",
        ]
    )
    assert code == 0
    data = json.loads((out / "bench.json").read_text())
    assert {"machine", "settings", "ratios", "fidelity", "notes", "passes"} <= set(data)
    assert data["machine"]["cores"] and "mlx" in data["machine"]
    variants = {(p["scenario"], p["variant"]) for p in data["passes"]}
    assert {("none", "ours"), ("none", "ours-cold"), ("cpu1", "ours")} <= variants
    assert {("sessions-2", "sequential"), ("sessions-2", "concurrent")} <= variants
    cached = {(p["scenario"], p["turn"]): p["cached_tokens"] for p in data["passes"] if p["variant"] == "ours"}
    # the engine reports cached prefixes at all (a pass whose exchange offers one sentence makes
    # no model call, so the idle probes, which repeat one call, are where reuse shows for sure)
    assert any(p["cached_tokens"] for p in data["passes"])
    # each scenario starts with no cached prefix: cpu1 is not served the prompts none just ran
    assert {t: c for (s, t), c in cached.items() if s == "cpu1"} == {
        t: c for (s, t), c in cached.items() if s == "none"
    }
    many = data["concurrency"]["sessions-2"]
    for variant in ("sequential", "concurrent"):
        assert set(many[variant]["per_session"]) == {session.stem, f"{session.stem}#2"}
        assert many[variant]["passes"] > 0 and many[variant]["memory"]["peak_rss_mb"]
        assert many[variant]["prompt_cache"] is not None  # the engine counts prefix hits
    assert set(many["ratios"]) >= {"wall_vs_sequential", "p50_vs_sequential_p50", "reuse_vs_alone"}
    assert {(p["scenario"], p["variant"]) for p in data["phases"]} >= {("none", "ours"), ("cpu1", "ours")}
    for p in data["passes"]:
        assert {
            "duration_s",
            "prompt_tokens",
            "cached_tokens",
            "generation_tokens",
            "ttft_s",
            "prompt_tps",
            "generation_tps",
            "tokens_delta",
            "occupancy_pct",
            "outcome",
            "visible_s",
        } <= set(p)
    if sys.platform != "darwin":
        assert any("gpu scenario skipped" in n for n in data["notes"])
    md = (out / "bench.md").read_text()
    assert "| scenario | variant |" in md and "p95" in md
    for png in ("latency_by_scenario.png", "occupancy.png", "generated_tokens.png"):
        assert (out / png).read_bytes()[:4] == b"\x89PNG"
    probes = [p for p in data["passes"] if p["variant"] == "idle-probe"]
    assert [p["idle_before_s"] for p in probes] == [0.0, 0.1, 0.2]
    assert len({p["prompt_tokens"] for p in probes}) == 1  # the same work after every gap
    assert set(data["ratios"]["idle_penalty_s_by_gap"]) == {"0.1", "0.2"}
    assert {"facts_seen", "context_survival_pct", "facts_absorbed", "absorbed_kept_in_summary"} <= set(
        data["fidelity"][session.stem]
    )
    assert not ct._LIVE


def test_report_ratios_match_turns():
    passes = [
        {
            "scenario": "none",
            "variant": "ours",
            "session": "s",
            "turn": 1,
            "number": 1,
            "duration_s": 1.0,
            "generation_tokens": 50,
            "prompt_tokens": 100,
            "ttft_s": 0.1,
            "idle_before_s": 0.0,
        },
        {
            "scenario": "none",
            "variant": "mlx_lm.server",
            "session": "s",
            "turn": 1,
            "number": 1,
            "duration_s": 4.0,
            "generation_tokens": 400,
            "prompt_tokens": 300,
            "ttft_s": None,
            "idle_before_s": 0.0,
        },
    ]
    table, ratios = results.summary_table(passes)
    assert ratios["duration_ours_vs_mlx_lm_server_same_turns_p50"] == 0.25
    assert ratios["gen_tokens_ours_vs_mlx_lm_server_same_turns_p50"] == 0.125
    assert ratios["ours_vs_mlx_lm_server_per_pass"] == [
        {"session": "s", "turn": 1, "duration": 0.25, "gen_tokens": 0.125}
    ]
    assert table.count("\n") == 3


def test_hermes_serialize_shape():
    text = hermes_serialize(TINY_SESSION[2:4])
    assert text.startswith("[ASSISTANT]: Running the tests.\n[Tool calls:\n  terminal(")
    assert "[TOOL RESULT c1]: FAILED" in text


def test_mlx_lm_server_baseline_on_the_tiny_model(tiny_model):
    """Baseline (b) end to end over loopback: Hermes's prompt, the server stopped afterwards."""
    from hermes_mlx.bench.baselines import run_hermes_passes

    passes, summary, folded = run_hermes_passes(
        TINY_SESSION, model_path=tiny_model, session="tiny", max_passes=2, max_tokens=4
    )
    assert [p.turn for p in passes] == [1, 2]
    for p in passes:
        assert p.variant == "mlx_lm.server" and p.error is None, p.error
        assert p.prompt_tokens > 0 and 0 < p.generation_tokens <= 4 and p.duration_s > 0
    assert isinstance(summary, str) and "[TOOL RESULT c1]" in folded


def test_baseline_input_is_redacted_like_hermes_and_partial_leaks_count():
    secret = "wJalrFAKEtidewatchSECRET/K7MDENG/bPxRfiCY9q"
    msgs = [
        {
            "role": "assistant",
            "content": f"export AWS_SECRET_ACCESS_KEY={secret}",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "terminal", "arguments": f'{{"cmd": "aws_secret_access_key={secret}"}}'},
                }
            ],
        }
    ]
    assert secret not in hermes_serialize(msgs, redact_secrets=True)
    assert secret in hermes_serialize(msgs)
    assert leaked(secret, "the key is wJalrFAKEtidewatchSECRET/K7MDENG/bPxRfiY")
    assert not leaked(secret, "the key is wJalrFAKE")


def test_plots_never_cost_the_results(tmp_path):
    assert results.plots([], tmp_path) == ["no passes: no plots"]
    json_path, md_path, _ = results.write(tmp_path, results.Results())
    assert json.loads(json_path.read_text())["passes"] == [] and md_path.is_file()


def test_plots_are_skipped_with_a_note_without_matplotlib(tmp_path, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    passes = [{"scenario": "none", "variant": "ours", "duration_s": 1.0, "turn": 1}]
    assert results.plots(passes, tmp_path) == [
        "plots skipped: matplotlib is not installed (pip install 'hermes-mlx[bench]')"
    ]
    assert not list(tmp_path.iterdir())


def test_dry_run_prints_the_plan_and_loads_no_model(capsys, session_file, monkeypatch):
    from hermes_mlx.bench import run as bench_run

    monkeypatch.setattr(bench_run, "resolve", lambda model: pytest.fail("--dry-run resolved a model"))
    assert main(["bench", str(session_file), "--dry-run", "--scenarios", "cpu2"]) == 0
    out = capsys.readouterr().out
    assert str(session_file) in out and "scenarios: none, cpu2" in out


def test_idle_probe_failures_are_rows_and_replies_are_evened(monkeypatch):
    from hermes_mlx.bench import harness

    def boom(request, **kw):
        assert "timeout" not in kw  # the pass's leftover deadline is not the probe's
        raise RuntimeError("engine gone")

    monkeypatch.setattr("hermes_mlx.engine.generate.generate", boom)
    rows = harness.idle_probes(("hi", {"model": None, "timeout": 0.01}), gaps=[0.0, 0.01], session="s")
    assert [r.error for r in rows] == ["RuntimeError: engine gone"] * 2
    probe = {"ttft_s": 1.0, "decode_s": 2.0, "generation_tokens": 20}
    assert results.evened(probe, 10) == 2.0
    assert not leaked("", "anything")


def test_idle_probes_say_what_was_wired_on_metal(monkeypatch):
    """On a Mac the probe after each pause records the wired memory (faked here): a weight set that
    was unwired during the pause is what makes that probe slow."""
    from hermes_mlx.bench import harness
    from hermes_mlx.engine import residency

    monkeypatch.setattr(harness.Recorder, "__call__", lambda self, request, **kw: None)
    wired = iter([600e6, 0])
    monkeypatch.setattr(residency, "status", lambda: {"device": "metal", "wired_bytes": next(wired)})
    rows = harness.idle_probes(("hi", {"model": None}), gaps=[0.0, 0.01], session="s")
    assert [r.wired_mb for r in rows] == [600.0, 0.0]
    monkeypatch.setattr(residency, "status", lambda: {"device": "cpu", "wired_bytes": 0})
    assert [r.wired_mb for r in harness.idle_probes(("hi", {"model": None}), gaps=[0.0], session="s")] == [None]
    _, ratios = results.summary_table([dict(r.to_dict(), ttft_s=1.0) for r in rows])
    assert ratios["idle_probe_wired_mb_by_gap"] == {"0.0": 600.0, "0.01": 0.0}


def test_no_probe_and_a_failing_baseline_are_notes(tiny_model, short_session, tmp_path, monkeypatch):
    from hermes_mlx.bench import baselines, harness

    real = harness.run_passes

    def no_model_calls(*args, **kwargs):
        replay = real(*args, **kwargs)
        replay.probe = None  # as when every pass ended before calling the model
        return replay

    def server_gone(*args, **kwargs):
        raise ConnectionResetError("server went away")

    monkeypatch.setattr(harness, "run_passes", no_model_calls)
    monkeypatch.setattr(baselines, "run_hermes_passes", server_gone)
    out = tmp_path / "out"
    code = main(
        [
            "bench",
            str(short_session),
            "--model",
            tiny_model,
            "--scenarios",
            "none",
            "--max-passes",
            "1",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 0
    notes = json.loads((out / "bench.json").read_text())["notes"]
    assert any("no pass called the model" in n for n in notes)
    assert any("mlx_lm.server baseline: ConnectionResetError: server went away" in n for n in notes)


# ---------------------------------------------------------------- many sessions, visible latency, bounds


def scripted_replays(scenario: str, threads: dict | None = None, fail: str | None = None, think: list | None = None):
    """A concurrent.ReplayOne over the scripted summarizer: no model, and each replay notes the
    thread it ran on; the session named `fail` raises."""
    import threading

    from fakes import ScriptedSummarizer

    from hermes_mlx.bench import harness

    order = []

    def replay_one(name, messages, variant, before_pass, on_turn):
        if threads is not None:
            threads.setdefault(variant, set()).add(threading.current_thread().name)
        if name == fail:
            raise RuntimeError("replay broke")
        return harness.run_passes(
            messages,
            model=None,
            scenario=scenario,
            session=name,
            variant=variant,
            max_passes=3,
            before_pass=before_pass,
            on_turn=on_turn,
            on_pass=lambda p: order.append((p.variant, p.session)),
            summarizer=ScriptedSummarizer(),
            context_limit=4096,
            think_s=0.5 if think is not None else 0.0,
            sleep=think.append if think is not None else time.sleep,
        )

    return replay_one, order


@pytest.fixture()
def pool():
    from fakes import session

    return [("a", session(turns=10, size=3000)), ("b", session(turns=9, size=3000))]


def test_sessions_n_replays_n_sessions_at_once_beside_them_one_after_another(pool):
    from hermes_mlx.bench import concurrent

    threads: dict = {}
    resets = []
    replay_one, order = scripted_replays("sessions-3", threads)
    phases = concurrent.run_scenario("sessions-3", pool, replay_one, reset=lambda: resets.append(1))
    assert [p.variant for p in phases] == ["sequential", "concurrent"] and len(resets) == 2
    for phase in phases:
        assert list(phase.per_session) == ["a", "b", "a#2"]  # the pool is cycled, the copy named apart
        assert all(row["passes"] == 3 and row["error"] is None for row in phase.per_session.values())
        assert phase.passes == 9 and phase.wall_s >= 0 and "peak_rss_mb" in phase.memory
    assert len(threads["concurrent"]) == 3 and len(threads["sequential"]) == 1  # one thread per session
    sequential = [s for v, s in order if v == "sequential"]
    assert sequential == ["a"] * 3 + ["b"] * 3 + ["a#2"] * 3


def test_alternating_sessions_take_turns_and_a_failing_one_leaves(pool):
    from hermes_mlx.bench import concurrent

    replay_one, order = scripted_replays("alternating-3", fail="b")
    phases = concurrent.run_scenario("alternating-3", pool, replay_one)
    alternating = phases[1]
    assert alternating.variant == "alternating"
    assert alternating.per_session["b"]["error"] == "RuntimeError: replay broke"
    assert alternating.per_session["a"]["passes"] == alternating.per_session["a#2"]["passes"] == 3
    assert [s for v, s in order if v == "alternating"] == ["a", "a#2"] * 3


def test_copies_of_a_session_share_no_prefix(pool):
    from hermes_mlx.bench import concurrent

    runs = concurrent.pick(pool[:1], 2)
    assert [n for n, _ in runs] == ["a", "a#2"]
    (_, first), (_, copy) = runs
    assert first[0] == copy[0]  # the system prompt stays
    assert all(c["content"] == "[copy 2] " + f["content"] for f, c in zip(first[1:], copy[1:]))
    assert concurrent.parse("sessions-8") == ("sessions", 8) and concurrent.parse("sessions-0") is None
    assert concurrent.parse("cpu2") is None


def test_think_time_pauses_between_turns_outside_the_pass(pool):
    """--think-s sleeps after each turn but the last, outside what a pass is timed for."""
    think: list = []
    replay_one, order = scripted_replays("none", think=think)
    turns = []

    def on_turn(n, total):
        turns.append(n)

    replay = replay_one("a", pool[0][1], "ours", None, on_turn)
    assert len(replay.passes) == 3 and turns  # the hook ran, then the pause
    assert think == [0.5] * replay.thought and replay.thought == len(turns) - 1  # none after the last pass
    assert all(p.visible_s <= p.duration_s for p in replay.passes)


def test_passes_computed_ahead_count_their_engine_calls_in_the_pass_that_used_them(tiny_model, short_session):
    """With --ahead the summarizer's calls run in the think time, on the ahead thread: the pass
    that uses a guess reports its calls and tokens, the same as the pass made them itself."""
    from hermes_mlx.bench import harness
    from hermes_mlx.compactor import ahead
    from hermes_mlx.compactor.sessions import load_session

    def think(_seconds):  # the user's think time lasts until the guess is done
        for entry in list(ahead.CACHE._entries.values()):
            entry.future.exception(timeout=120)

    messages = load_session(short_session)
    ahead.CACHE.clear()
    runs = {
        on: harness.run_passes(
            messages, model=tiny_model, scenario="none", session="s", max_passes=3, think_s=1, sleep=think, ahead=on
        )
        for on in (False, True)
    }
    ahead.CACHE.clear()
    plain, early = runs[False].passes, runs[True].passes
    assert len(plain) == len(early) == 3 and runs[True].summary == runs[False].summary
    assert [p.outcome for p in early] == [p.outcome for p in plain]
    assert [(p.calls, p.prompt_tokens, p.generation_tokens) for p in early] == [
        (p.calls, p.prompt_tokens, p.generation_tokens) for p in plain
    ]
    assert {p.ahead for p in early} == {"hit"} and {p.ahead for p in plain} == {""}
    assert sum(p.ahead_calls for p in early) == sum(p.calls for p in early) > 0  # every call was made ahead
    assert all(p.wasted_calls == 0 and p.visible_s <= p.duration_s for p in early)


def test_fair_share_bound_arithmetic():
    assert ct.fair_share_bound(busy=2, ours=2, cores=2) == 2.0
    assert ct.fair_share_bound(busy=2, ours=1, cores=2) == 1.5
    assert ct.fair_share_bound(busy=1, ours=2, cores=8) == 1.0  # room for everyone: no slowdown owed
    assert ct.busy_threads("cpu4") == 4 and ct.busy_threads("membw") == 1
    assert ct.busy_threads("gpu") is None and ct.busy_threads("none") is None


def fake_pass(scenario, variant, session, duration, **extra):
    row = {
        "scenario": scenario,
        "variant": variant,
        "session": session,
        "turn": 1,
        "number": 1,
        "duration_s": duration,
        "visible_s": duration,
        "generation_tokens": 10,
        "prompt_tokens": 100,
        "cached_tokens": 0,
        "ttft_s": 0.1,
        "idle_before_s": 0.0,
    }
    return {**row, **extra}


def test_report_gives_the_bound_visible_latency_reuse_and_many_session_ratios(tmp_path):
    passes = [fake_pass("none", "ours", "s", d, blas_threads=2) for d in (1.0, 1.0, 2.0)]
    passes += [fake_pass("cpu2", "ours", "s", d, blas_threads=1) for d in (2.0, 3.0, 5.0)]
    passes += [fake_pass("sessions-2", "sequential", s, 1.0, cached_tokens=50) for s in ("a", "b")]
    passes += [fake_pass("sessions-2", "concurrent", s, 1.5, cached_tokens=25, visible_s=0.0) for s in ("a", "b")]
    memory = {"peak_rss_mb": 100.0, "maxrss_mb": 120.0, "peak_mlx_mb": 40.0}
    phases = [
        {"scenario": "none", "variant": "ours", "session": "s", "wall_s": 4.0, "memory": memory},
        {
            "scenario": "sessions-2",
            "variant": "sequential",
            "sessions": 2,
            "wall_s": 2.0,
            "memory": memory,
            "per_session": {"a": {"wall_s": 1.0, "passes": 1, "error": None}, "b": {"wall_s": 1.0, "passes": 1}},
        },
        {
            "scenario": "sessions-2",
            "variant": "concurrent",
            "sessions": 2,
            "wall_s": 1.5,
            "memory": {**memory, "peak_mlx_mb": 60.0},
            "prompt_cache": {"hits": 1, "misses": 1},
            "per_session": {"a": {"wall_s": 1.5, "passes": 1, "error": None}},
        },
    ]
    _, md_path, md = results.write(tmp_path, results.Results(machine={"cores": 2}, passes=passes, phases=phases))
    data = json.loads((tmp_path / "bench.json").read_text())
    bound = data["ratios"]["cpu2_fair_share"]
    # p95 of (2, 3, 5) over p95 of (1, 1, 2): 4.8 / 1.9; two idle BLAS threads and two busy loops on 2 cores: 2x
    assert bound["bound"] == 2.0 and bound["our_threads"] == 2 and bound["busy_threads"] == 2
    assert bound["p95_slowdown"] == round(4.8 / 1.9, 3) and bound["p95_vs_bound"] == round(4.8 / 1.9 / 2, 3)
    fig = data["concurrency"]["sessions-2"]
    assert fig["sequential"]["reuse"] == 0.5 and fig["concurrent"]["reuse"] == 0.25
    assert fig["concurrent"]["visible_p95_s"] == 0.0 and fig["concurrent"]["per_session"]["a"]["p50_s"] == 1.5
    assert fig["ratios"] == {
        "wall_vs_sequential": 0.75,
        "p50_vs_sequential_p50": 1.5,
        "p50_vs_none_p50": 1.5,
        "reuse_vs_alone": 0.5,
        "peak_rss_vs_sequential": 1.0,
        "peak_mlx_vs_sequential": 1.5,
    }
    assert "| visible p95 s |" in md and "| prefix reuse |" in md and "50.0%" in md
    assert "## Many sessions" in md and "bound 2.00x" in md and "## Memory and reuse by scenario" in md
    assert data["phases"] == phases


def test_memory_watch_sees_memory_taken_while_it_runs():
    from hermes_mlx.bench.memory import MemoryWatch, rss_mb

    with MemoryWatch(every_s=0.01) as watch:
        before = rss_mb()
        block = bytearray(64 * 1024 * 1024)
        block[::4096] = b"x" * len(block[::4096])  # touch every page
    result = watch.result()
    assert result["maxrss_mb"] > 0
    if before is not None:  # Linux
        assert result["peak_rss_mb"] >= before + 60
    del block


def test_think_time_and_many_sessions_on_the_command_line(capsys, session_file):
    assert main(["bench", str(session_file), "--think-s", "-1"]) == 2
    assert "--think-s" in capsys.readouterr().err
    assert (
        main(["bench", str(session_file), "--dry-run", "--scenarios", "sessions-4", "--think-s", "20", "--ahead"]) == 0
    )
    out = capsys.readouterr().out
    assert "sessions-4: 4 sessions at once (from 1 recorded)" in out and "think time between turns: 20 s" in out
    assert "passes computed ahead: on" in out


def test_a_replay_that_ends_leaves_no_guess_to_run_in_the_next_scenario():
    """The guess for the pass after the last one is dropped when the replay ends: nobody will take
    it, and it would run inside the next scenario's timed region."""
    from fakes import ScriptedSummarizer, session

    from hermes_mlx.bench import harness
    from hermes_mlx.compactor import ahead

    ahead.CACHE.clear()
    ahead.CACHE.schedule("another replay", "its guess", None, lambda: "kept")
    replay = harness.run_passes(
        session(12),
        model=None,
        scenario="none",
        session="s",
        max_passes=2,
        context_limit=8000,
        summarizer=ScriptedSummarizer(),
        ahead=True,
    )
    try:
        assert [p.outcome for p in replay.passes] == ["absorbed", "absorbed"]
        assert ahead.CACHE.held() == {"another replay": "its guess"}  # another replay's guess stays
    finally:
        ahead.CACHE.clear()
