"""Concurrent requests through `hermes-mlx serve`: 8 chat completions at once vs the same 8 one
after another (max_tokens 32, greedy), each phase on a freshly started server so that neither
finds the other's prompts in the prefix cache. Reports wall time, per-request latency, whether
each answer is the same in both phases, and the batch width the server saw (/health "batch").

Uses the default model when it is present locally (HERMES_MLX_HOME, else the test home if it has
one), else a tiny random model.
    .venv/bin/python benchmarks/bench_serve_concurrency.py [--requests 8] [--max-tokens 32] [--model PATH]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEST_HOME = ROOT / ".hermes-mlx-test-home"
sys.path.insert(0, str(ROOT / "tests"))  # the tests' helpers: serve as a process, a tiny model
from serve_process import start_server, stop_server  # noqa: E402

TOPICS = ["a failing pytest run in src/app.py", "a slow SQL query", "a flaky CI job", "a memory leak in a worker"]
WAIT_S = 300


def pick_model(explicit: str | None) -> str | None:
    """None for the default model when it is here; else a tiny random model's folder."""
    if explicit:
        return explicit
    try:
        from hermes_mlx.engine.models import resolve_model

        resolve_model(None, fetch=False)
        return None
    except Exception:
        from tiny import build_tiny_model

        return str(build_tiny_model(Path("/tmp/hermes-mlx-bench-tiny"), seed=0))


def call(port: int, method: str, path: str, body: dict | None = None) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_S)
    conn.request(method, path, body=json.dumps(body) if body else None, headers={"Content-Type": "application/json"})
    reply = conn.getresponse()
    data = json.loads(reply.read())
    conn.close()
    if reply.status != 200:
        raise SystemExit(f"{path}: {reply.status} {data}")
    return data


def requests(n: int, max_tokens: int) -> list[dict]:
    return [
        {
            "model": "hermes-mlx",
            "max_tokens": max_tokens,
            "temperature": 0,
            "messages": [{"role": "user", "content": f"Request {i}: summarize {TOPICS[i % 4]} in a few lines. " * 4}],
        }
        for i in range(n)
    ]


def phase(model: str | None, bodies: list[dict], together: bool) -> dict:
    """One fresh server: warm it on an unrelated prompt, then send the requests."""
    proc, port = start_server(*(["--model", model] if model else []))
    try:
        call(
            port,
            "POST",
            "/v1/chat/completions",
            {"messages": [{"role": "user", "content": "warm up"}], "max_tokens": 2},
        )
        before = call(port, "GET", "/health")["batch"]
        out: list = [None] * len(bodies)

        def one(i: int) -> None:
            t = time.perf_counter()
            reply = call(port, "POST", "/v1/chat/completions", bodies[i])
            out[i] = (time.perf_counter() - t, reply)

        t = time.perf_counter()
        if together:
            threads = [threading.Thread(target=one, args=(i,)) for i in range(len(bodies))]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
        else:
            for i in range(len(bodies)):
                one(i)
        wall = time.perf_counter() - t
        after = call(port, "GET", "/health")
    finally:
        stop_server(proc)
    latencies = [lat for lat, _ in out]
    return {
        "wall_s": round(wall, 3),
        "latency_p50_s": round(statistics.median(latencies), 3),
        "latency_max_s": round(max(latencies), 3),
        "completion_tokens": sum(r["usage"]["completion_tokens"] for _, r in out),
        "batch_max_members": after["batch"]["max_members"],
        "joined": after["batch"]["joined"] - before["joined"],
        "texts": [r["choices"][0]["message"]["content"] for _, r in out],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model")
    parser.add_argument("--requests", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=32)
    args = parser.parse_args()
    if "HERMES_MLX_HOME" not in os.environ and (TEST_HOME / "models").is_dir():
        os.environ["HERMES_MLX_HOME"] = str(TEST_HOME)
    model = pick_model(args.model)
    bodies = requests(args.requests, args.max_tokens)
    sequential = phase(model, bodies, together=False)
    concurrent = phase(model, bodies, together=True)
    same = sum(a == b for a, b in zip(sequential.pop("texts"), concurrent.pop("texts")))
    print(
        json.dumps(
            {
                "model": model or "default",
                "home": os.environ.get("HERMES_MLX_HOME"),
                "cores": os.cpu_count(),
                "requests": args.requests,
                "max_tokens": args.max_tokens,
                "sequential": sequential,
                "concurrent": concurrent,
                "concurrent_over_sequential": round(concurrent["wall_s"] / sequential["wall_s"], 3),
                "same_text": f"{same}/{args.requests}",
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
