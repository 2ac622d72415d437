"""Agents that act in text: the command in a fenced block of the assistant's message, what it
printed in the next user message.

mini-swe-agent writes "THOUGHT: … ```bash\\nls\\n```" and gets back `<returncode>0</returncode>
<output>…</output>`; SWE-agent without function calls writes its command in a ``` block and gets
back the output with its terminal's `(Open file: …)` / `(Current directory: …)` / `bash-$`; a
ReAct agent gets `Observation: …`. Exported as they ran, that output is a user message, and the
summary had read it as the user's words: no Commands, no Errors, the output in User Messages and
Constraints. `text.normalize` makes such a pair what a function-calling agent records: a `bash` call and its
tool result, so every later reader sees one shape.
"""

from __future__ import annotations

import re

# the last fenced block of a message: its language, if any, and its body
_FENCE = re.compile(r"```([\w+-]*)[ \t]*\n(.*?)\n?```", re.S)
_SHELL_FENCES = frozenset({"", "bash", "sh", "shell", "console", "zsh"})
# what a harness sends back after running a text action, never what a person types: mini-swe-agent's
# envelope; a ReAct loop's `Observation:` only after a block labelled as shell (a person may answer a
# reply that ends in an unlabelled block with "Observation: the page is still blank")
OBSERVATION = re.compile(r"\A\s*<returncode>\s*-?\d+\s*</returncode>", re.I)
_REACT_OBSERVATION = re.compile(r"\A\s*observation:", re.I)
# SWE-agent's terminal prompt after what a command printed; its task message ends with it too, so it
# says "output" only right after an action
_PROMPT_AFTER = re.compile(r"\(Current directory: [^)\n]*\)[ \t]*\n[ \t]*bash-[\d.]*\$\s*\Z")


def _last_fence(text: str) -> tuple[str, str]:
    """The last fenced block of `text`: (its language, lower-cased, or "" unlabelled; its body)."""
    blocks = list(_FENCE.finditer(text or ""))
    return (blocks[-1].group(1).lower(), blocks[-1].group(2).strip()) if blocks else ("", "")


def fenced_command(text: str) -> str:
    """The command of a text action: the last fenced block, when it is shell or unlabelled."""
    language, body = _last_fence(text)
    return body if language in _SHELL_FENCES else ""


def answers_action(action: str, calls: bool, reply: str) -> bool:
    """`reply`, a user turn, is what a harness sent back after running the text action of the
    assistant turn before it (`action`, its text; `calls`, whether it called tools instead): an
    observation's shape right after a fenced command. The compactors fold it with the action: it
    is no user message to keep."""
    language, body = _last_fence(action)
    if calls or not body or language not in _SHELL_FENCES:
        return False
    if OBSERVATION.search(reply or "") or _PROMPT_AFTER.search((reply or "")[-2000:]):
        return True
    return bool(_REACT_OBSERVATION.search(reply or "")) and language != ""  # a block labelled as shell


def text_actions(turns: list) -> list[tuple[int, str]]:
    """(index, command) of each text action whose output came back as a user turn: an assistant
    turn with no calls whose last fenced block is a command, then a user turn in an observation's
    shape. `text.normalize` makes each pair a call and its tool result."""
    out = []
    for i, (t, nxt) in enumerate(zip(turns, turns[1:], strict=False)):
        if t.role == "assistant" and nxt.role == "user" and answers_action(t.text, bool(t.tool_calls), nxt.text):
            out.append((i, fenced_command(t.text)))
    return out
