"""Passwords that a command line gives away by position or by flag (part of redact()).

Why apart from redact.py's `_COMMANDS`: those match one flag per command word; here each command
is read as a segment (up to `&&`, `||`, `;` or a pipe) and every password flag in it goes
(`ssh-keygen -p -P OLD -N NEW`), positional passwords are counted (`htpasswd -b FILE USER PW`),
and values may hold `&` or `;`. Also: `echo PW | sudo -S`, `net user NAME PW`, `config set NAME
VALUE` (aws, git, npm, yarn, pip) and a quoted pair in code (`define('DB_PASSWORD', 'x')`,
`setenv("API_TOKEN", "x")`), each judged by the name (is_secret_name). Every regex is gated by a
word and linear: a segment is one pass of a class, values are bounded.
"""

from __future__ import annotations

import re

from .secret_patterns import CLI_PASSWORD_FLAGS
from .secret_words import REDACTED, SAFE_WORDS, _safe_value, is_secret_name

# One command of a line: up to `&&`, `||`, `;` or a pipe (a password may hold `&` or `;`).
_SEGMENT = r"(?:(?!&&|\|\||;[ \t]|[ \t]\|)[^\n])*"  # unbounded but linear: one pass per command
_QUOTED = r"""'[^'\n]{0,300}'|"[^"\n]{0,300}"|`[^`\n]{0,300}`"""
_VAL = r"(" + _QUOTED + r"""|[^\s'"`]{1,300})"""

_CLI_RES = [
    (
        words,
        re.compile(r"(?<![\w\-/.])(?:" + cmd + r")\b" + _SEGMENT),
        re.compile(r"(?<=[ \t])(?:" + flag + r")" + _VAL),
    )
    for words, cmd, flag in CLI_PASSWORD_FLAGS
]
_NET_USER = re.compile(r"(?<![\w\-])net[ \t]+user[ \t]+[^\s/]+[ \t]+(?=[^\s/*])" + _VAL)  # net user NAME PASSWORD
_HTPASSWD = re.compile(r"(?<![\w\-/.])htpasswd\b" + _SEGMENT)
_ARG = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|\S+")
_PIPED = re.compile(
    r"(?<![\w\-])(?:echo|printf)[ \t]+(?:-[neE]{1,3}[ \t]+)?" + _VAL + r"(?=[ \t]*\|[ \t]*(?:sudo\b[^\n|]{0,40}?-S\b"
    r"|chpasswd\b|passwd\b|[^\n|]{0,120}?--password-stdin|[^\n|]{0,120}?--passphrase-fd|[^\n|]{0,80}?\bsshpass\b))"
)


_PIPED_WORDS = ("sudo", "passwd", "password-stdin", "passphrase-fd", "sshpass")


def _cut_value(value: str) -> str | None:
    """The redacted form of a command's password argument, or None when it is not a password."""
    opening, bare, closing = (
        (value[0], value[1:-1], value[-1]) if value[:1] in "'\"" and len(value) > 1 else ("", value, "")
    )
    keep = ""
    if re.match(r"(?:pass|env|file|fd|stdin|keychain):", bare):  # openssl's pass:X / env:VAR / file:PATH
        if not bare.startswith("pass:"):
            return None
        keep, bare = "pass:", bare[5:]
    if (
        len(bare) < 1
        or bare.startswith(("$", REDACTED[:-1]))
        or bare in ("-", "''", '""')
        or bare.lower() in SAFE_WORDS
    ):
        return None
    return f"{opening}{keep}{REDACTED}{closing}"


def _htpasswd(m: re.Match) -> str:
    """`htpasswd -b[c] FILE USER PASSWORD`, `htpasswd -nb USER PASSWORD`: the batch flag puts the
    password on the command line as the last positional argument."""
    line = m.group(0)
    args = list(_ARG.finditer(line))[1:]
    flags = "".join(a.group(0)[1:] for a in args if a.group(0).startswith("-") and len(a.group(0)) > 1)
    if "b" not in flags:
        return line
    positional, skip = [], False
    for a in args:
        word = a.group(0)
        if skip:
            skip = False
        elif word.startswith("-") and len(word) > 1:
            skip = word in ("-C", "-r")  # cost and rounds take a number
        else:
            positional.append(a)
    need = 2 if "n" in flags else 3
    if len(positional) < need:
        return line
    a = positional[need - 1]
    out = _cut_value(a.group(0))
    return line if out is None else line[: a.start()] + out + line[a.end() :]


# `aws configure set aws_secret_access_key X`, `git config --global github.token X`,
# `npm config set //registry.npmjs.org/:_authToken X`: the name says what the value is.
_CONFIG_SET = re.compile(  # literal first, so the engine skips ahead; the boundary is checked after
    r"config(?:ure|:set)?\b[^\n]{0,60}?[ \t](?:set[ \t]+)?([A-Za-z_/][\w.:/@\-]{1,100})[ \t]+" + _VAL
)
# `define('DB_PASSWORD', 'x')`, `os.environ.setdefault("API_TOKEN", "x")`, `headers.set("X-Api-Key", "x")`
_PAIR = re.compile(r"""(["'])([A-Za-z_][\w.\-]{0,80})\1[ \t]*,[ \t]*(["'])([^"'\n]{1,300})\3""")
# Positional: `wpa_passphrase SSID PASS`, `sqlplus user/PASS@db`, `http -a user:PASS` (httpie), `ipmitool -P PASS`
_POSITIONAL = [
    (
        ("wpa_passphrase",),
        re.compile(r"(?<![\w\-])wpa_passphrase[ \t]+(?:'[^'\n]*'|\"[^\"\n]*\"|\S+)[ \t]+" + _VAL),
    ),
    (("sqlplus",), re.compile(r"(?<![\w\-])sqlplus\b[^\n]{0,40}?[ \t][\w.\-]+/([^\s@/'\"]+)(?=@|\s|$)")),
    (
        ("http -a", "https -a", "--auth"),
        re.compile(r"(?<![\w\-])https?\b[^\n]{0,80}?[ \t](?:-a|--auth)(?:[ \t]+|=)[^\s:]+:([^\s'\"]+)"),
    ),
    # `vault login TOKEN` (the token is the first argument that is not a flag or `key=value`)
    (("vault",), re.compile(r"(?<![\w\-])vault[ \t]+login(?:[ \t]+-\S+){0,6}[ \t]+([^\s\-='\"][^\s=]{7,300})(?=\s|$)")),
    (("ipmitool",), re.compile(r"(?<![\w\-])ipmitool\b" + _SEGMENT[:-1] + r"{0,300}?[ \t]-P[ \t]+" + _VAL)),
]


def _named(name: str) -> bool:
    return is_secret_name(re.split(r"[.:/@]", name)[-1] or name)


def _config_set(m: re.Match) -> str:
    before = m.string[m.start() - 1 : m.start()]
    if (before and (before.isalnum() or before in "_-")) or not _named(m.group(1)):
        return m.group(0)
    out = _cut_value(m.group(2))
    return m.group(0) if out is None else m.group(0)[: m.start(2) - m.start(0)] + out


def _pair(m: re.Match) -> str:
    """A quoted secret name, then its quoted value; a list of field names (`"password", "email"`) stays."""
    value = m.group(4)
    plain = re.fullmatch(r"[A-Za-z_]+", value) and (value.islower() or value.istitle() or value.isupper())
    if not _named(m.group(2)) or plain or value.startswith(("$", REDACTED[:-1])) or _safe_value(value, m.group(2)):
        return m.group(0)
    return m.group(0)[: m.start(4) - m.start(0)] + REDACTED + m.group(3)


def _sub_value(regex: re.Pattern, text: str) -> str:
    return regex.sub(lambda m: m.group(0)[: m.start(1) - m.start(0)] + (_cut_value(m.group(1)) or m.group(1)), text)


def redact_commands(text: str, low: str) -> str:
    """Apply the rules above; `low` is text.lower() (the gates)."""
    for words, command, flag in _CLI_RES:
        if any(w in low for w in words):
            text = command.sub(lambda m, flag=flag: _sub_value(flag, m.group(0)), text)
    if "net user" in low:
        text = _sub_value(_NET_USER, text)
    if "htpasswd" in low:
        text = _HTPASSWD.sub(_htpasswd, text)
    if "|" in text and ("echo" in text or "printf" in text) and any(w in low for w in _PIPED_WORDS):
        text = _sub_value(_PIPED, text)
    if "config" in low:
        text = _CONFIG_SET.sub(_config_set, text)
    if "," in text and ('"' in text or "'" in text):
        text = _PAIR.sub(_pair, text)
    for words, regex in _POSITIONAL:
        if any(w in low for w in words):
            text = _sub_value(regex, text)
    return text
