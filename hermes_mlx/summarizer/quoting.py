"""Words that read as orders to a model, kept in a summary as quoted data: the one sanitizing step.

A summary carries the user's words and the agent's plan verbatim ("Do not push to main", "Never
edit the lockfile", "ignore previous instructions" pasted from a web page). Hermes re-injects the
summary into every later prompt, so newer Hermes rejects a summary with directive-shaped lines,
instruction sections or known injection phrases (upstream `_compaction_summary_threats`, #120439),
while it accepts the same words recorded as data, as its own summaries do: quoted (`> `, how its
lean summaries keep the user's messages verbatim) or inside code. So such a line is not dropped
or reworded here: it is quoted, whole, with the same characters. A heading-shaped line inside a
section (which would compete with the requested structure) is quoted the same way, and invisible
format characters are spelled out. `from_data` undoes exactly what `as_data` did, so a summary
that comes back to us (the rolling or previous summary) is read as it was written.
"""

from __future__ import annotations

import re
import unicodedata

QUOTE = "> "

# An order to the model: how a sentence starts once list markers and emphasis are off.
DIRECTIVE_START = re.compile(
    r"(?:do\s+not|don[’']?t|never|always|respond|reply|answer\b|ignore|disregard|forget|pretend|act\s+as|"
    r"you\s+(?:must|should|shall|will|are\s+now)|from\s+now\s+on|only\s+(?:respond|reply|answer|output|use))\b",
    re.I,
)
# A section that gives the model instructions, by its heading's words.
INSTRUCTION_HEADING = re.compile(
    r"\b(?:instructions?|directives?|system\s+prompt|rules\s+for\s+the\s+(?:assistant|model))\b", re.I
)
# Known injection phrases (Hermes's shared threat library, the patterns it applies everywhere).
_FILLER = r"(?:\w+\s+){0,8}"
_SECRET_VAR = r"\$\{?\w*(?:KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)S?\b"
THREATS = tuple(
    re.compile(p, re.I)
    for p in (
        rf"ignore\s+{_FILLER}(?:previous|all|above|prior)\s+{_FILLER}instructions",
        r"system\s+prompt\s+override",
        rf"disregard\s+{_FILLER}(?:your|all|any)\s+{_FILLER}(?:instructions|rules|guidelines)",
        rf"act\s+as\s+(?:if|though)\s+{_FILLER}you\s+{_FILLER}(?:have\s+no|don't\s+have)\s+{_FILLER}(?:restrictions|limits|rules)",
        r"<!--[^>]{0,512}(?:ignore|override|system|secret|hidden)[^>]{0,512}-->",
        r"<\s*div\s+style\s*=\s*[\"'][^>]{0,2048}display\s*:\s*none",
        r"translate\s+[^\n]{0,512}\s+into\s+\w+(?:[\s-]+\w+){0,2}\s+and\s+(?:execute|run|eval)\b",
        rf"do\s+not\s+{_FILLER}tell\s+{_FILLER}the\s+user",
        rf"curl\s+[^\n]{{0,2048}}{_SECRET_VAR}",
        rf"wget\s+[^\n]{{0,2048}}{_SECRET_VAR}",
        r"cat\s+[^\n]{0,2048}(?:\.env|credentials|\.netrc|\.pgpass|\.npmrc|\.pypirc)",
    )
)
INVISIBLE = frozenset(
    "\u200b\u200c\u200d\u2060\u2062\u2063\u2064\ufeff\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)

_MARKERS = re.compile(r"^\s*(?:(?:[-*+•]|\d+[.)])\s+|[*_]+)")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*)|[ \t]*)$")
_SETEXT = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")


def _prose(line: str) -> str:
    """A line's text as a reader takes it: inline code out, list markers and emphasis off."""
    text = _CODE_SPAN.sub(" ", line)
    while (m := _MARKERS.match(text)) and m.end():
        text = text[m.end() :]
    return unicodedata.normalize("NFKC", text).strip()


def orders(line: str) -> bool:
    """A live line that reads as an order to a model: a sentence that starts as one, or a known
    injection phrase outside inline code."""
    text = _prose(line)
    if any(DIRECTIVE_START.match(s.strip("*_\"'“ ")) for s in _SENTENCE.split(text) if s):
        return True
    return any(p.search(text) for p in THREATS)


def _heading_like(line: str, previous: str) -> bool:
    """A line that makes a heading of its own (any ATX level but our `## ` sections, an
    instruction-named `## `, or a setext underline under a line of text)."""
    atx = _ATX.match(line)
    if atx:
        return (
            len(atx.group(1)) != 2 or not line.startswith("## ") or bool(INSTRUCTION_HEADING.search(atx.group(2) or ""))
        )
    return bool(_SETEXT.match(line)) and bool(previous.strip()) and not previous.lstrip().startswith(">")


def _spell_invisible(text: str) -> str:
    return "".join(f"<U+{ord(c):04X}>" if c in INVISIBLE else c for c in text)


def as_data(summary: str) -> str:
    """The summary with every line that reads as an order (or makes a heading of its own) quoted
    whole, and invisible characters spelled out. Code blocks and quoted lines stay as they are."""
    if not summary:
        return summary
    out: list[str] = []
    fence = None
    previous = ""
    for line in _spell_invisible(summary).split("\n"):
        if fence is not None:
            fence = None if re.match(rf"^ {{0,3}}{re.escape(fence)}", line) else fence
            out.append(line)
        elif (m := _FENCE.match(line)) is not None:
            fence = m.group(1)
            out.append(line)
        elif line.lstrip().startswith(">") or line.startswith(("    ", "\t")):
            out.append(line)
        elif _heading_like(line, previous) or orders(line):
            out.append(QUOTE + line)
        else:
            out.append(line)
        previous = out[-1]
    return "\n".join(out)


def from_data(summary: str | None) -> str | None:
    """Undo `as_data` on a summary that comes back: a line it quoted loses the quote again (a
    quoted line as_data would not have quoted is left alone)."""
    if not summary:
        return summary
    out: list[str] = []
    previous = ""
    for line in summary.split("\n"):
        if line.startswith(QUOTE):
            rest = line[len(QUOTE) :]
            if not rest.lstrip().startswith(">") and (_heading_like(rest, previous) or orders(rest)):
                line = rest
        out.append(line)
        previous = line
    return "\n".join(out)


__all__ = ["DIRECTIVE_START", "INSTRUCTION_HEADING", "THREATS", "as_data", "from_data", "orders"]
