"""The one thread that owns all MLX work.

MLX streams are thread-local and the model's arrays live on the worker's stream, so callers on
any thread hand the worker a function and wait for its future. A job whose deadline passes
before it starts is not run; a job whose caller gave up (cancelled) stops at its next check.

A job may hand its request to a stepper (the batch scheduler, engine/batched.py) and return
DEFERRED: the stepper then owns the job's future. While the stepper has work, the worker
alternates: one queued job, one step, so a request that arrives mid-batch joins at the next step.

Jobs carry a priority: a caller waiting on a request comes before work nobody waits for yet
(a compaction pass computed ahead). The worker always takes the highest-priority queued job,
oldest first within a priority; a job already running is not preempted. A queued background job
whose Priority holder is promoted is queued again at foreground rank; whichever of its two
entries the worker reaches second is skipped.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent import futures
from concurrent.futures import CancelledError, Future
from dataclasses import dataclass, field
from typing import Any, Protocol

from hermes_mlx.engine.errors import Cancelled, DeadlineExceeded, InvalidRequest

log = logging.getLogger(__name__)

DEFERRED = object()  # a job's return value: the stepper will settle its future


class Stepper(Protocol):
    def busy(self) -> bool: ...
    def step(self) -> None: ...
    def cancel_all(self) -> None: ...


PRIORITIES = {"foreground": 0, "background": 1}  # lower runs first


def priority_rank(priority: str) -> int:
    try:
        return PRIORITIES[priority]
    except (KeyError, TypeError):
        raise InvalidRequest(f"priority must be one of {', '.join(PRIORITIES)}, got {priority!r}") from None


@dataclass
class Job:
    fn: Callable[[Job], Any]
    deadline: float | None = None  # time.monotonic() value
    future: Future = field(default_factory=Future)
    cancelled: threading.Event = field(default_factory=threading.Event)
    linked: threading.Event | None = None  # a whole request's cancel flag (generate.request_scope)
    priority: str = "foreground"
    started: bool = False  # the worker took it (a promoted job has a second queue entry)

    def expired(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def stopped(self) -> bool:
        """This job, or the request it belongs to, was cancelled."""
        return self.cancelled.is_set() or (self.linked is not None and self.linked.is_set())


class Priority:
    """A request's priority that may change while it runs: work computed ahead starts in the
    background and is promoted once a caller starts waiting for it. Read at each engine call's
    submit; promote() also moves the calls already queued ahead of other background work."""

    def __init__(self, value: str = "background") -> None:
        priority_rank(value)
        self.value = value
        self._lock = threading.Lock()
        self._queued: list[tuple[Worker, Job]] = []  # its background jobs, perhaps still queued

    def promote(self) -> None:
        with self._lock:
            self.value = "foreground"
            queued, self._queued = self._queued, []
        for worker, job in queued:
            worker.promote(job)

    def watch(self, worker: Worker, job: Job) -> None:
        """Remember a job submitted at this holder's background rank, to move it on promote()."""
        with self._lock:
            if self.value != "foreground":
                self._queued = [(w, j) for w, j in self._queued if not j.future.done()] + [(worker, job)]
                return
        worker.promote(job)  # promoted between reading the priority and queueing the job


class Worker:
    def __init__(self, on_idle: Callable[[], None] | None = None, tick_s: float = 5.0, stepper: Stepper | None = None):
        self.stepper = stepper
        self._queue: queue.PriorityQueue[tuple[int, int, Job]] = queue.PriorityQueue()
        self._seq = itertools.count()  # FIFO within a priority (and jobs are never compared)
        self._on_idle = on_idle
        self._tick_s = tick_s
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()  # also orders submit against quiesce's closing
        self._closed = False  # quiesced (interpreter exit): later jobs are cancelled, never run
        self._current: Job | None = None
        self._idle_now = threading.Event()
        self._idle_now.set()

    @property
    def thread(self) -> threading.Thread | None:
        return self._thread

    def submit(
        self,
        fn: Callable[[Job], Any],
        deadline: float | None = None,
        linked: threading.Event | None = None,
        priority: str = "foreground",
        holder: Priority | None = None,
    ) -> Job:
        """Queue `fn`; `holder` is the Priority the call's priority was read from, if any."""
        rank = priority_rank(priority)
        job = Job(fn, deadline, linked=linked, priority=priority)
        with self._start_lock:
            if self._closed:  # a daemon thread's call during teardown: its waiter gets Cancelled
                job.cancelled.set()
                job.future.cancel()
                return job
            self._ensure_started()
            self._queue.put((rank, next(self._seq), job))
        if holder is not None and rank > PRIORITIES["foreground"]:
            holder.watch(self, job)
        return job

    def promote(self, job: Job) -> None:
        """Queue a background job again at foreground rank, behind the foreground jobs queued now
        (its caller began waiting now); its background entry is skipped when reached."""
        with self._start_lock:
            if self._closed or job.started or job.future.done() or job.priority == "foreground":
                return
            job.priority = "foreground"
            self._queue.put((PRIORITIES["foreground"], next(self._seq), job))

    def _ensure_started(self) -> None:
        """Called with _start_lock held."""
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._loop, name="hermes-mlx-worker", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while True:
            stepping = self._stepping()
            try:
                _, _, job = self._queue.get_nowait() if stepping else self._queue.get(timeout=self._tick_s)
            except queue.Empty:
                job = None
                if not stepping:
                    self._idle()
                    continue
            if job is not None:
                self._run(job)
            if self._stepping():
                self._step()
            elif self._queue.empty():
                self._idle()

    def _stepping(self) -> bool:
        return self.stepper is not None and self.stepper.busy()

    def _run(self, job: Job) -> None:
        if job.started:
            return  # a promoted job's other queue entry
        job.started = True
        if job.stopped():
            job.future.cancel()  # its waiter gets Cancelled instead of waiting forever
            return
        if not job.future.set_running_or_notify_cancel():
            return
        if job.expired():
            job.future.set_exception(DeadlineExceeded("deadline passed before the request could start"))
            return
        self._current = job
        self._idle_now.clear()
        try:
            result = job.fn(job)
            if result is not DEFERRED:
                job.future.set_result(result)
        except BaseException as exc:  # the worker must outlive any one job
            job.future.set_exception(exc)
        finally:
            self._current = None
            self._idle_now.set()

    def _step(self) -> None:
        self._idle_now.clear()
        try:
            self.stepper.step()
        except BaseException:  # the stepper settles its members' futures; the worker lives on
            log.exception("hermes-mlx: a batch step failed")
        finally:
            self._idle_now.set()

    def quiesce(self, timeout: float = 15.0) -> None:
        """Refuse later jobs, cancel what is queued, stop the job in hand at its next check, and
        wait for that.

        Run at interpreter exit: MLX aborts the process ("terminate called without an active
        exception") if it is torn down while this thread is inside a computation. The thread
        itself must live on: ending a thread that used MLX streams aborts the same way.
        """
        with self._start_lock:
            self._closed = True
        while True:
            try:
                _, _, job = self._queue.get_nowait()
            except queue.Empty:
                break
            job.cancelled.set()
            job.future.cancel()
        current = self._current
        if current is not None:
            current.cancelled.set()
        if self.stepper is not None:
            self.stepper.cancel_all()  # members leave the batch at its next step
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self._idle_now.wait(max(0.0, end - time.monotonic())) and not self._stepping():
                return
            time.sleep(0.01)

    def _idle(self) -> None:
        if self._on_idle is None:
            return
        try:
            self._on_idle()
        except Exception:
            log.exception("hermes-mlx: idle housekeeping failed")


def wait(job: Job, grace_s: float = 30.0, poll_s: float = 0.25) -> Any:
    """Wait for a job's result; past its deadline (plus grace for the step in flight) give up.
    A job cancelled while still queued ends the wait at once (Cancelled)."""
    end = None if job.deadline is None else job.deadline + grace_s
    try:
        while True:
            left = None if end is None else end - time.monotonic()
            if left is not None and left <= 0:
                raise TimeoutError
            done, _ = futures.wait([job.future], timeout=poll_s if left is None else min(poll_s, left))
            if done:
                return job.future.result()
            if job.stopped() and job.future.cancel():
                raise CancelledError
    except DeadlineExceeded:
        job.cancelled.set()
        raise
    except TimeoutError:
        job.cancelled.set()
        raise DeadlineExceeded("the engine did not answer before the deadline") from None
    except CancelledError:
        job.cancelled.set()
        raise Cancelled("the request was cancelled") from None
    except BaseException:
        job.cancelled.set()
        raise
