"""score: how likely the model finds each of a few continuations of one prompt, without decoding.

The summarizer lets the model choose among sentences rather than write one (a small model
copies well and invents cheaply): it asks which numbered sentence states a step's outcome and
reads the answer off the logits of a single prefill. This runs on the engine's one worker
thread, like generate(), and shares its warm model and prefix caches, so a template's fixed
instructions are computed once across calls and across both kinds of request.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path

from hermes_mlx.engine import errors
from hermes_mlx.engine.generate import (
    Request,
    _batch,
    _models,
    submit,
    tokenize,
)
from hermes_mlx.engine.worker import Job, wait


@dataclass
class ScoreResult:
    scores: list[float]  # per candidate: mean log-probability of its tokens after the prompt
    prompt_tokens: int
    cached_tokens: int
    candidate_tokens: int  # tokens run after the prompt (0 when every candidate is one token)
    load_s: float
    ttft_s: float  # prompt read: the whole request, as nothing is decoded
    total_s: float
    model: str
    generation_tokens: int = 0  # nothing is decoded; bench/harness sums it over score and generate calls
    blas_threads: int | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def _check(candidates: list[str]) -> list[str]:
    if not isinstance(candidates, list) or not candidates:
        raise errors.InvalidRequest("candidates must be a non-empty list of strings")
    if not all(isinstance(c, str) and c for c in candidates):
        raise errors.InvalidRequest("every candidate must be a non-empty string")
    return candidates


def _run(job: Job, key: str, path: Path, prefix: Request, candidates: list[str]) -> ScoreResult:
    """On the worker thread: read the prompt once (reusing the cached prefix), then score each
    candidate from that state. One-token candidates cost nothing beyond the prompt."""
    import mlx.core as mx
    from mlx_lm.generate import generation_stream
    from mlx_lm.models.cache import can_trim_prompt_cache, trim_prompt_cache

    start = time.perf_counter()
    loaded, load_s = _models.get(key, path)
    _batch.refit_threads()  # between batch steps a decode step may be in flight: its count stays
    threads = _batch.threads
    tokens = tokenize(prefix, loaded.tokenizer)
    encoded = [list(loaded.tokenizer.encode(c, add_special_tokens=False)) for c in candidates]
    if not all(encoded):
        raise errors.InvalidRequest("a candidate encodes to no tokens")
    longest = max(len(e) for e in encoded)
    if len(tokens) + longest > loaded.context_window:
        raise errors.PromptTooLong(
            f"prompt and candidate are {len(tokens) + longest} tokens, over the "
            f"model's {loaded.context_window}-token window"
        )

    def stop_here() -> None:
        if job.stopped():
            raise errors.Cancelled("the request was cancelled")
        if job.expired():
            raise errors.DeadlineExceeded("the request's deadline passed")

    cache, cached = _models.prompts.fetch(key, loaded.model, tokens)
    step = loaded.prefill_step
    if longest > 1 and not can_trim_prompt_cache(cache):
        raise errors.InvalidRequest("multi-token candidates need a trimmable prompt cache")
    rest, run_after = tokens[cached:], 0
    try:
        with mx.stream(generation_stream):
            while len(rest) > 1:  # the prompt in steps; a cancelled or late request stops between them
                stop_here()
                n = min(step, len(rest) - 1)
                loaded.model(mx.array(rest[:n])[None], cache=cache)
                mx.eval([c.state for c in cache])
                rest = rest[n:]
            logits = loaded.model(mx.array(rest)[None], cache=cache)[0, -1]
            first = logits - mx.logsumexp(logits)
            mx.eval(first)
            scores = []
            for ids in encoded:
                total = first[ids[0]]
                if len(ids) > 1:
                    stop_here()
                    out = loaded.model(mx.array(ids[:-1])[None], cache=cache)[0]
                    logp = out - mx.logsumexp(out, axis=-1, keepdims=True)
                    total = total + logp[mx.arange(len(ids) - 1), mx.array(ids[1:])].sum()
                    trim_prompt_cache(cache, len(ids) - 1)  # back to the prompt for the next one
                    run_after += len(ids) - 1
                scores.append(total / len(ids))
            mx.eval(scores)
        _models.prompts.insert(key, tokens, cache)  # back at the prompt: the next pass shares it
    finally:
        loaded.last_used = time.monotonic()
    elapsed = time.perf_counter() - start
    return ScoreResult(
        scores=[float(s.item()) for s in scores],
        prompt_tokens=len(tokens),
        cached_tokens=cached,
        candidate_tokens=run_after,
        load_s=load_s,
        ttft_s=elapsed,
        total_s=elapsed,
        model=key,
        blas_threads=threads,
    )


def score(
    candidates: list[str],
    prefix: Request,
    *,
    model: str | None = None,
    timeout: float | None = None,
    priority: str | None = None,
) -> ScoreResult:
    """Mean log-probability of each candidate as the model's reply to `prefix` (a prompt string
    or chat messages; the assistant turn is opened as for generate). Blocks until done; bounded
    by `timeout` and by the current request_scope (its cancel flag, deadline and priority)."""
    candidates = _check(candidates)
    return wait(submit(model, timeout, priority, lambda job, key, path: _run(job, key, path, prefix, candidates)))
