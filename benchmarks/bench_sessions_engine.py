"""Many sessions on one engine: prefix reuse when sessions alternate, and batched decoding.

(a) Prefix reuse (cached / prompt tokens) for 4 sessions taking turns vs 1 session alone: each
    session is a chat that grows by one exchange per turn.
(b) 8 generate requests at once (threads) vs the same 8 one after another, max_tokens 32.

Uses the default model when it is present locally (HERMES_MLX_HOME), else a tiny random model.
    .venv/bin/python benchmarks/bench_sessions_engine.py [--turns 6] [--model PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path

import hermes_mlx  # noqa: F401  (puts the BLAS in place before MLX loads)
from hermes_mlx.engine import generate as engine
from hermes_mlx.engine.prompt_cache import PromptCache

TOPICS = ["a failing pytest run in src/app.py", "a slow SQL query", "a flaky CI job", "a memory leak in a worker"]


def pick_model(explicit: str | None) -> str:
    if explicit:
        return explicit
    try:
        from hermes_mlx.engine.models import resolve_model

        return str(resolve_model(None, fetch=False))
    except Exception:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
        from tiny import build_tiny_model

        return str(build_tiny_model(Path("/tmp/hermes-mlx-bench-tiny"), seed=0))


def fresh_cache() -> None:
    models, _ = engine.engine_state()
    models.prompts = PromptCache(models.prompts.max_bytes)


def run_sessions(model: str, n_sessions: int, turns: int) -> dict:
    fresh_cache()
    chats = [
        [{"role": "system", "content": f"You help an engineer with {TOPICS[i]}. Session {i}. Answer briefly."}]
        for i in range(n_sessions)
    ]
    prompt = cached = 0
    for turn in range(turns):
        for i, chat in enumerate(chats):  # round robin: each session's turn evicts nothing it needs
            chat.append({"role": "user", "content": f"Turn {turn}: what should I check next about {TOPICS[i]}?"})
            r = engine.generate(chat, model=model, max_tokens=16)
            chat.append({"role": "assistant", "content": r.text})
            if turn > 0:  # the first turn has nothing to reuse in either scenario
                prompt += r.prompt_tokens
                cached += r.cached_tokens
    stats = engine.prompt_cache_stats().to_dict()
    return {"sessions": n_sessions, "turns": turns, "reuse": round(cached / prompt, 3), "cache": stats}


def run_concurrency(model: str, n: int, max_tokens: int) -> dict:
    prompts = [
        [{"role": "user", "content": f"Request {i}: summarize {TOPICS[i % 4]} in a few lines. " * 4}] for i in range(n)
    ]
    fresh_cache()
    t = time.perf_counter()
    seq = [engine.generate(p, model=model, max_tokens=max_tokens) for p in prompts]
    sequential_s = time.perf_counter() - t
    fresh_cache()
    results: list = [None] * n
    engine._batch.max_width = 0

    def run(i):
        results[i] = engine.generate(prompts[i], model=model, max_tokens=max_tokens)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    concurrent_s = time.perf_counter() - t
    same = sum(a.text == b.text for a, b in zip(seq, results))
    return {
        "requests": n,
        "max_tokens": max_tokens,
        "sequential_s": round(sequential_s, 3),
        "concurrent_s": round(concurrent_s, 3),
        "ratio": round(concurrent_s / sequential_s, 3),
        "tokens_sequential": sum(r.generation_tokens for r in seq),
        "tokens_concurrent": sum(r.generation_tokens for r in results),
        "same_text": f"{same}/{n}",
        "batch_width": engine._batch.max_width,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model")
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--requests", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=32)
    args = parser.parse_args()
    model = pick_model(args.model)
    engine.generate("warm up", model=model, max_tokens=2)
    one = run_sessions(model, 1, args.turns)
    four = run_sessions(model, 4, args.turns)
    out = {
        "model": model,
        "reuse_1_session": one,
        "reuse_4_sessions": four,
        "reuse_4_over_1": round(four["reuse"] / one["reuse"], 3) if one["reuse"] else None,
        "concurrency": run_concurrency(model, args.requests, args.max_tokens),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
