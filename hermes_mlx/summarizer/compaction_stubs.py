"""Hermes's stand-ins for the tool outputs its compaction pruned: one line that names the call.

Hermes's compressor (agent/context_compressor.py `_summarize_tool_result`) replaces an old tool
output with a line such as `[terminal] ran `npm run build` -> exit 0, 1 lines output`,
`[write_file] wrote to src/App.tsx (180 lines)`, `[read_file] read src/App.tsx from line 1 (10,024
chars)` or `[patch] replace in src/InputBar.tsx (900 chars result)`; since its #131244 a call that
failed ends `FAILED: <reason>`. Ports of that compressor write the same lines. A session Hermes
compacted before carries them, and an export that keeps no call arguments (Hermes's markdown
export) names the command or file only there: each is read back as the call's own.
"""

from __future__ import annotations

import re

# `[tool] what it did`, one line, for one of Hermes's tools; the first words say which argument the rest
# names (a program's own `[build] done in 2.3s (cached)` or `[x] Tests FAILED: 3` is no stub)
_STUB = re.compile(
    r"\A\[(?P<tool>terminal|read_file|write_file|patch|search_files|web_search|web_extract|execute_code|"
    r"delegate_task|skill_\w+|memory|cronjob|process|text_to_speech|browser_\w+|vision_\w+|session_search|todo|"
    r"send_message|clarify)\] (?P<said>[^\n]{1,2000})\Z"
)
_NAMES = (
    ("command", re.compile(r"^ran `(?P<value>.+?)` -> exit (?:-?\d+\b|\?)")),
    (
        "path",
        re.compile(
            r"^(?:wrote to (?P<value>[^\s?]\S*) \(\d[\d,]* lines\)|read (?P<read>[^\s?]\S*) from line \d+ \("
            r"|(?:replace|patch) in (?P<patched>[^\s?]\S*) \()"
        ),
    ),
)
_FAILED = re.compile(r"\bFAILED: (?P<reason>[^\n]+)$")


def is_stub(text: str) -> bool:
    """A compaction stub that names its call (a command run, a file read or changed): no output."""
    return bool(stub_arguments(text))


def stub_arguments(text: str) -> dict[str, str]:
    """The argument a compaction stub names (`{"command": "npm run build"}`, `{"path": "src/a.py"}`),
    or {} for any other text. A command Hermes clipped ends in `...` as it clipped it."""
    m = _STUB.match((text or "").strip())
    if not m:
        return {}
    for key, shape in _NAMES:
        named = shape.match(m.group("said"))
        if named:
            return {key: next(v for v in named.groups() if v)}
    return {}


def stub_failure(text: str) -> str:
    """The reason a compaction stub says its call failed (`FAILED: File not found: gone.py`), or ""."""
    m = _STUB.match((text or "").strip())
    failed = _FAILED.search(m.group("said")) if m else None
    return failed.group("reason").strip() if failed else ""


def stubbed_calls(turns: list) -> list[tuple[int, int, dict[str, str]]]:
    """(turn index, call index, arguments) of each call recorded with none of its own whose output is
    a compaction stub that names them: `text.normalize` reads the call again with them."""
    at = {c.id: (i, k) for i, t in enumerate(turns) if t.role == "assistant" for k, c in enumerate(t.tool_calls)}
    out = []
    for t in turns:
        place = at.get(t.tool_call_id) if t.role == "tool" and t.tool_call_id else None
        if place is None:
            continue
        call = turns[place[0]].tool_calls[place[1]]
        if not any(str(v).strip() for v in call.arguments.values()) and (named := stub_arguments(t.text)):
            out.append((*place, named))
    return out
