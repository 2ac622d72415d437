"""Does reading several prompts together pay on this machine? A compaction pass decodes nothing:
it is one prompt read and the logits after it. This reads 8 prompts of the same length (530
tokens of a shipped session) one after another, in the engine's 256-token steps, and then as one
mlx-lm BatchGenerator batch with one token each (what a batched score would do), on the warm
default model, and prints both times. On the 2-core CPU: 30.7 s and 28.1 s (1.09x); reading
prompts is compute-bound there, so batching passes cannot cut their total. On Metal, try it.

    python benchmarks/bench_batched_prefill.py [--prompts 8] [--tokens 530]
"""

from __future__ import annotations

import argparse
import os
import time

import hermes_mlx  # noqa: F401  (BLAS first)
from hermes_mlx.bench.shipped import shipped_sessions
from hermes_mlx.engine import generate as engine


def read_all(n: int, length: int) -> tuple[float, float]:
    """(seconds one after another, seconds as one batch), run on the engine's worker thread."""
    import mlx.core as mx
    from mlx_lm.generate import BatchGenerator
    from mlx_lm.models.cache import make_prompt_cache

    key, path = engine.resolve(None)
    models, worker = engine.engine_state()

    def job(_job) -> tuple[float, float]:
        loaded, _ = models.get(key, path)
        text = shipped_sessions()[0].read_text(encoding="utf-8")
        step = len(text) // n
        prompts = [loaded.tokenizer.encode(text[i * step : (i + 1) * step])[:length] for i in range(n)]
        model = loaded.model
        started = time.perf_counter()
        for tokens in prompts:
            cache, rest = make_prompt_cache(model), tokens
            while len(rest) > 1:
                k = min(loaded.prefill_step, len(rest) - 1)
                model(mx.array(rest[:k])[None], cache=cache)
                mx.eval([c.state for c in cache])
                rest = rest[k:]
            mx.eval(model(mx.array(rest)[None], cache=cache))
        alone = time.perf_counter() - started
        started = time.perf_counter()
        batch = BatchGenerator(model, stop_tokens=[], prefill_step_size=loaded.prefill_step, prefill_batch_size=n)
        batch.insert(prompts, max_tokens=[1] * n)
        done: set[int] = set()
        while len(done) < n:
            done |= {r.uid for r in batch.next()[1] if r.finish_reason}
        together = time.perf_counter() - started
        batch.close()
        return alone, together

    return engine.wait(worker.submit(job))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--prompts", type=int, default=8)
    ap.add_argument("--tokens", type=int, default=530)
    args = ap.parse_args()
    alone, together = read_all(args.prompts, args.tokens)
    print(
        f"{args.prompts} prompts of {args.tokens} tokens: one after another {alone:.1f} s, "
        f"as one batch {together:.1f} s ({alone / together:.2f}x)",
        flush=True,
    )
    os._exit(0)  # MLX may abort at interpreter teardown (see engine.worker.quiesce)


if __name__ == "__main__":
    main()
