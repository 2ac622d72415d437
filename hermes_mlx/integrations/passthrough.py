"""Requests we do not recognise as Hermes's compaction prompts: sent to the model as they are,
folded in chunks when they do not fit the window, never refused for length.

`max_tokens` (else DEFAULT_MAX_TOKENS) bounds everything the model writes for one request: the
fold notes count against it, so a long prompt with a small cap is cut rather than folded, and
the usage reported is what was really generated.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .openai_shapes import ChatRequest, finish_reason

DEFAULT_MAX_TOKENS = 1024  # our output cap when the request names none (Hermes often sends none)
FOLD_CHUNK_TOKENS = 1536
FOLD_NOTE_TOKENS = 200
MIN_NOTE_TOKENS = 16  # notes shorter than this keep nothing worth the prompt read: cut instead
FOLD_SYSTEM = (
    "Condense the text below into short notes. Keep every file path, command, number, error "
    "message and decision exactly as written. Write only the notes."
)


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
    # compaction: chunks whose narrative code picked because the deadline came (the summarizer's
    # details["model_calls_skipped"]): still an answer, but not the one the model gives in time
    model_calls_skipped: int = 0


def stream(request: ChatRequest, model: str | None) -> Iterator[tuple[str, Completion | None]]:
    """(text piece, None)... then ("", Completion); closing the generator stops the engine at once."""
    from hermes_mlx.engine import generate as engine

    messages, cap, folded, stats = _fit(request, model)
    if folded:
        done = _run(engine, messages, request, model, cap, stats, folded)
        yield done.text, None
        yield "", done
        return
    chunks = engine.stream_generate(messages, **_sampling(request, model, cap))
    try:
        for piece in chunks:
            if piece.text:
                yield piece.text, None
            if piece.result is not None:
                yield "", _completion(piece.result, "", stats, folded)
    finally:
        chunks.close()


def complete(request: ChatRequest, model: str | None) -> Completion:
    from hermes_mlx.engine import generate as engine

    messages, cap, folded, stats = _fit(request, model)
    return _run(engine, messages, request, model, cap, stats, folded)


def _run(
    engine: Any, messages: list[dict], request: ChatRequest, model: str | None, cap: int, stats: dict, folded: int
) -> Completion:
    r = engine.generate(messages, **_sampling(request, model, cap))
    return _completion(r, r.text, stats, folded)


def _sampling(request: ChatRequest, model: str | None, cap: int) -> dict:
    """The engine arguments for the answer itself, streamed or not."""
    return dict(
        model=model,
        max_tokens=cap,
        temperature=request.temperature or 0.0,
        stop=request.stop or None,
        timeout=request.timeout,
    )


def _completion(r: Any, text: str, stats: dict, folded: int) -> Completion:
    """The answer's usage plus what folding the prompt cost (stats), so usage is all that ran."""
    return Completion(
        text,
        finish_reason(r.finish_reason),
        r.prompt_tokens + stats["prompt"],
        r.cached_tokens + stats["cached"],
        r.generation_tokens + stats["generated"],
        "passthrough",
        r.model,
        folded=folded,
    )


def _fit(request: ChatRequest, model: str | None) -> tuple[list[dict], int, int, dict]:
    """Messages that fit the window with room for the answer; the longest message is folded into
    model-written notes chunk by chunk while the output budget allows, and cut in the middle as a
    last resort. The returned cap is what the answer may still write within the budget."""
    from hermes_mlx.engine import generate as engine

    window = engine.model_info(model).context_window
    budget = request.max_tokens or DEFAULT_MAX_TOKENS
    answer = min(budget, max(16, window // 2))
    reserve = max(1, min(answer, budget // 2))  # kept for the answer whatever the notes take
    messages = [dict(m) for m in request.messages]
    stats = {"prompt": 0, "cached": 0, "generated": 0}
    folded = 0
    cap = answer
    for _ in range(3):
        engine.check_scope()
        cap = max(1, min(answer, budget - stats["generated"]))
        total = engine.count_tokens(messages, model=model)
        if total + cap <= window:
            return messages, cap, folded, stats
        longest = max(range(len(messages)), key=lambda i: len(messages[i]["content"]))
        content = messages[longest]["content"]
        room = window - cap - (total - engine.count_tokens(content, model=model)) - 16
        spare = budget - stats["generated"] - reserve
        notes, n = _fold(engine, content, model, stats, request.timeout, window, spare)
        folded += n
        if not n or engine.count_tokens(notes, model=model) >= engine.count_tokens(content, model=model) or room <= 0:
            break
        messages[longest] = {**messages[longest], "content": notes}
    cap = max(1, min(answer, budget - stats["generated"]))
    # Last resort: keep the head and tail of the longest message.
    for _ in range(8):
        engine.check_scope()
        total = engine.count_tokens(messages, model=model)
        if total + cap <= window:
            break
        longest = max(range(len(messages)), key=lambda i: len(messages[i]["content"]))
        content = messages[longest]["content"]
        keep = max(0, int(len(content) * (window - cap) / max(total, 1)) - 64)
        messages[longest] = {
            **messages[longest],
            "content": content[: keep * 2 // 3] + "\n…\n" + content[len(content) - keep // 3 :],
        }
        if keep == 0:
            cap = max(1, min(cap, window - engine.count_tokens(messages, model=model)))
    return messages, cap, folded, stats


def _fold(
    engine: Any, content: str, model: str | None, stats: dict, timeout: float | None, window: int, spare: int
) -> tuple[str, int]:
    """Model-written notes for `content`, one call per piece that fits the window, writing no
    more than `spare` tokens in all; ("", 0) when that is too few for useful notes."""
    frame = [{"role": "system", "content": FOLD_SYSTEM}, {"role": "user", "content": ""}]
    room = min(
        FOLD_CHUNK_TOKENS,
        window - max(8, min(FOLD_NOTE_TOKENS, window // 8)) - engine.count_tokens(frame, model=model) - 8,
    )
    if room < 16:
        raise ValueError("window too small to fold")
    tokens = max(1, engine.count_tokens(content, model=model))
    pieces_needed = -(-tokens // room)
    note_tokens = min(FOLD_NOTE_TOKENS, window // 8, spare // pieces_needed)
    if note_tokens < MIN_NOTE_TOKENS:
        return "", 0
    per_chunk = max(64, int(len(content) * room / tokens))
    notes, pieces, i, start = [], 0, 0, stats["generated"]
    while i < len(content):
        left = spare - (stats["generated"] - start)
        if left < MIN_NOTE_TOKENS:  # the budget is spent: the rest stays as written (and may be cut)
            notes.append(content[i:])
            break
        engine.check_scope()  # stops between chunks too, not only inside the engine
        size = per_chunk
        while size > 64 and engine.count_tokens(content[i : i + size], model=model) > room:
            size = size * 3 // 4
        piece = content[i : i + size]
        i += size
        pieces += 1
        r = engine.generate(
            [frame[0], {"role": "user", "content": piece}],
            model=model,
            max_tokens=min(note_tokens, left),
            temperature=0.0,
            timeout=timeout,
        )
        stats["prompt"] += r.prompt_tokens
        stats["cached"] += r.cached_tokens
        stats["generated"] += r.generation_tokens
        notes.append(r.text.strip() or piece[:200])
    return "\n".join(notes), pieces
