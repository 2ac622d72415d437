"""Worker priorities: a job a caller waits for runs before background work queued earlier."""

import threading

import pytest

import hermes_mlx  # noqa: F401  (puts the BLAS in place before MLX loads)
from hermes_mlx.engine import errors
from hermes_mlx.engine import score as score_mod
from hermes_mlx.engine.generate import Priority, engine_state, generate, job_bounds, request_scope
from hermes_mlx.engine.score import score
from hermes_mlx.engine.worker import Worker, wait


def hold(worker):
    """Occupy the worker until the returned event is set."""
    started, release = threading.Event(), threading.Event()
    job = worker.submit(lambda job: (started.set(), release.wait(60)))
    assert started.wait(60)
    return release, job


def until_queued(worker, n):
    import time

    for _ in range(6000):  # a bound on waiting, not a timing assertion
        if worker._queue.qsize() >= n:
            return
        time.sleep(0.01)
    raise AssertionError("jobs never reached the queue")


def start_in_turn(worker, threads):
    """Start each thread only once the one before it is queued, so the queue's order is the threads' order."""
    for n, t in enumerate(threads, 1):
        t.start()
        until_queued(worker, n)


def finish(release, first, threads):
    release.set()
    for t in threads:
        t.join(120)
    wait(first)


@pytest.fixture
def tokenized(tiny_model, monkeypatch):
    """The engine's worker, warm, and the score requests it tokenizes, in the order it runs them."""
    _, worker = engine_state()
    score(["1"], "warm", model=tiny_model)
    seen = []
    real = score_mod.tokenize

    def spy(request, tokenizer):
        if threading.current_thread() is worker.thread:
            seen.append(request)
        return real(request, tokenizer)

    monkeypatch.setattr(score_mod, "tokenize", spy)
    return worker, seen


def test_foreground_runs_before_earlier_background_fifo_within_a_priority():
    worker = Worker()
    release, first = hold(worker)
    order = []
    jobs = [
        worker.submit(lambda job, n=n: order.append(n), priority=p)
        for n, p in [("bg1", "background"), ("fg1", "foreground"), ("bg2", "background"), ("fg2", "foreground")]
    ]
    release.set()
    for job in [first, *jobs]:
        wait(job)
    assert order == ["fg1", "fg2", "bg1", "bg2"]


def test_a_bad_priority_is_a_clear_error(tiny_model):
    with pytest.raises(errors.InvalidRequest, match="priority"):
        Worker().submit(lambda job: None, priority="urgent")
    with pytest.raises(errors.InvalidRequest, match="priority"):
        generate("x", model=tiny_model, max_tokens=1, priority="later")
    with pytest.raises(errors.InvalidRequest, match="priority"), request_scope(threading.Event(), priority="soon"):
        pass


def test_engine_calls_take_their_priority_from_the_keyword_or_the_scope(tiny_model, tokenized):
    worker, seen = tokenized
    release, first = hold(worker)
    results = {}

    def call(name, **kw):
        results[name] = score(["1"], name, model=tiny_model, **kw)

    def in_scope(name):
        with request_scope(threading.Event(), priority="background"):
            call(name)

    threads = [
        threading.Thread(target=target, args=(name,), kwargs=kw)
        for name, target, kw in [
            ("ahead-1", call, {"priority": "background"}),
            ("ahead-2", in_scope, {}),
            ("waited-on", call, {}),
        ]
    ]
    start_in_turn(worker, threads)
    finish(release, first, threads)
    assert set(results) == {"ahead-1", "ahead-2", "waited-on"}
    assert seen == ["waited-on", "ahead-1", "ahead-2"]


def test_a_priority_holder_is_read_at_each_call():
    holder = Priority("background")
    with request_scope(threading.Event(), priority=holder):
        assert job_bounds(None, None)[2] == "background"
        holder.promote()
        assert job_bounds(None, None)[2] == "foreground"
        assert job_bounds(None, "background")[2] == "background"  # a call's own keyword still wins
    with pytest.raises(errors.InvalidRequest, match="priority"):
        Priority("later")


def test_a_promoted_request_queues_ahead_of_background_work_queued_earlier(tiny_model, tokenized):
    worker, seen = tokenized
    promoted, kept = Priority("background"), Priority("background")
    promoted.promote()  # a caller waits on this one now
    release, first = hold(worker)

    def in_scope(name, holder):
        with request_scope(threading.Event(), priority=holder):
            score(["1"], name, model=tiny_model)

    threads = [
        threading.Thread(target=in_scope, args=args) for args in [("still-ahead", kept), ("waited-on", promoted)]
    ]
    start_in_turn(worker, threads)
    finish(release, first, threads)
    assert seen == ["waited-on", "still-ahead"]


def test_a_quiesced_worker_refuses_later_jobs():
    """At exit a daemon thread mid-summary may still submit: its call is cancelled, never run."""
    worker = Worker()
    wait(worker.submit(lambda job: None))
    worker.quiesce(timeout=5)
    ran = []
    job = worker.submit(lambda job: ran.append(1))
    assert job.future.cancelled()
    with pytest.raises(errors.Cancelled):
        wait(job)
    assert worker._queue.empty() and not ran


def test_promoting_a_holder_moves_its_queued_job_ahead_of_later_foreground_work():
    worker = Worker()
    release, first = hold(worker)
    order = []
    holder = Priority("background")
    ahead = worker.submit(lambda job: order.append("ahead"), priority="background", holder=holder)
    before = worker.submit(lambda job: order.append("fg-before"))
    holder.promote()  # a caller starts waiting for the work computed ahead
    after = worker.submit(lambda job: order.append("fg-after"))
    release.set()
    for job in [first, ahead, before, after]:
        wait(job)
    wait(worker.submit(lambda job: None, priority="background"))  # past the job's first queue entry too
    assert order == ["fg-before", "ahead", "fg-after"]  # and it ran once


def test_a_promoted_scope_moves_its_queued_engine_call_ahead(tiny_model, tokenized):
    worker, seen = tokenized
    holder = Priority("background")
    release, first = hold(worker)

    def ahead():
        with request_scope(threading.Event(), priority=holder):
            score(["1"], "ahead", model=tiny_model)

    threads = [
        threading.Thread(target=ahead),
        threading.Thread(target=score, args=(["1"], "fg-before"), kwargs={"model": tiny_model}),
    ]
    start_in_turn(worker, threads)
    holder.promote()  # its call is queued already: it moves, not only the calls still to come
    threads.append(threading.Thread(target=score, args=(["1"], "fg-after"), kwargs={"model": tiny_model}))
    threads[-1].start()
    for _ in range(6000):  # a bound on waiting, not a timing assertion
        if len({id(entry[2]) for entry in list(worker._queue.queue)}) >= 3:  # a promoted job has two entries
            break
        threading.Event().wait(0.01)
    finish(release, first, threads)
    assert seen == ["fg-before", "ahead", "fg-after"]
