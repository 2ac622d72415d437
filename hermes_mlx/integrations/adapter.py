"""Prompt adapter: Hermes's compaction prompts in, our summarizer's output out.

Hermes writes its prompts for large models. A 135M model does far better when code takes the
prompt apart (hermes_prompts.py: previous summary, exchange or turns, focus, budget) and our summarizer runs its
short templates, ledger, redaction and chunking on the parts. The answer goes back in the shape
Hermes parses: the summary body, which Hermes wraps in its own marker. Anything we do not
recognise goes to the model as is, folded in chunks when it does not fit, never refused for length.
"""

from __future__ import annotations

import contextvars
import dataclasses
import logging
import os
import queue
import threading
from collections.abc import Callable, Iterator

from hermes_mlx.summarizer.api import Summarizer, SummaryResult
from hermes_mlx.summarizer.budget import hermes_tokens, micro_budget
from hermes_mlx.summarizer.quoting import as_data, from_data
from hermes_mlx.summarizer.requested_layout import drop_empty, render_requested, skeleton

from . import passthrough
from .hermes_prompts import Kind, Prompt
from .hermes_settings import hermes_settings
from .openai_shapes import ChatRequest
from .passthrough import Completion

logger = logging.getLogger("hermes_mlx.integrations")

HERMES_TIMEOUT_S = 300.0  # Hermes's floor for a compression call
DEADLINE_SHARE = 0.8  # of the caller's timeout, for the summarizer's whole job
KEEPALIVE_S = 15.0  # Hermes's inter-chunk stream watchdog fires after 60 s
KEEPALIVE = "\n"
RANKINGS = ("code", "model")


class StreamClosed(Exception):
    """The consumer of a stream went away; the summarizer stops at its next chunk."""


def make_summarizer(model: str | None, timeout: float | None) -> Summarizer:
    from hermes_mlx.summarizer import MLXSummarizer

    # Hermes waits 300 s at least; past the deadline the remaining chunks get code-written
    # narrative, so an answer always comes back in time.
    deadline = DEADLINE_SHARE * min(timeout or HERMES_TIMEOUT_S, HERMES_TIMEOUT_S)
    # who picks what a pass keeps: the findings ranker by default; HERMES_MLX_RANKING=model lets a
    # larger model on a Mac pick (measured with the embedded 135M model, it kept no more facts)
    ranking = os.environ.get("HERMES_MLX_RANKING", "code").strip().lower() or "code"
    if ranking not in RANKINGS:
        logger.warning("hermes-mlx: HERMES_MLX_RANKING=%r is not one of %s; ranking by code", ranking, RANKINGS)
        ranking = "code"
    return MLXSummarizer(model=model, timeout=timeout, deadline_s=deadline, ranking=ranking)


def _run(prompt: Prompt, summarizer: Summarizer) -> SummaryResult:
    """One summarizer job for a recognised compaction prompt, within the budget Hermes will hold
    it to (less what its requested headings cost: the answer is laid out under them afterwards)."""
    settings = hermes_settings()
    threshold = settings.defrag_threshold_tokens
    match prompt.kind:
        case Kind.MICRO:
            budget = micro_budget(threshold)
            return summarizer.merge(prompt.summary, prompt.turns, budget_tokens=budget)
        case Kind.MICRO_DEFRAG:
            bound = micro_budget(threshold)  # and the prompt's own bound, where it states one
            return summarizer.defrag(prompt.text, budget_tokens=min(bound, prompt.budget_tokens or bound))
        case Kind.BATCH | Kind.BATCH_UPDATE:
            budget = prompt.budget_tokens
            if settings.micro:  # Hermes reloads a batch summary as its rolling summary: the defrag bound holds
                budget = min(budget or threshold, micro_budget(threshold))
            if budget and prompt.layout:
                budget = max(1, budget - hermes_tokens(skeleton(prompt.layout)))
            notes = prompt.user_notes or None
            return summarizer.update(prompt.summary, prompt.turns, prompt.focus, budget, user_notes=notes)
    raise ValueError(f"not a compaction prompt: {prompt.kind}")


def finish(text: str, prompt: Prompt) -> str:
    """Our summary as it goes back to Hermes: in the structure the request asked for (ours when
    it asked for none), with orders in the user's or the plan's words quoted as data."""
    if text and prompt.layout:
        text = render_requested(text, prompt.layout).strip()
    return as_data(text)


def complete(
    request: ChatRequest,
    prompt: Prompt,
    *,
    model: str | None = None,
    summarizer: Summarizer | None = None,
    on_chunk: Callable[[], None] | None = None,
) -> Completion:
    """Answer one chat request, `prompt` being what its entry point recognised: through our
    summarizer when Hermes sent a compaction prompt, else to the model as it is. `on_chunk`
    hears each folded chunk finish (streams send progress with it)."""
    if prompt.kind is Kind.PASSTHROUGH:
        return passthrough.complete(request, model)
    summarizer = summarizer or make_summarizer(model, request.timeout)
    if on_chunk is not None:
        summarizer.on_chunk = on_chunk
    # a summary we wrote comes back: its quoted orders are read as written (quoting.as_data below)
    # and a template's empty headings in it are no sections of ours
    prompt = dataclasses.replace(
        prompt, summary=drop_empty(from_data(prompt.summary)), text=drop_empty(from_data(prompt.text)) or ""
    )
    result = _run(prompt, summarizer)
    text = (result.text or "").strip() if result.ok else ""
    stats = [result]
    cap = request.max_tokens and max(1, request.max_tokens - hermes_tokens(skeleton(prompt.layout)))
    if text and cap and hermes_tokens(text) > cap:
        # Over the caller's cap: shorten by code rather than hand back a cut summary.
        shorter = summarizer.defrag(text, budget_tokens=cap)
        stats.append(shorter)
        if shorter.ok and shorter.text.strip():
            text = shorter.text.strip()
    text = finish(text, prompt)
    if not result.ok:
        # Empty content is Hermes's failure signal: it keeps its previous summary and retries later.
        logger.warning("summarizer failed on a %s prompt: %s", prompt.kind, result.error)
    return Completion(
        text=text,
        finish_reason="stop",
        kind=prompt.kind,
        error=None if result.ok else result.error,
        prompt_tokens=sum(s.prompt_tokens for s in stats),
        cached_tokens=sum(s.cached_tokens for s in stats),
        completion_tokens=0,  # the model only scores candidates for a summary; code writes it
        model=result.model or (model or "default"),
        model_calls_skipped=sum(int((s.details or {}).get("model_calls_skipped") or 0) for s in stats),
    )


def stream(
    request: ChatRequest, prompt: Prompt, *, model: str | None = None, summarizer: Summarizer | None = None
) -> Iterator[tuple[str, Completion | None]]:
    """(text piece, None)... then ("", Completion). Passthrough that fits streams token by token;
    closing the generator stops the engine at once.

    A compaction prompt is answered whole at the end, but Hermes abandons a stream that sends no
    content for a while (300 s before the first chunk, 60 s between chunks), and a large middle
    folds for longer. So while the summarizer works, a newline goes out as each folded chunk
    finishes and at least every KEEPALIVE_S seconds: content Hermes's watchdogs count, and
    leading whitespace it strips from the final text, which therefore parses as before.
    """
    if prompt.kind is Kind.PASSTHROUGH:
        yield from passthrough.stream(request, model)
        return
    events: queue.Queue = queue.Queue()
    closed = threading.Event()

    def chunk_done() -> None:
        if closed.is_set():
            raise StreamClosed("the client went away")
        events.put(("chunk", None))

    def work() -> None:
        try:
            events.put(("done", complete(request, prompt, model=model, summarizer=summarizer, on_chunk=chunk_done)))
        except BaseException as exc:  # handed to the consumer's thread
            events.put(("error", exc))

    # The caller's contextvars go along: its request_scope (cancel flag, deadline, priority) then
    # bounds every engine call the summarizer makes, not only the chunk boundaries.
    ctx = contextvars.copy_context()
    threading.Thread(target=ctx.run, args=(work,), name="hermes-mlx-summary", daemon=True).start()
    try:
        while True:
            try:
                kind, value = events.get(timeout=KEEPALIVE_S)
            except queue.Empty:
                yield KEEPALIVE, None
                continue
            if kind == "chunk":
                yield KEEPALIVE, None
            elif kind == "done":
                if value.text:
                    yield value.text, None
                yield "", value
                return
            else:
                raise value
    finally:
        closed.set()  # the worker stops at its next chunk boundary
