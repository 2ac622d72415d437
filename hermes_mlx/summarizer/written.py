"""What the agent wrote down, as opposed to what it said: the notes it kept as its own record (a
memory tool's notes, a todo tool's notes on the steps it marks done), which are findings, and the
text it wrote into files, which a message that repeats it in bulk does not make findings.
findings.py reads both.
"""

from __future__ import annotations

import json
import re

from .digest import done_notes
from .text import Turn
from .vocabulary import EDIT_OLD_KEYS, MEMORY_KEYS, MEMORY_NOT_SAVED, MEMORY_TOOL, is_file_key, tool_action

WRITTEN_CHARS = 200  # an argument this long that a call writes to a file is the file's text
WRITTEN_READ = 400_000  # characters of it read, the latest writes first: what a message repeats is near
# sentences of one message a file written holds before the message counts as that file's text said
# again (a plan shown as it is saved: 27; a lecture told from its notes: 5 to 9); fewer are a
# finding the agent also wrote down (a root cause in INVESTIGATION.md), which stays a finding
WRITTEN_ECHO = 4
ITEM_MARK = re.compile(r"^(?:[-*•]|\d+[.)]|\(?[a-z]\))\s+")


def bare(sentence: str) -> str:
    """A sentence as a file may hold it: no list marker, no closing full stop."""
    return ITEM_MARK.sub("", sentence.strip()).rstrip(".")


def written_text(turns: list[Turn]) -> str:
    """What the span's calls write into files (a plan shown for approval as it is saved as
    `plan.md`, a lecture's notes written to a file as a diff and told in the chat), not what an
    edit replaces: a message that says much of it again (WRITTEN_ECHO sentences) repeats that
    file's text, which Files names (`plan.md` (created)), rather than finding anything. A memory
    note or a message sent is no file."""
    out, left = [], WRITTEN_READ
    for t in reversed(turns):
        for c in t.tool_calls:
            if tool_action(c.name, c.arguments) not in ("created", "edited") or not any(map(is_file_key, c.arguments)):
                continue
            for k, v in c.arguments.items():
                if isinstance(v, str) and len(v) >= WRITTEN_CHARS and k not in EDIT_OLD_KEYS and left > 0:
                    out.append(v[:left])
                    left -= len(out[-1])
    return "\n".join(out)


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
