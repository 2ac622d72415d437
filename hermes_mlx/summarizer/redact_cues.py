"""Secrets that only the words around them give away, in any language (part of redact()).

Why apart from redact_context.py (English prose): users write to agents in their own language
and paste from documents typed on CJK keyboards. A hostile round (issue 28) found passwords
passing in Chinese (`密码是X`), Japanese (`パスワードは X`), German (`Passwort … lautet X`) and
full-width (`ｐａｓｓｗｏｒｄ：X`) prose, `admin / X` pairs, a 40-hex secret inside an identifier
and Azure DevOps PATs (52 characters of base32, nothing of their own). The rules:

- cue words (secret_words.PASSWORD_CUES and friends), then a few words, then a connector of that
  language, then the value, judged as the English rule judges it (a password, not a plain word);
- full-width forms folded to ASCII one character for one (so every index still holds) on each
  line that has them, the whole of redact() run on the folded line, and its cuts put back into
  the line as written: the text keeps its full-width letters, the secret goes;
- `user / password` after a login word, or with a user name that ships as a default;
- a long hex run inside an identifier whose other parts name a secret (`deploy_token_<hex>`);
  commit hashes in branch and folder names (`build-<sha>`) have no such part and stay;
- an Azure DevOps PAT: 52 base32 characters near a word naming it, or 84 characters with the
  `AZDO` signature Microsoft puts in the new format.

Every rule is gated by a substring or an `isascii()` check and bounded, as the others are.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable

from .redact_context import _password_like, _token_like
from .secret_words import (
    AZURE_PAT_CUES,
    CONNECT_GLUED,
    CONNECT_WORDS,
    CREDENTIAL_CUES,
    DEFAULT_USERS,
    KEY_CUES,
    KEY_CUES_CJK,
    PASSWORD_CUES,
    PASSWORD_CUES_CJK,
    REDACTED,
    _name_parts,
    is_secret_name,
)

# Full-width ASCII (U+FF01-FF5E) and the ideographic space, folded one for one.
FOLD = {cp: cp - 0xFEE0 for cp in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}
_WIDE = re.compile("[\uff01-\uff5e\u3000]")


def _alt(words: list[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


_LETTER = r"[^\W\d_]"
_CUE = (
    rf"(?<!{_LETTER})(?:({_alt(PASSWORD_CUES)})|({_alt(KEY_CUES)}))(?!{_LETTER})"
    rf"|({_alt(PASSWORD_CUES_CJK)})|({_alt(KEY_CUES_CJK)})"
)
_CONNECT = rf"(?:[ \t]*(?:{_alt(CONNECT_GLUED)})|[ \t]+(?:{_alt(CONNECT_WORDS)})(?=[ \t:]))[ \t]*[:：]?"
_QUOTES = {'"': '"', "'": "'", "「": "」", "『": "』", "“": "”", "`": "`"}  # noqa: RUF001
_VALUE = r"(\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|「[^」\n]{1,200}」|『[^』\n]{1,200}』|“[^”\n]{1,200}”|[!-~]{1,300})"  # noqa: RUF001
_WORD = r"[^\s:：=，。、；;,.!?]"  # noqa: RUF001
# The cue, a glued qualifier (`（本番）`) and up to four more words (`für den Server`; spaces
# between them, so there is no split to backtrack over), the connector, the value (ASCII, or
# quoted): `密码是Tr0ub4dor，请保密` ends at the comma.
_PROSE = re.compile(
    rf"(?i)(?:{_CUE})({_WORD}{{0,12}}?(?:[ \t]+{_WORD}{{1,24}}){{0,4}}?){_CONNECT}[ \t]*(?:\r?\n[ \t]*)?{_VALUE}"
)
_ASCII_CUES = tuple(w for w in PASSWORD_CUES + KEY_CUES if w.isascii())
_PUNCT = ".,;:!?)]}*>'\"`"


def _cut(value: str, pw: bool) -> str | None:
    """The value with the secret replaced, or None when it is not one."""
    opening = value[:1] if value[:1] in _QUOTES and value.endswith(_QUOTES[value[:1]]) and len(value) > 1 else ""
    if opening:
        bare, rest = value[1:-1], value[-1]
    else:
        bare = value.rstrip(_PUNCT)
        rest = value[len(bare) :]
    if REDACTED[:-1] in value or not (_password_like(bare) if pw or opening else _token_like(bare)):
        return None
    return f"{opening}{REDACTED}{rest}"


def _sub_prose(text: str) -> str:
    def one(m: re.Match) -> str:
        out = _cut(m.group(6), pw=bool(m.group(1) or m.group(3)))
        return m.group(0) if out is None else m.group(0)[: m.start(6) - m.start(0)] + out

    return _PROSE.sub(one, text)


class _Lines:
    """Line bounds of one text, found once (a rule asking per match would rescan a long line):
    cues are looked for by line, which a rerun sees unchanged (a character window would not:
    every cut shortens the text)."""

    def __init__(self, text: str):
        self.text, self.ends = text, [m.start() for m in re.finditer("\n", text)] + [len(text)]
        self.seen: dict[tuple[int, int], bool] = {}

    def cued(self, start: int, end: int) -> bool:
        """Whether text[start:end] holds a login word (remembered per line)."""
        if (start, end) not in self.seen:
            self.seen[start, end] = _CRED_CUE.search(self.text, start, end) is not None
        return self.seen[start, end]

    def span(self, pos: int, before: int = 0) -> tuple[int, int]:
        """(start, end) of the line holding `pos`, from `before` lines above it."""
        i = bisect.bisect_left(self.ends, pos)
        start = self.ends[i - before - 1] + 1 if i - before > 0 else 0
        return start, self.ends[i]


# --- user / password ----------------------------------------------------------------------------
_CRED_CUE = re.compile(rf"(?i){_alt(CREDENTIAL_CUES)}")
_CODE_LIKE = re.compile(r"[A-Za-z_][\w.]*|[\"'(\[{$\\].*|.*\\.*")  # `root / rel`, `root / 'sub'`: code
_USER_CH = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.@-")
_VALUE_RUN = re.compile(r"[ \t]*([^\s/][^\s]{0,100})")


_USER_LENGTHS = sorted({len(u) for u in DEFAULT_USERS})
_USER_ENDS = frozenset(u[-2:] for u in DEFAULT_USERS)


def _default_before(text: str, at: int, floor: int) -> bool:
    """Whether a default user name stands alone right before `at` (a few slices per slash)."""
    if text[at - 2 : at].lower() not in _USER_ENDS:
        return False
    for n in _USER_LENGTHS:
        start = at - n
        if start < floor:
            return False
        if text[start:at].lower() in DEFAULT_USERS and (not start or text[start - 1] not in _USER_CH | {"/"}):
            return True
    return False


def _sub_pairs(text: str) -> str:
    """`admin / S3cret!`: on a line with a login word; or, with a default user name spaced from
    a value that reads as a typed password and not as code (`path = root / rel` is a path join).
    Found from each slash (str.find), not by a regex tried at every word."""
    pieces, last, lines, at = [], 0, None, text.find("/")
    while at >= 0:
        if text[at - 1 : at] not in (" ", "\t") and not _default_before(text, at, last):
            at = text.find("/", at + 1)  # `src/app`: neither spaced nor after a default user name
            continue
        u_end = at
        while u_end > last and text[u_end - 1] in " \t":
            u_end -= 1
        u_start = u_end
        while u_start > max(last, u_end - 41) and text[u_start - 1] in _USER_CH:
            u_start -= 1
        m = _VALUE_RUN.match(text, at + 1)
        if m is None or u_start == u_end or (u_start and text[u_start - 1] in _USER_CH | {"/"}):
            at = text.find("/", at + 1)
            continue
        user, value = text[u_start:u_end], m.group(1)
        spaced = u_end < at and m.start(1) > at + 1
        if lines is None:
            lines = _Lines(text)
        if _pair_secret(text, lines, user, spaced, value, u_start):
            bare = value.rstrip(_PUNCT)
            pieces += [text[last : m.start(1)], REDACTED]
            last = m.start(1) + len(bare)
        at = text.find("/", max(at + 1, last))
    return "".join(pieces) + text[last:] if pieces else text


def _pair_secret(text: str, lines: _Lines, user: str, spaced: bool, value: str, at: int) -> bool:
    default = user.lower() in DEFAULT_USERS
    if REDACTED[:-1] in value or not (default or spaced) or not user[:1].isalpha() and user[:1] != "_":
        return False
    cued = lines.cued(*lines.span(at))
    bare = value.rstrip(_PUNCT)
    if not (cued or default and spaced) or ("/" in bare and not spaced and not (default and cued)):
        return False
    if cued:
        return not bare.isalpha() and _password_like(bare)
    return _CODE_LIKE.fullmatch(bare) is None and _password_like(bare, strict=True)


# --- hex inside an identifier, Azure DevOps PATs --------------------------------------------------
_HEX_RUN = re.compile(r"(?<![0-9a-fA-F])[0-9a-fA-F]{32,128}(?![0-9a-fA-F])")
_IDENT_CH = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.")
_SECRET_PARTS = frozenset(
    "token secret key apikey password passwd pass pwd pw auth cred creds credential pat sk".split()
)


def _secret_part(name: str) -> bool:
    name = name.strip("_-.")
    return bool(name) and (is_secret_name(name) or bool(set(_name_parts(name)) & _SECRET_PARTS))


def _sub_ident_hex(text: str) -> str:
    pieces, last = [], 0
    for m in _HEX_RUN.finditer(text):
        run = m.group(0)
        if m.start() < last or run.isdigit() or len(set(run.lower())) < 8:
            continue
        start, end = m.start(), m.end()
        while start > max(last, m.start() - 80) and text[start - 1] in _IDENT_CH:
            start -= 1
        while end < min(len(text), m.end() + 80) and text[end] in _IDENT_CH:
            end += 1
        before, after = text[start : m.start()], text[m.end() : end]
        if (before or after) and (_secret_part(before) or _secret_part(after)):
            pieces += [text[last : m.start()], REDACTED]
            last = m.end()
    return "".join(pieces) + text[last:] if pieces else text


_AZURE_52 = re.compile(r"(?<![A-Za-z0-9])[a-z2-7]{52}(?![A-Za-z0-9])")


def _sub_azure(text: str, low: str) -> str:
    if any(cue in low for cue in AZURE_PAT_CUES):
        lines = _Lines(text)

        @functools.lru_cache(maxsize=64)
        def cued(start: int, end: int) -> bool:  # the match's line or the one before it
            near = text[start:end].lower()
            return any(cue in near for cue in AZURE_PAT_CUES)

        def one(m: re.Match) -> str:
            has_digit = any(c.isdigit() for c in m.group(0))
            return REDACTED if has_digit and cued(*lines.span(m.start(), before=1)) else m.group(0)

        text = _AZURE_52.sub(one, text)
    pieces, last, at = [], 0, text.find("AZDO")
    while at >= 0:  # the 84-character format: 76 characters, AZDO, 4 more
        start, end = at - 76, at + 8
        whole = text[max(0, start) : end]
        if (
            start >= last
            and len(whole) == 84
            and whole.isalnum()
            and whole.isascii()
            and not (start and text[start - 1].isalnum())
            and not text[end : end + 1].isalnum()
        ):
            pieces += [text[last:start], REDACTED]
            last = end
        at = text.find("AZDO", at + 4)
    return "".join(pieces) + text[last:] if pieces else text


def redact_cues(text: str, low: str) -> str:
    """Apply the rules above; `low` is text.lower() (the gates)."""
    if not text.isascii() or any(w in low for w in _ASCII_CUES):
        text = _sub_prose(text)
    if "/" in text:
        text = _sub_pairs(text)
    if "AZDO" in text or any(cue in low for cue in AZURE_PAT_CUES):
        text = _sub_azure(text, low)
    return _sub_ident_hex(text)


# --- full-width text ------------------------------------------------------------------------------
def _map_back(line: str, folded: str, out: str) -> str:
    """`line` with the cuts redact() made in its folded copy (`out`); `out` itself when the cuts
    cannot be placed without doubt (the secret still goes, the line keeps ASCII forms)."""
    parts = out.split(REDACTED)
    if not folded.startswith(parts[0]) or not folded.endswith(parts[-1]):
        return out
    pieces, pos = [line[: len(parts[0])]], len(parts[0])
    for i, part in enumerate(parts[1:], start=1):
        last = i == len(parts) - 1
        start = len(folded) - len(part) if last else folded.find(part, pos + 1) if part else -1
        if start <= pos:
            return out
        pieces += [REDACTED, line[start : start + len(part)]]
        pos = start + len(part)
    mapped = "".join(pieces)
    return mapped if mapped.translate(FOLD) == out else out


def redact_folded(text: str, core: Callable[[str], str]) -> str:
    """Each line holding full-width forms, folded and redacted by `core`, the cuts put back."""
    if text.isascii() or not _WIDE.search(text):
        return text
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.isascii() or not _WIDE.search(line):
            continue
        folded = line.translate(FOLD)
        out = core(folded)
        if out != folded:
            lines[i] = _map_back(line, folded, out)
    return "\n".join(lines)
