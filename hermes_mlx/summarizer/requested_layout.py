"""Our summary in the structure a request asks for: its headings, in its order, each exactly once.

Hermes's batch prompt ends with a template ("Use this exact structure:" then `## Heading` lines,
each over a bracketed placeholder), and newer Hermes throws away a summary that does not follow
its schema (upstream PR #85291's continuation headings). The template changes between releases,
so it is read by structure here, not by wording: the last run of `## ` heading lines each over a
`[...]` placeholder. Our sections are then placed under the requested heading that means the
same thing (`PLACEMENT`, keyed on summary.py's section constants; a new section is one row), the
template's own word fills a heading we have nothing for ("None", "None.", or its "Write exactly:"
value), and nothing comes before the first heading. Our own layout (summary.render) stays for
`compact`, the engine, and requests with no template.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .summary import (
    COMMANDS,
    CONSTRAINTS,
    DECISIONS,
    EARLIER,
    ERRORS,
    FILES,
    GOAL,
    IDS,
    PROGRESS,
    QUESTIONS,
    REMAINING,
    RESOLVED,
    STATE,
    URLS,
    USERS,
    our_heading,
    split_sections,
)


@dataclass(frozen=True)
class Heading:
    """One heading a template asks for."""

    title: str  # as written after "## "
    empty: str = "None"  # the template's own word for "nothing here"
    fixed: str | None = None  # the template says "Write exactly: ..." (no user turn): that value, whatever we know
    optional: bool = False  # the template says to omit it when there is nothing for it


# What a requested heading means, read from its own words (first match wins; order matters:
# "Next Outcome-Relevant Step" is a next step before it is an outcome).
MEANINGS: tuple[tuple[str, str], ...] = (
    ("snapshot", r"snapshot|active task"),
    ("correction", r"correction"),
    ("next_step", r"\bnext\b.*\bstep\b"),
    ("subtask", r"subtask"),
    ("goal", r"\bgoals?\b|outcome|objective"),
    ("constraints", r"constraint|preference"),
    ("resolved", r"resolved question|answered"),
    ("done", r"completed|progress|\bdone\b|actions"),
    ("active", r"active state|in.progress|current state|working state"),
    ("blocked", r"block"),
    ("decisions", r"decision"),
    ("errors", r"error|fix"),
    ("pending", r"pending|open question|asks"),
    ("files", r"\bfiles?\b"),
    ("remaining", r"remaining|next steps|to.?do|plan"),
    ("critical", r"critical|context|identifier|reference|notes"),
)

# Our section -> the meanings it may go under, the first one the template has wins; with none of
# them there, it goes under the fallback heading (the template's "critical context", else its last).
PLACEMENT: dict[str, tuple[str, ...]] = {
    GOAL: ("goal",),
    CONSTRAINTS: ("constraints", "correction"),
    # the user's own words; never the task snapshot, which Hermes overwrites with its own
    # (`_ground_historical_task_snapshot`)
    USERS: ("pending", "constraints", "correction", "critical"),
    PROGRESS: ("done",),  # outcomes
    DECISIONS: ("decisions",),
    QUESTIONS: ("pending", "blocked", "active"),
    STATE: ("active", "subtask"),  # the task in progress and the error still open
    REMAINING: ("remaining", "next_step", "active"),  # the plan's open items
    FILES: ("files", "active"),
    COMMANDS: ("done",),
    ERRORS: ("blocked", "errors", "active"),
    RESOLVED: ("errors", "done"),
    URLS: ("critical",),
    IDS: ("critical",),
    EARLIER: ("critical",),
}

_HEADING = re.compile(r"^## +(\S[^\n]*?)\s*$")
_WRITE_EXACTLY = re.compile(r"write exactly:\s*([^\]\n]+?)\s*\]?\s*$", re.I | re.M)
_TEMPLATE_WORD = re.compile(r"""write\s+["“]([^"”<>]+)["”]""", re.I)
_OMIT = re.compile(r"\bomit\b", re.I)


def _blocks(text: str) -> list[tuple[int, int, Heading | None]]:
    """(start line, end line, heading or None) for each `## ` line of `text`: a Heading when a
    bracketed placeholder follows it (the template's shape), None when anything else does."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        m = _HEADING.match(line)
        if not m:
            continue
        j = i + 1
        body: list[str] = []
        while j < len(lines) and not _HEADING.match(lines[j]):
            body.append(lines[j])
            j += 1
        while body and not body[-1].strip():
            body.pop()
        placeholder = "\n".join(body).strip()
        inner = re.split(r"\n[ \t]*\n", placeholder, maxsplit=1)[0].rstrip()  # its first paragraph
        heading = None
        if inner.startswith("[") and inner.endswith("]"):  # a placeholder, not a summary's "[tool] ..." line
            fixed = _WRITE_EXACTLY.search(inner)
            word = next((w.strip() for w in _TEMPLATE_WORD.findall(inner) if w.strip()), "None")
            heading = Heading(
                title=m.group(1),
                empty=word,
                fixed=fixed.group(1).strip() if fixed else None,
                optional=bool(_OMIT.search(inner)),
            )
        out.append((i, j, heading))
    return out


def read_layout(text: str) -> list[Heading]:
    """The headings a prompt asks for: the last run of `## ` headings that each carry a
    bracketed placeholder (text after a placeholder, like "Target ~N tokens", ends the run).
    Empty when the prompt has no such template."""
    runs: list[list[Heading]] = []
    current: list[Heading] = []
    for _, _, heading in _blocks(text):
        if heading is None:
            if current:
                runs.append(current)
            current = []
        else:
            current.append(heading)
    if current:
        runs.append(current)
    run = runs[-1] if runs else []
    return run if len(run) >= 2 else []  # one bracketed heading is no template


def meaning(title: str) -> str | None:
    low = title.lower()
    return next((name for name, pattern in MEANINGS if re.search(pattern, low)), None)


def _norm(title: str) -> str:
    return " ".join(re.sub(r"[^\w&]+", " ", title.lower()).split())


def _fallback(layout: list[Heading]) -> Heading:
    usable = [h for h in layout if h.fixed is None]
    return next((h for h in usable if meaning(h.title) == "critical"), usable[-1] if usable else layout[-1])


def place(section: str, layout: list[Heading]) -> Heading:
    """The requested heading one of our sections (or a carried-over heading) goes under: the
    same title, else the first meaning in PLACEMENT the template has, else its own meaning,
    else the fallback. A heading with a fixed value never takes content."""
    open_headings = [h for h in layout if h.fixed is None]
    same = next((h for h in open_headings if _norm(h.title) == _norm(section)), None)
    if same is not None:
        return same
    wanted = PLACEMENT.get(our_heading(section)) or ((meaning(section),) if meaning(section) else ())
    for name in wanted:
        found = next((h for h in open_headings if meaning(h.title) == name), None)
        if found is not None:
            return found
    return _fallback(layout)


def render_requested(summary_text: str, layout: list[Heading]) -> str:
    """`summary_text` (our rendered summary, `## ` sections) under exactly the requested headings,
    in their order; every one present once (its template word when we have nothing for it, an
    optional one left out), nothing before the first."""
    if not layout:
        return summary_text
    bodies: dict[str, list[str]] = {h.title: [] for h in layout}
    for section, body in split_sections(summary_text):
        if body.strip():
            bodies[place(section or EARLIER, layout).title].append(body.strip())
    out = []
    for h in layout:
        if h.fixed is not None:
            out.append(f"## {h.title}\n{h.fixed}")
        elif bodies[h.title]:
            out.append(f"## {h.title}\n" + "\n\n".join(bodies[h.title]))
        elif not h.optional:
            out.append(f"## {h.title}\n{h.empty}")
    return "\n\n".join(out) + "\n"


EMPTY_WORDS = frozenset({"none", "none.", "unknown", "unknown."})


def drop_empty(summary: str | None) -> str | None:
    """A summary laid out in a template, read back: the headings that only hold the template's
    "None" go (otherwise they would come back as sections of their own, costing tokens on every
    later pass); everything else is kept as it was."""
    if not summary or "\n## " not in "\n" + summary:
        return summary
    kept = [
        f"## {heading}\n{body}" if heading else body
        for heading, body in split_sections(summary)
        if body.strip().lower() not in EMPTY_WORDS
    ]
    return "\n\n".join(kept)


def skeleton(layout: list[Heading]) -> str:
    """The requested headings with their empty words: what answering in this layout costs on top
    of the content (taken off the summary's budget)."""
    return render_requested("", layout)


__all__ = [
    "MEANINGS",
    "PLACEMENT",
    "Heading",
    "drop_empty",
    "meaning",
    "place",
    "read_layout",
    "render_requested",
    "skeleton",
]
