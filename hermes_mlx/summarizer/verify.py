"""The verifier: the lines a pass puts in a summary, and the summary as a whole, are checked by
code before the summary is returned.

The lines are copied, not written (the assistant's sentences, code's findings, older progress
lines), but a copied line can still carry a directive lifted from tool output, a path its
sources never had, a secret, garbage or a switch of language. Two levels. `line_problem` judges
one line (the faithfulness gate, faithful.py, asks it of every chosen sentence) and
`check_lines` applies it to a summary's progress lines: a bad line drops, not the pass.
`verify_summary` checks the assembled summary as a whole: every ledger item present, structure
intact, nothing invented, no secret. A summary that still fails it once code has dropped the
lines it objects to is never returned as good.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from dataclasses import dataclass, field

from .budget import fit_summary
from .digest import TASK_ITEM
from .extract import INJECTION, find_ids, find_paths, find_urls
from .findings import restated
from .ledger import Ledger
from .redact import has_secret
from .summary import Summary, parse, render, shown
from .text import normalize, source_text

logger = logging.getLogger("hermes_mlx.summarizer")


@dataclass
class Check:
    ok: bool
    problems: list = field(default_factory=list)


def instruction_like(text: str) -> bool:
    """Directive-shaped text (prompt injection) outside inline code."""
    return bool(INJECTION.search(re.sub(r"``.+?``|`[^`\n]+`", " ", text or "")))


def scripts(text: str) -> dict:
    """Letter counts per writing system (latin, han, kana, hangul, cyrillic, ...)."""
    counts: dict[str, int] = {}
    text = text or ""
    if len(text) > 20_000:  # a sample decides the script; whole megabytes cost seconds
        text = text[:10_000] + text[-10_000:]
    for ch in text:
        if not ch.isalpha():
            continue
        if ch.isascii():
            name = "latin"
        elif "\u3040" <= ch <= "\u30ff":
            name = "kana"
        elif "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf":
            name = "han"
        else:
            try:
                name = unicodedata.name(ch).split()[0].lower()
            except ValueError:
                name = "other"
        counts[name] = counts.get(name, 0) + 1
    return counts


def main_script(text: str) -> str:
    counts = scripts(text)
    if counts.get("kana"):
        counts["han"] = counts.get("han", 0) + counts.pop("kana")
        return "ja" if max(counts, key=counts.get) == "han" else max(counts, key=counts.get)
    return max(counts, key=counts.get) if counts else ""


def invented(text: str, sources: str) -> list[str]:
    """Paths, URLs and identifiers in `text` that appear nowhere in `sources`."""
    out = []
    for p in find_paths(text):
        if p not in sources and p.rstrip("/") not in sources:
            out.append(p)
    for u in find_urls(text):
        if u not in sources:
            out.append(u)
    for i in find_ids(text):
        if i not in sources:
            out.append(i)
    return out


_STOP = set(
    "the a an and or but of to in on at for with from by as is are was were be been being it its this that these those "
    "there their they them then than so not no yes all any some each which what when where who how why can could will "
    "would should may might must do does did done has have had step result results found work log now also only just "
    "into out up down over after before about because since while new used using use uses make made run ran runs "
    "running test tests file files code change changes changed added add fix fixed".split()
)


def ungrounded(line: str, sources: str, *, threshold: float = 0.7) -> list[str]:
    """Content words of a line that occur nowhere in the sources, when too many do: a line
    copied from these sources has few; one carried over from elsewhere has most."""
    words = [w.lower().strip(".-_") for w in re.findall(r"[A-Za-z][A-Za-z0-9_.\-]{2,}", line)]
    words = [w for w in words if w and w not in _STOP]
    if len(words) < 2:
        return []
    low = sources.lower()
    missing = [w for w in words if w not in low and w.rstrip("s") not in low and w.rstrip("ed") not in low]
    return missing if len(missing) >= 2 and len(missing) > (1 - threshold) * len(words) else []


def line_problem(line: str, sources: str, source_script: str = "") -> str:
    """Why a narrative line may not enter the summary, or "" when it may."""
    stripped = line.strip()
    letters = sum(c.isalpha() for c in stripped)
    if letters < 3:
        return "empty or no words"
    if len(stripped) > 400:
        return "too long"
    printable = sum(
        c.isalnum() or c.isspace() or c in ".,;:!?'\"()-_/`[]#@=+*%&<>~→—…·、。，！？：；（）「」" for c in stripped
    )
    if printable / len(stripped) < 0.8 or re.search(r"(.)\1{7,}|(\b\w+\b)(?:\W+\2\b){3,}", stripped):
        return "garbage"
    if instruction_like(stripped):
        return "instruction-like text"
    if has_secret(stripped):
        return "secret"
    bad = invented(stripped, sources)
    if bad:
        return "invented: " + ", ".join(bad[:3])
    loose = ungrounded(stripped, sources)
    if loose:
        return "not grounded in the exchange: " + ", ".join(loose[:4])
    if source_script:
        mine = main_script(stripped)
        if mine and mine != source_script and scripts(sources).get(mine if mine != "ja" else "kana", 0) < 20:
            return f"language switched ({mine} for {source_script})"
    return ""


def check_lines(lines: list[str], sources: str, script: str | None = None) -> tuple[list[str], list[tuple[str, str]]]:
    """Keep the narrative lines that pass; report the rest with a reason."""
    kept, rejected = [], []
    if not lines:
        return kept, rejected
    script = main_script(sources) if script is None else script
    for line in lines:
        why = line_problem(line, sources, script)
        if not why and line in kept:
            why = "duplicate"
        if why:
            rejected.append((line, why))
        else:
            kept.append(line)
    return kept, rejected


def verify_summary(text: str, ledger: Ledger, sources: str, *, budget_tokens: int | None = None, count=None) -> Check:
    """The whole summary: ledger carried, structure intact, nothing invented, within budget."""
    problems = []
    if not text.strip():
        return Check(False, ["empty summary"])
    if not text.lstrip().startswith("## "):
        problems.append("structure: does not start with a ## section")
    back = parse(text)
    said_by_user = {*ledger.constraints, *ledger.asks}
    missing = [
        item
        for item in ledger.items()
        if item not in text and not (item in said_by_user and shown(item, text, back.goal))
    ]
    if missing:
        problems.append("ledger items missing: " + "; ".join(m[:80] for m in missing[:5]))
    if set(back.ledger.files) != set(ledger.files) or len(back.ledger.commands) != len(ledger.commands):
        problems.append("structure: ledger does not parse back")
    narrative = back.narrative_text()
    bad = invented(narrative, sources)
    if bad:
        problems.append("invented: " + ", ".join(bad[:5]))
    if instruction_like(narrative):
        problems.append("instruction-like text in narrative")
    if has_secret(text):
        problems.append("secret left in summary")
    if budget_tokens and count is not None:
        n = count(text)
        if n > budget_tokens:
            problems.append(f"over budget: {n} > {budget_tokens} tokens")
    return Check(not problems, problems)


QUOTED_WORDS = 12  # a Progress line at least this long that the user's words hold is a quote of them


def unquote_user(s: Summary) -> None:
    """Progress lines that only quote the user's words go: the Goal, constraints and messages keep
    them whole (an SWE-bench agent restating its issue's "I would argue that …" had listed it twice,
    its finding read in a pass before the issue's text left the head for the summary). A short line
    stays: "The DB pool is exhausted." may confirm one of the user's suspects."""
    said = [x for x in (s.goal, *s.ledger.constraints, *s.ledger.asks) if x]
    if said:
        s.progress = [p for p in s.progress if len(p.split()) < QUOTED_WORDS or not any(p in x for x in said)]


def unrepeated(s: Summary) -> None:
    """`narrative.add_progress`'s rule (findings.restated) over every narrative line, carried ones too,
    across sections: a handoff read back may list a thing twice (Hermes's own summary had "添加 upstream:
    `https://…`" under one heading and "upstream: `https://…`" under the next)."""
    kept: list[tuple[str, str]] = []  # (section, line), in the summary's order
    for name in _NARRATIVE:
        for x in getattr(s, name):
            if TASK_ITEM.match(x):  # `Task #3: Write module 3` and `Task #4: Write module 4` are two tasks
                kept.append((name, x))
                continue
            said, covered = restated(x, [line for _, line in kept if not TASK_ITEM.match(line)])
            if not covered:
                kept = [(n, line) for n, line in kept if line not in said] + [(name, x)]
    for name in _NARRATIVE:
        setattr(s, name, [line for n, line in kept if n == name])


_NARRATIVE = ("progress", "decisions", "remaining", "questions")


def finished(
    s: Summary, sources: str, stats: dict, details: dict, budget_tokens: int | None = None, kept=None
) -> tuple[str, dict]:
    """A pass's summary as it is returned: fitted to the budget (Hermes's count; what the `kept`
    messages still show goes first), rendered, verified, repaired by code where it can be (the
    progress lines the verifier objects to drop); raises when it cannot be made good."""
    unquote_user(s)
    unrepeated(s)
    if budget_tokens:
        dropped = fit_summary(s, budget_tokens, kept=lambda: source_text(normalize(kept)) if kept else "")
        if dropped:
            details["budget_dropped"] = dropped
            logger.info(
                "hermes-mlx: summary budget %d tokens: dropped %s",
                budget_tokens,
                ", ".join(f"{n} {kind}" for kind, n in dropped.items()),
            )
    text = render(s)
    check = verify_summary(text, s.ledger, sources)
    if not check.ok:
        s.progress, rejected = check_lines(s.progress, sources)
        stats["rejected"].extend(f"{why}: {line[:80]}" for line, why in rejected)
        text = render(s)
        check = verify_summary(text, s.ledger, sources)
        details["repaired"] = True
    if not check.ok:
        raise ValueError("summary failed verification: " + "; ".join(check.problems))
    details["ledger_items"] = len(s.ledger.items())
    return text, details
