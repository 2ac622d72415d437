"""Credentials in a URL's user part (part of redact()): `scheme://user:password@host`, a token
as the user (`https://<40 hex>@github.com/...`), and a token cut off from its `@host`.

Why the password is parsed rather than matched: people type passwords into URLs unencoded, with
`@`, `/` and `#` in them (`mongodb+srv://admin:p@ss/w0rd#x@cluster0.example.net`). A regex that
stops at the first `@` or `/` leaves the rest of the password behind. The userinfo ends at the
last `@` before the host, so every `@` of the run is a candidate and the host after each is
judged: a dotted name or one with a port is a host; a query (`?`, `=`, `&`) after a host ends the
search, so `https://u:pw@h.example/?mail=bob@example.com` keeps its query. A port and a path
(`localhost:8080/users/@me`) are not a password. Everything is found from each `://` (a literal
the engine finds fast), and each scan is bounded.
"""

from __future__ import annotations

import re

from .secret_words import REDACTED, _key_like, looks_random

_SCHEME = re.compile(r"(?<![A-Za-z0-9+.\-])[a-zA-Z][a-zA-Z0-9+.\-]{0,30}$")
_USERINFO = re.compile(r"://[^\s:/@\[\]'\"`<>]{0,200}:")
_RUN_END = re.compile(r"[\s'\"`<>\\]|://")
_HOST = re.compile(
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,62})(?:\.[A-Za-z0-9\-]{1,63}){0,20}|\[[0-9A-Fa-f:.]{2,45}\])(:\d{1,5})?"
)
_HOST_END = frozenset("/?#,;)]}|!")
_QUERY = re.compile(r"[?=&]")
_PORT_PATH = re.compile(r"\d{1,5}[/?#]")
MAX_RUN = 1000

_URL_USER = re.compile(r"(://)([^\s:/@\[\]'\"`]{16,300})@")
# A truncation marker may cut the token in two (`https://403bec91 ... 08a9f6@github.com`): the
# first half is a dotless run right after `://`, the second a run glued to `@host.tld`.
_URL_USER_COLON = re.compile(r"(://)([^\s:/@\[\]'\"`]{16,300})(?=:[^\s@/]{0,300}@)")  # TOKEN:x-oauth-basic@
_URL_USER_CUT = re.compile(r"(://)([A-Za-z0-9_\-]{16,300})(?=\s|\Z)")
_AT_HOST = re.compile(r"@[A-Za-z0-9\-]+\.[A-Za-z]")
_RUN_CH = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_HEX16 = re.compile(r"[0-9a-fA-F]{16,}")


def _password_end(text: str, start: int) -> tuple[int | None, bool]:
    """Where the password starting at `start` ends (its `@`, or None when no host follows), and
    whether a dotted host or one with a port follows it."""
    stop = _RUN_END.search(text, start, start + MAX_RUN)
    stop_at = stop.start() if stop else min(len(text), start + MAX_RUN)
    best, strong, at = None, False, text.find("@", start, stop_at)
    while at >= 0:
        host = _HOST.match(text, at + 1)
        end = host.end() if host else -1
        if host and (end >= stop_at or text[end] in _HOST_END or text[end] == "@"):
            if strong and _QUERY.search(text, best, at):
                break  # a query after a host: `?mail=bob@example.com` is not the password's
            this = "." in host.group(0) or host.group(1) is not None or host.group(0).startswith("[")
            if this or not strong:
                best, strong = at, this
        at = text.find("@", at + 1, stop_at)
    return best, strong


def sub_url_passwords(text: str) -> str:
    """`scheme://user:password@host`: the password goes, whatever it holds."""
    pieces, last, at = [], 0, text.find("://")
    while at >= 0:
        m = _USERINFO.match(text, at) if at >= last and _SCHEME.search(text, max(0, at - 31), at) else None
        if m is not None:
            start = m.end()
            end, strong = _password_end(text, start)
            pw = text[start:end] if end is not None else ""
            port_path = _PORT_PATH.match(pw) is not None and not strong  # `host:8080/users/@me`
            if pw and not pw.startswith(REDACTED) and not port_path and "://" not in pw:
                pieces += [text[last:start], REDACTED]
                last = end
        at = text.find("://", at + 3)
    return "".join(pieces) + text[last:] if pieces else text


def _token_user(user: str) -> bool:
    """A URL's user part that is a token: hex (16+ once cut), random-looking or key-like."""
    hexish = len(user) >= 16 and _HEX16.fullmatch(user) is not None and not user.isdigit() and not user.isalpha()
    return REDACTED not in user and (hexish or looks_random(user) or (len(user) >= 24 and _key_like(user)))


def sub_at_tokens(text: str) -> str:
    """A token glued to `@host.tld` with nothing before it but a space: the rest of a cut URL."""
    pieces, last, at = [], 0, text.find("@")
    while at >= 0:
        start = at
        while start > max(last, at - 300) and text[start - 1] in _RUN_CH:
            start -= 1
        glued = at - start >= 16 and (start == 0 or text[start - 1] not in _RUN_CH and text[start - 1] not in ".@/:%+")
        if glued and _AT_HOST.match(text, at) and _token_user(text[start:at]):
            pieces += [text[last:start], REDACTED]
            last = at
        at = text.find("@", at + 1)
    return "".join(pieces) + text[last:] if pieces else text


def sub_url_users(text: str) -> str:
    """A token as the URL's user (`https://TOKEN@host`, `TOKEN:x-oauth-basic@`, cut off)."""
    pieces, last, at = [], 0, text.find("://")
    while at >= 0:
        if at >= last and _SCHEME.search(text, max(0, at - 31), at):
            for rule in (_URL_USER, _URL_USER_COLON, _URL_USER_CUT):
                m = rule.match(text, at)
                if m and (out := _url_user(m)) != m.group(0):
                    pieces += [text[last:at], out]
                    last = m.end()
                    break
        at = text.find("://", at + 3)
    return "".join(pieces) + text[last:] if pieces else text


def _url_user(m: re.Match) -> str:
    if not _token_user(m.group(2)):
        return m.group(0)
    return m.group(0)[: m.start(2) - m.start(0)] + REDACTED + m.group(0)[m.end(2) - m.start(0) :]
