"""The summary as data: render to markdown `##` sections and parse back, ours or Hermes's.

Parsing back is what makes the rolling summary safe to continue from: the ledger sections come
back as ledger entries (so de-duplication and resolution keep working across passes) and any
section we do not know is carried through verbatim rather than dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .directives import directives_within
from .ledger import FIXED_BY, WORKING_FOLDER, Command, Ledger
from .redact import redact
from .tidy import one_line
from .vocabulary import USER_SENTENCE_END
from .workfolder import relative_label, rooted

MARKER_START = "[CONTEXT COMPACTION"
MARKER_END = "--- END OF CONTEXT SUMMARY"

# our headings, in render order
GOAL, CONSTRAINTS, PROGRESS, DECISIONS, QUESTIONS, STATE, REMAINING = (
    "Goal",
    "Constraints & Preferences",
    "Progress",
    "Decisions",
    "Open Questions",
    "Current State",  # the task in progress at the cut and the error still open
    "Next Steps",  # the open items of the agent's latest plan, verbatim
)
FILES, COMMANDS, ERRORS, URLS, IDS = "Files", "Commands", "Errors", "URLs", "Identifiers"
RESOLVED = "Errors and Fixes"  # each error a later success cleared, and the command that succeeded
USERS = "User Messages"  # the user's own words from the compacted span, verbatim
EARLIER = "Earlier Summary"
NARRATIVE = {
    PROGRESS: "progress",
    DECISIONS: "decisions",
    QUESTIONS: "questions",
    STATE: "state",
    REMAINING: "remaining",
}

# every heading we read, Hermes's included, to the field it fills
_ALIASES = {
    "goal": GOAL,
    "task context": GOAL,
    "task": GOAL,
    "objective": GOAL,
    "user constraints": CONSTRAINTS,
    "constraints & preferences": CONSTRAINTS,
    "constraints and preferences": CONSTRAINTS,
    "constraints": CONSTRAINTS,
    "user decisions": CONSTRAINTS,
    "user messages": USERS,
    "progress": PROGRESS,
    "completed actions": PROGRESS,
    "active state": PROGRESS,
    "historical in-progress state": PROGRESS,
    "in-progress state": PROGRESS,
    "done": PROGRESS,
    "decisions": DECISIONS,
    "key decisions": DECISIONS,
    "key decisions resolved": DECISIONS,
    "resolved questions": DECISIONS,
    "open questions": QUESTIONS,
    "pending questions": QUESTIONS,
    "historical pending user asks": QUESTIONS,
    "pending user asks": QUESTIONS,
    "current state": STATE,
    "remaining work": REMAINING,
    "historical remaining work": REMAINING,
    "next steps": REMAINING,
    "files": FILES,
    "relevant files": FILES,
    "active files": FILES,
    "commands": COMMANDS,
    "errors": ERRORS,
    "resolved errors": RESOLVED,
    "errors and fixes": RESOLVED,
    "urls": URLS,
    "identifiers": IDS,
}


@dataclass
class Summary:
    goal: str = ""
    progress: list = field(default_factory=list)
    decisions: list = field(default_factory=list)
    questions: list = field(default_factory=list)
    state: list = field(default_factory=list)
    remaining: list = field(default_factory=list)
    ledger: Ledger = field(default_factory=Ledger)
    extras: list = field(default_factory=list)  # [(heading, body)] carried verbatim

    def narrative_text(self) -> str:
        return "\n".join([self.goal, *self.progress, *self.decisions, *self.questions, *self.state, *self.remaining])


def our_heading(title: str) -> str:
    """The heading of ours `title` means (an older name of a section, or Hermes's), else `title`."""
    return _ALIASES.get(title.strip().lower(), title)


# ---------------------------------------------------------------- rendering


def code(s: str) -> str:
    """Inline code that survives backticks inside the string."""
    s = one_line(s)
    return f"`` {s} ``" if "`" in s else f"`{s}`"


def said_in_goal(line: str, goal: str) -> bool:
    """A user's sentence the Goal already shows whole (the request's own directive: Gemini's "I want
    a widget that resizes its text."): listed again under Constraints it is said twice. Kept in the
    ledger, so it is listed again once a clipped Goal no longer shows it."""
    said = line.rstrip("…").strip()
    return line == goal or len(said) >= 20 and said in goal


def beside_goal(line: str, goal: str) -> str:
    """`line` less the sentences the Goal shows whole ("" when that is all it says): a short request
    that mixes asks and directives is a constraint whole (`directives.user_constraints`) while the
    Goal is its asks (`faithful.goal_of`), and listed whole it said the request twice."""
    if said_in_goal(line, goal):
        return ""
    parts = [p for p in USER_SENTENCE_END.split(line) if p.strip()]
    rest = [p for p in parts if not said_in_goal(p, goal)]
    if len(rest) == len(parts):
        return line
    out = ""
    for p in rest:  # CJK sentences run on with no space between them
        out += p if not out or out.endswith(("。", "！", "？")) else " " + p
    return out


def listed_asks(s: Summary) -> list[str]:
    """The user's messages User Messages lists: not one the Goal shows, nor one Constraints lists whole."""
    return [a for a in s.ledger.asks if not said_in_goal(a, s.goal) and a not in s.ledger.constraints]


def said_in_asks(line: str, asks: list[str]) -> bool:
    """A directive a listed user message shows whole ("Please poke through and ensure …" in the message
    it ends): listed again under Constraints it is said twice. Listed again once that message goes."""
    said = " ".join(line.rstrip("…").split())
    return len(said) >= 20 and any(said in a for a in asks if a != line)


def shown(item: str, text: str, goal: str) -> bool:
    """A user's constraint or message the rendered summary carries: whole, or less what the Goal
    says (`beside_goal`), as Constraints lists it, or inside a listed message (`said_in_asks`)."""
    rest = beside_goal(item, goal)
    return item in text or rest in text or said_in_asks(rest, [text])


def render(s: Summary) -> str:
    out: list[str] = []

    def section(title: str, lines: list[str]) -> None:
        if lines:
            out.append(f"## {title}\n" + "\n".join(lines))

    led = s.ledger
    section(GOAL, [s.goal] if s.goal else [])
    # dict: the rest of a request the user sent again is said once (Cursor resends its plan-mode request)
    asks = listed_asks(s)
    constraints = [x for c in led.constraints if (x := beside_goal(c, s.goal)) and not said_in_asks(x, asks)]
    section(CONSTRAINTS, list(dict.fromkeys(f"- {x}" for x in constraints)))
    section(USERS, [f"- {a}" for a in asks])
    for title, name in NARRATIVE.items():
        section(title, [f"- {x}" for x in getattr(s, name)])
    files = [f"- {code(p)}" + (f" ({a})" if a and a != "mentioned" else "") for p, a in led.files.items()]
    if led.root and any(not rooted(p) for p in led.files):  # stated once, so each path can be short
        files.insert(0, f"{WORKING_FOLDER} {code(led.root)}")
    section(FILES, files)
    section(COMMANDS, [f"- {code(c.cmd)} {c.status_text()}".rstrip() for c in led.commands])
    errors: list[str] = []
    groups: dict[str, list[str]] = {}
    for e in led.errors:  # by the label as shown: `patch /home/u/app/src/c.py` and `patch src/c.py` are one
        groups.setdefault(relative_label(e.cmd, led.root), []).append(e.line)
    for cmd, lines in groups.items():
        if cmd:
            errors.append(f"- after {code(cmd)}:")
            errors.extend(f"  - {code(x)}" for x in lines)
        else:
            errors.extend(f"- {code(x)}" for x in lines)
    section(ERRORS, errors)
    resolved: list[str] = []
    fixed: dict[str, list[str]] = {}  # each fix once, with all it cleared (a later rerun of it, too)
    for x in led.resolved:
        fixed.setdefault(relative_label(led.fixes.get(x, ""), led.root), []).append(x)
    for fix, lines in fixed.items():
        if fix and len(lines) > 1:  # one success cleared several: its command said once, as Errors says it
            resolved.append(f"- fixed by {code(fix)}:")
            resolved.extend(f"  - {code(x)}" for x in lines)
        else:
            resolved.extend(f"- {code(x)}" + (FIXED_BY + code(fix) if fix else "") for x in lines)
    section(RESOLVED, resolved)
    section(URLS, [f"- {u}" + (" (read)" if u in led.fetched else "") for u in led.urls])  # as Files says it
    section(IDS, [", ".join(code(i) for i in led.ids)] if led.ids else [])
    for title, body in s.extras:
        if body.strip():
            out.append(f"## {title}\n{body.strip()}")
    return "\n\n".join(out).strip() + "\n" if out else ""


# ---------------------------------------------------------------- parsing

_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
_CODE = re.compile(r"``\s(.+?)\s``|`([^`]+)`")


def _unbullet(line: str) -> str:
    return _BULLET.sub("", line).strip()


def _uncode(s: str) -> str:
    m = _CODE.fullmatch(s.strip())
    return (m.group(1) or m.group(2)) if m else s.strip().strip("`")


def strip_marker(text: str) -> str:
    """Drop Hermes's REFERENCE ONLY preamble and END line around a summary."""
    if MARKER_END in text:
        text = text[: text.index(MARKER_END)]
    stripped = text.lstrip()
    if stripped.startswith(MARKER_START):
        m = re.search(r"^#{1,3} ", stripped, re.M)
        text = stripped[m.start() :] if m else re.sub(r"^\[CONTEXT COMPACTION[^\]]*\][^\n]*(\n[^\n#]+)*", "", stripped)
    return text.strip()


def split_sections(text: str) -> list[tuple[str, str]]:
    """`##` (or `#`/`###`) headings to (heading, body) pairs; text before the first heading
    comes back under the empty heading."""
    parts: list[tuple[str, str]] = []
    heading, body = "", []
    for line in text.splitlines():
        m = re.match(r"^#{1,3}\s+(.+?)\s*#*\s*$", line)
        if m:
            parts.append((heading, "\n".join(body).strip()))
            heading, body = m.group(1).strip().strip("*:").strip(), []
        else:
            body.append(line)
    parts.append((heading, "\n".join(body).strip()))
    return [(h, b) for h, b in parts if h or b]


def parse(text: str | None) -> Summary:
    """Read a summary back. Never raises: unknown formats become one verbatim section."""
    s = Summary()
    if not text or not isinstance(text, str) or not text.strip():
        return s
    text = strip_marker(redact(text))
    sections = split_sections(text)
    known = [h for h, _ in sections if _ALIASES.get(h.lower())]
    if not known:
        s.extras.append((EARLIER, text.strip()))
        return s
    for heading, body in sections:
        kind = _ALIASES.get(heading.lower())
        if not body:
            continue
        if kind is None:
            s.extras.append((heading or EARLIER, body))
        elif kind == GOAL:
            s.goal = (s.goal + "\n" + body).strip() if s.goal else body
        elif kind in NARRATIVE:
            items = getattr(s, NARRATIVE[kind])
            for line in body.splitlines():
                item = _unbullet(line)
                if item and item not in items:
                    items.append(item)
        else:
            before = set(s.ledger.files)
            _parse_ledger(s.ledger, kind, body)
            if kind == FILES and heading != FILES:  # another writer's list (Hermes's "Relevant Files")
                _drop_cut_files(s.ledger, set(s.ledger.files) - before)
    return s


def _drop_cut_files(led: Ledger, theirs: set) -> None:
    """A summary we did not write may list paths cut short (Hermes 0.19's fallback summary
    collects them from truncated text: `logs/run_` beside `logs/run_2.log`): a path of theirs
    with no extension that only begins another listed path is such a fragment."""
    for p in theirs:
        if not re.search(r"\.\w{1,10}$|/$", p) and any(q != p and q.startswith(p) for q in led.files):
            del led.files[p]


def _parse_ledger(led: Ledger, kind: str, body: str) -> None:
    group = ""
    for raw in body.splitlines():
        if not raw.strip():
            continue
        nested = raw.startswith(("  ", "\t")) and bool(_BULLET.match(raw))
        line = _unbullet(raw)
        if kind == FILES and line.startswith(WORKING_FOLDER):
            led.root = _uncode(line[len(WORKING_FOLDER) :])
        elif kind == FILES:
            m = re.fullmatch(r"(``\s.+?\s``|`[^`]+`|\S+)(?:\s+\((\w+)\))?(?:\s*[—-].*)?", line)
            if m:
                led.add_file(_uncode(m.group(1)), m.group(2) or "mentioned")
            else:
                led.add_file(_uncode(line))
        elif kind == COMMANDS:
            # ours: `cmd` (exit 0 → 1) → result line; before: `cmd` exit 0 → ?
            m = re.fullmatch(
                r"(``\s.+?\s``|`[^`]+`)\s*(?:\((?:(\d+) runs(?:, |(?=\))))?(?:exit\s+([-\d→ ?]+))?\)"
                r"|(?:→\s*)?exit\s+([-\d→ ?]+))?\s*(?:→\s*(.+))?",
                line,
            )
            if not m:
                led.commands.append(Command(_uncode(line), []))
                continue
            statuses = []
            for part in (m.group(3) or m.group(4) or "").split("→"):
                part = part.strip()
                if re.fullmatch(r"-?\d+", part):
                    statuses.append(int(part))
                elif part == "?":
                    statuses.append(None)
            runs = max(int(m.group(2) or 1), len(statuses))  # `(exit 1 → 0)`: two runs
            led.commands.append(Command(_uncode(m.group(1)), statuses, (m.group(5) or "").strip(), runs))
        elif kind == ERRORS:
            m = re.fullmatch(r"after (``\s.+?\s``|`[^`]+`):", line)
            if m:
                group = _uncode(m.group(1))
                continue
            led.add_error(_uncode(line), group if nested else "")
        elif kind == RESOLVED:
            m = re.fullmatch(r"fixed by (``\s.+?\s``|`[^`]+`):", line)
            if m:
                group = _uncode(m.group(1))
                continue
            error, _, fix = line.partition(FIXED_BY)
            fix = _uncode(fix) if fix.strip() else group if nested else ""
            if _uncode(error) not in led.resolved:
                led.resolved.append(_uncode(error))
                if fix:
                    led.fixes[_uncode(error)] = fix
        elif kind == URLS:
            url, read = re.subn(r"\s+\(read\)$", "", line)
            url = url.strip("<>`")
            led.add_list("urls", [url])
            led.add_list("fetched", [url] if read else [])
        elif kind == IDS:
            led.add_list(
                "ids",
                [_uncode(x) for x in re.findall(r"``\s.+?\s``|`[^`]+`", line)] or [x.strip() for x in line.split(",")],
            )
        elif kind == CONSTRAINTS:
            led.add_list("constraints", [line])
        elif kind == USERS:
            led.add_list("asks", [line])
            # its directives, which Constraints left out while this line shows them (`said_in_asks`): oldest
            # in the ledger, never in the latest constraints' place (KEEP_LAST)
            led.constraints[:0] = [c for c in directives_within(line) if c not in led.constraints]
