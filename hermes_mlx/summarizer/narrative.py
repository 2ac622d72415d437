"""The sentences the model may choose from, and the code-written sentence when it may not.

The summarizer never lets the model write: per chunk it offers a short list of the assistant's
own sentences (each turn's conclusion first), and when the model's choice is refused or
impossible, code writes the narrative line from the source itself.
"""

from __future__ import annotations

from .faithful import reports_user, statements
from .prompts import MAX_CHOICES
from .text import Turn, concluding_sentence
from .verify import instruction_like


def shortlist(turns: list[Turn], n: int = MAX_CHOICES) -> list[str]:
    """At most `n` assistant sentences for the model to choose from, in source order: each
    assistant turn's last sentence (its conclusion) first, latest turns first, then the other
    sentences of the latest turns. A chunk of many exchanges thus offers each one's outcome."""
    per_turn = [statements([t]) for t in turns if t.role == "assistant"]
    order = [x for sents in reversed(per_turn) for x in sents[-1:]]
    order += [x for sents in reversed(per_turn) for x in reversed(sents[:-1])]
    keep: list[str] = []
    for x in order:
        if x not in keep and len(keep) < n:
            keep.append(x)
    everything = [x for sents in per_turn for x in sents]
    return sorted(keep, key=everything.index)


def fallback_notes(turns: list[Turn]) -> list[str]:
    """Code-written narrative: the assistant's concluding sentence (never one that reports the
    user or reads as an instruction: the gate's rules), else the last command."""
    sentence = concluding_sentence(turns)
    if sentence and not reports_user(sentence) and not instruction_like(sentence):
        return [sentence]
    calls = [c for t in turns for c in t.tool_calls]
    if calls:
        return [
            f"Ran {calls[-1].name}: `{calls[-1].text[:150]}`"
            + (f" (+{len(calls) - 1} more tool calls)" if len(calls) > 1 else "")
        ]
    return []


def turns_in(chunk: str, turns: list[Turn]) -> list[Turn]:
    """The turns whose text went into a chunk (for its fallback sentence)."""
    return [t for t in turns if t.text.strip() and t.text.strip()[:60] in chunk] or turns
