"""engine.score on a tiny random-weight model: the figures equal a plain forward pass's, the
prompt cache is shared with generate(), and a request scope stops it."""

import threading

import pytest

import hermes_mlx  # noqa: F401  (puts the BLAS in place before MLX loads)
from hermes_mlx.engine import errors
from hermes_mlx.engine.generate import (
    engine_state,
    generate,
    request_scope,
    resolve,
    tokenize,
)
from hermes_mlx.engine.score import score

MESSAGES = [
    {"role": "system", "content": "Pick the sentence that states the result."},
    {"role": "user", "content": "1. pytest failed\n2. the fox jumps\nWhich one? Answer with its number."},
]


def reference(model: str, candidates: list[str]) -> list[float]:
    """Mean log-probs from one uncached forward pass per candidate, on the worker thread."""
    models, worker = engine_state()
    key, path = resolve(model)

    def run(job):
        import mlx.core as mx

        loaded, _ = models.get(key, path)
        prompt = tokenize(MESSAGES, loaded.tokenizer)
        out = []
        for c in candidates:
            ids = list(loaded.tokenizer.encode(c, add_special_tokens=False))
            logits = loaded.model(mx.array(prompt + ids)[None])[0]
            logp = logits - mx.logsumexp(logits, axis=-1, keepdims=True)
            rows = mx.arange(len(prompt) - 1, len(prompt) - 1 + len(ids))
            out.append((logp[rows, mx.array(ids)].sum() / len(ids)).item())
        return out

    from hermes_mlx.engine.worker import wait

    return wait(worker.submit(run))


def test_scores_equal_a_plain_forward_pass(tiny_model):
    candidates = ["1", "2", "pytest failed", "the quick brown fox"]
    r = score(candidates, MESSAGES, model=tiny_model)
    assert len(r.scores) == 4 and all(s < 0 for s in r.scores)
    assert r.scores == pytest.approx(reference(tiny_model, candidates), abs=1e-3)
    assert r.prompt_tokens > 0 and r.generation_tokens == 0 and r.candidate_tokens > 0


def test_prefix_cache_is_shared_and_scores_do_not_depend_on_it(tiny_model):
    first = score(["1", "2"], MESSAGES, model=tiny_model)
    again = score(["1", "2"], MESSAGES, model=tiny_model)
    assert again.cached_tokens > 0 and again.scores == pytest.approx(first.scores, abs=1e-4)
    generate(MESSAGES, model=tiny_model, max_tokens=3)  # generate after score reuses the same prefix
    after = score(["2", "1"], MESSAGES, model=tiny_model)
    assert after.cached_tokens > 0 and after.scores == pytest.approx(first.scores[::-1], abs=1e-4)


def test_bad_candidates_and_cancelled_scope(tiny_model):
    for bad in ([], [""], "1", [1]):
        with pytest.raises(errors.InvalidRequest):
            score(bad, MESSAGES, model=tiny_model)
    cancel = threading.Event()
    cancel.set()
    with request_scope(cancel), pytest.raises(errors.Cancelled):
        score(["1"], MESSAGES, model=tiny_model)
    assert score(["1"], MESSAGES, model=tiny_model).scores  # the engine keeps serving


def test_bench_recorder_records_score_calls_and_replays_them_as_probes(tiny_model):
    from hermes_mlx.bench.harness import Recorder, idle_probes

    rec = Recorder(tiny_model)
    r = rec.score(["1", "2"], MESSAGES)
    assert rec.take() == [r] and r.prompt_tokens > 0
    rec.score(["1", "2"], MESSAGES)
    probe = rec.requests[0]
    (p,) = idle_probes(probe, gaps=[0.0], session="s")
    assert p.error is None and p.calls == 1 and p.prompt_tokens > 0 and p.generation_tokens == 0
