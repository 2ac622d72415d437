"""Prompt adapter: Hermes's compaction prompts in, our summarizer's output out.

Hermes writes its prompts for large models. A 135M model does far better when code takes the
prompt apart (previous summary, exchange or turns, focus, budget) and our summarizer runs its
short templates, ledger, redaction and chunking on the parts. The answer goes back in the shape
Hermes parses: the summary body, which Hermes wraps in its own marker. Anything we do not
recognise goes to the model as is, folded in chunks when it does not fit, never refused for length.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any, Iterator

from hermes_mlx.summarizer.api import Message, Summarizer

from .openai_shapes import ChatRequest, finish_reason

logger = logging.getLogger("hermes_mlx.integrations")

DEFAULT_MAX_TOKENS = 1024  # our output cap when the request names none (Hermes often sends none)
DEFAULT_NAMES = {"", "default", "mlx", "hermes-mlx", "hermes-mlx-default"}
FOLD_CHUNK_TOKENS = 1536
FOLD_NOTE_TOKENS = 200
FOLD_SYSTEM = (
    "Condense the text below into short notes. Keep every file path, command, number, error "
    "message and decision exactly as written. Write only the notes."
)

# Hermes's prompt landmarks (agent/context_compressor.py and agent/micro_compaction.py).
MICRO_HEAD = "You are a summarization agent creating a compact record of an ongoing conversation"
MICRO_SUMMARY = "## Current Running Summary\n"
MICRO_EXCHANGE = "\n\n## Next Exchange to Merge\n"
MICRO_TAIL = "\n\nReturn ONLY the updated summary text"
NO_SUMMARY = "(No previous summary yet.)"
BATCH_FIRST = "Create a structured checkpoint summary"
BATCH_TURNS = "TURNS TO SUMMARIZE:\n"
BATCH_FIRST_END = "\n\nUse this exact structure:"
BATCH_UPDATE = "You are updating a context compaction summary"
BATCH_PREVIOUS = "PREVIOUS SUMMARY:\n"
BATCH_NEW = "\n\nNEW TURNS TO INCORPORATE:\n"
BATCH_UPDATE_END = "\n\nUpdate the summary using this exact structure."
MEMORY = "\n\nMEMORY PROVIDER CONTEXT:\n"
FOCUS = '\n\nFOCUS TOPIC: "'
FOCUS_END = '"\nThis compaction should PRIORITISE'
TARGET = re.compile(r"Target ~(\d+) tokens")

_TAG = re.compile(r"(?:^|\n\n)\[(USER|ASSISTANT|SYSTEM|DEVELOPER|TOOL|FUNCTION|UNKNOWN|TOOL RESULT(?: [^\]\n]*)?)\]: ", re.M)
_CALL_LINE = re.compile(r"^  ([^\s()]+)\((.*)$")


@dataclass
class Prompt:
    """What a request turned out to be, and its parts."""

    kind: str  # micro | micro_defrag | batch | batch_update | passthrough
    summary: str | None = None
    turns: list[Message] = field(default_factory=list)
    focus: str | None = None
    budget_tokens: int | None = None
    text: str = ""  # micro_defrag: the summary to shorten


@dataclass
class Completion:
    text: str
    finish_reason: str  # stop | length (OpenAI's words)
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    kind: str = "passthrough"
    model: str = ""
    error: str | None = None
    folded: int = 0  # passthrough chunks folded to fit the window


# ------------------------------------------------------------------------------ recognising


def _between(text: str, start: str, end: str | None) -> str | None:
    i = text.find(start)
    if i < 0:
        return None
    i += len(start)
    if end is None:
        return text[i:]
    j = text.find(end, i)
    return text[i:j] if j >= 0 else None


def _drop_memory(turns_text: str) -> str:
    i = turns_text.rfind(MEMORY)
    return turns_text[:i] if i >= 0 else turns_text


def _focus(text: str) -> str | None:
    i = text.rfind(FOCUS)
    if i < 0:
        return None
    rest = text[i + len(FOCUS):]
    j = rest.find(FOCUS_END)
    focus = rest[:j] if j >= 0 else rest.split('"', 1)[0]
    return focus.strip() or None


def _budget(text: str) -> int | None:
    match = TARGET.search(text)
    return int(match.group(1)) if match else None


def parse_turns(text: str) -> list[Message]:
    """Hermes's `[USER]: ...` / `[ASSISTANT]: ...` / `[TOOL RESULT id]: ...` text back to messages.

    Tool calls come back with the ids of the results that follow them, so the summarizer's
    ledger pairs each command with its output as it would on the original transcript.
    """
    matches = list(_TAG.finditer(text or ""))
    messages: list[Message] = []
    for n, match in enumerate(matches):
        end = matches[n + 1].start() if n + 1 < len(matches) else len(text)
        body = text[match.end():end]
        tag = match.group(1)
        if tag.startswith("TOOL RESULT"):
            messages.append({"role": "tool", "tool_call_id": tag[len("TOOL RESULT"):].strip(), "content": body})
        elif tag == "ASSISTANT":
            content, calls = _split_tool_calls(body)
            message: Message = {"role": "assistant", "content": content}
            if calls:
                message["tool_calls"] = calls
            messages.append(message)
        else:
            messages.append({"role": "user" if tag == "UNKNOWN" else tag.lower(), "content": body})
    _pair_call_ids(messages)
    return messages


def _split_tool_calls(body: str) -> tuple[str, list[dict]]:
    i = body.rfind("[Tool calls:\n")
    stripped = body.rstrip()
    if i < 0 or not stripped.endswith("\n]"):
        return body, []
    block = stripped[i + len("[Tool calls:\n"): -2]
    entries: list[list[str]] = []
    for line in block.split("\n"):
        match = _CALL_LINE.match(line)
        if match:
            entries.append([match.group(1), match.group(2)])
        elif entries:
            entries[-1][1] += "\n" + line
    calls = []
    for name, args in entries:
        args = args[:-1] if args.endswith(")") else args
        calls.append({"id": "", "type": "function", "function": {"name": name, "arguments": "" if args == "..." else args}})
    return body[:i].rstrip("\n"), calls


def _pair_call_ids(messages: list[Message]) -> None:
    for i, message in enumerate(messages):
        calls = message.get("tool_calls") or []
        if not calls:
            continue
        ids = []
        for later in messages[i + 1:]:
            if later.get("role") != "tool":
                break
            ids.append(later.get("tool_call_id") or "")
        for k, call in enumerate(calls):
            call["id"] = ids[k] if k < len(ids) and ids[k] else f"call_{i}_{k}"


def recognise(messages: list[dict]) -> Prompt:
    """Which Hermes prompt this is, with its parts; `passthrough` when it is none of them."""
    users = [m for m in messages if m.get("role") == "user"]
    text = users[-1].get("content") if users else ""
    if not isinstance(text, str) or not text:
        return Prompt("passthrough")
    if text.startswith(MICRO_HEAD) and MICRO_SUMMARY in text and MICRO_EXCHANGE in text:
        start = text.find(MICRO_SUMMARY) + len(MICRO_SUMMARY)
        middle = text[start:]
        tail = middle.rfind(MICRO_TAIL)
        middle = middle[:tail] if tail >= 0 else middle
        summary, _, exchange = middle.partition(MICRO_EXCHANGE)
        summary = None if summary.strip() in ("", NO_SUMMARY) else summary.strip()
        turns = parse_turns(exchange)
        if summary is None and not turns and exchange.strip():
            # Hermes's defrag: the old summary arrives as the "exchange" with no summary to merge into.
            return Prompt("micro_defrag", text=exchange.strip())
        if not turns and exchange.strip():
            turns = [{"role": "assistant", "content": exchange.strip()}]
        return Prompt("micro", summary=summary, turns=turns)
    if BATCH_UPDATE in text and BATCH_PREVIOUS in text and BATCH_NEW in text:
        summary = _between(text, BATCH_PREVIOUS, BATCH_NEW)
        turns_text = _between(text, BATCH_NEW, BATCH_UPDATE_END)
        if summary is not None and turns_text is not None:
            return Prompt("batch_update", summary=summary.strip() or None, turns=parse_turns(_drop_memory(turns_text)),
                          focus=_focus(text), budget_tokens=_budget(text))
    if BATCH_FIRST in text and BATCH_TURNS in text:
        turns_text = _between(text, BATCH_TURNS, BATCH_FIRST_END)
        if turns_text is not None:
            return Prompt("batch", turns=parse_turns(_drop_memory(turns_text)), focus=_focus(text),
                          budget_tokens=_budget(text))
    return Prompt("passthrough")


# ------------------------------------------------------------------------------ running


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
        return _passthrough(request, model)
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
    if prompt.kind != "passthrough":
        done = complete(request, model=model, summarizer=summarizer)
        if done.text:
            yield done.text, None
        yield "", done
        return
    from hermes_mlx.engine import generate as engine

    messages, cap, folded, stats = _fit(request, model)
    if folded:
        done = _run(engine, messages, request, model, cap, stats, folded)
        yield done.text, None
        yield "", done
        return
    chunks = engine.stream_generate(messages, model=model, max_tokens=cap, temperature=request.temperature or 0.0,
                                    stop=request.stop or None, timeout=request.timeout)
    try:
        for piece in chunks:
            if piece.text:
                yield piece.text, None
            if piece.result is not None:
                r = piece.result
                yield "", Completion("", finish_reason(r.finish_reason), r.prompt_tokens, r.cached_tokens,
                                     r.generation_tokens, "passthrough", r.model)
    finally:
        chunks.close()


def _passthrough(request: ChatRequest, model: str | None) -> Completion:
    from hermes_mlx.engine import generate as engine

    messages, cap, folded, stats = _fit(request, model)
    return _run(engine, messages, request, model, cap, stats, folded)


def _run(engine: Any, messages: list[dict], request: ChatRequest, model: str | None, cap: int,
         stats: dict, folded: int) -> Completion:
    r = engine.generate(messages, model=model, max_tokens=cap, temperature=request.temperature or 0.0,
                        stop=request.stop or None, timeout=request.timeout)
    return Completion(
        r.text, finish_reason(r.finish_reason), r.prompt_tokens + stats["prompt"], r.cached_tokens + stats["cached"],
        r.generation_tokens + stats["generated"], "passthrough", r.model, folded=folded,
    )


def _fit(request: ChatRequest, model: str | None) -> tuple[list[dict], int, int, dict]:
    """Messages that fit the window with room for the output cap; the longest message is folded
    into model-written notes chunk by chunk, and cut in the middle only as a last resort."""
    from hermes_mlx.engine import generate as engine

    window = engine.model_info(model).context_window
    cap = min(request.max_tokens or DEFAULT_MAX_TOKENS, max(16, window // 2))
    messages = [dict(m) for m in request.messages]
    stats = {"prompt": 0, "cached": 0, "generated": 0}
    folded = 0
    for _ in range(3):
        total = engine.count_tokens(messages, model=model)
        if total + cap <= window:
            return messages, cap, folded, stats
        longest = max(range(len(messages)), key=lambda i: len(messages[i]["content"]))
        content = messages[longest]["content"]
        room = window - cap - (total - engine.count_tokens(content, model=model)) - 16
        notes, n = _fold(engine, content, model, stats, request.timeout, window)
        folded += n
        if engine.count_tokens(notes, model=model) >= engine.count_tokens(content, model=model) or room <= 0:
            break
        messages[longest] = {**messages[longest], "content": notes}
    # Last resort: keep the head and tail of the longest message.
    for _ in range(8):
        total = engine.count_tokens(messages, model=model)
        if total + cap <= window:
            break
        longest = max(range(len(messages)), key=lambda i: len(messages[i]["content"]))
        content = messages[longest]["content"]
        keep = max(0, int(len(content) * (window - cap) / max(total, 1)) - 64)
        messages[longest] = {**messages[longest], "content": content[: keep * 2 // 3] + "\n…\n" + content[len(content) - keep // 3:]}
        if keep == 0:
            cap = max(1, window - engine.count_tokens(messages, model=model))
    return messages, cap, folded, stats


def _fold(engine: Any, content: str, model: str | None, stats: dict, timeout: float | None,
          window: int) -> tuple[str, int]:
    """Model-written notes for `content`, one call per piece that fits the window."""
    note_tokens = max(8, min(FOLD_NOTE_TOKENS, window // 8))
    frame = [{"role": "system", "content": FOLD_SYSTEM}, {"role": "user", "content": ""}]
    room = min(FOLD_CHUNK_TOKENS, window - note_tokens - engine.count_tokens(frame, model=model) - 8)
    if room < 16:
        raise ValueError("window too small to fold")
    tokens = max(1, engine.count_tokens(content, model=model))
    per_chunk = max(64, int(len(content) * room / tokens))
    notes, pieces, i = [], 0, 0
    while i < len(content):
        size = per_chunk
        while size > 64 and engine.count_tokens(content[i:i + size], model=model) > room:
            size = size * 3 // 4
        piece = content[i:i + size]
        i += size
        pieces += 1
        r = engine.generate([frame[0], {"role": "user", "content": piece}], model=model, max_tokens=note_tokens,
                            temperature=0.0, timeout=timeout)
        stats["prompt"] += r.prompt_tokens
        stats["cached"] += r.cached_tokens
        stats["generated"] += r.generation_tokens
        notes.append(r.text.strip() or piece[:200])
    return "\n".join(notes), pieces

def micro_prompt(summary: str | None, exchange_text: str) -> list[dict]:
    """Hermes's micro-pass request, word for word (agent/micro_compaction.py); for self-checks,
    tests and benchmarks that must look exactly like Hermes on the wire."""
    block = summary if summary and summary.strip() else NO_SUMMARY
    user = (
        "You are a summarization agent creating a compact record of an "
        "ongoing conversation.  You are given a running summary and the "
        "next exchange from the conversation.  Merge the exchange's key "
        "decisions, requirements, file paths, and open questions into the "
        "summary.  Preserve the summary's structure.  Drop resolved details "
        "that are no longer relevant.  Add new decisions, file paths, and "
        "open questions.\n\n"
        "NEVER include API keys, tokens, passwords, secrets, credentials, "
        "or connection strings in the summary \u2014 replace any that appear "
        "with [REDACTED].\n\n"
        f"## Current Running Summary\n{block}\n\n"
        f"## Next Exchange to Merge\n{exchange_text}\n\n"
        "Return ONLY the updated summary text, no preamble or explanation. "
        "Do not include this instruction block in your output."
    )
    return [{"role": "system", "content": "You are a conversation summarization assistant."},
            {"role": "user", "content": user}]
