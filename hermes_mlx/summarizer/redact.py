"""Secret redaction, done by code before any text reaches the model and again on what it returns.

The model is also asked to redact, but a 135M model cannot be trusted with that; these rules
are the guarantee. They work in three layers:

1. Shapes: PEM/PuTTY private keys, `scheme://user:pass@`, Authorization and Cookie headers,
   command lines that carry a password (`mysql -pX`, `sshpass -p X`, `curl -u user:pass`).
2. Provider formats (secret_patterns.py, after gitleaks' and detect-secrets' rule sets). A match
   is widened to its whole run of token characters, so a key longer than its pattern never
   leaves a tail behind (`npm_...Y`).
3. Assignments: `NAME=value`, `"name": "value"`, `--name value`. A secret-sounding name
   (`*_TOKEN`, `password`, `AccountKey`) loses any value that is not a reference or a type;
   any other name loses a value that looks random (long hex after `=`, mixed-class base64), so
   `TOKEN=3f9a... ./deploy.sh` and unknown providers are covered while `commit 3f9a2b1`,
   `max_tokens=64` and `api_key_env: OPENAI_API_KEY` survive.

Why not detect-secrets as a second detector at run time: on a 50,000-character tool output
(benchmarks/bench_redact.py) it took 180-700 ms against our ~20 ms on this shared machine, it
flagged every one of the 714 innocent lines (its keyword and entropy plugins nominate candidates
for a human to audit; they do not say which characters to cut), and it would be a new runtime
dependency. Its plugins and gitleaks' rules serve instead as the test corpus
(tests/secrets_corpus.py). Each regex is gated by a substring check and bounded or anchored
behind a lookbehind, so none backtracks over a long line (tested on 200,000-character lines).
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections import Counter

from .secret_patterns import (
    AZURE_AD_SECRET,
    CLASS_FIRST_PATTERNS,
    HASH_NAMES,
    KEY_QUALIFIERS,
    LOOSE_RULES,
    NOT_SECRET_NAMES,
    PASS_QUALIFIERS,
    PROVIDER_PATTERNS,
    SAFE_WORDS,
    SECRET_ENDINGS,
    SECRET_PARTS,
    VALUE_PARTS,
)

REDACTED = "[REDACTED]"

_RUN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/=.")
_LEFT_CHARS = _RUN_CHARS - {"=", "."}

# --- layer 1: shapes -------------------------------------------------------------------------
_PRIVATE_KEY = re.compile(
    r"-{4,5} ?BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)? ?-{4,5}.*?"
    r"(?:-{4,5} ?END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)? ?-{4,5}|\Z)",
    re.DOTALL,
)
_PUTTY_KEY = re.compile(r"(Private-Lines:[ \t]*\d+[ \t]*\r?\n)(?:[ \t]*[A-Za-z0-9+/=]{8,}[ \t]*(?:\r?\n|\Z))+")
_URL_PASSWORD = re.compile(
    r"(?<![A-Za-z0-9+.\-])([a-zA-Z][a-zA-Z0-9+.\-]{0,30}://[^\s:/@\[\]]{0,200}):(?!\[REDACTED\]@)([^\s/@]+(?:@[^\s/@]+)*)@"
)
_AUTH_HEADER = re.compile(
    r"(?i)(?<![\w\-])((?:proxy-)?authorization\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?)"
    r"((?:bearer|basic|token|bot|digest|apikey|sso-key|ssws|key|oauth|jwt|hmac|negotiate)[ \t]+)?"
    r"([^\s\"',;\\]+)"
)
_COOKIE_HEADER = re.compile(r"(?i)(?<![\w\-])((?:set-)?cookie[ \t]*:[ \t]*)([^\n\"'\\]{1,4000})")
_BEARER = re.compile(r"(?<![A-Za-z0-9_\-])(Bearer|Basic|Token|Bot)([ \t]+)([A-Za-z0-9._~+/=\-]{12,})")
_Q = r"""('[^'\n]{0,2000}'|"[^"\n]{0,2000}"|[^\s'"]+)"""
_LINE = r"[^\n]{0,300}?[ \t]"
_LINES = r"[\s\S]{0,300}?[ \t]"  # curl commands are often split with backslash-newlines
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
_AZURE_AD = re.compile(AZURE_AD_SECRET)

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
    r"(\\?[\"']?[ \t]*(?:=>|:=|==?|:)[ \t]*)(?=" + _VALUE + ")"
)
_FLAG = re.compile(r"(?<![A-Za-z0-9_.\-])(--[A-Za-z][A-Za-z0-9_\-]{0,60})([ \t]+)(?![\-\[])(?=" + _VALUE + ")")

_NAME_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_REFERENCE = re.compile(
    r"\$(?:[A-Z_]+|[a-z_]+|\{[^}]*\}|\([^)]*\)|\{\{.*\}\})|%[A-Za-z_]+%|\{\{.*\}\}|<[^<>]*>|\*+|x+|X+|•+|\.{3}|…"
    r"|[A-Za-z_][\w.]*\[.*"  # list[str], Optional[str], os.environ["X"], ENV["X"]
    r"|(?:process\.env|ENV|env|getenv|os\.getenv|os\.environ)\b.*"
)
# Dotted names in code (args.token, requests.Session, service_account.Credentials); each part is
# snake_case, CamelCase or CONSTANT, so `H4hZc6eIPd.t1i` is not one. Possessive: no backtracking.
_PART = r"(?:[a-z_][a-z0-9_]*+|[A-Z]++[a-z]*+(?:[A-Z]++[a-z]++)*+\d*+|[A-Z_][A-Z0-9_]*+)"
_DOTTED = re.compile(_PART + r"(?:\." + _PART + r")++")
_PATH = re.compile(r"(?:~?/|\.{1,2}/|[A-Za-z]:\\)")
_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
_HEX = re.compile(r"[0-9a-fA-F]{32,}")
_B64 = re.compile(r"[A-Za-z0-9+/_\-]{20,}={0,3}")
_WORDS = re.compile(r"[A-Z]?[a-z]{3,}")


@functools.lru_cache(maxsize=4096)
def _name_parts(name: str) -> tuple[str, ...]:
    return tuple(p.lower() for chunk in re.split(r"[_\-.\s:]+", name) for p in _NAME_PARTS.findall(chunk))


@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """True when a variable, key or flag name says its value is a credential."""
    parts = _name_parts(name)
    joined = "".join(parts)
    if not parts or joined in NOT_SECRET_NAMES:
        return False
    if joined.endswith(SECRET_ENDINGS) or parts[-1] in SECRET_PARTS:
        return True
    if parts[-1] == "key" and len(parts) > 1 and parts[-2] in KEY_QUALIFIERS:
        return True
    if parts[-1] == "pass" and (len(parts) == 1 or parts[-2] in PASS_QUALIFIERS):  # not `on_pass`
        return True
    return parts[-1] in VALUE_PARTS and len(parts) > 1 and is_secret_name("_".join(parts[:-1]))


def _entropy(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


def _switches(s: str) -> float:
    """Share of neighbour pairs that go lower->upper or between digit and letter.

    Random keys switch far more often than CamelCase or kebab-case names do (`MyVeryLongName2`):
    measured on 2,000 random strings of 24-40 characters, the 1st percentile is 0.17-0.28 for
    base64/alphanumeric and 0.13-0.21 for one-case-plus-digits; such names score 0.11-0.25."""
    pairs = itertools.pairwise(s)
    hits = sum(
        1
        for a, b in pairs
        if (a.islower() and b.isupper()) or (a.isalnum() and b.isalnum() and a.isdigit() != b.isdigit())
    )
    return hits / max(1, len(s) - 1)


def _key_like(s: str) -> bool:
    """A distinctive provider prefix only needs a body with digits or mixed case (not `xxxx`)."""
    has_digit = any(c.isdigit() for c in s)
    return (has_digit or (any(c.islower() for c in s) and any(c.isupper() for c in s))) and max(
        (len(r) for r in re.findall(r"[A-Za-z0-9]+", s)), default=0
    ) >= 8


def looks_random(s: str) -> bool:
    """A token-like string with the character mix of a generated key, not of words or names."""
    return len(s) >= 16 and _key_like(s) and _switches(s) >= 0.15 and _entropy(s) >= 3.3


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


def _safe_value(bare: str, name: str) -> bool:
    """Values that are references, types, placeholders or plain words, not credentials."""
    low = bare.lower()
    return (
        len(bare) < 3
        or low in SAFE_WORDS
        or low == name.lstrip("-").lower()
        or _REFERENCE.fullmatch(bare) is not None
        or ((_PATH.match(bare) or _DOTTED.fullmatch(bare)) is not None and not looks_random(bare))
    )


def _unquote(value: str) -> tuple[str, str, str]:
    """(opening, inner, closing) for a captured value."""
    for q in ('\\"', '"', "'", "`"):
        if len(value) >= 2 * len(q) and value.startswith(q) and value.endswith(q):
            return q, value[len(q) : -len(q)], q
    if value[:1] in "\"'`":
        return value[0], value[1:], ""
    return "", value, ""


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
        out = _replace_value(value, name, m.group(2), named_only)
        if out is not None:
            end = _VALUE_END.match(text, m.end(3)).end()  # the rest of a long value, or glued on: `"pw"x`
            pieces += [text[last : m.start(3)], out]
            last = end
    return "".join(pieces) + text[last:] if pieces else text


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """Grow a provider match to the whole token run around it (trailing dots are punctuation)."""
    n = len(text)
    stop = end
    while stop < n and text[stop] in _RUN_CHARS:
        stop += 1
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
    """Replace credentials with [REDACTED]. Idempotent; never raises on odd input."""
    if not text:
        return text or ""
    if not isinstance(text, str):
        text = str(text)
    low = text.lower()  # substitutions only ever insert REDACTED, so words found here stay valid
    if "PRIVATE KEY" in text:
        text = _PRIVATE_KEY.sub(REDACTED, text)
    if "Private-Lines" in text:
        text = _PUTTY_KEY.sub(lambda m: m.group(1) + REDACTED + "\n", text)
    if "://" in text:
        text = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}:{REDACTED}@", text)
    if "authorization" in low:
        text = _AUTH_HEADER.sub(_auth_header, text)
    if "cookie" in low:
        text = _COOKIE_HEADER.sub(_cookie_header, text)
    if "</" in text:
        text = _XML_SECRET.sub(lambda m: f"<{m.group(1)}>{REDACTED}</{m.group(1)}>", text)
    for words, regex, how in _COMMAND_RES:
        if any(w in text for w in words):
            text = regex.sub(lambda m, how=how: _command(m, how), text)
    text = _redact_keys(_STRONG_KEYS, text, _key_like)
    text = _redact_keys(_LOOSE_KEYS, text, looks_random)
    text = _redact_keys(_CLASS_KEYS, text, looks_random)
    if "Q~" in text:
        text = _redact_keys(_AZURE_AD, text, _key_like)
    if any(w in text for w in ("Bearer", "Basic", "Token", "Bot")):
        text = _BEARER.sub(_bearer, text)
    if "--" in text:
        text = _redact_values(_FLAG, text, named_only=True)
    text = _redact_values(_ASSIGN, text, named_only=False)
    return text


def has_secret(text: str) -> bool:
    """True when redact() would change the text (for the verifier)."""
    return bool(text) and redact(text) != text
