"""Secret redaction, done by code on every message as it is read (text.normalize) and on a
previous summary as it is parsed, before any of it reaches the model or a summary; the verifier
refuses a summary that redaction would still change.

The model only chooses among sentences already redacted, so these rules are the whole guarantee.
They work in three layers:

1. Shapes: PEM/PuTTY private keys, `scheme://user:pass@`, Authorization and Cookie headers,
   command lines that carry a password (`mysql -pX`, `sshpass -p X`, `curl -u user:pass`), and
   what only its context gives away (redact_context.py): passwords in prose or by position on a
   command line, tokens as a URL's user, JWTs and key bodies wrapped over lines or cut.
2. Provider formats (secret_patterns.py, after gitleaks' and detect-secrets' rule sets). A match
   is widened to its whole run of token characters, so a key longer than its pattern never
   leaves a tail behind (`npm_...Y`).
3. Assignments: `NAME=value`, `"name": "value"`, `--name value`. A secret-sounding name
   (`*_TOKEN`, `password`, `AccountKey`) loses any value that is not a reference or a type;
   any other name loses a value that looks random (long hex after `=`, mixed-class base64), so
   `TOKEN=3f9a... ./deploy.sh` and unknown providers are covered while `commit 3f9a2b1`,
   `max_tokens=64` and `api_key_env: OPENAI_API_KEY` survive. A secret's name may end its line
   (`token:` then the value alone on the next): a summary joins lines, and whatever the joined
   text would lose must already be gone, or the verifier refuses every later pass.

Why not detect-secrets as a second detector at run time: on a 50,000-character tool output
(benchmarks/bench_redact.py) it took 180-700 ms against our ~20 ms on this shared machine, it
flagged every one of the 714 innocent lines (its keyword and entropy plugins nominate candidates
for a human to audit; they do not say which characters to cut), and it would be a new runtime
dependency. Its plugins and gitleaks' rules serve instead as the test corpus
(tests/secrets_corpus.py). Each regex is gated by a substring check and bounded or anchored
behind a lookbehind, so none backtracks over a long line (tested on 200,000-character lines).
"""

from __future__ import annotations

import re

from .redact_context import redact_context
from .redact_cues import redact_cues, redact_folded
from .redact_urls import sub_url_passwords
from .secret_patterns import (
    AZURE_AD_SECRET,
    CLASS_FIRST_PATTERNS,
    KEY_END,
    LOOSE_RULES,
    PROVIDER_PATTERNS,
    TOKEN_CHARS,
)
from .secret_words import (  # noqa: F401  (is_secret_name, looks_random: re-exported)
    _REFERENCE,
    HASH_NAMES,
    REDACTED,
    SAFE_WORDS,
    _entropy,
    _key_like,
    _name_parts,
    _safe_value,
    _switches,
    _unquote,
    is_secret_name,
    looks_random,
)

_LEFT_CHARS = TOKEN_CHARS - {"=", "."}
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")

# --- layer 1: shapes -------------------------------------------------------------------------
_PRIVATE_KEY = re.compile(
    r"-{4,5} ?BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)? ?-{4,5}.*?"
    r"(?:" + KEY_END + r"|\Z)",
    re.DOTALL,
)
_PUTTY_KEY = re.compile(r"(Private-Lines:[ \t]*\d+[ \t]*\r?\n)(?:[ \t]*[A-Za-z0-9+/=]{8,}[ \t]*(?:\r?\n|\Z))+")
_AUTH_HEADER = re.compile(
    r"(?i)(?<![\w\-])((?:proxy-)?authorization\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?)"
    r"((?:bearer|basic|token|bot|digest|apikey|sso-key|ssws|key|oauth|jwt|hmac|negotiate)[ \t]+)?"
    r"([^\s\"',;\\]+)"
)
_COOKIE_HEADER = re.compile(r"(?i)(?<![\w\-])((?:set-)?cookie[ \t]*:[ \t]*)([^\n\"'\\]{1,4000})")
_BEARER = re.compile(r"(?<![A-Za-z0-9_\-])(Bearer|Basic|Token|Bot)([ \t]+)([A-Za-z0-9._~+/=\-]{12,})")
_Q = r"""('[^'\n]{0,2000}'|"[^"\n]{0,2000}"|[^\s'"]+)"""
_LINE = r"[^\n]{0,300}?[ \t]"
# curl commands are often split with backslash-newlines; other line breaks end the command (a
# summary puts `curl ...` and another command's `-b dc=x` on neighbouring lines)
_LINES = r"(?:[^\n]|\\\r?\n){0,300}?[ \t]"
# (words that must be in the text, regex, how to redact the captured value: all | after ':' |
# after ',' | after '%' | if it has '='). The words gate each regex: a leading lookbehind stops
# the engine skipping ahead, and a `str.__contains__` check is ~100x cheaper than the scan.
_COMMANDS = [
    (("mysql", "mariadb"), r"(?<![\w\-])(?:mysql\w*|mariadb[\w\-]*)\b" + _LINE + r"-p(?=[^\s\-])" + _Q, "all"),
    (("sshpass",), r"(?<![\w\-])sshpass\b" + _LINE + r"-p[ \t]*" + _Q, "all"),
    (
        ("login",),  # `docker login -p`, not `docker run -p 8080:80`
        r"(?<![\w\-])(?:docker|podman|nerdctl|buildah|skopeo|helm|oras|az|cf|oc)\b[^\n]{0,60}?\blogin\b"
        + _LINE
        + r"-p[ \t]+"
        + _Q,
        "all",
    ),
    (("redis-cli",), r"(?<![\w\-])redis-cli\b" + _LINE + r"-a[ \t]+" + _Q, "all"),
    (("mongo",), r"(?<![\w\-])mongo(?:sh|dump|restore|import|export)?\b" + _LINE + r"-p[ \t]+" + _Q, "all"),
    (("sqlcmd", "bcp", "isql"), r"(?<![\w\-])(?:sqlcmd|bcp|isql)\b" + _LINE + r"-P[ \t]*" + _Q, "all"),
    (("curl",), r"(?<![\w\-])curl\b" + _LINES + r"(?:-u|--user|-U|--proxy-user)(?:[ \t]*|=)" + _Q, ":"),
    (("curl",), r"(?<![\w\-])curl\b" + _LINES + r"(?:-b|--cookie)(?:[ \t]+|=)" + _Q, "="),
    (("lftp",), r"(?<![\w\-])lftp\b" + _LINE + r"-u[ \t]+" + _Q, ","),
    (
        ("smbclient", "rpcclient", "net"),
        r"(?<![\w\-])(?:smbclient|rpcclient|net)\b" + _LINE + r"(?:-U|--user)(?:[ \t]+|=)" + _Q,
        "%",
    ),
    (("login",), r"(?<![\w\-])login[ \t]+\S+[ \t]+password[ \t]+" + _Q, "all"),  # .netrc
    (("<add",), r"<add\s+key=\"(?:ClearText)?Password\"\s+value=" + _Q, "all"),  # NuGet.config
]
_COMMAND_RES = [(words, re.compile(p), how) for words, p, how in _COMMANDS]
_XML_SECRET = re.compile(
    r"(?i)<((?:[\w.\-]{0,40}[_\-.:])?(?:password|passwd|secret|token|api[_\-]?key|access[_\-]?key|client[_\-]?secret))>"
    r"(?!\[REDACTED\]<)([^<\n]{1,2000})</\1>"
)


# --- layer 2: provider formats ---------------------------------------------------------------
def _alternation(patterns: list[tuple[str, str]]) -> re.Pattern:
    # Plain (?:...) alternatives: named groups would stop the engine skipping ahead on first chars.
    return re.compile(r"(?<![A-Za-z0-9_\-])(?:" + "|".join(f"(?:{p})" for _, p in patterns) + ")")


_STRONG_KEYS = _alternation([(r, p) for r, p in PROVIDER_PATTERNS if r not in LOOSE_RULES])
_LOOSE_KEYS = _alternation([(r, p) for r, p in PROVIDER_PATTERNS if r in LOOSE_RULES])
_CLASS_KEYS = _alternation(CLASS_FIRST_PATTERNS)
_AWS_ID = re.compile(dict(PROVIDER_PATTERNS)["aws-access-key-id"])


def _strong_check(s: str) -> bool:
    """A distinctive prefix needs a body with digits or mixed case; an AWS key id (exactly 20
    capitals and digits) needs neither: AWS's own example id, AKIAIOSFODNN7EXAMPLE, has one digit
    and about 6% of random ids have none, which the digit test let through."""
    return _key_like(s) or _AWS_ID.fullmatch(s) is not None


_AZURE_AD = re.compile(AZURE_AD_SECRET)
# an AWS secret access key (40 characters of base64) on the line of its access key id, with no name of
# its own ("AKIA… with secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"): the pair gives it away
_AWS_PAIR = re.compile(
    r"(?:A(?:3T[A-Z0-9]|KIA|SIA|BIA|CCA)[A-Z0-9]{16})[^\n]{0,200}?(?<![A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
)


def _aws_pairs(text: str) -> str:
    """`text` less each AWS secret key that sits after its key id on one line (_AWS_PAIR): random-looking,
    in both cases (a 40-hex commit hash is none)."""
    found = [m for m in _AWS_PAIR.finditer(text) if _key_like(k := m.group(1)) and k.lower() != k != k.upper()]
    cut = [m.span(1) for m in found]
    for a, b in reversed(cut):
        text = text[:a] + REDACTED + text[b:]
    return text


# --- layer 3: assignments --------------------------------------------------------------------
_VALUE = (
    r"(\\\"(?:[^\"\\\n]|\\[^\"\n]){0,2000}\\\""  # \"escaped json\"
    r"|\"(?:[^\"\\\n]|\\.){0,2000}\""
    r"|'[^'\n]{0,2000}'"
    r"|`[^`\n]{0,2000}`"
    r"|\([^()\n]{0,300}\)"  # auth=("user", "pw")
    r"|[\"'`]?[^\s\"'`,;(){}<>&\\]{1,300})"  # widened on redaction (_VALUE_END)
)
_VALUE_END = re.compile(r"[^\s\"'`,;(){}<>&\\]*")
_NEXT_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,100}:")
# The value is only looked at (lookahead), so it can itself be the next name: `$env:NAME = "v"`.
_ASSIGN = re.compile(
    r"(?<![A-Za-z0-9_.\-])(-{0,2}[A-Za-z_][A-Za-z0-9_.\-]{0,100})"
    r"(\\?[\"']?[ \t]*(?:=>|:=|==?|:)[ \t]*(?:\r?\n[ \t]*)?)(?=" + _VALUE + ")"
)
# After a secret's name, a value may continue past `&` or `;`; in a URL's query (the name after
# `?` or `&`) not where a new `name=` starts.
_GLUE = re.compile(r"[&;]+[^\s\"'`,;(){}<>&\\]+")
_GLUE_QUERY = re.compile(r"[&;]+(?![A-Za-z_][\w.\-]{0,100}[=:])[^\s\"'`,;(){}<>&\\]+")  # in a query
_LINE_END = re.compile(r"[ \t]*(?:\r?\n|\Z)")
_FLAG = re.compile(r"(?<![A-Za-z0-9_.\-])(--[A-Za-z][A-Za-z0-9_\-]{0,60})([ \t]+)(?![\-\[])(?=" + _VALUE + ")")

_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
_HEX = re.compile(r"[0-9a-fA-F]{32,}")
_B64 = re.compile(r"[A-Za-z0-9+/_\-]{20,}={0,3}")
_WORDS = re.compile(r"[A-Z]?[a-z]{3,}")


def _high_entropy_value(value: str, name: str, sep: str) -> bool:
    """An unnamed credential: long random hex after `=`, or random base64-like after `=` or `:`."""
    if set(_name_parts(name)) & HASH_NAMES or _UUID.fullmatch(value):
        return False
    if _HEX.fullmatch(value):
        return "=" in sep and not value.isdigit() and not value.isalpha() and len(set(value)) >= 8
    if not _B64.fullmatch(value) or len(value) < 24 or not re.search(r"[a-z]", value) or not re.search(r"[A-Z]", value):
        return False
    words = sum(len(w) for w in _WORDS.findall(value)) / len(value)
    return any(c.isdigit() for c in value) and words < 0.6 and _switches(value) >= 0.2 and _entropy(value) >= 3.8


def _replace_value(value: str, name: str, sep: str, named_only: bool) -> str | None:
    """The redacted form of an assigned value, or None to keep it."""
    opening, bare, closing = _unquote(value)
    if bare in (REDACTED, REDACTED[:-1]):  # the ledger's URLs end at `]`: `?token=[REDACTED`
        return None
    if REDACTED in bare:  # a secret inside was already cut out: judge what is left, as a rerun would
        rest = bare.replace(REDACTED, "")
        return None if not is_secret_name(name) or _safe_value(rest, name) else f"{opening}{REDACTED}{closing}"
    if not is_secret_name(name) and (named_only or not _high_entropy_value(bare, name, sep)):
        return None
    core = bare.rstrip(".,!?)]`*")  # `SECRET_KEY=None.` ends a sentence
    if _safe_value(bare, name) or core.lower() in SAFE_WORDS or _REFERENCE.fullmatch(core or "-"):
        return None
    return f"{opening}{REDACTED}{closing}"


def _inner_cuts(text: str, at: int, named_only: bool) -> bool:
    """Whether the assignment starting at `at` (a value that is itself `name:`) redacts its own
    value, or holds one redacted already; then the outer name must leave it be."""
    inner = _ASSIGN.match(text, at)
    if inner is None or not is_secret_name(inner.group(1)):
        return False
    value = inner.group(3)
    return (
        _redacted_already(_unquote(value)[1])
        or _replace_value(value, inner.group(1), inner.group(2), named_only) is not None
    )


def _value_end(text: str, m: re.Match, name: str) -> int:
    """Where an assigned value ends: the rest of a long value, or glued on (`"pw"x`); after a
    secret's name also past `&`/`;` (`password=Tr0ub4dor&3x`, not `?token=x&page=2`)."""
    end = _VALUE_END.match(text, m.end(3)).end()
    glue = _GLUE_QUERY if text[m.start() - 1 : m.start()] in ("?", "&") else _GLUE
    while m.group(3).lstrip("\\")[:1] not in "\"'`(" and is_secret_name(name) and (more := glue.match(text, end)):
        end = more.end()
    return end


def _redact_values(regex: re.Pattern, text: str, named_only: bool) -> str:
    pieces, last = [], 0
    for m in regex.finditer(text):
        name, value = m.group(1), m.group(3)
        if name == "key" and text[m.start() - 1 : m.start()] in ("?", "&"):
            name = "api_key"  # `?key=` in a URL is an API key, whole or cut short by a truncation
        if m.start() < last or (not is_secret_name(name) and (named_only or len(value) < 20)):
            continue  # cheap exits first: most `word:` / `word=` in text are neither
        if _NEXT_KEY.fullmatch(value) and _inner_cuts(text, m.start(3), named_only):
            continue  # `auth: password: X` (YAML on one line): the inner name's own match cuts X
        end = 0  # where the value ends (_value_end), found at most once
        if "\n" in m.group(2) and (
            not is_secret_name(name)
            or value.endswith(":")
            or not _LINE_END.match(text, end := _value_end(text, m, name))
        ):
            continue  # `token:` then the value alone on the next line, not the next YAML key or a sentence
        if value.lstrip("\\")[:1] not in "\"'`(" and is_secret_name(name):
            end = end or _value_end(text, m, name)
            value = text[m.start(3) : end]  # judged whole: `pw=S&YPQFGiRbVq+1`
        out = _replace_value(value, name, m.group(2), named_only)
        if out is not None:
            pieces += [text[last : m.start(3)], out]
            last = end or _value_end(text, m, name)
    return "".join(pieces) + text[last:] if pieces else text


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """Grow a provider match to the whole token run around it (trailing dots are punctuation)."""
    n = len(text)
    stop = end
    while stop < n and (text[stop] in TOKEN_CHARS or _PERCENT.match(text, stop)):
        stop += 3 if text[stop] == "%" else 1  # URL-encoded: Slack's `d=xoxd-...%2F...%3D` cookie
    while stop > end and text[stop - 1] == ".":
        stop -= 1
    begin = start
    while begin > 0 and text[begin - 1] in _LEFT_CHARS and text[begin - 2 : begin] != "//":
        begin -= 1
    return begin, stop


def _redact_keys(regex: re.Pattern, text: str, check) -> str:
    pieces, last = [], 0
    for m in regex.finditer(text):
        if m.start() < last or not check(m.group(0)):
            continue
        begin, stop = _widen(text, m.start(), m.end())
        begin = max(begin, last)
        pieces.append(text[last:begin])
        pieces.append(REDACTED)
        last = stop
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def _alnum(s: str) -> bool:
    return any(c.isalnum() for c in s)


def _redacted_already(value: str) -> bool:
    """Our own mark, perhaps with closing punctuation glued on (`[REDACTED]`` in a summary's
    code span): redacting it again would eat that punctuation, and a rerun must change nothing
    (the verifier re-redacts whole summaries to find leaks)."""
    return value.startswith(REDACTED) and not _alnum(value[len(REDACTED) :])


def _command(m: re.Match, how: str) -> str:
    value = m.group(1)
    opening, bare, closing = _unquote(value)
    head = m.group(0)[: m.start(1) - m.start(0)]
    if how == "all":
        keep = ""
    elif how == "=":
        keep = "" if "=" in bare else None
    else:
        keep = bare.split(how, 1)[0] + how if how in bare else None
    rest = bare[len(keep) :] if keep is not None else ""
    if keep is None or _redacted_already(rest) or bare.startswith("$") or (len(rest) < 3 and not _alnum(rest)):
        return m.group(0)  # `-p)` is punctuation after a prompt-for-password flag, not a password
    return f"{head}{opening}{keep}{REDACTED}{closing}"


def _auth_header(m: re.Match) -> str:
    value = m.group(3)
    if m.group(2):  # after a scheme (`Bearer x`) only a reference is not a credential
        safe = _redacted_already(value) or _REFERENCE.fullmatch(value) is not None
    else:
        safe = _redacted_already(value) or _safe_value(value, "") or (not looks_random(value) and len(value) < 8)
    if safe:
        return m.group(0)
    return f"{m.group(1)}{m.group(2) or ''}{REDACTED}"


def _cookie_header(m: re.Match) -> str:
    value = m.group(2).strip()
    if not value or (value.startswith(REDACTED) and "=" not in value):  # ours, then prose: `Cookie: [REDACTED]` ...
        return m.group(0)
    return f"{m.group(1)}{REDACTED}"


def _bearer(m: re.Match) -> str:
    if not looks_random(m.group(3)) and not (m.group(1) == "Basic" and len(m.group(3)) >= 12 and "=" in m.group(3)):
        return m.group(0)
    return f"{m.group(1)}{m.group(2)}{REDACTED}"


def redact(text: str) -> str:
    """Replace credentials with [REDACTED]. Idempotent; never raises on odd input. Lines holding
    full-width forms are redacted a second time folded to ASCII (redact_cues.redact_folded)."""
    if not text:
        return text or ""
    if not isinstance(text, str):
        text = str(text)
    # a redaction can make a cue whole (`…abcdef[REDACTED]sshpass -p pw`): again while it changes, 3 at most
    before, out = text, redact_folded(_redact(text), _redact)
    for _ in range(2):
        if out == before:
            break
        before, out = out, redact_folded(_redact(out), _redact)
    return out


def _redact(text: str) -> str:
    low = text.lower()  # substitutions only ever insert REDACTED, so words found here stay valid
    if "PRIVATE KEY" in text:
        text = _PRIVATE_KEY.sub(REDACTED, text)
    if "Private-Lines" in text:
        text = _PUTTY_KEY.sub(lambda m: m.group(1) + REDACTED + "\n", text)
    if "://" in text:
        text = sub_url_passwords(text)
    text = redact_context(text, low)
    if "authorization" in low:
        text = _AUTH_HEADER.sub(_auth_header, text)
    if "cookie" in low:
        text = _COOKIE_HEADER.sub(_cookie_header, text)
    if "</" in text:
        text = _XML_SECRET.sub(lambda m: f"<{m.group(1)}>{REDACTED}</{m.group(1)}>", text)
    for words, regex, how in _COMMAND_RES:
        if any(w in text for w in words):
            text = regex.sub(lambda m, how=how: _command(m, how), text)
    if "A" in text and _AWS_ID.search(text):
        text = _aws_pairs(text)  # before the id goes: it is what gives its secret away
    text = _redact_keys(_STRONG_KEYS, text, _strong_check)
    text = _redact_keys(_LOOSE_KEYS, text, looks_random)
    text = _redact_keys(_CLASS_KEYS, text, looks_random)
    if "Q~" in text:
        text = _redact_keys(_AZURE_AD, text, _key_like)
    text = redact_cues(text, low)  # after the providers: `sk-or-v1-<hex>` is theirs, whole
    if any(w in text for w in ("Bearer", "Basic", "Token", "Bot")):
        text = _BEARER.sub(_bearer, text)
    if "--" in text:
        text = _redact_values(_FLAG, text, named_only=True)
    text = _redact_values(_ASSIGN, text, named_only=False)
    return text


def has_secret(text: str) -> bool:
    """True when redact() would change the text (for the verifier)."""
    return bool(text) and redact(text) != text
