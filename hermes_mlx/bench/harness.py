"""Run micro-compaction passes over a recorded session, one agent turn at a time, and time them.

The passes are compactor.replay's (a pass after each turn, stopping after N passes); the harness
wraps the engine's generate so each pass carries the engine's own figures (prefill and decode
tokens and rates, time to first token, load time, BLAS threads). Idle gaps are
measured apart, on one repeated engine call, so the work after each gap is the same.

Each pass has two times: `visible_s`, what the caller of compact() waited, and `duration_s`, what
the pass took, which is longer only when the compactor says it did the work before the call (a
pass computed ahead, `ahead=True`, during the think time `think_s` puts between turns). The
engine calls of a guess computed ahead are recorded apart, under the guess's key, and counted in
the figures of the pass that used it; those of a guess that was discarded are counted in no
pass's figures, only in the `wasted_calls` of the pass that discarded it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from hermes_mlx.compactor import ahead, markers
from hermes_mlx.compactor.micro import discard_ahead
from hermes_mlx.compactor.replay import PassRecord, replay
from hermes_mlx.compactor.transcript import repair, split_turns
from hermes_mlx.engine import residency
from hermes_mlx.summarizer.api import Message, Summarizer


@dataclass
class Pass:
    """One measured pass; figures summed over the engine calls the pass made."""

    scenario: str
    variant: str  # ours | ours-cold | load-per-pass | mlx_lm.server
    session: str
    number: int
    turn: int
    idle_before_s: float
    duration_s: float
    visible_s: float = 0.0  # wall time inside compact(): what the caller waited
    outcome: str = ""
    calls: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    generation_tokens: int = 0
    prefill_s: float = 0.0
    decode_s: float = 0.0
    load_s: float = 0.0
    blas_threads: int | None = None
    ttft_s: float | None = None
    tokens_delta: int | None = None
    occupancy_pct: float | None = None
    peak_mlx_mb: float | None = None  # the engine's peak over the pass's calls
    error: str | None = None
    ahead: str = ""  # with passes computed ahead: hit | waited | miss
    ahead_calls: int = 0  # of `calls`, those made ahead, before or while the pass was called
    wasted_calls: int = 0  # engine calls of discarded guesses (in no pass's figures)
    wired_mb: float | None = None  # idle probes on Metal: memory wired when the pause ended

    @property
    def prompt_tps(self) -> float | None:
        new = self.prompt_tokens - self.cached_tokens
        return round(new / self.prefill_s, 1) if self.prefill_s > 0 else None

    @property
    def generation_tps(self) -> float | None:
        return round(self.generation_tokens / self.decode_s, 1) if self.decode_s > 0 else None

    def to_dict(self) -> dict:
        return {**asdict(self), "prompt_tps": self.prompt_tps, "generation_tps": self.generation_tps}


@dataclass
class Replay:
    """What a replay of a session left: the state fidelity is measured on, and how it got there
    (the bench's measured passes, or the summarizer's results a fidelity run recorded)."""

    summary: str  # the rolling summary after the last pass
    messages: list[Message]  # the live conversation after the last pass
    seen: list[Message]  # the session up to the last pass's turn
    passes: list[Pass] = field(default_factory=list)  # the bench's, with the engine's figures
    results: list = field(default_factory=list)  # fidelity's: every SummaryResult, in order
    probe: tuple | None = None  # (request, kwargs) of the last pass's longest engine call
    thought: int = 0  # think-time pauses taken between turns
    failures: list = field(default_factory=list)  # fidelity's: "outcome: reason" of each failed pass


@dataclass
class Recorder:
    """Wraps engine.generate and engine.score (the summarizer's narrative calls); `take()`
    hands over the calls made since the last take, `take_ahead()` those made computing a guess."""

    model: str | None
    calls: list = field(default_factory=list)
    requests: list = field(default_factory=list)
    early: dict = field(default_factory=dict)  # guess key -> [(result, request)] made ahead
    lock: threading.Lock = field(default_factory=threading.Lock)

    def keep(self, result, request) -> None:
        key = ahead.current_key()
        if key is None:
            self.calls.append(result)
            self.requests.append(request)
        else:
            with self.lock:
                self.early.setdefault(key, []).append((result, request))

    def __call__(self, request, **kw):
        from hermes_mlx.engine.generate import generate

        if "candidates" in kw:  # a probe repeating a score() call
            kw = dict(kw)
            return self.score(kw.pop("candidates"), request, **kw)
        kw.setdefault("model", self.model)
        result = generate(request, **kw)
        self.keep(result, (request, kw))
        return result

    def score(self, candidates, prefix, **kw):
        from hermes_mlx.engine.score import score

        kw.setdefault("model", self.model)
        result = score(candidates, prefix, **kw)
        self.keep(result, (prefix, {**kw, "candidates": candidates}))
        return result

    def take(self) -> list:
        calls, self.calls, self.requests = self.calls, [], []
        return calls

    def take_ahead(self, used: str | None) -> tuple[list, int]:
        """([(result, request)] of the guess `used`, calls of guesses no longer held: discarded
        or failed, so no pass will use them); guesses still held stay for the pass they are for."""
        held = set(ahead.CACHE.held().values())
        with self.lock:
            mine = self.early.pop(used, []) if used else []
            gone = [k for k in self.early if k not in held]
            return mine, sum(len(self.early.pop(k)) for k in gone)


def fill(p: Pass, calls: list) -> Pass:
    p.calls = len(calls)
    for r in calls:
        p.prompt_tokens += r.prompt_tokens
        p.cached_tokens += r.cached_tokens
        p.generation_tokens += r.generation_tokens
        p.load_s += r.load_s
        p.prefill_s += max(r.ttft_s - r.load_s, 0.0)
        p.decode_s += max(r.total_s - r.ttft_s, 0.0)
    if calls:
        p.blas_threads = min((r.blas_threads for r in calls if r.blas_threads), default=None)
        p.ttft_s = round(calls[0].ttft_s, 4)
        peaks = [r.peak_memory_mb for r in calls if getattr(r, "peak_memory_mb", None)]
        p.peak_mlx_mb = round(max(peaks), 1) if peaks else None
    return p


def session_turns(messages: list[Message]) -> list[list[Message]]:
    original, _ = repair(messages)
    return split_turns(original)


def last_summary(messages: list[Message]) -> str:
    """The summary in the conversation's last marker ("" before any pass)."""
    i = markers.last_marker(messages)
    return markers.parse(messages[i].get("content")) if i >= 0 else ""


def run_passes(
    messages: list[Message],
    *,
    model: str | None,
    scenario: str,
    session: str,
    variant: str = "ours",
    max_passes: int | None = None,
    before_pass: Callable[[], None] | None = None,
    on_pass: Callable[[Pass], None] | None = None,
    context_limit: int = 32768,
    summarizer: Summarizer | None = None,
    think_s: float = 0.0,
    on_turn: Callable[[int, int], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    ahead: bool = False,
) -> Replay:
    """Passes for one scenario: compactor.replay in micro mode, with the engine's figures added
    to each pass. `before_pass` runs outside the timed region (the load-per-pass baseline
    unloads the model there). After each turn, `on_turn` runs, then the user thinks for
    `think_s` (no pause after the last pass: nothing would measure it). `ahead` computes each
    pass's summarizer call ahead (CompactorSettings.ahead), in that think time when there is one.
    `summarizer` replaces the MLX one (tests); the engine figures then stay zero."""
    from hermes_mlx.summarizer.summarizer import MLXSummarizer

    recorder = Recorder(model)
    passes: list[Pass] = []
    turns = session_turns(messages)
    done = thought = 0  # turns replayed, think-time pauses
    probe = None

    def before() -> None:
        if before_pass is not None:
            before_pass()
        recorder.take()  # calls before this pass are not its own

    def turn_done(number: int, total: int) -> None:
        nonlocal done, thought
        done = number
        if on_turn is not None:
            on_turn(number, total)
        if think_s > 0 and number < total and (max_passes is None or len(passes) < max_passes):
            thought += 1
            sleep(think_s)

    def record(rec: PassRecord) -> None:
        nonlocal probe
        requests = recorder.requests
        calls = recorder.take()
        early, wasted = recorder.take_ahead(rec.telemetry.get("ahead_key"))
        calls, requests = [r for r, _ in early] + calls, [q for _, q in early] + requests
        if calls:
            probe = requests[max(range(len(calls)), key=lambda i: calls[i].prompt_tokens)]
        worked = (rec.telemetry.get("duration_ms") or 0) / 1000  # the compactor's own time for the pass
        before_call = (rec.telemetry.get("ahead_ms") or 0) / 1000  # its work done ahead, before compact()
        p = fill(
            Pass(
                scenario=scenario,
                variant=variant,
                session=session,
                number=len(passes) + 1,
                turn=rec.turn,
                idle_before_s=0.0,
                duration_s=round(max(rec.duration_s + before_call, worked), 4),
                visible_s=round(rec.duration_s, 4),
                outcome=rec.outcome,
                tokens_delta=rec.telemetry.get("tokens_delta"),
                occupancy_pct=rec.telemetry.get("occupancy_pct"),
                error=rec.error,
                ahead=rec.telemetry.get("ahead") or "",
                ahead_calls=len(early),
                wasted_calls=wasted,
            ),
            calls,
        )
        passes.append(p)
        if on_pass is not None:
            on_pass(p)

    try:
        result = replay(
            messages,
            # the model's path, what this benchmark measures (engine, prefix cache, contention);
            # by default passes rank by code and call no model
            summarizer or MLXSummarizer(model=model, score=recorder.score, ranking="model"),
            context_limit=context_limit,
            session_id=session,
            before_pass=before,
            max_passes=max_passes,
            on_pass=record,
            on_turn=turn_done,
            ahead=ahead,
        )
    finally:
        discard_ahead(session)  # the guess for a pass past the last would run in the next scenario
    seen = [m for turn in turns[:done] for m in turn]
    return Replay(last_summary(result.messages), result.messages, seen, passes, probe=probe, thought=thought)


def stamped(request, i: int):
    """The request with a marker at its very start, so the engine reuses no cached prefix and
    every idle probe does the same work."""
    mark = f"[probe {i:02d}] "
    if isinstance(request, str):
        return mark + request
    first = dict(request[0], content=mark + str(request[0].get("content") or ""))
    return [first, *request[1:]]


def idle_probes(
    probe: tuple, *, gaps: list[float], session: str, on_pass: Callable[[Pass], None] | None = None
) -> list[Pass]:
    """The same engine call (a pass's longest) after each idle gap: gap 0 first, then the
    others, so the penalty of a pause is its duration minus gap 0's, with the prompt held equal
    (the report evens out a differing number of generated tokens). The pass's own deadline is
    dropped: what was left of it then says nothing about the probe."""
    request, kw = probe
    kw = {k: v for k, v in kw.items() if k != "timeout"}
    recorder = Recorder(kw.get("model"))
    passes = []
    for i, gap in enumerate(gaps):
        time.sleep(gap)
        wired = residency.status()
        started = time.monotonic()
        error = None
        try:
            recorder(stamped(request, i), **kw)
        except Exception as exc:  # one failed probe is a row with an error, not a failed run
            error = f"{type(exc).__name__}: {exc}"
        duration = time.monotonic() - started
        p = fill(
            Pass(
                scenario="none",
                variant="idle-probe",
                session=session,
                number=i + 1,
                turn=0,
                idle_before_s=gap,
                duration_s=round(duration, 4),
                visible_s=round(duration, 4),
                outcome="error" if error else "probe",
                error=error,
                wired_mb=round(wired["wired_bytes"] / 1e6, 1) if wired["device"] == "metal" else None,
            ),
            recorder.take(),
        )
        passes.append(p)
        if on_pass is not None:
            on_pass(p)
    return passes
