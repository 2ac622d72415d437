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


# aider's console as its chat history quotes it inside the reply it follows, each line a markdown quote with
# a line break (`> Applied edit to window_craftcommand.rb  `, `> Commit 8268239 Centered …  `, `> ##
# SearchReplaceNoExactMatch: …  `): two held-out aider sessions, converted by different hands, kept it there
_QUOTE_RUN = re.compile(r"(?:^>(?: [^\n]*)?(?:\n|\Z))+", re.M)  # `> x` or a bare `>`, never `>>>>>>> REPLACE`
_CONSOLE_SAYS = re.compile(
    r"^> (?:Applied edit to \S|Commit [0-9a-f]{7,40} \S|Model \S+ has hit a token limit|The LLM did not conform|"
    r"Only \d+ reflections allowed)",
    re.M,
)
_COMMIT = re.compile(r"^> Commit [0-9a-f]{7,40} \S")
_APPLIED = re.compile(r"^Applied edit to (.+?)\s*$", re.M)
_NOT_APPLIED = re.compile(r"^#* ?SearchReplaceNoExactMatch: .{0,200}? lines in (.+?)\s*$", re.M)


def quoted_console(text: str) -> tuple[str, str]:
    """(`text` less the runs of quoted lines that are aider's console, those lines unquoted): a run
    counts when a line of it is one only aider prints (_CONSOLE_SAYS) and most of its lines end in
    markdown's line break; "" of the console when there is none. Its commit lines stay in the
    reply, each a finding in the shape of a result (as one command's history, 29 edits' commits
    were worth a share each, and went)."""
    kept, console, at = [], [], 0
    for run in _QUOTE_RUN.finditer(text or ""):
        lines = run.group(0).splitlines()
        said = [ln for ln in lines if ln.strip() != ">"]  # a bare `>` is any quote's blank line
        if not _CONSOLE_SAYS.search(run.group(0)) or 2 * sum(ln.endswith("  ") for ln in said) < len(said):
            continue
        commit = [bool(_COMMIT.match(ln)) for ln in lines]  # a commit stays the reply's: a finding of its own
        kept.append(text[at : run.start()] + "".join(f"{ln}\n" for ln, c in zip(lines, commit) if c))
        console += [ln[2:].rstrip() if ln.startswith("> ") else "" for ln, c in zip(lines, commit) if not c]
        at = run.end()
    if not console:
        return text, ""
    return ("".join(kept) + text[at:]).strip(), "\n".join(console).strip()


def console_edits(console: str) -> tuple[list[str], list[str]]:
    """(the files aider's console says it applied edits to, those whose edit it says failed)."""
    applied = list(dict.fromkeys(m.group(1) for m in _APPLIED.finditer(console)))
    return applied, list(dict.fromkeys(m.group(1) for m in _NOT_APPLIED.finditer(console)))
