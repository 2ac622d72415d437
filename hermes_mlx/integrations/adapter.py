"""Prompt adapter: Hermes's compaction prompts in, our summarizer's output out.

Hermes writes its prompts for large models. A 135M model does far better when code takes the
prompt apart (hermes_prompts.py: previous summary, exchange or turns, focus, budget) and our summarizer runs its
short templates, ledger, redaction and chunking on the parts. The answer goes back in the shape
Hermes parses: the summary body, which Hermes wraps in its own marker. Anything we do not
recognise goes to the model as is, folded in chunks when it does not fit, never refused for length.
"""

from __future__ import annotations

import logging
from typing import Iterator

from hermes_mlx.summarizer.api import Summarizer

from . import passthrough
from .hermes_prompts import micro_prompt, parse_turns, recognise  # noqa: F401  (micro_prompt, parse_turns: re-exported)
from .openai_shapes import ChatRequest
from .passthrough import DEFAULT_MAX_TOKENS, Completion  # noqa: F401  (re-exported)

logger = logging.getLogger("hermes_mlx.integrations")

DEFAULT_NAMES = {"", "default", "mlx", "hermes-mlx", "hermes-mlx-default"}

_FOREIGN: set[str] = set()  # names already found to be some other provider's model id


def model_name(requested: str | None, fallback: str | None = None) -> str | None:
    """The engine model for a request: our default names mean the embedded default; a name that
    is neither a model folder nor one of our manifests (Hermes filling in its main model's id)
    falls back to `fallback` rather than failing the compaction."""
    name = (requested or "").strip()
    if name in DEFAULT_NAMES or name in _FOREIGN:
        return fallback
    from hermes_mlx.engine.errors import ModelNotFound
    from hermes_mlx.engine.generate import resolve

    try:
        resolve(name)
        return name
    except ModelNotFound:
        from hermes_mlx.engine.models import manifests

        path_like = "/" in name or name.startswith((".", "~"))
        if path_like or name in manifests():
            raise
        logger.info("model %r is not a local model; using %s", name, fallback or "the embedded default")
        _FOREIGN.add(name)
        return fallback


def _summarizer(model: str | None, timeout: float | None) -> Summarizer:
    from hermes_mlx.summarizer import MLXSummarizer

    return MLXSummarizer(model=model, timeout=timeout)


def complete(request: ChatRequest, *, model: str | None = None, summarizer: Summarizer | None = None) -> Completion:
    """Answer one chat request: through our summarizer when Hermes sent a compaction prompt."""
    prompt = recognise(request.messages)
    if prompt.kind == "passthrough":
        return passthrough.complete(request, model)
    summarizer = summarizer or _summarizer(model, request.timeout)
    if prompt.kind == "micro":
        result = summarizer.merge(prompt.summary, prompt.turns)
    elif prompt.kind == "micro_defrag":
        result = summarizer.defrag(prompt.text)
    else:
        result = summarizer.update(prompt.summary, prompt.turns, prompt.focus, prompt.budget_tokens)
    text = (result.text or "").strip() if result.ok else ""
    stats = [result]
    if text and request.max_tokens and summarizer.count_tokens(text) > request.max_tokens:
        # Over the caller's cap: shorten by code and model rather than hand back a cut summary.
        shorter = summarizer.defrag(text)
        stats.append(shorter)
        if shorter.ok and shorter.text.strip():
            text = shorter.text.strip()
    if not result.ok:
        # Empty content is Hermes's failure signal: it keeps its previous summary and retries later.
        logger.warning("summarizer failed on a %s prompt: %s", prompt.kind, result.error)
    return Completion(
        text=text, finish_reason="stop", kind=prompt.kind, error=None if result.ok else result.error,
        prompt_tokens=sum(s.prompt_tokens for s in stats), cached_tokens=sum(s.cached_tokens for s in stats),
        completion_tokens=sum(s.generation_tokens for s in stats), model=result.model or (model or "default"),
    )


def stream(request: ChatRequest, *, model: str | None = None,
           summarizer: Summarizer | None = None) -> Iterator[tuple[str, Completion | None]]:
    """(text piece, None)... then ("", Completion). Passthrough that fits streams token by token;
    closing the generator stops the engine at once."""
    prompt = recognise(request.messages)
    if prompt.kind == "passthrough":
        yield from passthrough.stream(request, model)
        return
    done = complete(request, model=model, summarizer=summarizer)
    if done.text:
        yield done.text, None
    yield "", done
