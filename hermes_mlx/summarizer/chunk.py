"""Packing serialized exchanges into prompts that fit the model's window.

Input bigger than the window is split on exchange boundaries and folded in chunk by chunk; a
single exchange bigger than a chunk is split on message boundaries, and a single message bigger
than a chunk is trimmed head+tail with a marker. Nothing is dropped without a marker saying so,
and the ledger has already read the full text before any of this happens.
"""

from __future__ import annotations

from collections.abc import Callable

from .text import Turn, card, trim_middle


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
