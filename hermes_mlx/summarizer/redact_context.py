"""Secrets recognised by their context rather than by their own shape (part of redact()).

Why a separate pass: these are the credentials a hostile round found passing redact() because
nothing in the value itself gives it away, or because it is spread over lines:

- a password stated in prose ("the password for prod is ...", "passphrase was ...",
  "password Tr0ub4dor&3x"): the sentence says what the next word is;
- a password given to a command by position or by a short flag (`htpasswd -b FILE USER PW`,
  `ssh-keygen -N PW`, `openssl -passin pass:PW`, `keytool -storepass PW`, `zip -P PW`, `7z -pPW`,
  `ldapsearch -w PW`, `echo PW | sudo -S`): the command line says which argument it is;
- a URL whose user part is a token (`https://<40 hex>@github.com/...`) or whose password holds
  a `/` (not valid in a URL, but typed anyway);
- a JWT wrapped over lines, and a private key body whose BEGIN line was cut off.

Every rule is gated by a substring test and written so that no regex backtracks over a long
line (each repetition is bounded, or split where the next character decides). Values that are
references (`$PW`, `${{ secrets.X }}`), placeholders, plain words or paths stay: the summary must
keep `the password is stored in vault` and `pin numpy to 2.1`.
"""

from __future__ import annotations

import re

from .redact_commands import _VAL, redact_commands
from .redact_urls import _RUN_CH, sub_at_tokens, sub_url_users
from .secret_patterns import KEY_BODY_STARTS, KEY_BODY_WORDS, KEY_END, TOKEN_CHARS
from .secret_words import REDACTED, SAFE_WORDS, _key_like, _safe_value, is_secret_name, looks_random

SECRET_HINTS = ("pass", "pw", "pin", "secret", "key", "token")  # where a secret's name may start
_HEX16 = re.compile(r"[0-9a-fA-F]{16,}")


def _strip(value: str) -> tuple[str, str, str]:
    """(opening quote, bare value, closing quote and sentence punctuation)."""
    if REDACTED[:-1] in value:  # ours already (perhaps cut at its `]`): a rerun leaves it
        return "", REDACTED, ""
    if len(value) >= 2 and value[0] in "'\"`" and value[-1] == value[0]:
        return value[0], value[1:-1], value[0]
    core = value.rstrip(".,;:!?)]}*>'\"`")
    return "", core, value[len(core) :]


def _plain_word(s: str) -> bool:
    """A word of prose or a kebab-case name (`incorrect`, `Hunter`, `not-set`), not a password."""
    parts = s.split("-")
    return all(p.isalpha() and (p.islower() or p.istitle() or p.isupper()) for p in parts if p) and any(parts)


def _password_like(s: str, strict: bool = False) -> bool:
    """What a person would type as a password: not a plain word, a reference, a path or a flag."""
    if len(s) < (6 if strict else 4) or REDACTED in s or _plain_word(s) or _safe_value(s, ""):
        return False
    if "://" in s or s.startswith("-") or (strict and ("=" in s or not any(c.isalpha() for c in s))):
        return False
    return not strict or any(not c.isalpha() for c in s)


def _token_like(s: str) -> bool:
    """A generated token or key: long enough and not a word, a number, a version or a name."""
    if len(s) < 8 or REDACTED in s or _plain_word(s) or _safe_value(s, "") or "://" in s:
        return False
    if s.replace(".", "").replace("-", "").isdigit() or re.fullmatch(r"v?\d+(?:\.\d+)+[\w.+\-]*", s):
        return False
    return looks_random(s) or _key_like(s) or (any(c.isdigit() for c in s) and any(c.isalpha() for c in s))


# --- prose ------------------------------------------------------------------------------------
_PW_WORDS = r"pass(?:word|wd|phrase|code)s?|pass[ \t]+phrase|pwd?|pin(?:[ \t]+code)?"
_KEY_WORDS = r"secret(?:[ \t]+key)?|(?:api|access|secret|private|auth|signing)[ \t_\-]?key|(?:access|auth|api|bot|bearer)?[ \t_\-]?token"
# Words of one sentence stay on one line: a summary joins facts from many messages line by line,
# and `password` ending one bullet must not reach a value on the next (the verifier would find a
# secret no single message held). Only the value may start the next line: "the password is\nX".
_SEP = r"[ \t]+"
_CONNECT = (
    r"(?:" + _SEP + r"(?:(?:is|was|are|has[ \t]+been|have[ \t]+been|will[ \t]+be|got)[ \t]+)?"
    r"(?:set|changed|reset|updated|rotated)[ \t]+to\b"
    r"|" + _SEP + r"(?:is|was|are|be|becomes|remains|now)\b(?:[ \t]*[:=])?(?:[ \t]+(?:now|still|also|currently|just))?"
    r"|[ \t]*(?:[:=]|->|→|=>))"
)
_PROSE = re.compile(
    r"(?i)(?<![\w\-.])(" + _PW_WORDS + "|" + _KEY_WORDS + r")(?![\w\-])"
    r"((?:" + _SEP + r"[\w.'()@/\-]{1,40}){0,5}?)(" + _CONNECT + r")[ \t]*(?:\r?\n[ \t]*)?" + _VAL
)
# "the GITHUB_TOKEN is X": a variable's name as the subject (judged by is_secret_name).
_PROSE_IDENT = re.compile(r"(?i)([A-Za-z_][\w\-.]{0,80})()(" + _CONNECT + r")[ \t]*(?:\r?\n[ \t]*)?" + _VAL)
# "set the password to X", "I changed my passphrase to X": the verb comes first.
_PROSE_TO = re.compile(
    r"(?i)(?<![\w\-])(?:set|sets|setting|change[sd]?|changing|reset(?:s|ting)?|update[sd]?|updating|rotate[sd]?)"
    r"[ \t]+(?:[\w\-]{1,20}[ \t]+){0,3}?(" + _PW_WORDS + r")[ \t]+to[ \t]+" + _VAL
)
_VERB_BEFORE = re.compile(
    r"(?i)(?<![\w\-])(?:set|change|reset|updat|rotat)[a-z]{0,4}[ \t]+(?:[\w\-]{1,20}[ \t]+){0,3}?$"
)
# "use password X", "PASSWORD X": only a value that reads as a typed password (digits or symbols).
_PROSE_BARE = re.compile(r"(?i)(?<![\w\-.])(pass(?:word|wd|phrase)|pwd?)[ \t]+" + _VAL)
# What the words between the secret's name and "is" may not be: then the value is something else
# ("the password policy is strict", "token usage is 53%", "the token file is ~/.token").
_NOT_THE_VALUE = frozenset(
    "length policy field prompt manager strength reset expiry expiration rotation file path env variable var "
    "format rules rule requirement requirements count usage limit budget type name size id ids cost price rate "
    "window lifetime ttl age header endpoint url scope scopes version hint prefix suffix".split()
)
_NAME_ONLY = re.compile(r"[A-Za-z_][\w.\-]*")
# Where a prose rule may start: a class first lets the engine skip ahead (the rules themselves
# open with a lookbehind and a case-blind alternation, ~10x slower to scan 50 MB with).
_HINT = re.compile(r"[pPsSkKtT](?i:(?:ass(?:word|wd|phrase|code)?s?|wd?|in|ecret|ey|oken)(?![a-z]))")
_QUALIFIER = re.compile(r"[A-Za-z]{2,8}[ \t_\-]?$")


# A connector on the same line, soon after the name: else no prose rule but the bare one can match.
_CONNECT_NEAR = re.compile(r"[:=→>]|(?i:\b(?:is|was|are|be|becomes|remains|now|to)\b)")
_WORDS = frozenset("password passwords passwd passphrase passcode pass pw pwd pin secret key token".split())
_PW_HEADS = frozenset("password passwords passwd passphrase passcode pass pw pwd".split())
_IDENT_CH = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.")


def _hints(text: str, low: str) -> list[int]:
    """Where a secret's name may start: str.find on the lowered text (memchr-fast) when lowering
    kept every index, else the regex (a few characters lower to two)."""
    if len(low) != len(text):
        return [h.start() for h in _HINT.finditer(text)]
    found = set()
    for word in SECRET_HINTS:
        at = low.find(word)
        while at >= 0:
            found.add(at)
            at = low.find(word, at + 1)
    return sorted(found)


def _sub_prose(text: str, low: str) -> str:
    """The prose rules, tried only where a secret's name starts (or its qualifier, or a verb
    before it); a hint inside another word (`tokens`, `PASSED`, `max_tokens`) costs a set lookup."""
    pieces, last, n = [], 0, len(text)
    for i in _hints(text, low):
        if i < last:
            continue
        j = i + 1
        while j < n and text[j].isalpha():
            j += 1
        word = text[i:j].lower()
        ident = None
        if i and text[i - 1] in _IDENT_CH:  # inside a longer name: `DB_PASSWORD`, `max_tokens`, `monkey`
            start, end = i, j
            while start > max(last, i - 60) and text[start - 1] in _IDENT_CH:
                start -= 1
            while end < n and end - i < 60 and text[end] in _IDENT_CH:
                end += 1
            ident = start if is_secret_name(text[start:end]) else None
        if word not in _WORDS and ident is None:
            continue
        nl = text.find("\n", j, j + 240)
        connected = _CONNECT_NEAR.search(text, j, nl if nl >= 0 else j + 240) is not None
        tries = []
        if connected:
            if ident is not None:
                tries.append((_PROSE_IDENT, _prose_ident, ident))  # `DB_PASSWORD was ...`
            if (
                word in _WORDS
                and text[i - 1 : i] in (" ", "\t")
                and (q := _QUALIFIER.search(text, max(last, i - 9), i))
            ):
                tries.append((_PROSE, _prose, q.start()))  # `API key is ...`
            if word in _WORDS:
                tries.append((_PROSE, _prose, i))
        if word in _PW_HEADS:
            if text[j : j + 8].lstrip(" \t").startswith("to") and (
                v := _VERB_BEFORE.search(text, max(last, i - 90), i)
            ):
                tries.insert(0, (_PROSE_TO, _prose_bare, v.start()))  # `set the password to ...`
            tries.append((_PROSE_BARE, _prose_bare, i))
        for rule, fn, at in tries:
            m = rule.match(text, at)
            if m:
                out = fn(m)
                if out != m.group(0):
                    pieces += [text[last : m.start()], out]
                    last = m.end()
                    break
    return "".join(pieces) + text[last:] if pieces else text


def _prose(m: re.Match) -> str:
    word, mid, connect, value = m.group(1), m.group(2), m.group(3), m.group(4)
    if not mid.strip() and connect.strip() in (":", "=") and _NAME_ONLY.fullmatch(word) and is_secret_name(word):
        return m.group(0)  # `password: x` is an assignment: layer 3 judges it
    if {w.lower().strip("'()") for w in mid.split()} & _NOT_THE_VALUE:
        return m.group(0)
    if connect.strip() == ":" and re.search(r"(?:^|\s)[A-Za-z]$", mid) and value.startswith("\\"):
        return m.group(0)  # `C:\Windows\System32`: a drive's path, its colon no connector
    opening, bare, rest = _strip(value)
    pw = re.search(r"pass|pwd?\b|pw_|pin\b", word, re.I) is not None
    if bare.lower() in SAFE_WORDS or not (_password_like(bare) if pw or opening else _token_like(bare)):
        return m.group(0)
    return m.group(0)[: m.start(4) - m.start(0)] + f"{opening}{REDACTED}{rest}"


def _prose_ident(m: re.Match) -> str:
    return _prose(m) if is_secret_name(m.group(1)) else m.group(0)


def _prose_bare(m: re.Match) -> str:
    opening, bare, rest = _strip(m.group(2))
    if not (_password_like(bare) if opening else _password_like(bare, strict=True)):
        return m.group(0)
    return m.group(0)[: m.start(2) - m.start(0)] + f"{opening}{REDACTED}{rest}"


# --- over lines -------------------------------------------------------------------------------
_BREAK = re.compile(r"[ \t]*(?:\\\r?\n|\r?\n|\\r\\n|\\n)[ \t>\"']*")
_JWT = re.compile(r"ey[A-Za-z0-9_\-]{10,}\.ey[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-+/=.]*")


def _run_end(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in TOKEN_CHARS:
        i += 1
    return i


def _jwt_span(text: str, start: int) -> int | None:
    """End of a JWT that starts at `start` and is wrapped over lines, or None. A line break is
    crossed while the token lacks its two dots; once it has them (a wrapped signature), only from
    a line the token fills (or 40 characters of it) to a next line that starts with a run of token
    characters that is not a word (or is a piece of 3 characters or less alone on its line: `RE`).
    Bounded so that text full of `eyJ` stays linear: a header is crossed over at most 6 lines, the
    payload must start `ey` like a JWT's, at most 40 lines and 16 KB in all."""
    parts, i, breaks, n, dots, checked = [], start, 0, len(text), 0, False
    while True:
        j = _run_end(text, i)
        parts.append(text[i:j])
        dots += parts[-1].count(".")
        if dots and not checked:
            payload = "".join(parts).split(".", 2)[1]
            if payload[:2] and not "ey".startswith(payload[:2]):
                return None
            checked = len(payload) >= 2
        b = _BREAK.match(text, j)
        if b is None or breaks >= 40 or (breaks >= 6 and not dots) or j - start > 16384:
            break
        if b.end() >= n or text[b.end()] not in TOKEN_CHARS:
            break
        if dots >= 2:
            k = _run_end(text, b.end())
            nxt = text[b.end() : k]
            whole_next = k == n or _BREAK.match(text, k) is not None
            piece = (whole_next and len(nxt) <= 3) or not _plain_word(nxt.rstrip("."))
            if not ((breaks or j - start >= 40) and piece and any(c.isalnum() for c in nxt)):
                break
        i, breaks = b.end(), breaks + 1
    if not breaks or not _JWT.fullmatch("".join(parts)):
        return None
    return j


def _split_jwts(text: str) -> str:
    pieces, last, at = [], 0, text.find("eyJ")
    while at >= 0:
        if at >= last and (not at or text[at - 1] not in _RUN_CH) and (end := _jwt_span(text, at)) is not None:
            pieces += [text[last:at], REDACTED]
            last = end
        at = text.find("eyJ", at + 3)
    return "".join(pieces) + text[last:] if pieces else text


_NL = r"(?:\r?\n|\\r?\\n)"
_B64 = r"[A-Za-z0-9+/=]"
# A private key body by its first bytes (KEY_BODY_STARTS), then every line that is base64 alone,
# or every base64 word of 16+ characters when a summary folded the lines into one.
_KEY_BODY = re.compile(
    r"(?<![A-Za-z0-9+/])(?:" + KEY_BODY_STARTS + r")" + _B64 + r"*"
    r"(?:(?:" + _NL + r"[ \t]*|[ \t]+(?=" + _B64 + r"{16}))" + _B64 + r"{2,}(?=[\s\"'\\]|\Z))*"
    r"(?:(?:" + _NL + r"|[ \t]+)[ \t]*" + KEY_END + r")?"
)
_KEY_END = re.compile(KEY_END)
_B64_CH = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


def _word_above(text: str, at: int, floor: int) -> tuple[int, int] | None:
    """(start, end) of the base64 word before `at`, across spaces and real or JSON-escaped line
    breaks, or None when there is none."""
    k = at
    while k > floor:
        if text[k - 1] in " \t\r\n":
            k -= 1
        elif text[k - 2 : k] in ("\\n", "\\r") and k - 2 >= floor:
            k -= 2
        else:
            break
    t = k
    while t > floor and text[t - 1] in _B64_CH:
        t -= 1
    escaped = t > floor and text[t - 1] == "\\" and text[t : t + 1] in ("n", "r")
    t += escaped  # `...\nAbc`: the `n` belongs to the escape
    if t >= k or (not escaped and t > floor and text[t - 1] not in " \t\r\n\"'`"):
        return None
    return t, k


def _headless_ends(text: str) -> str:
    """An END line with no BEGIN before it (cut off): the base64 lines or words before it go too
    (the one nearest END may be short, the others have 16+ characters)."""
    pieces, last = [], 0
    for m in _KEY_END.finditer(text):
        begin, words = m.start(), 0
        while words < 400:
            word = _word_above(text, begin, last)
            if word is None or word[1] - word[0] < (4 if not words else 16):
                break
            begin, words = word[0], words + 1
        if words:
            pieces += [text[last:begin], REDACTED]
            last = m.end()
    return "".join(pieces) + text[last:] if pieces else text


def redact_context(text: str, low: str) -> str:
    """Apply the rules above; `low` is text.lower() (the gates)."""
    if "eyJ" in text:
        text = _split_jwts(text)
    if any(w in text for w in KEY_BODY_WORDS):
        text = _KEY_BODY.sub(REDACTED, text)
    if "PRIVATE KEY" in text:
        text = _headless_ends(text)
    if "://" in text:
        text = sub_url_users(text)
    if "@" in text:
        text = sub_at_tokens(text)
    if any(w in low for w in SECRET_HINTS):
        text = _sub_prose(text, text.lower())  # lowered again: the rules above changed the text
    text = redact_commands(text, low)
    return text
