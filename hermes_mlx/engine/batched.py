"""Continuous batching: generate() requests decode together through mlx-lm's BatchGenerator.

Each generate job the worker starts becomes a member of its model's batch and returns DEFERRED;
the worker then advances the batches one step between other jobs, so a request that arrives
while others decode joins at the next step instead of waiting for them to finish. A member keeps
its own stop strings, deadline, cancellation, stream and usage figures; one that is cancelled,
expires or fails leaves the batch at once (BatchGenerator.remove) and the others go on.

Stop strings are matched on the decoded text, as the one-request path did, not on token
sequences: a stop string can tokenize differently in context. Only EOS stops inside mlx-lm.
A member with a repetition guard (engine/repetition.py) also leaves here, with finish
"repetition", once its output repeats itself verbatim. Everything here runs on the worker thread.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hermes_mlx.engine import errors, residency
from hermes_mlx.engine.blas import fit_threads
from hermes_mlx.engine.cache import LoadedModel, ModelCache
from hermes_mlx.engine.repetition import RepetitionGuard
from hermes_mlx.engine.worker import Job

log = logging.getLogger(__name__)

Emit = Callable[[str, Any], None]  # (new text, final result or None)


@dataclass
class Member:
    job: Job
    key: str
    tokens: list[int]  # the prompt
    cached: int  # prompt tokens the prefix cache supplied
    max_tokens: int
    stop: list[str]
    emit: Emit | None
    detok: Any
    eos: set[int]
    load_s: float
    threads: int | None
    start: float  # perf_counter when the job started
    gen: Any = None  # the BatchGenerator it decodes in (set by Batcher.add)
    hold: int = 0  # trailing characters held back: they could begin a stop string
    guard: RepetitionGuard | None = None  # ends the member once its output loops
    text: str = ""
    sent: int = 0
    n: int = 0  # tokens decoded, EOS excluded
    t_first: float = 0.0  # when the first token came (0: still reading the prompt)
    t_end: float = 0.0
    finish: str = ""


def stop_at(text: str, stop: list[str]) -> int:
    hits = [text.find(s) for s in stop]
    hits = [h for h in hits if h >= 0]
    return min(hits) if hits else -1


class Batcher:
    """The worker's stepper: one BatchGenerator per warm model, kept while the model is loaded.
    A model unloaded (or reloaded) while its batch runs leaves that generator retired: stepped
    until its members finish, then closed. Members are keyed by their generator, whose ids
    restart at 0, so a reloaded model's new batch cannot overwrite the old one's members."""

    def __init__(self, models: ModelCache, result: Callable[[Member], Any]) -> None:
        self._models = models
        self._result = result  # builds a finished member's GenerationResult
        self._gens: dict[str, Any] = {}  # model key -> the generator of the model loaded now
        self._retired: list[Any] = []  # generators of unloaded models, until their members finish
        self._members: dict[tuple[Any, int], Member] = {}  # (generator, uid)
        self._samplers: dict[float, Any] = {}
        self.threads: int | None = None  # BLAS threads, fitted when the batch starts from idle
        self.joined = 0  # members ever added, for tests and telemetry
        self.max_width = 0  # the most members decoding together so far
        models.on_unload.append(self._forget)

    def busy(self) -> bool:
        return bool(self._members)

    def refit_threads(self) -> bool:
        """Fit the BLAS threads to the load now, when nothing is in flight (mlx-lm's step leaves
        the next forward running on its generation stream, so that is waited for first); True
        when it did. While members decode, the batch's count stays."""
        if self.busy():
            return False
        import mlx.core as mx
        from mlx_lm.generate import generation_stream

        mx.synchronize(generation_stream)
        self.threads = fit_threads()
        return True

    def members(self) -> int:
        return len(self._members)

    def add(self, member: Member, loaded: LoadedModel, cache: list, temperature: float) -> None:
        """Queue a member's prompt (its tail after the cached prefix) into its model's batch."""
        gen = self._gens.get(member.key)
        if gen is not None and gen.model is not loaded.model:  # reloaded: the old batch runs on apart
            self._forget(member.key)
            gen = None
        if gen is None:
            from mlx_lm.generate import BatchGenerator

            gen = self._gens[member.key] = BatchGenerator(
                loaded.model,
                stop_tokens=[[t] for t in member.eos],
                prefill_step_size=loaded.prefill_step,
            )
            residency.reassert()  # the generator wired the whole working set: back to ours
        (uid,) = gen.insert(
            [member.tokens[member.cached :]],
            max_tokens=[member.max_tokens],
            caches=[cache],
            all_tokens=[member.tokens[: member.cached]],
            samplers=[self._sampler(temperature)],
        )
        member.gen = gen
        self._members[(gen, uid)] = member
        self.joined += 1
        self.max_width = max(self.max_width, len(self._mine(gen)))

    def _sampler(self, temperature: float) -> Any:
        """One sampler object per temperature: mlx-lm samples a batch in one call when its
        members share the sampler object (greedy is always shared)."""
        if temperature == 0:
            return None  # the generator's own greedy sampler
        if temperature not in self._samplers:
            from mlx_lm.sample_utils import make_sampler

            self._samplers[temperature] = make_sampler(temp=temperature)
        return self._samplers[temperature]

    def step(self) -> None:
        """Drop members that were cancelled or ran out of time, then one step of every batch:
        a decode step for the members decoding, a prompt chunk for those still reading."""
        import mlx.core as mx
        from mlx_lm.generate import generation_stream

        for gen in [*self._gens.values(), *self._retired]:
            for uid, m in self._mine(gen):
                if m.job.stopped() or m.job.expired():
                    self._leave(gen, uid, m, "deadline")
            if not self._mine(gen):
                continue
            try:
                _, responses = gen.next()
            except BaseException as exc:  # the batch as a whole failed: its members with it
                log.exception("hermes-mlx: a batch of %d failed", len(self._mine(gen)))
                for uid, m in self._mine(gen):
                    self._fail(uid, m, exc)
                self._drop(gen)
                continue
            for r in responses:
                m = self._members.get((gen, r.uid))
                if m is None:
                    continue
                try:
                    finish = self._advance(m, r.token, r.finish_reason)
                except BaseException as exc:  # this member fails alone
                    if r.finish_reason is None:
                        gen.remove([r.uid])
                    self._fail(r.uid, m, exc)
                    continue
                if finish is None:
                    continue
                if r.finish_reason is None:  # it ends here; mlx-lm would decode on
                    self._leave(gen, r.uid, m, finish)
                else:
                    self._done(r.uid, m, finish, r.prompt_cache, r.all_tokens)
        for gen in [g for g in self._retired if not self._mine(g)]:
            self._drop(gen)  # its model was unloaded while it ran; its last member is done
        if not self._members:
            # Nothing may stay in flight once the batch is idle (exit, BLAS threads): mlx-lm's step
            # leaves the next forward running on its generation stream, not the default one.
            mx.synchronize(generation_stream)

    def cancel_all(self) -> None:
        for m in list(self._members.values()):
            m.job.cancelled.set()

    def _mine(self, gen: Any) -> list[tuple[int, Member]]:
        return [(uid, m) for (g, uid), m in list(self._members.items()) if g is gen]

    def _advance(self, m: Member, token: int, reason: str | None) -> str | None:
        """Take one decoded token; the finish reason when the member is done."""
        if not m.t_first:
            m.t_first = time.perf_counter()
        if token in m.eos:
            return self._flush(m, "stop")
        m.n += 1
        m.detok.add_token(token)
        m.text += m.detok.last_segment
        cut = stop_at(m.text, m.stop) if m.stop else -1
        if cut >= 0:
            m.text = m.text[:cut]
            return "stop"
        if m.guard is not None and m.guard.push(token, len(m.text)):
            m.text = m.guard.trim(m.text, m.sent)  # one copy of the loop (what was streamed stays)
            return "repetition"
        if m.emit is not None and len(m.text) - m.hold > m.sent:
            m.emit(m.text[m.sent : len(m.text) - m.hold], None)
            m.sent = len(m.text) - m.hold
        if reason is not None:
            return self._flush(m, "length")
        if m.job.stopped() or m.job.expired():
            return self._flush(m, "deadline")
        return None

    def _flush(self, m: Member, finish: str) -> str:
        """Bytes the detokenizer held back may complete a stop string."""
        m.detok.finalize()
        m.text += m.detok.last_segment
        cut = stop_at(m.text, m.stop) if m.stop else -1
        if cut >= 0:
            m.text, finish = m.text[:cut], "stop"
        return finish

    def _leave(self, gen: Any, uid: int, m: Member, finish: str) -> None:
        """Take a member out of the batch now; a member that never got a token raises."""
        held = gen.remove([uid], return_prompt_caches=bool(m.t_first)).get(uid)
        if m.t_first:
            cache, tokens = held if held else (None, None)
            self._done(uid, m, finish if finish != "deadline" else self._flush(m, finish), cache, tokens)
        elif m.job.stopped():
            self._fail(uid, m, errors.Cancelled("the request was cancelled"))
        else:
            self._fail(uid, m, errors.DeadlineExceeded("the request's deadline passed while reading the prompt"))

    def _done(self, uid: int, m: Member, finish: str, cache: list | None, tokens: list[int] | None) -> None:
        self._members.pop((m.gen, uid), None)
        m.finish, m.t_end = finish, time.perf_counter()
        loaded = self._models.models.get(m.key)
        warm = loaded is not None and loaded.model is m.gen.model  # not a cache of an unloaded model
        if cache is not None and tokens and warm:
            try:  # prompt and reply, for the next turn; kept before the caller hears, so it sees them
                self._models.prompts.insert(m.key, list(tokens), cache)
            except Exception:  # a lost cache entry must not lose the result, nor the step's others
                log.exception("hermes-mlx: could not keep a prompt cache entry")
        try:
            result = self._result(m)
            if m.emit is not None:
                m.emit(m.text[m.sent :], result)
        except BaseException as exc:
            m.job.future.set_exception(exc)
            return
        m.job.future.set_result(result)

    def _fail(self, uid: int, m: Member, exc: BaseException) -> None:
        self._members.pop((m.gen, uid), None)
        if not m.job.future.done():
            m.job.future.set_exception(exc)

    def _drop(self, gen: Any) -> None:
        """Close a generator (it restores the wired limit it found) and put ours back."""
        self._gens = {k: g for k, g in self._gens.items() if g is not gen}
        self._retired = [g for g in self._retired if g is not gen]
        gen.close()
        residency.reassert()

    def _forget(self, key: str) -> None:
        """The model was unloaded: close its generator now, or retire it until its last member."""
        gen = self._gens.pop(key, None)
        if gen is None:
            return
        if self._mine(gen):
            self._retired.append(gen)
        else:
            self._drop(gen)
