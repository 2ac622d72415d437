"""Hermes's entry point for hermes-mlx: the provider, plus hooks that compute the next micro pass ahead.

Hermes (0.22) imports this module through the `hermes_agent.plugins` entry point; importing it
imports `provider`, which registers provider `mlx`. The general plugin manager then calls
`register(ctx)`, which adds two hooks. This module stays thin on purpose: Hermes reads the first
8,192 characters of an entry point's source to classify it, and a module that names both the
provider registration call and the provider base class there counts as a model provider, whose
`register(ctx)` is never called (docs/hermes-early-transcript.md, "Candidate 2").

Hermes runs its micro pass after the turn's answer, and the turn stays open until it is done. Its
input is known a turn earlier: `post_llm_call` (after this turn's pass) and `pre_llm_call` (at the
next turn's start, after any batch compaction) see the transcript, from which Hermes's own helpers
rebuild the next micro request byte for byte. The hook only serializes it (the message dicts are
live) and hands it to ahead.CACHE, which answers it on a background thread at low priority; the
provider then answers Hermes's real request from there when the text matches (provider.from_ahead).
`HERMES_MLX_AHEAD=0` turns this off. Hermes 0.19 has no micro pass: no hooks there.
"""

from __future__ import annotations

import inspect
import logging
from typing import Any

from hermes_mlx.compactor import ahead, markers
from hermes_mlx.summarizer.budget import hermes_tokens

from . import hermes_seams, provider
from .hermes_settings import hermes_settings

logger = logging.getLogger("hermes_mlx.integrations")


def _hermes_has_micro_compaction() -> bool:
    return hermes_seams.find("build_micro_summary_prompt")[0] is not None


def _ours_and_micro() -> bool:
    """Micro-compaction is on and its requests come to our provider in this process."""
    settings = hermes_settings()
    return settings.micro and settings.ours


def _rolling_summary(content: Any) -> str:
    """The rolling summary in a marker, read by Hermes's own helper, else by ours."""
    read, _ = hermes_seams.find("rolling_summary_from_marker")
    return read(content) if read is not None else markers.parse(content)


def _defrag_request(build: Any, compressor: Any, rolling: str) -> list[dict]:
    """Hermes's defrag request: the builder's own defrag mode where it has one (a keyword named
    for it, as upstream PR #104486 proposes), else 0.22's merge prompt with an empty summary."""
    try:
        params = inspect.signature(build).parameters
    except (TypeError, ValueError):
        params = {}
    flag = next((name for name in params if "defrag" in name), None)
    if flag is not None:
        return build(compressor, "", rolling, **{flag: True})
    if "mode" in params:
        return build(compressor, "", rolling, mode="defrag")
    return build(compressor, "", rolling)


def next_micro_request(messages: list[dict], defrag_threshold: int) -> list[dict] | None:
    """The messages of Hermes's next micro request on this transcript (0.22.2's recipe), or None
    when no exchange waits or this Hermes lacks a helper the guess needs (hermes_seams). Hermes's
    cadence and tail checks are not repeated: such a guess may wait a turn or more before it is
    used, and a wrong one is only a miss."""
    build, _ = hermes_seams.find("build_micro_summary_prompt")
    serialize, _ = hermes_seams.find("serialize_for_summary")
    if build is None or serialize is None:
        return None
    from agent.context_compressor import ContextCompressor

    compressor = ContextCompressor.__new__(ContextCompressor)  # the two helpers read class constants only
    marked = [i for i, m in enumerate(messages) if isinstance(m, dict) and m.get(markers.SUMMARY_KEY)]
    last = marked[-1] if marked else -1
    rolling = _rolling_summary(messages[last].get("content")) if marked else ""
    if rolling and hermes_tokens(rolling) >= defrag_threshold:  # a defrag comes instead of a merge
        return _defrag_request(build, compressor, rolling)
    start = next(
        (
            i
            for i in range(last + 1, len(messages))
            if messages[i].get("role") == "assistant" and not messages[i].get(markers.SUMMARY_KEY)
        ),
        None,
    )
    if start is None:
        return None
    end = start + 1
    while end < len(messages) and messages[end].get("role") in ("assistant", "tool"):
        end += 1
    if end >= len(messages) or messages[end].get("role") != "user":
        return None  # the exchange is not closed by a user message yet
    return build(compressor, rolling, serialize(compressor, messages[start:end]))


def compute_ahead(session_id: Any = None, conversation_history: list | None = None, **_: Any) -> None:
    """Hook for `post_llm_call` and `pre_llm_call`: guess the next micro request and start it in
    the background. Returns None at once (a value from `pre_llm_call` would be injected into the
    user's message); never raises into Hermes."""
    try:
        if not conversation_history or not ahead.enabled() or not _ours_and_micro():
            return None
        messages = next_micro_request(conversation_history, hermes_settings().defrag_threshold_tokens)
        if messages is None:
            return None
        provider.schedule_ahead(str(session_id or ""), messages)
    except Exception as exc:
        ahead.CACHE.count("errors")
        logger.warning("hermes-mlx: could not compute the next micro pass ahead: %s", exc, exc_info=True)
    return None


def register_engine(ctx: Any = None) -> bool:
    """Register our context engine (integrations/context_engine.py) only when config.yaml selects
    it with `context.engine: hermes-mlx`; otherwise Hermes keeps its own compressor and the
    provider mode above. A failure here logs and leaves Hermes on its own compressor."""
    if ctx is None or not hasattr(ctx, "register_context_engine"):
        return False
    try:
        settings = hermes_settings()
        if not settings.engine:
            return False
        from .context_engine import build_engine

        ctx.register_context_engine(build_engine(model=settings.model))
        return True
    except Exception as exc:
        logger.warning("hermes-mlx: context engine not registered, Hermes's own compressor runs: %s", exc)
        return False


def register(ctx: Any = None) -> None:
    """The general plugin manager's hook: the provider (its import registered it; this makes sure)
    and, on a Hermes with micro-compaction, the two hooks that compute its next pass ahead.
    Hermes's version says little (upstream main reports 0.21.3, or 0.0.0 unstamped), so instead
    of a pin in plugin.yaml the features are checked here: each missing seam is logged once."""
    hermes_seams.registration_check()
    provider.register_provider()
    if register_engine(ctx):
        return  # the engine computes its own passes ahead; the provider's guesses would go unused
    if ctx is None or not hasattr(ctx, "register_hook") or not _hermes_has_micro_compaction():
        return
    try:
        ctx.register_hook("post_llm_call", compute_ahead)
        ctx.register_hook("pre_llm_call", compute_ahead)
    except Exception as exc:
        logger.warning("hermes-mlx: could not register the compute-ahead hooks: %s", exc)


__all__ = ["compute_ahead", "next_micro_request", "register", "register_engine"]
