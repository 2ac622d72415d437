"""What the agent wrote down, as opposed to what it said: the notes it kept as its own record (a
memory tool's notes, a todo tool's notes on the steps it marks done), which findings.py reads as
findings.
"""

from __future__ import annotations

import json

from .digest import done_notes
from .text import Turn
from .vocabulary import MEMORY_KEYS, MEMORY_NOT_SAVED, MEMORY_TOOL


def agent_notes(turn: Turn) -> list[str]:
    """What the agent wrote down in `turn`'s tool calls as its own record: memory notes
    (`memory_notes`) and the notes a todo tool keeps on the steps it marks done (`digest.done_notes`)."""
    return memory_notes(turn) + [n for call in turn.tool_calls for n in done_notes(call.arguments)]


def memory_notes(turn: Turn) -> list[str]:
    """What the agent saved to its memory in `turn`'s tool calls (vocabulary.MEMORY_TOOL): its own
    note of what matters, in its own words."""
    out = []
    for call in turn.tool_calls:
        action = " ".join(str(call.arguments.get(k) or "") for k in ("action", "operation", "command"))
        if not MEMORY_TOOL.search(call.name) or MEMORY_NOT_SAVED.search(call.name + " " + action):
            continue
        out += _saved_text(call.arguments)
    return out


def _saved_text(value, key: str = "", depth: int = 0) -> list[str]:
    """The strings under MEMORY_KEYS, nested as the MCP memory server nests them
    (`{"observations": [{"entityName": "x", "contents": ["..."]}]}`)."""
    if depth > 6:
        return []
    if isinstance(value, str) and value.lstrip().startswith(("[{", "{")):  # records stay JSON (text._argument)
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            pass
    if isinstance(value, str):
        return [value.strip()] if key.lower() in MEMORY_KEYS and value.strip() else []
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in _saved_text(v, str(k), depth + 1)]
    if isinstance(value, list):
        return [x for v in value for x in _saved_text(v, key, depth + 1)]
    return []
