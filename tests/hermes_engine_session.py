"""Drive Hermes 0.22's own session loop with hermes-mlx as its context engine (context.engine:
hermes-mlx), against stub_recall_model.py on 127.0.0.1, then resume the session the way
`hermes -z --resume` does (hermes_cli/oneshot.py `_load_resume_target`: the session DB's rows)
and go on for a few turns on a fresh AIAgent.

`run_engine_session` returns what the driver saw per turn (completed, telemetry lines, markers,
batch compactions, the engine Hermes used, the tool results the main model got) and, after the
resume, the history Hermes reloaded.
"""

from __future__ import annotations

import json
from pathlib import Path

from hermes_session import drive

ENGINE_CONFIG = {  # README "Context-engine mode"
    "plugins": {"enabled": ["hermes-mlx"]},
    "context": {"engine": "hermes-mlx"},
    "compression": {"micro_compact": True},
}

# Runs inside the Hermes venv: argv = out.json, port, user turns (JSON), resume turns (JSON), think s.
ENGINE_DRIVER = """
    import os, time
    from run_agent import AIAgent
    from hermes_state import SessionDB
    from hermes_cli.oneshot import _load_resume_target

    port = int(sys.argv[2])
    users, resume_users = json.loads(sys.argv[3]), json.loads(sys.argv[4])
    think_s = float(sys.argv[5])
    records = []

    class Tap(logging.Handler):
        def emit(self, record):
            msg = record.getMessage()
            for prefix in ("micro compaction telemetry: ", "batch compaction telemetry: "):
                if msg.startswith(prefix):
                    records.append({"kind": prefix.split()[0], **json.loads(msg[len(prefix):])})

    logging.getLogger("agent.context_compressor").addHandler(Tap())
    fault = os.environ.get("HERMES_MLX_TEST_ENGINE_FAULT")  # the tests' fault injection, in this driver only
    if fault:
        from hermes_mlx.integrations import context_engine as ce

        def boom(*args, **kwargs):
            raise RuntimeError("injected engine fault")

        names = ["clone_for_agent"] if fault == "clone" else ["_compactors", "_record"]
        for name in names:
            setattr(ce.EngineCore, name, boom)
    db = SessionDB()

    def make_agent(session_id=None):
        return AIAgent(base_url=f"http://127.0.0.1:{port}/v1", api_key="stub-key", provider="custom",
                       model="stub-main", enabled_toolsets=["context_engine"], quiet_mode=True, platform="cli",
                       skip_context_files=True, skip_memory=True, skip_background_review=True,
                       session_db=db, session_id=session_id)

    def answers_sent():  # wall-clock ends of the stub's turn answers
        import urllib.request
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/stub/replies", timeout=10) as reply:
            return [r["end"] for r in json.load(reply) if r["kind"] == "main"]

    def ahead_stats():  # the engine's passes computed ahead (this process)
        from hermes_mlx.compactor import ahead
        return ahead.CACHE.stats.as_dict()

    def run_turns(agent, history, texts):
        out = []
        for i, user in enumerate(texts):
            if i and think_s:
                time.sleep(think_s)
            n = len(records)
            started = time.monotonic()
            before = ahead_stats()
            error = final = None
            try:
                result = agent.run_conversation(user, conversation_history=history)
                history = result.get("messages") or history
                final = result.get("final_response")
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
            closed = time.time()
            ends = [t for t in answers_sent() if t <= closed]
            after = ahead_stats()
            cc = agent.context_compressor
            out.append({
                "answer_to_close_s": closed - ends[-1] if ends else None,
                "ahead": {k: after[k] - before.get(k, 0) for k in after},
                "user": user, "error": error, "completed": bool(final) and not error,
                "seconds": time.monotonic() - started, "final": (final or "")[:4200],
                "telemetry": records[n:], "engine": getattr(cc, "name", type(cc).__name__),
                "compressions": getattr(cc, "compression_count", None), "messages": len(history),
                "markers": [m["content"] for m in history if isinstance(m.get("content"), str)
                            and "[CONTEXT COMPACTION" in m["content"]],
            })
            if error:
                break
        return history, out

    agent = make_agent()
    history, turns = run_turns(agent, [], users)
    sid = agent.session_id
    tools = [m.get("content") for m in history if m.get("role") == "tool"]
    resumed = None
    if resume_users:
        rsid, restored, _meta = _load_resume_target(db, sid)
        again = make_agent(rsid)
        history2, turns2 = run_turns(again, restored, resume_users)
        resumed = {"session_id": rsid, "restored": restored, "turns": turns2, "messages": history2}
    emit({"turns": turns, "messages": history, "tools": tools, "session_id": sid, "resumed": resumed,
          "tool_names": sorted(getattr(agent, "_context_engine_tool_names", set()) or [])})
    sys.stdout.flush(); sys.stderr.flush()
    os._exit(0)
"""


def run_engine_session(
    python: Path,
    tmp: Path,
    config: dict,
    users: list[str],
    *,
    resume_users: list[str] = (),
    reply_chars: int = 6000,
    think_s: float = 0.0,
    timeout: float = 3000,
    env: dict | None = None,
) -> tuple[dict, str]:
    driver = ("engine_driver.py", ENGINE_DRIVER)
    args = [json.dumps(users), json.dumps(list(resume_users)), str(think_s)]
    return drive(python, tmp, config, "stub_recall_model.py", reply_chars, driver, args, timeout, env)
