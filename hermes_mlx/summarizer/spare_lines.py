"""What a summary says only with room to spare: lines that are no findings but, past them, still
tell a reader something: the changes the agent announced ("Now remove the now-unused
`parseTaskFile` method:") and the sentences it wrote into documents (a spec's requirement, the
reason it gave in its CLAUDE.md). `state.spend_room` reads them only when a pass leaves room.
"""

from __future__ import annotations

import re

from .findings import (
    Finding,
    as_finding,
    changes_course,
    features,
    gives_reason,
    is_announcement,
    is_musing,
    pieces,
    rank,
    weigh,
)
from .sentences import FINDING_CHARS, paragraphs, unwrapped, words
from .text import Turn
from .vocabulary import CHANGE_VERBS, DECISION_CUE
from .written import documented

# an order to itself that changes something ("Now remove the now-unused `parseTaskFile` method:")
_ORDERED_CHANGE = re.compile(r"^(?:now|next|then|first|finally)\b[,:]?\s+(?:" + "|".join(CHANGE_VERBS) + r")\b", re.I)


def is_announced_change(sentence: str) -> bool:
    """An announcement of a change that names what it changes or why (`announced_changes`)."""
    s = sentence.strip()
    return (
        words(s) >= 4
        and len(s) <= FINDING_CHARS
        and bool(changes_course(s) or _ORDERED_CHANGE.match(s))
        and is_announcement(s)
        and not is_musing(s)
    )


def announced_changes(turns: list[Turn]) -> list[Finding]:
    """The changes the agent announced that name what they change or why (CHANGE_INTENT, _ORDERED_CHANGE;
    never a musing: "Now remove the now-unused `parseTaskFile` method:", "Let me fix `get_current_trace_id()`."),
    best first: never findings, but what a summary with room to spare still says was done next. 6 of
    281 change announcements held a fact on the corpora, in five agents' sessions (findings: 1 in 16);
    three held-out agents' sessions had such facts and room to spare."""
    out: list[Finding] = []
    n = max(1, len(turns) - 1)
    for i, t in enumerate(turns):
        for sentences in paragraphs(t.text) if t.role == "assistant" else ():
            for s in (x.strip() for x in sentences):
                if is_announced_change(s):
                    feats = features(s, reaction=False, before_action=True, report=False, recency=i / n)
                    out.append(Finding(s, i, weigh(feats), len(out)))
    return rank(out)


# what a pass reads of the documents its span wrote, the latest first: forty 20,000-character pages had made
# a batch pass five times slower
DOCUMENTS_CHARS = 60_000


# a document's label that asks why before its answer ("**Why the server keypair?** Test-login creates …",
# a spec's "**Why this priority**: A dedicated queue makes …"): the answer is a reason
_WHY_LABEL = re.compile(r"^\W{0,4}why\b", re.I)


def documented_lines(turns: list[Turn]) -> list[Finding]:
    """The sentences the agent wrote into documents (`written.documented`) that give a reason, a
    requirement or a choice (`findings.gives_reason`, DECISION_CUE, a "Why …?" label), best first,
    each said as where it was written ("In `spec.md`: … MUST route all Codex phases …"): what a
    spec or a README holds is not what happened, and the file says which. 4 of 73 such lines held
    a fact in 12 sessions of six agents (findings: 1 in 16 to 22); in three held-out sessions of
    Claude Code and Codex CLI the facts were there and nowhere else, with room to spare."""
    out: list[Finding] = []
    n, left = max(1, len(turns) - 1), DOCUMENTS_CHARS
    for i in range(len(turns) - 1, -1, -1):  # the latest first, while the pass's share lasts
        for path, text in documented(turns[i]) if turns[i].role == "assistant" and left > 0 else ():
            left -= len(text)
            for sentences in paragraphs(unwrapped(text)):
                for piece in pieces(sentences):
                    said = as_finding(piece)
                    if not said or words(said) < 5 or is_announcement(said):
                        continue
                    if not (gives_reason(said) or DECISION_CUE.search(said) or _WHY_LABEL.match(said)):
                        continue
                    line = f"In `{_file_name(path)}`: {said}"
                    feats = features(said, reaction=False, before_action=False, report=False, recency=i / n)
                    out.append(Finding(line, i, weigh(feats), len(out)))
    return rank(out)


def _file_name(path: str) -> str:
    """A path's last name, in either separator, on one line (a name's newline had opened a section of
    its own), with no backtick to break its code span."""
    return " ".join(re.split(r"[\\/]", path.strip().rstrip("\\/"))[-1].split()).replace("`", "'")


def spare_lines(turns: list[Turn]) -> list[Finding]:
    """What `turns` give a summary with room to spare, in the order it is taken: the changes the agent
    announced, then what it wrote into documents."""
    return announced_changes(turns) + documented_lines(turns)
