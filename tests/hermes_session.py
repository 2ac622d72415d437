"""Drive Hermes's own session loop (`AIAgent.run_conversation`, turn after turn, as its CLI does)
against a stub main model on 127.0.0.1, with compaction routed to hermes-mlx.

`run_session` starts the stub, writes config.yaml, runs the driver inside the Hermes venv and
returns what the driver saw: every turn's messages, the micro telemetry lines Hermes logged,
the rolling summary after each turn and the time each turn took. Per turn it also records what
the user waits for after the answer (`answer_to_close_s`: from the stub's last byte of the turn's
answer to `run_conversation` returning, the micro pass included) and how many micro requests our
provider answered from a pass computed ahead (`ahead`), with `think_s` seconds between turns.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml
from hermes_envs import write_driver

HERE = Path(__file__).resolve().parent
TELEMETRY = "micro compaction telemetry: "

USER_TURNS = [
    "Please look at the retry logic in src/module_1.py and make the tests pass.",
    "Don't touch the public API; keep the function signatures as they are.",
    "Now check the settings loader, the yaml one.",
    "Run the slow tests too, but never against the production database.",
    "What does step_3_2 do exactly?",
    "Use tabs, not spaces, in the generated config files.",
    "Good. Next, the logging: write to logs/run.log instead of stdout.",
    "Why did the bound change in module 4?",
    "Add a regression test for that.",
    "Let's rename step_6_1 to load_budget.",
    "Please keep the retry budget at 5 attempts.",
    "Check module 10 the same way.",
]

# Runs inside the Hermes venv: argv = out.json, port, turns, user turns (JSON), think seconds.
SESSION_DRIVER = """
    import inspect, os, time, urllib.request
    from run_agent import AIAgent

    port, turns = int(sys.argv[2]), int(sys.argv[3])
    users = json.loads(sys.argv[4])
    think_s = float(sys.argv[5])
    records = []

    def answers_sent():  # wall-clock ends of the stub's turn answers
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/stub/replies", timeout=10) as reply:
            return [r["end"] for r in json.load(reply) if r["kind"] == "main"]

    def ahead_stats():  # our provider's cache of passes computed ahead (this process)
        try:
            from hermes_mlx.compactor import ahead
            return ahead.CACHE.stats.as_dict()
        except Exception:
            return {}

    class Tap(logging.Handler):
        def emit(self, record):
            msg = record.getMessage()
            if "micro compaction telemetry: " in msg:
                records.append(json.loads(msg.split("micro compaction telemetry: ", 1)[1]))

    logging.getLogger("agent.context_compressor").addHandler(Tap())
    wanted = dict(base_url=f"http://127.0.0.1:{port}/v1", api_key="stub-key", provider="custom",
                  model="stub-main", enabled_toolsets=[], quiet_mode=True, platform="cli",
                  skip_context_files=True, skip_memory=True, skip_background_review=True)
    accepted = inspect.signature(AIAgent.__init__).parameters  # 0.19 lacks some of these
    agent = AIAgent(**{k: v for k, v in wanted.items() if k in accepted})
    budgets = []  # the "Target ~N tokens" of each batch prompt Hermes built
    compressor = agent.context_compressor
    if hasattr(compressor, "_compute_summary_budget"):
        _budget = compressor._compute_summary_budget

        def _record(turns, *args, **kwargs):
            budgets.append(_budget(turns, *args, **kwargs))
            return budgets[-1]

        compressor._compute_summary_budget = _record
    history, turns_out = [], []
    for i in range(turns):
        user = users[i % len(users)] + ("" if i < len(users) else f" (round {i // len(users) + 1})")
        if i and think_s:
            time.sleep(think_s)  # the user reading the answer and typing the next message
        started = time.monotonic()
        n_records = len(records)
        before = ahead_stats()
        error = None
        try:
            result = agent.run_conversation(user, conversation_history=history)
            history = result.get("messages") or history
            final = result.get("final_response")
        except Exception as exc:
            error, final = f"{type(exc).__name__}: {exc}", None
        closed = time.time()
        ends = [t for t in answers_sent() if t <= closed]
        after = ahead_stats()
        cc = agent.context_compressor
        turns_out.append({
            "user": user, "seconds": time.monotonic() - started, "error": error,
            "answer_to_close_s": closed - ends[-1] if ends else None,
            "ahead": {k: after[k] - before.get(k, 0) for k in after},
            "final": (final or "")[:200], "completed": bool(final) and not error,
            "telemetry": records[n_records:],
            "rolling": getattr(cc, "_micro_compact_rolling_summary", ""),
            "compressions": getattr(cc, "compression_count", None),
            "messages": len(history),
            # 0.19 may fold its summary into a neighbouring message ("[PRIOR CONTEXT ...]" first)
            "markers": [m["content"][m["content"].find("[CONTEXT COMPACTION"):] for m in history
                        if isinstance(m.get("content"), str) and "[CONTEXT COMPACTION" in m["content"]],
        })
        if error:
            break
    emit({"turns": turns_out, "messages": history, "budgets": budgets,
          "threshold": getattr(agent.context_compressor, "_micro_compact_defrag_threshold_tokens", None)})
    # MLX can abort the process at interpreter teardown ("terminate called without an active
    # exception") after all the work is done; the results are written, so end here.
    sys.stdout.flush(); sys.stderr.flush()
    os._exit(0)
"""


def start_stub(reply_chars: int, script: str = "stub_main_model.py") -> tuple[subprocess.Popen, int]:
    """One of the stub main models (tests/stub_*_model.py) on 127.0.0.1, and its port."""
    proc = subprocess.Popen([sys.executable, str(HERE / script), str(reply_chars)], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line.startswith("listening on "):
        proc.kill()
        raise RuntimeError(f"stub main model did not start: {line!r}")
    return proc, int(line.split()[-1])


def write_config(home: Path, config: dict, port: int) -> None:
    """The README's config plus the stub as the main model."""
    full = {
        **config,
        "model": {
            "default": "stub-main",
            "provider": "custom",
            "base_url": f"http://127.0.0.1:{port}/v1",
            "context_length": 65536,
        },
    }
    (home / "config.yaml").write_text(yaml.safe_dump(full))


def drive(
    python: Path,
    tmp: Path,
    config: dict,
    stub: str,
    reply_chars: int,
    driver: tuple[str, str],
    args: list[str],
    timeout: float,
    env: dict | None,
) -> tuple[dict, str]:
    """Start `stub`, write config.yaml into tmp/hermes-home, run `driver` (file name, body) in the
    Hermes venv with argv = out.json, the stub's port, *args; what it emitted and its stderr (also
    kept beside the test's other files as tmp/driver.log)."""
    home = tmp / "hermes-home"
    home.mkdir(exist_ok=True)
    proc, port = start_stub(reply_chars, stub)
    try:
        write_config(home, config, port)
        path = write_driver(tmp / driver[0], driver[1])
        out = tmp / "session.json"
        full_env = {**os.environ, "HERMES_HOME": str(home), "PYTHONUNBUFFERED": "1", "HERMES_YOLO_MODE": "1"}
        full_env.pop("PYTHONPATH", None)
        full_env.update(env or {})
        done = subprocess.run(
            [str(python), str(path), str(out), str(port), *args],
            capture_output=True,
            text=True,
            env=full_env,
            cwd=home,
            timeout=timeout,
        )
        (tmp / "driver.log").write_text(done.stderr)
        if done.returncode != 0:
            raise AssertionError(f"driver failed ({done.returncode}):\n{done.stderr[-6000:]}")
        return json.loads(out.read_text()), done.stderr
    finally:
        proc.kill()
        proc.wait(timeout=10)


def run_session(
    python: Path,
    tmp: Path,
    config: dict,
    *,
    turns: int,
    reply_chars: int,
    timeout: float = 3000,
    think_s: float = 0.0,
    env: dict | None = None,
) -> tuple[dict, str]:
    """`env`: extra environment for the driver (HERMES_MLX_AHEAD=0 turns passes computed ahead off)."""
    driver, args = ("session_driver.py", SESSION_DRIVER), [str(turns), json.dumps(USER_TURNS), str(think_s)]
    return drive(python, tmp, config, "stub_main_model.py", reply_chars, driver, args, timeout, env)
