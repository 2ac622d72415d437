"""The one thread that owns all MLX work.

MLX streams are thread-local and the model's arrays live on the worker's stream, so callers on
any thread hand the worker a function and wait for its future. A job whose deadline passes
before it starts is not run; a job whose caller gave up (cancelled) stops at its next check.

Jobs carry a priority: a caller waiting on a request comes before work nobody waits for yet
(a compaction pass computed ahead). The worker always takes the highest-priority queued job,
oldest first within a priority; a job already running is not preempted.
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
from typing import Any

from hermes_mlx.engine.errors import Cancelled, DeadlineExceeded, InvalidRequest

log = logging.getLogger(__name__)

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

    def expired(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def stopped(self) -> bool:
        """This job, or the request it belongs to, was cancelled."""
        return self.cancelled.is_set() or (self.linked is not None and self.linked.is_set())


class Worker:
    def __init__(self, on_idle: Callable[[], None] | None = None, tick_s: float = 5.0):
        self._queue: queue.PriorityQueue[tuple[int, int, Job]] = queue.PriorityQueue()
        self._seq = itertools.count()  # FIFO within a priority (and jobs are never compared)
        self._on_idle = on_idle
        self._tick_s = tick_s
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
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
    ) -> Job:
        rank = priority_rank(priority)
        job = Job(fn, deadline, linked=linked, priority=priority)
        self._ensure_started()
        self._queue.put((rank, next(self._seq), job))
        return job

    def _ensure_started(self) -> None:
        with self._start_lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="hermes-mlx-worker", daemon=True)
                self._thread.start()

    def _loop(self) -> None:
        while True:
            try:
                _, _, job = self._queue.get(timeout=self._tick_s)
            except queue.Empty:
                self._idle()
                continue
            if job.stopped():
                job.future.cancel()  # its waiter gets Cancelled instead of waiting forever
                continue
            if not job.future.set_running_or_notify_cancel():
                continue
            if job.expired():
                job.future.set_exception(DeadlineExceeded("deadline passed before the request could start"))
                continue
            self._current = job
            self._idle_now.clear()
            try:
                job.future.set_result(job.fn(job))
            except BaseException as exc:  # the worker must outlive any one job
                job.future.set_exception(exc)
            finally:
                self._current = None
                self._idle_now.set()
            if self._queue.empty():
                self._idle()

    def quiesce(self, timeout: float = 15.0) -> None:
        """Cancel what is queued, stop the job in hand at its next check, and wait for that.

        Run at interpreter exit: MLX aborts the process ("terminate called without an active
        exception") if it is torn down while this thread is inside a computation. The thread
        itself must live on: ending a thread that used MLX streams aborts the same way.
        """
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
        self._idle_now.wait(timeout)

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
