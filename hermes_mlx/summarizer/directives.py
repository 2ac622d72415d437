"""What the user said that directs or constrains the work, verbatim (Constraints & Preferences).

A directive word ("don't", "only", "keep", 不要) in a sentence the user wrote makes it one; a
question does not, nor the user's account of what they did ("Then I only selected the final
chapter"), nor what a program printed that the user pasted (an error, a console log
line, a line of code: their "not" is the program's), nor a heading. Those words still travel whole
in User Messages, so nothing the user said is lost by being no directive.
"""

from __future__ import annotations

import re

from .extract import clip_line, has_cut, is_error_line, uncut
from .harness import SHELL_PROMPT
from .vocabulary import GO_AHEAD, USER_SENTENCE_END

# the words that say what must be, whoever's sentence they are in
_MUST_WORDS = r"never|always|must|should|make sure|ensure|avoid|please"
_DIRECTIVE = re.compile(
    r"\b(?:don['’]?t|do not|mustn['’]?t|shouldn['’]?t|" + _MUST_WORDS + r"|only|instead|"
    r"prefer|keep|use|no need|without|required?|stick to|not allowed|no|not|leave|go with|let['’]?s|we|"
    r"rather|want|need|fine|frozen|until|approved?|yes|ok|okay|go ahead)\b"
    r"|不要|别|必须|一定|务必|请|只能|保留|不能|禁止|しないで|必ず|ください|だけ|禁止",
    re.I,
)


def _question(sentence: str) -> bool:
    return sentence.rstrip().endswith(("?", "？"))


_LIST_MARK = re.compile(r"^(?:(?:[-*+•>]|\d+[.)])\s+)+")
# an indented line that is no list item: pasted code (`  resolves_at timestamptz not null`)
_INDENTED_CODE = re.compile(r"^(?:\t| {2,})(?!\s|[-*+•>]\s|\d+[.)]\s)")
# what a program printed that the user pasted: a browser console's `app.js:37 GET https://... 406`
_PASTED_LOG = re.compile(r"^\S+:\d+\s|\b(?:GET|POST|PUT|PATCH|DELETE)\s+https?://")
# a terminal session the user pasted, from its prompt on (`(aider-env) D:\app>npx babel --version` and the
# npm warnings it printed: "Do not use it." is npm's)
_PASTED_PROMPT = re.compile(rf"^\s*(?:\([\w.-]+\)\s*)?(?:{SHELL_PROMPT.pattern})\s*\S")
# a line a program printed whole: a browser console's as DevTools copies it, a log's from its time or level
# in a log's shape (Roo Code's user's server log: `INFO: 127.0.0.1:64607 - "GET /.well-known/agent.json
# HTTP/1.1" 200 OK`, `[21:11:01] 👤 User: …`, `ERROR:orchestrator.task_manager:Error while processing …`;
# "DEBUG mode must stay off" and "WARNING: never commit .env" are the user's), a package manager's warning
# (`npm warn deprecated inflight@1.0.6: … Do not use it.`)
_PROGRAM_LINE = re.compile(
    r"Understand this (?:error|warning)\s*$|^\s*(?:\[?\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\]?\s|\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}|"
    r"\[(?:INFO|DEBUG|WARN(?:ING)?|ERROR|CRITICAL|FATAL|TRACE)\]|(?:INFO|DEBUG|WARN(?:ING)?|ERROR|CRITICAL|FATAL|TRACE)"
    r":(?:\S|\s+[\d\"'\[])|(?:npm|yarn|pnpm)\s+(?:warn|WARN|ERR!|error|notice)\s+(?:deprecated|config|code|peer|E[A-Z]{4,}|\S+@))"
)
# a program's prompt the user answered (aider's `Add file to the chat? (Y)es/(N)o/... [Yes]: all`,
# apt's `Do you want to continue? [Y/n]`, pip's `Proceed (Y/n)?`): its "Yes" and "Don't" are the program's
_PROMPT_ANSWERED = re.compile(r"\(Y\)es/\(N\)o|[(\[](?:y/n|yes/no)[)\]]", re.I)


# the user telling what they did or saw ("Then I clicked on the final chapter", "I entered format
# EEE dd and I don't see the date"): a report for the agent, whatever "only" or "no" it holds, unless
# it also says what must be ("I tried X; it should ..."); what they wanted, liked or asked is a preference
_NARRATIVE = re.compile(
    r"^(?:(?:then|so|and|but|also|now|ok(?:ay)?|well)[, ]+)*(?:i|we)(?: (?:then|also|just|already|only|first|finally|even))*"
    r" (?!(?:wanted|preferred|liked|asked|needed|expected|meant|decided|agreed|hoped|requested)\b)"
    r"(?:\w+ed|went|ran|saw|got|made|did|found|tried|read|put|set|built|wrote|took|came|began|thought|left|had|was|were)\b",
    re.I,
)
_MUST = re.compile(r"\b(?:" + _MUST_WORDS + r"|(?:want|need) (?:you|it|them)\b)", re.I)


def _directs(sentence: str) -> bool:
    """Directive words in a sentence the user wrote: no question, and no error, log or code line
    they pasted (its "not" is the program's: `406 (Not Acceptable)`); that travels in User Messages."""
    return (
        bool(_DIRECTIVE.search(sentence))
        and not _question(sentence)
        and not is_error_line(sentence)
        and not _PASTED_LOG.search(sentence)
        and not _PROMPT_ANSWERED.search(sentence)
        and not GO_AHEAD.match(sentence)  # "Approved.", "Not blocking.": it says go on, not how
        and not (_NARRATIVE.match(sentence) and not _MUST.search(sentence))
        and not sentence.rstrip().endswith((",", ";", "{", "(", "["))  # a line of pasted code: `name text not null,`
    )


def user_constraints(text: str, limit: int = 6) -> list[str]:
    """What the user said that directs or constrains the work, verbatim: a short directive
    message whole, else its directive sentences. Questions are not directives (the user's
    messages travel whole in their own section)."""
    folded = " ".join(text.split())
    unpasted = _unpasted(uncut(text, "line").split("\n"))
    said = [ln for ln in unpasted if not _INDENTED_CODE.match(ln)]
    if 8 <= len(folded) <= 400 and not has_cut(text) and _directs(folded) and len(unpasted) == text.count("\n") + 1:
        return [folded]
    out: list[str] = []
    lines = _with_items(said)
    for sentence in re.split(rf"{USER_SENTENCE_END.pattern}|\n+", "\n".join(lines)):
        sentence = _LIST_MARK.sub("", sentence.strip())  # a list's marker, never a bold's `**`
        if 8 <= len(sentence) <= 400 and not sentence.startswith("#") and _directs(sentence):
            sentence = clip_line(sentence, 300)
            if sentence not in out:
                out.append(sentence)
                if len(out) == limit:  # a pasted log of a million lines is not read to its end
                    break
    return out


def _unpasted(lines: list[str]) -> list[str]:
    """`lines` less what the user pasted from a program: a prompt's line and the output under it, up to
    a blank line (_PASTED_PROMPT), less the last lines before that blank line or the message's end that
    direct in no program's shape, which are the user's own words again ("Please don't change the tests,
    fix the code instead."; never git's `hint: …` or an indented line); a console's or a log's line
    (_PROGRAM_LINE)."""
    out: list[str] = []
    pasted: list[str] | None = None  # the lines under a prompt, while pasting

    def users_words(block: list[str]) -> list[str]:
        k = len(block)
        while (
            k
            and _directs(block[k - 1])
            and not _PROGRAM_SHAPED.match(block[k - 1])
            and not is_error_line(block[k - 1].strip())
        ):
            k -= 1
        return block[k:]

    for ln in lines:
        if _PASTED_PROMPT.match(ln):
            out += users_words(pasted) if pasted else []
            pasted = []  # what the command printed follows
        elif _PROGRAM_LINE.search(ln):
            continue
        elif pasted is not None and ln.strip():
            pasted.append(ln)
        else:
            out += users_words(pasted) if pasted else []
            pasted = None
            out.append(ln)
    return out + (users_words(pasted) if pasted else [])


# a program's line in a pasted session: indented, or led by a word and a colon (git's `hint:`, `fatal:`)
_PROGRAM_SHAPED = re.compile(r"^(?:\s|[\w.-]+:)")


def directives_within(message: str) -> list[str]:
    """The directives inside a user's message as User Messages lists it (one line), never the whole
    line: what Constraints leaves out while the message shows it (`summary.said_in_asks`), read back."""
    if _PASTED_PROMPT.match(message):  # a terminal session the user pasted, from its prompt on
        return []
    # its lines as the user wrote them, as far as one line shows them: a lead-in before its list, and either
    # side of a cut; each one the listed message shows whole (`summary.said_in_asks`), and no code
    cut = message.split(" … ")
    pieces = []
    for k, part in enumerate(cut):
        said = re.split(rf"{USER_SENTENCE_END.pattern}|\n+", _LIST_AFTER_LEAD.sub("\n", part))
        said = said[1:] if k else said  # what follows a cut starts mid-sentence
        pieces += said[:-1] if k < len(cut) - 1 and said and not said[-1].endswith(_ENDED) else said
    pieces = [_LIST_MARK.sub("", p.strip()) for p in pieces]
    found = [c for piece in pieces if piece != message for c in user_constraints(piece)]
    whole = [c for c in dict.fromkeys(found) if c != message and len(c) >= 20 and c in message]
    # a sentence that ends, or the message's end: no piece a cut broke off (`… until the f`)
    return [c for c in whole if not _CODE_MARK.search(c) and (c.endswith(_ENDED) or message.endswith(c))]


_ENDED = (".", "!", ":", "。", "！", "：")
_LIST_AFTER_LEAD = re.compile(r"(?<=:) (?=(?:[-*+•]|\d+[.)]) )")
_CODE_MARK = re.compile(r"[{};]")


# a short lead-in and the list under it ("Do not touch:" / "- db/migrations/", "Please run:" / "- `pytest`"):
# the directive is the lead-in's and what it directs the items', so they are one line (at most this long)
_LEAD_IN_CHARS, _WITH_ITEMS_CHARS = 120, 300


def _with_items(lines: list[str]) -> list[str]:
    """`lines` with each short lead-in ending in a colon joined to the list items right under it,
    while the line stays within _WITH_ITEMS_CHARS: alone, "Do not touch:" says nothing of what, and
    `db/migrations/` nothing of why (findings read a short list with its lead-in the same way)."""
    out: list[str] = []
    under = False  # the last line of `out` is a lead-in, with the items joined to it so far
    for ln in lines:
        item = _LIST_MARK.match(ln.strip() + " ")
        said = _LIST_MARK.sub("", ln.strip())
        if under and item:
            last = out[-1]
            joined = f"{last}{' ' if last.endswith((':', '：', '.', '!', '?', ';')) else '; '}{said}"
            if len(joined) <= _WITH_ITEMS_CHARS and not said.endswith((":", "：")):  # an item that leads in itself
                out[-1] = joined
                continue
        lead = ln.strip()
        under = lead.endswith((":", "：")) and len(lead) <= _LEAD_IN_CHARS
        out.append(ln if not under else lead)
    return out
