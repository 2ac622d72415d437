"""What a summary must never hold, counted: issue 27's zero figures, checked on any session.

A read's output taken for a command's result (`sed -n 1,80p x.js` → a line of x.js), a line of
source read back counted as an error (`throw new Error(...)` in a file the agent viewed), a
command the user typed to the agent itself (`/add`, `/undo`) in Progress, an agent's wrapper
around a command's output taken for its result (Codex's `Chunk ID: 6d2ab3`), a line said twice or
one that repeats another (`findings.near_duplicate`), a fragment (a code span or bold cut open,
a line cut at `...`, a list's item without its lead-in), a heading with nothing under it. Each
count is 0 in a clean summary; `fidelity` and the per-agent benchmark report them beside the
facts kept.
"""

from __future__ import annotations

import re

from hermes_mlx.summarizer.api import Message
from hermes_mlx.summarizer.error_lines import without_place
from hermes_mlx.summarizer.findings import CONTINUATION, near_duplicate
from hermes_mlx.summarizer.ledger import OUTCOME_SEP
from hermes_mlx.summarizer.narrative import RAN_LINE
from hermes_mlx.summarizer.outcomes import counted_by_read, outcome_of
from hermes_mlx.summarizer.shell_words import read_only
from hermes_mlx.summarizer.summary import parse, said_in_goal
from hermes_mlx.summarizer.text import Turn, command_of, normalize
from hermes_mlx.summarizer.tool_results import tool_output
from hermes_mlx.summarizer.vocabulary import READ_ANSWER_CHARS, RUN_LOG, SLASH_COMMAND, reads_contents

HYGIENE = (
    "read_results",
    "source_errors",
    "wrapper_results",
    "agent_commands",
    "duplicates",
    "fragments",
    "empty_sections",
)


def _reads_only(line: str, turns: list[Turn], calls: dict) -> bool:
    """`line` occurs in the session only in what reads printed back at length (a file's text), by
    the ledger's own rule (vocabulary.reads_contents; a short answer such as EISDIR may be an error)."""
    in_read, elsewhere = False, False
    for t in turns:
        if line not in t.text:
            continue
        call = calls.get(t.tool_call_id)
        cmd = command_of(call.name, call.arguments) if call else ""
        read = (
            t.role == "tool"
            and call is not None
            and reads_contents(call.name, cmd, call.arguments)
            and not RUN_LOG.search(cmd)
        )
        if read and len(tool_output(t.text)) > READ_ANSWER_CHARS:
            in_read = True
        else:
            elsewhere = True
    return in_read and not elsewhere


# a wrapper's own word for no output, read as the output: Gemini CLI's `Error: (none)`, `(empty)`
_SAYS_NOTHING = re.compile(r"^(?:[A-Z][\w ]{0,20}: )?\((?:none|empty)\)$")


def _wrapper_only(line: str, turns: list[Turn]) -> bool:
    """`line` occurs in tool results only in the wrapper an agent puts around what a command
    printed (tool_results.tool_output leaves it out), never in the output itself."""
    raw = [t.text for t in turns if t.role == "tool" and line in t.text]
    return bool(raw) and not any(line in tool_output(text) for text in raw)


def _fragment(line: str) -> bool:
    """A line cut open: an odd number of backticks or of `**`, cut at an ellipsis, or a list's
    item that goes on from a lead-in it lost (findings.CONTINUATION: "the **same return values**")."""
    prose = re.sub(r"`[^`]*`", "", line)  # `**kwargs` in a code span is no bold
    cut = line.count("`") % 2 == 1 or prose.count("**") % 2 == 1 or line.rstrip().endswith(("...", "…"))
    return cut or bool(CONTINUATION.match(line))


def _command_of_line(line: str) -> str:
    """A progress line as the command it may stand for: a line of its own (`/add x`), or the
    command of the line code wrote for it (narrative.RAN_LINE: "Ran x: `/undo`")."""
    ran = RAN_LINE.match(line)
    return ran[1] if ran else line


def hygiene(summary: str, messages: list[Message]) -> dict[str, list[str]]:
    """Each zero figure's offending lines in `summary`, made from `messages` (empty lists: clean)."""
    s = parse(summary)
    led = s.ledger
    out: dict[str, list[str]] = {k: [] for k in HYGIENE}
    for c in led.commands:
        family, _ = outcome_of(c.outcome)
        if c.outcome and read_only(c.cmd) and not RUN_LOG.search(c.cmd) and family != "failure":
            if counted_by_read(c.cmd, c.latest_outcome()):
                continue  # git's count for `git diff --stat`, no line of a file
            out["read_results"].append(f"{c.cmd} → {c.outcome}")
    turns = normalize(messages)
    calls = {c.id: c for t in turns for c in t.tool_calls}
    said = [(f"{c.cmd} → {x}", x) for c in led.commands for x in c.outcome.split(OUTCOME_SEP) if x.strip()]
    for shown, line in said + [(e.line, e.line) for e in led.errors]:
        line = without_place(line).strip().rstrip("…")
        if len(line) >= 6 and (_wrapper_only(line, turns) or _SAYS_NOTHING.match(line)):
            out["wrapper_results"].append(shown)
    for e in led.errors:
        words = without_place(e.line)
        if len(words) >= 12 and _reads_only(words, turns, calls):
            out["source_errors"].append(e.line)
    out["agent_commands"] = [x for x in s.progress if SLASH_COMMAND.match(_command_of_line(x))]
    narrative = [*s.progress, *s.decisions, *s.remaining, *s.questions]
    for i, x in enumerate(narrative):
        if any(x == y or near_duplicate(x, y) for y in narrative[:i]):
            out["duplicates"].append(x)
    # a user's sentence the Goal already shows whole, listed again (a directive read back from a listed
    # message is in the ledger, not listed: summary.directives_within)
    said, listed = [*s.ledger.constraints, *s.ledger.asks], set(summary.splitlines())
    out["duplicates"] += [x for x in said if x != s.goal and said_in_goal(x, s.goal) and f"- {x}" in listed]
    bullets = [ln for ln in summary.splitlines() if ln.startswith("- ")]  # any section's line said twice
    out["duplicates"] += [ln for i, ln in enumerate(bullets) if ln in bullets[:i] and ln[2:] not in out["duplicates"]]
    out["fragments"] = [x for x in s.progress if _fragment(x)]
    lines = summary.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("## ") and not any(ln.strip() for ln in _until_next_heading(lines[i + 1 :])):
            out["empty_sections"].append(line)
    return out


def _until_next_heading(lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        if line.startswith("## "):
            break
        out.append(line)
    return out
