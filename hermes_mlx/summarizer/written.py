"""What the agent wrote down, as opposed to what it said: the notes it kept as its own record (a
memory tool's notes, a todo tool's notes on the steps it marks done, an edit's account of its
change), and what another agent reported to it, which findings.py reads as findings; and the prose
it wrote into documents, which spare_lines.py reads.
"""

from __future__ import annotations

import json

from .agent_code import added_by_file
from .digest import done_notes
from .error_lines import is_error_line
from .harness import without_report_trailer
from .text import Turn
from .tool_results import json_result
from .vocabulary import (
    CHANGE_NOTE_KEYS,
    DELEGATE_TOOL,
    MEMORY_KEYS,
    MEMORY_NOT_SAVED,
    MEMORY_TOOL,
    PROSE_FILE,
    REASON_KEYS,
    REPORT_KEYS,
    USER_REFUSED,
    tool_action,
)

# the fields a sub-agent's JSON answer keeps its report in (`{"results": [{"summary": "…"}]}`): a report
# tool's, and where a program's answer is
REPORT_FIELDS = (*REPORT_KEYS, "report", "output", "content", "response")
# a report shorter than this is a status (`{"agentId": "0ea6…"}`, "Agent stopped: …"), no findings
REPORT_MIN_CHARS = 200


def delegate_reports(turns: list[Turn]) -> dict[int, str]:
    """What another agent reported, by the index of the tool turn that carries it (DELEGATE_TOOL:
    Claude Code's Task or Agent, Hermes's delegate_task): the sub-agent's findings in prose, read as
    the agent's own text ("**What's missing:** `ColorSchemeProvider` is NOT wrapped around the dialog
    content!"; Claude Code's Explore reports held facts in two corpora sessions and a held-out one).
    Less its harness's trailer, a JSON answer's report fields only; never a refusal, an error or a
    status too short to be a report."""
    delegates = {c.id for t in turns for c in t.tool_calls if DELEGATE_TOOL.search(c.name.lower())}
    out = {}
    for i, t in enumerate(turns):
        if t.role != "tool" or t.tool_call_id not in delegates:
            continue
        data = json_result(t.text)
        said = "\n\n".join(_report_fields(data)) if data is not None else without_report_trailer(t.text).strip()
        if data is not None and not said:  # a report under a key of its own (`final_report`): its longest text
            said = max(_strings(data), key=len, default="").strip()
        first = next((ln for ln in said.splitlines() if ln.strip()), "")
        failed = is_error_line(first) and "\n" not in said  # an error alone, not a report that opens with one
        if len(said) >= REPORT_MIN_CHARS and not USER_REFUSED.match(said) and not failed:
            out[i] = said
    return out


def _strings(value, depth: int = 0) -> list[str]:
    """Every string in a JSON answer, nested lists and objects followed."""
    if depth > 4:
        return []
    if isinstance(value, str):
        return [value]
    items = value[:50] if isinstance(value, list) else list(value.values())[:50] if isinstance(value, dict) else []
    return [x for v in items for x in _strings(v, depth + 1)]


def _report_fields(value, depth: int = 0) -> list[str]:
    """The strings under REPORT_FIELDS in a JSON answer, nested lists and objects followed."""
    if depth > 4:
        return []
    if isinstance(value, list):
        return [x for v in value[:50] for x in _report_fields(v, depth + 1)]
    if isinstance(value, dict):
        out = []
        for k, v in list(value.items())[:50]:
            if isinstance(v, str) and k.lower() in REPORT_FIELDS:
                out.append(v.strip())
            elif isinstance(v, (list, dict)):
                out += _report_fields(v, depth + 1)
        return out
    return []


def agent_notes(turn: Turn) -> list[str]:
    """What the agent wrote down in `turn`'s tool calls as its own record: memory notes
    (`memory_notes`), the notes a todo tool keeps on the steps it marks done (`digest.done_notes`)
    and an edit's own account of its change (`change_notes`)."""
    notes = memory_notes(turn) + [n for call in turn.tool_calls for n in done_notes(call.arguments)]
    return notes + change_notes(turn)


def change_notes(turn: Turn) -> list[str]:
    """The sentence an editing call gives for its change (CHANGE_NOTE_KEYS: Gemini CLI's `replace`
    `instruction`, "Define SerializableContent struct for custom JSON marshaling/unmarshaling of chat
    history."; Cursor's `edit_file` `instructions`, "I will add the missing `type-check` script."), and
    the reason any call gives for itself (REASON_KEYS: Codex CLI's `justification` for running a
    command outside its sandbox): what the agent did and why, in its own words, which its prose often
    does not repeat."""
    out = []
    for call in turn.tool_calls:
        keys = REASON_KEYS + (
            CHANGE_NOTE_KEYS if tool_action(call.name, call.arguments) in ("edited", "created") else ()
        )
        out += [v.strip() for k in keys if isinstance(v := call.arguments.get(k), str) and v.strip()]
    return out


# what is read of one edit to a document: a long spec's edit is a few thousand characters (a 5 MB
# guide written whole took seconds to read as sentences, where its first part took milliseconds)
DOCUMENT_CHARS = 20_000


def documented(turn: Turn) -> list[tuple[str, str]]:
    """(file, text) for the prose the agent wrote into documents (vocabulary.PROSE_FILE: a README, a
    spec, its CLAUDE.md) in `turn`'s editing calls, as each edit adds it (`agent_code.added_by_file`).
    An agent writes its reasons there and its prose often does not repeat them: "Using the CLI dev key
    would cause a keypair mismatch …" in Claude Code's CLAUDE.md, "A dedicated queue makes the worker
    topology simple …" in a spec Codex CLI patched."""
    out = []
    for call in turn.tool_calls:
        action = tool_action(call.name, call.arguments)
        if action in ("edited", "created"):
            added = added_by_file(call.arguments, action)
            out += [(path, _cut(text)) for path, text in added if PROSE_FILE.search(path.strip()) and text.strip()]
    return out


def _cut(text: str) -> str:
    """`text` up to DOCUMENT_CHARS, at the last line's end before it: no sentence shown cut in two."""
    return text if len(text) <= DOCUMENT_CHARS else text[:DOCUMENT_CHARS].rsplit("\n", 1)[0]


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
