"""The narrative sections kept by code: the goal, progress lines added without repeats, and the
code-written line for when the model may not choose one.

The summarizer never lets the model write: when its choice is refused or impossible (no
sentence to copy, no time left), code writes the line from the source itself.
"""

from __future__ import annotations

import re

from .faithful import directive_shaped, goal_of, is_go_ahead, reports_user
from .findings import restated
from .summary import Summary
from .text import Turn, concluding_sentence
from .tidy import one_line
from .verify import instruction_like, main_script
from .vocabulary import SLASH_COMMAND, USER_SENTENCE_END

# the line code writes for an exchange with no sentence to copy: `Ran terminal: `make test``
RAN_LINE = re.compile(r"^Ran [\w.-]+: `([^`]*)`")


def fallback_notes(turns: list[Turn]) -> list[str]:
    """Code-written narrative: the assistant's concluding sentence (never one that reports the
    user or reads as an instruction: the gate's rules; never a bare go-ahead, "Ok." had been a whole
    Progress line), else the last command, as Commands shows one of many lines."""
    sentence = concluding_sentence(turns)
    said = bool(sentence) and not is_go_ahead(sentence)
    if said and not reports_user(sentence) and not instruction_like(sentence):
        return [sentence]
    # a command the user typed to the agent itself (aider's `/undo`) is no work of the agent's
    calls = [c for t in turns for c in t.tool_calls if not SLASH_COMMAND.match(c.text or "")]
    if calls:
        shown = one_line(calls[-1].text)[:150]  # on one line: a patch's call text runs to many
        ran = f"Ran {calls[-1].name}" + (f": `{shown}`" if shown and "`" not in shown else "")
        return [ran + (f" (+{len(calls) - 1} more tool calls)" if len(calls) > 1 else "")]
    return []


def template_language(s: Summary, turns: list[Turn]) -> str:
    sample = (s.goal + " ".join(s.progress[-3:]) + " ".join(t.text[:500] for t in turns if t.role != "tool"))[:4000]
    script = main_script(sample)
    return {"han": "zh", "ja": "ja"}.get(script, "")


def set_goal(s: Summary, turns: list[Turn]) -> None:
    """Goal is the user's first real request (faithful.goal_of); a directive-shaped goal read
    from an older summary moves to the constraints, where the user's directives belong."""
    if s.goal and not directive_shaped(s.goal):
        return
    if s.goal:
        s.ledger.add_list("constraints", [s.goal])
    s.goal = goal_of(turns)
    if s.goal.endswith("…"):  # a long request: the message User Messages lists, once (not cut twice)
        pieces = [p.strip(" …") for p in USER_SENTENCE_END.split(s.goal) if p.strip(" …")]
        s.goal = next((a for a in s.ledger.asks if all(p in a for p in pieces)), s.goal)


def add_progress(s: Summary, notes: list[str]) -> None:
    """New progress lines; one that says what an older line says replaces it, unless the older says
    twice as much (findings.restated)."""
    for n in notes:
        if n in s.progress:
            continue
        said, covered = restated(n, s.progress)
        if not covered:
            s.progress = [p for p in s.progress if p not in said] + [n]


def paragraph_lines(body: str) -> list[str]:
    lines = [re.sub(r"^\s*(?:[-*+•]|\d+[.)])\s+", "", ln).strip() for ln in body.splitlines()]
    return [ln for ln in lines if ln and not ln.startswith("#")]


def dedupe(s: Summary) -> None:
    for name in ("progress", "decisions", "questions", "remaining"):
        seen: list[str] = []
        for x in getattr(s, name):
            if x not in seen:
                seen.append(x)
        setattr(s, name, seen)
