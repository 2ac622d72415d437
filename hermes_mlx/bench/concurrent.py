"""Many sessions on one engine: `sessions-N` replays N sessions at once, one thread each, and
`alternating-N` lets N replays take turns, one agent turn each in rotation, as a gateway's
sessions would reach one auxiliary model.

Each runs after the same N replays one after another (`sequential`), which is the baseline for
every figure: its wall time is what N sessions cost with no overlap, its pass p50 is a pass on an
otherwise idle engine, and its prefix reuse is each session's alone (nobody between its passes
to evict its cached prefix). The engine is reset before each phase, so neither inherits the
other's cached prefixes.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from hermes_mlx.bench.memory import MemoryWatch
from hermes_mlx.summarizer.api import Message

MAX_SESSIONS = 64  # twice the most the engine's batch decodes together
KINDS = {"sessions": "concurrent", "alternating": "alternating"}  # scenario kind -> variant beside sequential

# (name, messages, variant, before_pass, on_turn) -> harness.Replay
ReplayOne = Callable[[str, list[Message], str, Callable | None, Callable | None], object]


def parse(scenario: str) -> tuple[str, int] | None:
    """("sessions", 8) for `sessions-8`; None for any other scenario. ValueError past
    MAX_SESSIONS: each session is a thread and a transcript in memory, so `sessions-100000`
    would exhaust the machine before the first pass instead of measuring anything."""
    kind, _, n = scenario.partition("-")
    if not (kind in KINDS and n.isdigit() and int(n) > 0):
        return None
    if int(n) > MAX_SESSIONS:
        raise ValueError(f"{scenario}: at most {MAX_SESSIONS} sessions at once")
    return kind, int(n)


def stamp(messages: list[Message], mark: str) -> list[Message]:
    """Every non-system text starts with `mark`, so a second copy of one session shares no
    prefix with the first beyond the summarizer's own instructions, as two sessions would not."""
    out = []
    for m in messages:
        if m.get("role") != "system" and isinstance(m.get("content"), str):
            m = {**m, "content": mark + m["content"]}
        out.append(m)
    return out


def pick(pool: list[tuple[str, list[Message]]], n: int) -> list[tuple[str, list[Message]]]:
    """N sessions from the pool in turn; once the pool runs out, copies, stamped apart."""
    runs = []
    for i in range(n):
        name, messages = pool[i % len(pool)]
        copy = i // len(pool)
        runs.append((f"{name}#{copy + 1}", stamp(messages, f"[copy {copy + 1}] ")) if copy else (name, messages))
    return runs


class Turnstile:
    """Replays that take turns: the party at the head runs one agent turn, then goes to the back.
    A party that finished, or failed, leaves, so nobody waits on it."""

    def __init__(self, n: int) -> None:
        self._cond = threading.Condition()
        self._order = deque(range(n))

    def enter(self, i: int) -> None:
        with self._cond:
            self._cond.wait_for(lambda: i not in self._order or self._order[0] == i)

    def end_turn(self, i: int) -> None:
        with self._cond:
            if self._order and self._order[0] == i:
                self._order.rotate(-1)
                self._cond.notify_all()

    def leave(self, i: int) -> None:
        with self._cond:
            if i in self._order:
                self._order.remove(i)
                self._cond.notify_all()


def cache_stats() -> dict | None:
    """The engine's prefix-cache counters, where the engine keeps them."""
    try:
        from hermes_mlx.engine import generate as engine

        stats = getattr(engine, "prompt_cache_stats", None)
        if stats is None:
            return None
        s = stats()
        return s.to_dict() if hasattr(s, "to_dict") else dict(s)
    except Exception:  # a figure the bench can do without
        return None


def cache_delta(before: dict | None, after: dict | None) -> dict | None:
    """Hits, misses and evictions during a phase; entries and bytes at its end."""
    if before is None or after is None:
        return None
    out = {k: after[k] - before.get(k, 0) for k in ("hits", "misses", "evictions") if k in after}
    out.update({k: after[k] for k in ("entries", "bytes") if k in after})
    return out


@dataclass
class Phase:
    """One run of N sessions: one after another, at once, or alternating."""

    scenario: str
    variant: str  # sequential | concurrent | alternating
    sessions: int
    wall_s: float
    passes: int
    memory: dict
    prompt_cache: dict | None = None
    per_session: dict[str, dict] = field(default_factory=dict)  # name -> wall_s, passes, error

    def to_dict(self) -> dict:
        return asdict(self)


def run_phase(scenario: str, variant: str, runs: list[tuple[str, list[Message]]], replay_one: ReplayOne) -> Phase:
    """The replays of `runs`, timed as a whole and each; a replay that raises is an error in its
    row, and the others go on."""
    gate = Turnstile(len(runs)) if variant == "alternating" else None
    per: dict[str, dict] = {}
    passes: list = []

    def one(i: int, name: str, messages: list[Message]) -> None:
        started, error, done = time.monotonic(), None, []
        try:
            replay = replay_one(
                name,
                messages,
                variant,
                (lambda: gate.enter(i)) if gate else None,
                (lambda _n, _t: gate.end_turn(i)) if gate else None,
            )
            done = replay.passes
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
        finally:
            if gate:
                gate.leave(i)
        passes.extend(done)
        per[name] = {"wall_s": round(time.monotonic() - started, 3), "passes": len(done), "error": error}

    before = cache_stats()
    with MemoryWatch() as watch:
        started = time.monotonic()
        if variant == "sequential":
            for i, (name, messages) in enumerate(runs):
                one(i, name, messages)
        else:
            threads = [
                threading.Thread(target=one, args=(i, name, messages), name=f"bench-{name}", daemon=True)
                for i, (name, messages) in enumerate(runs)
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        wall = time.monotonic() - started
    return Phase(
        scenario=scenario,
        variant=variant,
        sessions=len(runs),
        wall_s=round(wall, 3),
        passes=len(passes),
        memory=watch.result(passes),
        prompt_cache=cache_delta(before, cache_stats()),
        per_session={name: per[name] for name, _ in runs if name in per},
    )


def run_scenario(
    scenario: str,
    pool: list[tuple[str, list[Message]]],
    replay_one: ReplayOne,
    reset: Callable[[], None] | None = None,
) -> list[Phase]:
    """The sequential baseline, then the scenario's own phase, each after `reset`."""
    kind, n = parse(scenario) or (None, 0)
    if kind is None or not pool:
        raise ValueError(f"{scenario!r} is not a many-sessions scenario, or there are no sessions")
    runs = pick(pool, n)
    phases = []
    for variant in ("sequential", KINDS[kind]):
        if reset is not None:
            reset()
        phases.append(run_phase(scenario, variant, runs, replay_one))
    return phases
