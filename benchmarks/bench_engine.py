"""Engine figures for issue 2: prompt and decode speed, prefix reuse, warm-call overhead,
cold start and peak memory, on the embedded default model (or --model).

    python benchmarks/bench_engine.py [--model NAME] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

import hermes_mlx  # noqa: F401  (BLAS first)

FILLER = (
    "The agent opened src/app/server.py, read the request handler, ran `pytest tests/test_api.py -q` "
    "and saw 3 failures: test_login_expired, test_upload_large and test_retry_backoff. "
)


def words_to_tokens(count_tokens, target: int, prefix: str = "") -> str:
    text = prefix
    while count_tokens(text) < target:
        text += FILLER
    return text


def cold_start(model: str | None) -> float:
    code = (
        "import time; t=time.perf_counter(); import hermes_mlx; "
        "from hermes_mlx.engine.generate import generate; "
        f"generate('hi', model={model!r}, max_tokens=1); print(time.perf_counter()-t)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def bare_loop_s(model_obj, tokens: list[int], n: int) -> float:
    import mlx.core as mx
    from mlx_lm.generate import generate_step

    start = time.perf_counter()
    for i, _ in enumerate(generate_step(mx.array(tokens), model_obj, max_tokens=n)):
        if i + 1 >= n:
            break
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default=None)
    parser.add_argument("--prompt-tokens", type=int, default=1600)
    parser.add_argument("--decode-tokens", type=int, default=200)
    parser.add_argument("--prefix-tokens", type=int, default=520)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    from hermes_mlx.engine.generate import count_tokens, engine_state, generate, resolve

    figures: dict = {"cold_start_s": cold_start(args.model)}

    def count(text: str) -> int:
        return count_tokens(text, model=args.model)

    # 1. Prompt and decode speed: a 1,600-token prompt, 200 tokens decoded (EOS ignored by
    # asking for a continuation of raw text, which this model rarely ends early).
    prompt = words_to_tokens(count, args.prompt_tokens)
    generate("warm up", model=args.model, max_tokens=2)
    r = generate(prompt, model=args.model, max_tokens=args.decode_tokens)
    figures["speed"] = {
        k: getattr(r, k)
        for k in (
            "prompt_tokens",
            "cached_tokens",
            "generation_tokens",
            "prompt_tps",
            "generation_tps",
            "ttft_s",
            "total_s",
            "peak_memory_mb",
            "finish_reason",
        )
    }

    # 2. Prefix reuse: two requests sharing a 500-token instruction prefix.
    shared = words_to_tokens(count, args.prefix_tokens, prefix="Instructions: summarize. ")
    first = generate(shared + "Exchange A: the build passed.", model=args.model, max_tokens=8)
    generate("something else entirely", model=args.model, max_tokens=1)  # no help from the last call
    generate(shared + "Exchange A: the build passed.", model=args.model, max_tokens=8)
    second = generate(shared + "Exchange B: 2 tests failed.", model=args.model, max_tokens=8)
    figures["prefix_reuse"] = {
        "shared_prefix_tokens": count(shared),
        "second_cached_tokens": second.cached_tokens,
        "first_ttft_s": first.ttft_s,
        "second_ttft_s": second.ttft_s,
    }

    # 3. Warm-call overhead: engine.generate vs a bare generate_step loop on the same weights,
    # on short prompts so that model time is small and the fixed costs show.
    models, worker = engine_state()
    key, _ = resolve(args.model)
    loaded = models.models[key]
    engine_ms, bare_ms = [], []
    for i in range(15):
        text = f"Step {i}: ran the tests again."
        t = time.perf_counter()
        res = generate(text, model=args.model, max_tokens=4)
        engine_ms.append((time.perf_counter() - t) * 1000)
        tokens = loaded.tokenizer.encode(text)
        n = max(res.generation_tokens, 1)
        # On the worker thread too: the model's arrays belong to its stream.
        t = time.perf_counter()
        worker.submit(
            lambda job, rest=tokens[res.cached_tokens :], n=n: bare_loop_s(loaded.model, rest, n)
        ).future.result()
        bare_ms.append((time.perf_counter() - t) * 1000)
    figures["warm_call_overhead_ms"] = {
        "median": statistics.median(engine_ms) - statistics.median(bare_ms),
        "engine_median_ms": statistics.median(engine_ms),
        "bare_median_ms": statistics.median(bare_ms),
    }
    figures["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    figures["weights"] = loaded.weights
    figures["weights_mb"] = loaded.nbytes / 1e6

    print(json.dumps(figures, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2)


if __name__ == "__main__":
    main()
