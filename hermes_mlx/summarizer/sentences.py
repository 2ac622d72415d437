"""Sentences as an agent's message holds them: paragraph lines outside code fences, split into
whole sentences (never inside a code span, at CJK full stops too), a list of results kept as one
line, a line cut mid-clause joined to the next. findings.py reads its candidates from these.
"""

from __future__ import annotations

import re

from .outcomes import is_report
from .vocabulary import ACTIVITY, ANNOUNCE, ASIDE, BOX_DRAWING, DECISION_CUE, IMPERATIVE, NARRATION, OFFER, SIGNAL

FINDING_CHARS = 220
FINDING_MAX = FINDING_CHARS + 40  # the longest finding kept: a long sentence, or a finding and the change it led to

# a capital of any alphabet after an end mark and a space; a CJK full stop ends a sentence as it is, or
# after the bold or the quote it closes ("**原来 `skills` 本身是一个 submodule！** 让我检查："; a bold that
# opens the next sentence, "完成。**注意：** …", is that sentence's)
_BREAK = re.compile(
    r"(?<=[.!?])\s+(?=[A-ZÀ-ÞА-ЯЁΑ-Ω`\"'(\[*])|(?<=[。！？])(?![」』”）]|\*\*(?:\s|$))|(?<=[。！？]\*\*)(?=\s|$)\s*"
    r"|(?<=[。！？][」』”）])\s*"
)
CODE_SPAN = re.compile(r"`[^`\n]*`")


def split_sentences(line: str) -> list[str]:
    """A paragraph line's sentences; never split inside a code span (`a... b`) nor an aside in
    parentheses that closes on the line ("catch `ValueError` (and possibly `TypeError`? The PR only
    mentions `ValueError`) during …"), and CJK full stops end a sentence without a space after them."""
    spans = [m.span() for m in CODE_SPAN.finditer(line)]
    spans += _asides(line, spans)
    inside = bytearray(len(line) + 1)  # 1 where a break would fall inside a span (linear, not breaks x spans)
    for a, b in spans:
        inside[a + 1 : b] = b"\x01" * max(0, b - a - 1)
    cuts, start = [], 0
    for m in _BREAK.finditer(line):
        if inside[m.start()]:
            continue
        cuts.append(line[start : m.start()])
        start = m.end()
    cuts.append(line[start:])
    return [" ".join(c.split()) for c in cuts if c.strip()]


ASIDE_CHARS = 200  # an aside longer than this is no aside: a stray "(" never joins a paragraph's sentences


def _asides(line: str, code: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans of `line`'s outermost parentheses that close on it within ASIDE_CHARS, outside code spans."""
    out, opened, ends, i = [], [], dict(code), 0  # a code span's start -> its end: jumped over
    while i < len(line):
        if i in ends:
            i = ends[i]
            continue
        ch = line[i]
        if i and line[i - 1] in ":;":  # an emoticon, `:(` or `;)`, opens and closes nothing
            pass
        elif ch == "(":
            opened.append(i)
        elif ch == ")" and opened:
            a = opened.pop()
            if not opened and i - a <= ASIDE_CHARS:
                out.append((a, i))
        i += 1
    return out


# a markdown link to a file on this machine (Windsurf's `[anova.py](file:///c:/Users/…/anova.py:0:0-0:0)`,
# Codex's `[scripts/service.sh](/Users/…/scripts/service.sh#L1)`): its text names the file, its target
# repeats it whole, absolute (Files says where); a web link, an image and code (`handlers[name](/api)`) are kept
LOCAL_LINK = re.compile(r"(?<![!\w`])\[([^\[\]\n`]{1,200})\]\((?:file://|/|~/|[A-Za-z]:[\\/])[^()\s`]{0,400}\)")


def paragraphs(text: str) -> list[list[str]]:
    """Paragraph lines (outside code fences; no heading, bold or not, table row or tag) as lists of sentences.
    A list of results is one line ("- 63KB (64,573 bytes): WORKS" then "- 64KB (65,594 bytes):
    FAILS"): each item alone is half a verdict, and the boundary is in the pair. A line that ends
    mid-clause goes on in the next (`_goes_on`): "1) you're checking another channel, or" then "2)
    scheduler tick delay." is one line, as is a list item and the lowercase line wrapped after it,
    and a short list under a lead-in that ends with a colon (`_with_short_lists_joined`). A link to a local
    file reads as its text (LOCAL_LINK)."""
    body = re.sub(r"```.*?(?:```|$)", "\n", text, flags=re.DOTALL)
    body = LOCAL_LINK.sub(r"\1", body)
    body = _HARD_BREAK.sub(" ", body)
    out: list[list[str]] = []
    results: list[str] = []  # consecutive list items in the shape of a result
    open_line = False  # the line before was text, in out[-1]
    lines = [re.sub(r"^(?:>\s*)+", "", line.strip()) for line in body.splitlines()]  # a quoted line is a line
    for line in _with_short_lists_joined(lines):
        item = _LIST_ITEM.match(line)
        result = line[item.end() :] if item and is_report(line[item.end() :]) else ""
        if results and (not result or len("; ".join([*results, result])) > FINDING_CHARS):
            out.append(["; ".join(results)] if len(results) > 1 else split_sentences(results[0]))
            results = []
        was_open, open_line = open_line, False
        if result:
            results.append(result)
        elif line and not line.startswith(_NOT_PROSE) and not _bold_heading(_LIST_ITEM.sub("", line)):
            rest = line[item.end() :] if item else line
            if was_open and _goes_on(out[-1][-1], rest, bool(item)):
                said = out.pop()
                out.append(said[:-1] + split_sentences(f"{said[-1]} {rest}"))
            else:
                out.append(split_sentences(line))
            open_line = True
    if results:
        out.append(["; ".join(results)] if len(results) > 1 else split_sentences(results[0]))
    return out


_LIST_ITEM = re.compile(r"^(?:[-*•]|\d+[.)])\s+")
# a line that starts a block of its own in a document: a heading, a list item, a table row, a fence, a
# quote, a tag, a definition's term line in bold
_BLOCK_START = re.compile(r"^\s*(?:#|\||```|~~~|>|<|[-*+•]\s|\d+[.)]\s|\*\*[^*\n]+\*\*\s*$)")


def unwrapped(text: str) -> str:
    """A document's text with each paragraph on one line: a spec or a README wraps its prose at a
    width (`HTTPS endpoints ("webhooks"). This document` / `describes …`), and read line by line each
    piece was a sentence cut in two. A line joins the one before it unless either starts a block of
    its own (_BLOCK_START: a heading, a list item, a table row, a fence) or a blank line parts them; a
    list item's wrapped lines join it; fenced code stays as it is."""
    out: list[str] = []
    fenced = False
    for line in text.splitlines():
        said = line.strip()
        if said.startswith(("```", "~~~")):
            fenced = not fenced
        elif not (fenced or not said or _BLOCK_START.match(line)) and out and out[-1].strip():
            before = out[-1].lstrip()
            if not (
                before.startswith(("#", "|", "```", "~~~", "<")) or _BLOCK_START.match(out[-1]) and "**" in before[:2]
            ):
                out[-1] = f"{out[-1].rstrip()} {said}"
                continue
        out.append(line)
    return "\n".join(out)


# a line that starts as no sentence does: a table row (markdown's `|`, or drawn in box characters as a
# terminal renders it), a heading, a tag, a brace
_NOT_PROSE = ("|", "#", "<", "{", "}", *BOX_DRAWING)
# markdown's hard break (two spaces before a line's end) inside a sentence: the text goes on in the
# next line, less a list marker that line opens with (a Korean reply's "그래서 `…`은 보통  " then "1) …
# 또는  " then "로 해석하는 게 맞습니다.", Cursor's "**Роль (Persona):**  " then its definition); a
# sentence that ended there ends its line, and a bold label opens a part of its own (Aider's Chinese
# "**问题**：… 训练速度  " then "**建议**：  " then the advice as a list: the label is no word of the problem)
_HARD_BREAK = re.compile(
    r"(?<=[^\s.!?。！？])[ \t]{2,}\n[ \t]*+(?:(?:\d+[.)]|[-*•])[ \t]+)?+(?=[^\s#|>-])"
    r"(?!\*\*[^*\n]{1,40}(?:\*\*[ \t]*[:：]|[:：][ \t]*\*\*))"
)
SHORT_ITEM = 100  # characters of a list item that may join its lead-in


def _lead_in(line: str) -> bool:
    """A line that introduces a list after a colon and says something itself: not a heading, an
    item, or the agent saying what it will do ("Let me summarize what I found:" leaves its items
    to stand as findings of their own)."""
    if not line.endswith((":", "：")) or len(line) < 10 or line.startswith(("#", "|", "<", "**")):
        return False
    said = (ANNOUNCE, IMPERATIVE, NARRATION, OFFER, ASIDE, ACTIVITY)  # what findings reads as an announcement
    return not (_LIST_ITEM.match(line) or any(p.match(line) for p in said))


def _with_short_lists_joined(lines: list[str]) -> list[str]:
    """`lines`, each short list under a lead-in (`_lead_in`) joined to it as one line: "Add three
    tools: **Credo** for style; **Dialyxir** for types; **mix_audit** for advisories". Alone, an
    item ("**mix_audit** for dependency vulnerability scanning") is half a sentence. A list too long
    for one finding, or of results (joined on their own), stays a line an item. Each line is looked
    at once: a list is read only under a lead-in, and no further than one finding's length."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if _lead_in(line):
            items, j, size = [], i + 1, len(line) - 1
            while j < len(lines) and size <= FINDING_CHARS and (m := _LIST_ITEM.match(lines[j])):
                items.append(lines[j][m.end() :].rstrip(".;"))
                size += len(items[-1]) + 2  # "; " before it (the first: " ")
                j += 1
            whole = j == len(lines) or not _LIST_ITEM.match(lines[j])  # the list ends here
            # items that are sentences of their own, not one clause wrapped over two ("…, or" / "2) …": `_goes_on`)
            short = all(0 < len(x) <= SHORT_ITEM and not is_report(x) and not _DANGLING.search(x) for x in items)
            if whole and len(items) > 1 and size <= FINDING_CHARS and short:
                out.append(f"{line} {'; '.join(items)}")
                i = j
                continue
        out.append(line)
        i += 1
    return out


# a line that ends mid-clause ("…a different channel than `1499…`, or"): its sentence goes on below
_DANGLING = re.compile(r"(?:,|\b(?:or|and|but|than|to|of|with))\s*$", re.I)
_ENDED = re.compile(r"[.!?:;。！？：]\W*$")


def _goes_on(before: str, line: str, item: bool) -> bool:
    """Whether `line` (a list item's text when `item`) continues the sentence `before` ends: after
    a dangling comma or conjunction, or as a lowercase line wrapped under an unfinished one (the
    hard break of "- this current thread/home channel  " / "so you never miss an update again.")."""
    if len(before) + len(line) >= FINDING_MAX:
        return False
    return bool(_DANGLING.search(before)) or (not item and line[:1].islower() and not _ENDED.search(before))


# a line wholly in bold with no sentence's end: a heading written in bold (Codex's and Cursor's
# reasoning titles, "**Clarifying zip error source and fix**", "**Шаг 1: Формулируем цель**"):
# none of 28 such lines held a fact
_BOLD_HEADING = re.compile(r"^\*\*[^*]+[^*.!?:。！？]\*\*$")


def _bold_heading(line: str) -> bool:
    """A bold title, not a bold result, cause or choice: "**64/64 tests passing**", "**The bug is
    in `parse_date()`**", "**Root cause: the cache key omits the locale**" and Cursor's
    "**方法一：通过系统包管理器安装（推荐）**" (the one it recommends) are read; an activity's title
    ("**Clarifying zip error source and fix**") is not, whatever it names."""
    words = line.strip("*")
    said = SIGNAL.search(words) and not ACTIVITY.match(words)
    return bool(_BOLD_HEADING.match(line)) and not (is_report(line) or DECISION_CUE.search(line) or "`" in line or said)


_CJK = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af"
CJK_STOPS = ("。", "！", "？", "：", "；")  # a sentence that ends on one is followed by no space


def words(s: str) -> int:
    """Words of `s`; two CJK characters count as one (its scripts have no spaces, and a word of
    Chinese or Japanese is one to three of them: "全部通过。" is "all passed.", two words)."""
    cjk = len(re.findall(f"[{_CJK}]", s))
    return len(re.findall(f"[^\\W{_CJK}]+", s)) + (cjk + 1) // 2
