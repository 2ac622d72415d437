"""The faithfulness gate: every sentence a pass copies into a summary is checked against the text
it summarizes.

The model writes nothing: it chooses among the assistant's own sentences (or older progress
lines), which code copies verbatim. Being chosen does not make a sentence worth keeping: one
that says nothing ("Running the tests again."), reports the user in the assistant's words,
reads like an instruction or names what its source never had is worse than no line, because the
agent reads it beside the user's own words (which travel verbatim: user turns in micro, the
ledger's constraints in batch). So a line enters a summary only when code finds every content
word, name and number of it in its source, its polarity agrees with the closest source clause,
and it does not report the user. The model is offered only sentences that pass, and what it
chose is checked again; a dropped line is replaced by the assistant's own sentence closest to
it, verbatim, so a pass still absorbs its exchange. The goal is chosen here too: the user's
first real request, never a directive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .digest import human_words
from .sentences import paragraphs
from .text import Turn
from .verify import instruction_like, line_problem, main_script
from .vocabulary import SLASH_COMMAND, USER_SENTENCE_END, is_go_ahead

REASONS = ("unsupported", "polarity", "reports_user", "empty", "filtered")

# words that carry no fact: a line may use them freely
FUNCTION_WORDS = frozenset(
    """
    a an the and or but nor so yet of to in on at for with from by as into onto over under after before about
    against between through during above below up down out off again further then once here there when where why
    how all any both each few more most other some such only own same than too very just also now still already is
    are was were be been being am do does did doing done has have had having will would shall should can could may
    might must it its it's this that these those i me my we us our you your he him his she her they them their
    what which who whom whose if because while until since though although whether either neither not no never
    none nothing without instead rather avoid don't doesn't didn't isn't aren't wasn't weren't won't can't cannot
    shouldn't mustn't haven't hasn't hadn't let let's via per etc e.g i.e one two something anything everything
    new old first last next yes ok okay well
    """.split()
)
# the summary's own vocabulary: allowed when the line also carries a supported fact
STOCK_WORDS = frozenset(
    """
    fix fixed fixes fixing add added adds adding ran run runs running update updated updates updating edit edited
    edits change changed changes changing create created creates remove removed delete deleted read reads wrote
    write writes check checked checks find found make made use used uses using apply applied open opened inspect
    inspected look looked looking replace replaced move moved rename renamed install installed review reviewed
    confirm confirmed verify verified test tested tests testing step steps result results issue issues problem
    problems code file files command commands output function functions change successfully successful now again
    work worked working done finished completed complete started start tried try attempt attempted get got set
    modified modify implemented implement resolved resolve investigated investigate identified identify caused
    cause because due reason version line lines
    """.split()
)

_NEG_EN = re.compile(
    r"(?i)\b(?:not|no|never|none|nothing|nor|cannot|without|avoid(?:s|ed|ing)?|instead\s+of|rather\s+than)\b|n['’]t\b"
)
_NEG_CJK = re.compile(r"不|没|別|别|禁止|ない|ません|しないで|ず[、。にの]")
_CLAUSE = re.compile(
    r"(?i)[;:,\n—–()]|(?<=[.!?])\s+|\s+(?:but|however|whereas|although|though)\s+"
    r"|(?=\b(?:instead of|rather than)\b)|[；，。！？、：]"
)
_TOKEN = re.compile(r"`[^`\n]+`|[A-Za-z][\w'’./:#+-]*[\w]|[A-Za-z]|\d+(?:\.\d+)*|[\u3040-\u30ff\u3400-\u9fff]+")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)*(?![\w])")
_REPORTS_USER = re.compile(
    r"\b(?:the|a|our|this)\s+user(?:['’]s)?\b|\buser(?:['’]s)?\s+(?:asked|asks|said|says|wants?|wanted|requested|requests|"
    r"told|tells|prefers?|preferred|instructed|insisted|mentioned|noted|suggested|would|needs?|needed|confirmed|"
    r"decided|approved|specified|stated|explained|reported|expects?|expected)\b"
    r"|\b(?:you|he|she|they)\s+(?:asked|said|say|says|want|wanted|requested|told|prefer|insisted|mentioned|would like)\b"
    r"|\bas (?:you )?(?:requested|asked|instructed)\b|\b(?:i|we) (?:was|were) (?:asked|told|instructed)\b"
    r"|用户|ユーザー|使用者",
    re.IGNORECASE,
)
_DIRECTIVE = re.compile(
    r"^\s*(?:(?:no|ok|okay|yes|also|and|but|please|so)[,.!]?\s+)*(?:please\s+)?"
    r"(?:don['’]?t|do not|never|avoid|always|must|mustn['’]t|make sure|ensure|keep|stick to|leave|instead of|"
    r"stop|only)\b|^\s*(?:不要|别|禁止|必须|务必|请勿|しないで|禁止|必ず)",
    re.IGNORECASE,
)


def stem(word: str) -> str:
    """A crude English stem, enough to match inflections (retries/retry, failing/failed/fail)."""
    w = word.lower().replace("’", "'").strip("'")
    if len(w) <= 3 or not w.isascii():
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    else:
        if len(w) == 4 and w.endswith("ed") and w[1] != "e":
            return w[:-1]  # used -> use
        if len(w) == 5 and w.endswith("ing"):
            return w[:2] + "e"  # using -> use
        for suffix in ("ing", "ed", "es", "s", "ly"):
            if w.endswith(suffix) and len(w) - len(suffix) >= 3 and not w.endswith("ss"):
                w = w[: -len(suffix)]
                break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]  # running -> run
    return w[:-1] if len(w) > 3 and w.endswith("e") else w


STOCK_STEMS = frozenset(stem(w) for w in STOCK_WORDS)


def negated(text: str) -> bool:
    """Whether a sentence or clause is stated in the negative (en, zh, ja markers)."""
    return bool(_NEG_EN.search(text) or _NEG_CJK.search(text))


def reports_user(line: str) -> bool:
    """A line about what the user said, asked or wants, or one shaped as the user's directive."""
    return bool(_REPORTS_USER.search(line) or directive_shaped(line))


def directive_shaped(text: str) -> bool:
    """Imperative constraint wording ("Don't bump httpx", "Never ...", "Keep it 3.9 compatible")."""
    return bool(_DIRECTIVE.search(text or ""))


def is_ack(text: str) -> bool:
    """A greeting or go-ahead ("ok", "Go on.", "thanks"), or under three words: never a goal."""
    folded = " ".join((text or "").split())
    return not folded or is_go_ahead(folded) or len(re.findall(r"\w+", folded)) < 3


def _is_name(token: str) -> bool:
    """Identifier-shaped: must occur verbatim in the source (a near-copy is an invention)."""
    return bool(re.search(r"[_./:#+]|\d|[a-z][A-Z]|^[A-Z]{2,}", token))


def _cjk(token: str) -> bool:
    return bool(re.match(r"[\u3040-\u30ff\u3400-\u9fff]", token))


@dataclass
class Source:
    """What a line may draw on: the text, its word stems, its numbers and its clauses."""

    text: str
    stems: set = field(default_factory=set)
    numbers: set = field(default_factory=set)
    clauses: list = field(default_factory=list)  # [(content stems, negated)]

    @classmethod
    def of(cls, text: str) -> Source:
        text = text or ""
        words = re.findall(r"[A-Za-z][A-Za-z']*", text)
        parts = [(content_stems(c), negated(c)) for c in clauses(text)]
        return cls(text, {stem(w) for w in words}, set(_NUMBER.findall(text)), [c for c in parts if c[0]])

    def has_word(self, word: str) -> bool:
        if "-" in word.strip("-"):
            return all(self.has_word(part) for part in word.split("-") if part) or word.lower() in self.text.lower()
        word = re.sub(r"['’]s$", "", word)
        s = stem(word)
        if s in self.stems or word.lower() in self.stems:
            return True
        return len(s) >= 5 and any(len(t) >= 5 and (t.startswith(s) or s.startswith(t)) for t in self.stems)

    def has_name(self, name: str) -> bool:
        return bool(re.search(r"(?<![\w])" + re.escape(name) + r"(?![\w])", self.text)) or (
            name in self.text and not name[-1].isalnum()
        )


def clauses(text: str) -> list[str]:
    """A text cut where polarity can change: punctuation, "but", before "instead of"."""
    return [c for c in _CLAUSE.split(text or "") if c and c.strip()]


def content_stems(text: str) -> set:
    """Stems of a clause's words that can carry meaning (function words out, numbers in)."""
    out = set()
    for tok in _TOKEN.findall(text or ""):
        tok = tok.strip("`")
        if _cjk(tok):
            out.update(tok[i : i + 2] for i in range(max(1, len(tok) - 1)))
        elif tok.lower() not in FUNCTION_WORDS:
            out.add(stem(tok) if not _is_name(tok) else tok)
    return out


def unsupported_parts(line: str, src: Source) -> tuple[list[str], int]:
    """(words, names and numbers of the line missing from the source; supported fact words)."""
    missing, facts = [], 0
    for tok in _TOKEN.findall(line):
        if tok.startswith("`"):
            ok = tok.strip("`").strip() in src.text
            missing += [] if ok else [tok]
            facts += ok
            continue
        tok = tok.rstrip(".:/'’-")
        if not tok:
            continue
        if _cjk(tok):
            grams = [tok[i : i + 2] for i in range(max(1, len(tok) - 1))]
            hit = sum(g in src.text for g in grams)
            if hit < len(grams) * 0.6:
                missing.append(tok)
            facts += hit > 0
        elif tok[0].isdigit():
            if tok in src.numbers or tok in src.text.split():
                facts += 1
            else:
                missing.append(tok)
        elif _is_name(tok):
            if src.has_name(tok):
                facts += 1
            else:
                missing.append(tok)
        elif tok.lower() in FUNCTION_WORDS:
            continue
        elif src.has_word(tok):
            facts += tok.lower() not in STOCK_WORDS
        elif tok.lower() not in STOCK_WORDS:
            missing.append(tok)
    return missing, facts


def _closeness(mine: set, stems: set) -> tuple[int, float]:
    """(words shared, plus the share of the source clause's own facts the line covers): "Used
    pandas for the invoice" is closer to "don't use pandas" than to a long invoice sentence."""
    shared = mine & stems
    facts = stems - STOCK_STEMS
    return len(shared), len(shared) + (len(shared & facts) / len(facts) if facts else 0.0)


def polarity_flip(line: str, src: Source, min_overlap: int = 1) -> bool:
    """True when a clause of the line matches a source clause best but with the opposite
    polarity ("Used X" where the closest source says "don't use X"). Ties go to agreement."""
    for clause in clauses(line):
        mine = content_stems(clause)
        if not mine:
            continue
        best, score, polarities = 0, 0.0, set()
        for stems, neg in src.clauses:
            n, value = _closeness(mine, stems)
            if n and value > score:
                best, score, polarities = n, value, {neg}
            elif n and value == score:
                polarities.add(neg)
        if best >= max(min_overlap, (len(mine) + 1) // 2) and negated(clause) not in polarities:
            return True
    return False


def line_verdict(line: str, src: Source, script: str = "") -> str:
    """Why a chosen line may not enter a summary ("" when it may): one of REASONS."""
    if reports_user(line):
        return "reports_user"
    why = line_problem(line, src.text, script)
    if why:
        return "unsupported" if why.startswith(("invented", "not grounded")) else "filtered"
    missing, facts = unsupported_parts(line, src)
    if missing:
        return "unsupported"
    if not facts:
        return "empty"
    if polarity_flip(line, src):
        return "polarity"
    return ""


def _words(sentence: str) -> int:
    """Words in a sentence; CJK text has no spaces, so two of its characters count as one."""
    cjk = len(re.findall(r"[\u3040-\u30ff\u3400-\u9fff]", sentence))
    return len(re.findall(r"[^\W\u3040-\u30ff\u3400-\u9fff]+", sentence)) + cjk // 2


def statements(turns: list[Turn]) -> list[str]:
    """The assistant's own sentences, verbatim: what a dropped line may be replaced with."""
    out: list[str] = []
    for t in turns:
        if t.role != "assistant" or not t.text.strip():
            continue
        for sentence in (s for line in paragraphs(t.text) for s in line):  # whole sentences, no heading
            # a list marker goes; a bold's `**` stays (stripped, "Updated X** to call ..." is a fragment)
            sentence = " ".join(re.sub(r"^(?:[-*•]|\d+[.)])\s+", "", sentence).strip(" ->\t").split())
            if (
                _words(sentence) >= 3
                and len(sentence) <= 300
                and sentence not in out
                and not instruction_like(sentence)
                and not reports_user(sentence)
            ):
                out.append(sentence)
    return out


@dataclass
class GateResult:
    lines: list  # what enters the summary: kept chosen lines and verbatim replacements
    kept: int = 0
    dropped: list = field(default_factory=list)  # [(line, reason)]
    replaced: int = 0

    def counts(self) -> dict:
        dropped = {r: 0 for r in REASONS}
        for _, why in self.dropped:
            dropped[why] += 1
        return {"kept": self.kept, "dropped": dropped, "replaced": self.replaced}


def closest(line: str, candidates: list[str]) -> str:
    """The candidate sharing most content with the line; the last one (the concluding
    sentence) when none shares anything."""
    if not candidates:
        return ""
    mine = content_stems(line)
    scored = [(len(mine & content_stems(c)), i) for i, c in enumerate(candidates)]
    best, i = max(scored)
    return candidates[i] if best else candidates[-1]


def gate(
    lines: list[str],
    source: str,
    turns: list[Turn] | None = None,
    *,
    script: str | None = None,
    have: list[str] | tuple = (),
) -> GateResult:
    """Check each chosen line against `source` (the redacted text it summarizes); replace the
    dropped ones by the closest assistant statement from `turns` (never the user's)."""
    src = Source.of(source)
    script = main_script(source) if script is None else script
    pool = [s for s in statements(turns or []) if s not in have]
    result = GateResult([])
    for line in lines:
        why = line_verdict(line, src, script)
        if not why:
            if line not in result.lines:
                result.lines.append(line)
            result.kept += 1
            continue
        result.dropped.append((line, why))
        stand_in = closest(line, [c for c in pool if c not in result.lines])
        if stand_in:
            result.lines.append(stand_in)
            result.replaced += 1
    return result


def tally(total: dict, counts: dict) -> dict:
    """Add one gate run's counts (GateResult.counts(), or a pass's details["gate"]) into running
    totals: a pass's over its gate runs, the bench's over a session's passes."""
    total["kept"] = total.get("kept", 0) + counts.get("kept", 0)
    total["replaced"] = total.get("replaced", 0) + counts.get("replaced", 0)
    dropped = total.setdefault("dropped", {r: 0 for r in REASONS})
    for r, n in (counts.get("dropped") or {}).items():
        dropped[r] = dropped.get(r, 0) + n
    return total


def gated(lines: list[str], source: str, turns: list[Turn] | None, stats: dict, script: str | None = None) -> list[str]:
    """`lines` through the gate against `source`; its counts go into `stats["gate"]` and what it
    dropped, with why, into `stats["rejected"]` (a summarizer pass's details)."""
    checked = gate(lines, source, turns, script=script if script is not None else main_script(source))
    tally(stats["gate"], checked.counts())
    stats["rejected"].extend(f"{why}: {line[:80]}" for line, why in checked.dropped)
    return checked.lines


def goal_of(turns: list[Turn], limit: int = 300) -> str:
    """The user's request: the first user turn that asks for something (not a greeting, not a
    go-ahead, not only directives), its directive sentences left to the constraints, clipped."""
    for t in turns:
        words = human_words(t.text) if t.role == "user" else ""
        if not words.strip():  # not a user turn, or one no human typed (an envelope, a notification)
            continue
        folded = " ".join(words.split())
        if is_ack(folded) or SLASH_COMMAND.match(folded):  # `/add src/a.java` asks the agent's harness, not for work
            continue
        asks = [s for s in USER_SENTENCE_END.split(folded) if s.strip() and not directive_shaped(s)]
        asks = [s for s in asks if not is_ack(s)]
        if not asks:
            continue
        goal = " ".join(asks)
        return goal if len(goal) <= limit else goal[: limit - 1].rsplit(" ", 1)[0] + "…"
    return ""
