"""Packing serialized exchanges into prompts that fit the model's window.

Input bigger than the window is split on exchange boundaries and folded in chunk by chunk; a
single exchange bigger than a chunk is split on message boundaries, and a single message bigger
than a chunk is trimmed head+tail with a marker. Nothing is dropped without a marker saying so,
and the ledger has already read the full text before any of this happens.
"""

from __future__ import annotations

from collections.abc import Callable

from .extract import error_lines, strip_injections
from .text import Turn, trim_middle
from .tool_results import exit_status, json_result, output_parts
from .vocabulary import EXIT_STATUS_KEYS


def fit_text(text: str, budget: int, count: Callable[[str], int]) -> str:
    """Trim text head+tail until it fits `budget` tokens."""
    n = count(text)
    if n <= budget:
        return text
    chars = len(text)
    for _ in range(8):
        chars = max(200, int(chars * budget / max(n, 1) * 0.9))
        text = trim_middle(text, chars * 2 // 3, chars // 3)
        n = count(text)
        if n <= budget or chars <= 200:
            break
    return text


def pack(units: list[str], budget: int, count: Callable[[str], int]) -> list[str]:
    """Greedy, in order: consecutive units joined while the sum stays under budget."""
    chunks: list[str] = []
    current: list[str] = []
    used = 0
    for unit in units:
        unit = fit_text(unit, budget, count)
        n = count(unit) + 1
        if current and used + n > budget:
            chunks.append("\n".join(current))
            current, used = [], 0
        current.append(unit)
        used += n
    if current:
        chunks.append("\n".join(current))
    return chunks


def chunk_turns(
    groups: list[list[Turn]],
    budget: int,
    count: Callable[[str], int],
    *,
    tool_head: int = 300,
    tool_tail: int = 150,
) -> list[str]:
    """Prompt chunks for groups of turns (exchanges); a group over budget is split per line."""
    units: list[str] = []
    for group in groups:
        text = card(group, tool_head=tool_head, tool_tail=tool_tail)
        if not text.strip():
            continue
        if count(text) <= budget:
            units.append(text)
        else:
            units.extend(u for u in text.split("\n") if u.strip())
    return pack(units, budget, count)


def card(turns: list[Turn], *, prose_chars: int = 700, tool_head: int = 300, tool_tail: int = 150) -> str:
    """What the model sees of an exchange: the user's and assistant's prose, one line per tool
    call with its exit status and first error lines. Raw tool output (most of the tokens, and
    what a small model copies instead of summarizing) appears, trimmed head+tail, only when the
    exchange has no prose at all. The ledger has already read everything in full."""
    results = {t.tool_call_id: t.text for t in turns if t.role == "tool" and t.tool_call_id}
    loose = [t.text for t in turns if t.role == "tool" and not t.tool_call_id]
    has_prose = any(t.text.strip() for t in turns if t.role != "tool")
    out: list[str] = []
    for t in turns:
        if t.role == "tool":
            if not has_prose:
                body = trim_middle(strip_injections(_tool_view(t.text)), tool_head, tool_tail) or "(no output)"
                out.append(f"Output: {body}")
            continue
        text = " ".join(t.text.split())
        if text:
            tag = "User" if t.role == "user" else "Note" if t.role == "system" else "Assistant"
            out.append(f"{tag}: {trim_middle(text, prose_chars * 2 // 3, prose_chars // 3)}")
        for call in t.tool_calls:
            result = results.get(call.id) if call.id else (loose.pop(0) if loose else None)
            line = call.text.splitlines()[0][:160] if call.text else call.name
            status = exit_status(result) if result is not None else None
            out.append(f"Ran: {line}" + (f" (exit {status})" if status is not None else ""))
            if has_prose and result and status not in (0,):
                out.extend(f"  error: {e}" for e in error_lines(_tool_view(result), limit=2))
    return "\n".join(out)


def _tool_view(text: str) -> str:
    """A JSON tool result ({"output": ..., "exit_code": N}) as plain text the model can read."""
    text = text.strip()
    data = json_result(text)
    if data is not None:
        parts = output_parts(data)
        code = next((data[k] for k in EXIT_STATUS_KEYS if isinstance(data.get(k), int)), None)
        if parts or code is not None:
            return ("" if code is None else f"[exit {code}] ") + "\n".join(parts)
    return text
