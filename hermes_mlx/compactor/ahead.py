"""Answers computed ahead: a compaction request guessed before the caller sends it.

A micro pass's input (the oldest exchange not yet absorbed, the rolling summary) is known a turn
before the pass runs. Whoever can guess it `schedule`s the work here: the Hermes plugin hook
(integrations/plugin.py) for Hermes's own micro pass, or MicroCompactor itself (micro.py) when
`CompactorSettings.ahead` is on. The work runs on one background thread at the engine's
background priority, so any request a caller is waiting for goes first. When the real request
arrives, `take` looks it up by its exact key: a finished answer comes back at once, a running one
is waited for (its remaining engine calls promoted to the foreground), anything else (no guess, a
queued or wrong guess, a failed one) is a miss and the caller answers as usual. A wrong guess
costs only background work.

One entry per session (the guess for its next pass), a few sessions at most, oldest evicted.
"""

from __future__ import annotations

import contextvars
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any

logger = logging.getLogger(__name__)

ENV_SWITCH = "HERMES_MLX_AHEAD"  # "0", "off", "false" or "no" turns computing ahead off
MAX_SESSIONS = 4
BACKGROUND = "background"  # engine.generate's priority for work no caller waits on yet
_current: contextvars.ContextVar[str | None] = contextvars.ContextVar("hermes_mlx_ahead_key", default=None)


def current_key() -> str | None:
    """The key of the guess being computed in this context; None in a caller's own work. Lets
    whoever records engine calls (the bench) give a guess's calls to the pass that used it."""
    return _current.get()


def whole(*, failed: bool, model_calls_skipped: int) -> bool:
    """The one rule for using an answer computed ahead, for micro.py and the provider alike: it
    did not fail, and it made every model call. Waiting at background priority can eat a guess's
    deadline, and code then picks the sentences (still an answer, but not the one the caller's own
    call gives), so the caller runs its own instead."""
    return not failed and not model_calls_skipped


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "off", "false", "no")


@dataclass
class AheadStats:
    scheduled: int = 0  # guesses started
    kept: int = 0  # guesses equal to the one already held for the session (not started again)
    hits: int = 0  # real requests answered from a guess (finished or waited for)
    waited: int = 0  # of the hits, those that waited for a guess still running
    misses: int = 0  # real requests with no usable guess
    discarded: int = 0  # guesses replaced or evicted before use
    errors: int = 0  # guesses that raised, and hook failures

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class _Entry:
    key: str
    fingerprint: Hashable
    future: Future
    cancel: threading.Event = field(default_factory=threading.Event)
    started: threading.Event = field(default_factory=threading.Event)
    priority: Any = None  # engine.generate.Priority: background until a caller waits for it


def _in_background(compute: Callable[[], Any], entry: _Entry) -> Any:
    """The one place that sets the priority: every engine call `compute` makes queues behind the
    calls a caller is waiting for, and stops at its next step once the guess is discarded."""
    from hermes_mlx.engine.generate import request_scope

    entry.started.set()
    if entry.cancel.is_set():
        raise CancelledError("discarded before it started")
    token = _current.set(entry.key)
    try:
        with request_scope(entry.cancel, priority=entry.priority or BACKGROUND):
            return compute()
    finally:
        _current.reset(token)


class AheadCache:
    def __init__(self, max_sessions: int = MAX_SESSIONS):
        self.max_sessions = max_sessions
        self.stats = AheadStats()
        self._entries: OrderedDict[str, _Entry] = OrderedDict()  # session -> its guess, oldest first
        self._lock = threading.RLock()  # re-entered by a done callback run under it (count)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hermes-mlx-ahead")

    def schedule(self, session: str, key: str, fingerprint: Hashable, compute: Callable[[], Any]) -> bool:
        """Start computing `compute()` as the answer to the request whose text is `key` (and whose
        other answer-shaping fields are `fingerprint`); False when that guess is already held."""
        with self._lock:
            held = self._entries.get(session)
            if held is not None and held.key == key and held.fingerprint == fingerprint:
                self._entries.move_to_end(session)
                self.stats.kept += 1
                return False
            if held is not None:
                self._discard(self._entries.pop(session))
            while len(self._entries) >= self.max_sessions:
                self._discard(self._entries.popitem(last=False)[1])
            from hermes_mlx.engine.generate import Priority

            entry = _Entry(key, fingerprint, Future(), priority=Priority(BACKGROUND))
            entry.future = self._pool.submit(_in_background, compute, entry)
            entry.future.add_done_callback(lambda done, entry=entry: self._count_error(done, entry))
            self._entries[session] = entry
            self.stats.scheduled += 1
            return True

    def take(self, *args, **kwargs) -> Any | None:
        """take_status's answer alone: None for a miss."""
        return self.take_status(*args, **kwargs)[0]

    def take_status(
        self,
        key: str,
        fingerprint: Hashable,
        timeout: float | None = None,
        accept: Callable[[Any], bool] = lambda value: True,
    ) -> tuple[Any | None, str]:
        """The answer computed ahead for this exact request, waiting for it if it is running, and how
        it went: "hit" (finished), "waited" (was running) or "miss". A miss (None) is no guess, one
        not started yet, one that failed, was discarded, or that `accept` refused."""
        with self._lock:
            session = next((s for s, e in self._entries.items() if e.key == key and e.fingerprint == fingerprint), None)
            entry = self._entries.pop(session) if session is not None else None
            if entry is not None and not entry.started.is_set() and entry.future.cancel():
                entry = None  # still queued behind another session's guess: the caller's own run is sooner
                self.stats.discarded += 1
        if entry is None:
            self.count("misses")
            return None, "miss"
        running = not entry.future.done()
        if running:
            entry.priority.promote()  # a caller waits now: the guess's remaining calls go first
        try:
            value = entry.future.result(timeout=timeout)
        except Exception:  # failed, cancelled or too slow: the caller's own run answers
            entry.cancel.set()
            self.count("misses")
            return None, "miss"
        if entry.cancel.is_set() or not accept(value):  # discarded while it ran (maybe cut short), or failed
            self.count("misses")
            return None, "miss"
        self.count("hits")
        self.count("waited", int(running))
        return value, "waited" if running else "hit"

    def discard(self, session: str) -> None:
        """Drop the session's guess (its inputs changed under it); a running one stops at its next
        engine step."""
        with self._lock:
            entry = self._entries.pop(session, None)
            if entry is not None:
                self._discard(entry)

    def _discard(self, entry: _Entry) -> None:
        entry.cancel.set()  # a running guess stops at its next engine step
        entry.future.cancel()
        self.stats.discarded += 1

    def _count_error(self, future: Future, entry: _Entry) -> None:
        if future.cancelled() or entry.cancel.is_set() or future.exception() is None:
            return  # a discarded guess that stopped is no error
        self.count("errors")
        logger.info("hermes-mlx: a pass computed ahead failed: %s", future.exception())

    def count(self, name: str, n: int = 1) -> None:
        """Add to one of the stats: callers, the pool's thread and hooks count at once, and clear()
        replaces the stats, so every change is made under the lock."""
        with self._lock:
            setattr(self.stats, name, getattr(self.stats, name) + n)

    def held(self) -> dict[str, str]:
        """session -> the request text guessed for it (for tests and doctor)."""
        with self._lock:
            return {s: e.key for s, e in self._entries.items()}

    def clear(self) -> None:
        """Drop every guess: a queued one never runs (its future is cancelled), a running one stops
        at its next engine step."""
        with self._lock:
            while self._entries:
                self._discard(self._entries.popitem(last=False)[1])
            self.stats = AheadStats()


CACHE = AheadCache()
# The pool's thread is no daemon: at exit concurrent.futures joins it in threading._shutdown, before
# atexit handlers run, and it would first run every queued guess (each a whole summarizer pass).
# Handlers registered here run before that join (last registered first), so nothing is left to run.
threading._register_atexit(CACHE.clear)
