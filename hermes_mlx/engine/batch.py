"""Continuous batching: generate() requests decode together through mlx-lm's BatchGenerator.

Each generate job the worker starts becomes a member of its model's batch and returns DEFERRED;
the worker then advances the batches one step between other jobs, so a request that arrives
while others decode joins at the next step instead of waiting for them to finish. A member keeps
its own stop strings, deadline, cancellation, stream and usage figures; one that is cancelled,
expires or fails leaves the batch at once (BatchGenerator.remove) and the others go on.

Stop strings are matched on the decoded text, as the one-request path did, not on token
sequences: a stop string can tokenize differently in context. Only EOS stops inside mlx-lm.
Everything here runs on the worker thread.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hermes_mlx.engine import errors, residency
from hermes_mlx.engine.cache import LoadedModel, ModelCache
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
    hold: int = 0  # trailing characters held back: they could begin a stop string
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
    """The worker's stepper: one BatchGenerator per warm model, kept while the model is loaded
    (so its member ids stay unique), dropped on unload once its members are done."""

    def __init__(self, models: ModelCache, result: Callable[[Member], Any]) -> None:
        self._models = models
        self._result = result  # builds a finished member's GenerationResult
        self._gens: dict[str, Any] = {}
        self._members: dict[tuple[str, int], Member] = {}
        self._samplers: dict[float, Any] = {}
        self.threads: int | None = None  # BLAS threads, fitted when the batch starts from idle
        self.joined = 0  # members ever added, for tests and telemetry
        self.max_width = 0  # the most members decoding together so far
        models.on_unload.append(self._forget)

    def busy(self) -> bool:
        return bool(self._members)

    def members(self) -> int:
        return len(self._members)

    def add(self, member: Member, loaded: LoadedModel, cache: list, temperature: float) -> None:
        """Queue a member's prompt (its tail after the cached prefix) into its model's batch."""
        gen = self._gens.get(member.key)
        if gen is None or gen.model is not loaded.model:
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
        self._members[(member.key, uid)] = member
        self.joined += 1
        self.max_width = max(self.max_width, sum(1 for k in self._members if k[0] == member.key))

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

        for key, gen in list(self._gens.items()):
            for uid, m in self._mine(key):
                if m.job.stopped() or m.job.expired():
                    self._leave(gen, uid, m, "deadline")
            if not self._mine(key):
                if key not in self._models.models:
                    self._drop(key)  # its model was unloaded while it ran
                continue
            try:
                _, responses = gen.next()
            except BaseException as exc:  # the batch as a whole failed: its members with it
                log.exception("hermes-mlx: a batch of %d failed", len(self._mine(key)))
                for uid, m in self._mine(key):
                    self._fail(uid, m, exc)
                self._drop(key)
                continue
            for r in responses:
                m = self._members.get((key, r.uid))
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
        if not self._members:
            mx.synchronize()  # nothing may stay in flight once the batch is idle (exit, BLAS threads)

    def cancel_all(self) -> None:
        for m in list(self._members.values()):
            m.job.cancelled.set()

    def _mine(self, key: str) -> list[tuple[int, Member]]:
        return [(uid, m) for (k, uid), m in list(self._members.items()) if k == key]

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
        self._members.pop((m.key, uid), None)
        m.finish, m.t_end = finish, time.perf_counter()
        if cache is not None and tokens:
            self._models.prompts.insert(m.key, list(tokens), cache)  # prompt and reply, for the next turn
        try:
            result = self._result(m)
            if m.emit is not None:
                m.emit(m.text[m.sent :], result)
        except BaseException as exc:
            m.job.future.set_exception(exc)
            return
        m.job.future.set_result(result)

    def _fail(self, uid: int, m: Member, exc: BaseException) -> None:
        self._members.pop((m.key, uid), None)
        if not m.job.future.done():
            m.job.future.set_exception(exc)

    def _drop(self, key: str) -> None:
        """Close a model's generator (it restores the wired limit it found) and put ours back."""
        gen = self._gens.pop(key, None)
        if gen is not None:
            gen.close()
            residency.reassert()

    def _forget(self, key: str) -> None:
        """The model was unloaded: drop its generator now, or after its last member."""
        if not self._mine(key):
            self._drop(key)
