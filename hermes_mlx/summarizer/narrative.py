"""The code-written narrative line, for when the model may not choose one.

The summarizer never lets the model write: when its choice is refused or impossible (no
sentence to copy, no time left), code writes the line from the source itself.
"""

from __future__ import annotations

from .faithful import reports_user
from .text import Turn, concluding_sentence
from .verify import instruction_like


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
