"""Batched generation on a tiny model: requests queued together decode in one batch, each with
the text it gets alone; one that is cancelled, fails or is refused leaves the others alone."""

import threading

import pytest

import hermes_mlx  # noqa: F401  (puts the BLAS in place before MLX loads)
from hermes_mlx.engine import batched as batch_mod
from hermes_mlx.engine import errors
from hermes_mlx.engine import generate as engine
from hermes_mlx.engine.generate import engine_state, generate, stream_generate
from hermes_mlx.engine.worker import wait

PROMPTS = [
    [{"role": "user", "content": "The quick brown fox jumps over the lazy dog."}],
    "def main():\n    print('hello world')\n    return 0\n",
    [{"role": "user", "content": "pytest tests/test_engine.py -q failed with AssertionError at line 42 " * 3}],
    "Summary: the agent edited src/app.py and ran the test suite; 3 passed, 1 failed.",
]


def held_worker():
    """Occupy the worker so that what is submitted next queues up and starts together."""
    _, worker = engine_state()
    started, release = threading.Event(), threading.Event()
    worker.submit(lambda job: (started.set(), release.wait(60)))
    assert started.wait(60)
    return release


def run_together(calls):
    """Run the calls on threads while the worker is held, then release it; their results in order."""
    _, worker = engine_state()
    release = held_worker()
    results = [None] * len(calls)

    def run(i, call):
        try:
            results[i] = call()
        except Exception as exc:
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for i, t in enumerate(threads):
        t.start()
        for _ in range(6000):  # queued in this order (a bound on waiting, not a timing assertion)
            if worker._queue.qsize() > i:
                break
            threading.Event().wait(0.01)
    release.set()
    for t in threads:
        t.join(120)
    return results


@pytest.fixture
def batcher(tiny_model):
    generate("warm", model=tiny_model, max_tokens=1)
    engine._batch.max_width = 0
    return engine._batch


def test_greedy_batched_results_equal_each_request_alone(tiny_model, batcher):
    alone = [generate(p, model=tiny_model, max_tokens=24) for p in PROMPTS]
    together = run_together([lambda p=p: generate(p, model=tiny_model, max_tokens=24) for p in PROMPTS])
    assert batcher.max_width >= 2  # they did decode together
    for a, b in zip(alone, together):
        assert not isinstance(b, Exception), b
        assert (b.text, b.finish_reason, b.generation_tokens) == (a.text, a.finish_reason, a.generation_tokens)
        assert b.prompt_tokens == a.prompt_tokens and 0 <= b.cached_tokens < b.prompt_tokens
    assert batcher.members() == 0


def test_each_member_keeps_its_stop_strings_and_stream(tiny_model, batcher):
    full = generate(PROMPTS[0], model=tiny_model, max_tokens=24).text
    if len(full) < 6:
        pytest.skip("the random model stopped too early to pick a stop string")
    stop = full[3:5]
    other = generate(PROMPTS[1], model=tiny_model, max_tokens=24)
    cut, streamed = run_together(
        [
            lambda: generate(PROMPTS[0], model=tiny_model, max_tokens=24, stop=[stop]),
            lambda: list(stream_generate(PROMPTS[1], model=tiny_model, max_tokens=24)),
        ]
    )
    assert batcher.max_width >= 2
    assert cut.finish_reason == "stop" and cut.text == full[: full.find(stop)]
    assert "".join(c.text for c in streamed) == other.text and streamed[-1].result.text == other.text
    assert streamed[-1].result.generation_tokens == other.generation_tokens


def test_a_cancelled_member_leaves_at_once_and_the_others_finish(tiny_model, batcher):
    alone = generate(PROMPTS[2], model=tiny_model, max_tokens=40)
    cancel = threading.Event()
    chunks = []

    def streamer():
        with engine.request_scope(cancel):
            for chunk in stream_generate(PROMPTS[0], model=tiny_model, max_tokens=400):
                chunks.append(chunk)
                cancel.set()  # a client that went away after its first chunk
        return chunks

    stopped, other = run_together([streamer, lambda: generate(PROMPTS[2], model=tiny_model, max_tokens=40)])
    assert batcher.max_width >= 2
    assert other.text == alone.text and other.generation_tokens == alone.generation_tokens
    done = [c.result for c in chunks if c.result is not None]
    assert isinstance(stopped, errors.Cancelled) or (done and done[0].finish_reason == "deadline")
    assert sum(1 for c in chunks if c.result is None) < 40  # it did not decode on to max_tokens
    assert batcher.members() == 0


def test_a_member_that_raises_fails_alone(tiny_model, batcher):
    alone = generate(PROMPTS[1], model=tiny_model, max_tokens=24)

    def bad_emit(text, result):
        raise RuntimeError("the client's queue broke")

    def failing():
        return wait(engine._submit(PROMPTS[0], tiny_model, 24, 0.0, [], None, bad_emit, None))

    failed, other = run_together([failing, lambda: generate(PROMPTS[1], model=tiny_model, max_tokens=24)])
    assert isinstance(failed, RuntimeError) and "queue broke" in str(failed)
    assert other.text == alone.text
    assert batcher.members() == 0


def test_a_prompt_over_the_window_is_refused_without_disturbing_the_batch(tiny_model, batcher):
    alone = generate(PROMPTS[3], model=tiny_model, max_tokens=30)
    too_long, other = run_together(
        [
            lambda: generate(PROMPTS[3], model=tiny_model, max_tokens=30),
            lambda: generate("the quick brown fox " * 400, model=tiny_model, max_tokens=4),
        ]
    )[::-1]
    assert isinstance(too_long, errors.PromptTooLong)
    assert other.text == alone.text and other.generation_tokens == alone.generation_tokens


def test_a_failing_batch_fails_its_members_and_the_engine_keeps_serving(tiny_model, batcher, monkeypatch):
    import importlib

    mlx_generate = importlib.import_module("mlx_lm.generate")

    def broken(self):
        raise MemoryError("out of memory in a decode step")

    monkeypatch.setattr(mlx_generate.BatchGenerator, "next", broken)
    results = run_together([lambda p=p: generate(p, model=tiny_model, max_tokens=8) for p in PROMPTS[:2]])
    assert all(isinstance(r, MemoryError) for r in results)
    monkeypatch.undo()
    assert generate(PROMPTS[0], model=tiny_model, max_tokens=3).generation_tokens >= 1


def test_a_model_reloaded_while_its_batch_runs_leaves_no_member_behind(tiny_model, batcher, monkeypatch):
    from concurrent import futures

    long = generate(PROMPTS[2], model=tiny_model, max_tokens=40)
    if long.generation_tokens < 12:
        pytest.skip("the random model stopped too early to still be decoding at the reload")
    short = generate(PROMPTS[1], model=tiny_model, max_tokens=8)
    models, worker = engine_state()
    inserted = []
    real_insert = models.prompts.insert
    monkeypatch.setattr(
        models.prompts,
        "insert",
        lambda key, tokens, cache: (inserted.append(len(tokens)), real_insert(key, tokens, cache)),
    )
    loads = models.loads
    release = held_worker()
    # Queued in this order: the first request joins a batch, the model is unloaded between two of
    # its steps, and the next request loads a new model object whose batch ids restart at 0.
    first = engine._submit(PROMPTS[2], tiny_model, 40, 0.0, [], None, None, None)
    worker.submit(lambda job: models.unload(tiny_model))
    second = engine._submit(PROMPTS[1], tiny_model, 8, 0.0, [], None, None, None)
    release.set()
    done, _ = futures.wait([first.future, second.future], timeout=120)  # a bound on waiting, not a timing assertion
    assert len(done) == 2, "a member of the unloaded model's batch was lost"
    a, b = first.future.result(), second.future.result()
    assert models.loads == loads + 1
    assert (a.text, a.generation_tokens) == (long.text, long.generation_tokens)
    assert (b.text, b.generation_tokens) == (short.text, short.generation_tokens)
    assert inserted == [b.prompt_tokens + b.generation_tokens]  # the unloaded model's cache was not kept
    wait(worker.submit(lambda job: None))  # the step after the last result has run
    assert not batcher.busy() and not batcher._retired  # the old generator was closed
    assert batcher._gens[tiny_model].model is models.models[tiny_model].model


def test_threads_change_only_once_the_generation_stream_is_drained(tiny_model, batcher, monkeypatch):
    import mlx.core as mx
    from mlx_lm.generate import generation_stream

    from hermes_mlx.engine import score as score_mod

    _, worker = engine_state()
    events = []
    real_sync = mx.synchronize

    def sync(stream=None):
        events.append(("sync", stream is generation_stream))
        return real_sync(stream)

    def fitting(real):
        return lambda: events.append(("fit", None)) or real()

    monkeypatch.setattr(mx, "synchronize", sync)
    monkeypatch.setattr(batch_mod, "fit_threads", fitting(batch_mod.fit_threads))  # the one place threads change
    generate(PROMPTS[0], model=tiny_model, max_tokens=4)
    score_mod.score(["1", "2"], PROMPTS[1], model=tiny_model)
    generate(PROMPTS[1], model=tiny_model, max_tokens=4)
    wait(worker.submit(lambda job: None))  # the step after the last result has run
    fits = [i for i, e in enumerate(events) if e[0] == "fit"]
    assert len(fits) == 3
    # mlx-lm's decode step leaves the next forward in flight on its own stream (async_eval): the
    # default stream's synchronize would not wait for it.
    assert all(events[i - 1] == ("sync", True) for i in fits)
    assert events[-1] == ("sync", True)  # the batch went idle with nothing in flight


def test_a_score_between_batch_steps_keeps_the_batchs_threads(tiny_model, batcher, monkeypatch):
    from hermes_mlx.engine import score as score_mod

    long = generate(PROMPTS[2], model=tiny_model, max_tokens=40)
    if long.generation_tokens < 8:
        pytest.skip("the random model stopped too early to still be decoding at the score")
    _, worker = engine_state()
    fitted = []
    real_fit = batch_mod.fit_threads
    monkeypatch.setattr(batch_mod, "fit_threads", lambda: fitted.append(1) or real_fit())
    key, path = engine.resolve(tiny_model)
    release = held_worker()
    decoding = engine._submit(PROMPTS[2], tiny_model, 40, 0.0, [], None, None, None)
    scored = worker.submit(
        lambda job: (batcher.busy(), len(fitted), score_mod._run(job, key, path, PROMPTS[1], ["1"]), len(fitted))
    )
    release.set()
    busy, before, result, after = wait(scored)
    assert busy  # it ran between two steps of the batch
    assert after == before and result.blas_threads == batcher.threads  # the score fitted no threads
    assert wait(decoding).text == long.text


def test_a_prompt_cache_that_fails_to_keep_an_entry_loses_no_result(tiny_model, batcher, monkeypatch, caplog):
    from concurrent import futures

    alone = generate(PROMPTS[3], model=tiny_model, max_tokens=6)
    models, _ = engine_state()

    def broken(key, tokens, cache):
        raise MemoryError("no room for the entry")

    monkeypatch.setattr(models.prompts, "insert", broken)
    release = held_worker()
    # Two identical requests finish in the same step: the second's response comes after the failure.
    jobs = [engine._submit(PROMPTS[3], tiny_model, 6, 0.0, [], None, None, None) for _ in range(2)]
    release.set()
    done, _ = futures.wait([j.future for j in jobs], timeout=120)  # a bound on waiting, not a timing assertion
    assert len(done) == 2, "a finished member's result was lost"
    assert [j.future.result().text for j in jobs] == [alone.text] * 2
    assert "could not keep a prompt cache entry" in caplog.text
    assert batcher.members() == 0
