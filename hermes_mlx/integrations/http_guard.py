"""Who may talk to `hermes-mlx serve`, and which models a request may name.

Loopback is not private from the user's own browser: a web page can POST to 127.0.0.1 (a simple
cross-site request), and DNS rebinding points a hostile name at 127.0.0.1 so the page can read
the answers too. Both carry something we can check: a browser always sends the page's `Origin`
on a cross-site POST, and a rebound request names the hostile host in `Host:`. So every request
must name an allowed host (loopback, or what the operator added) and carry no foreign origin.

Which models a client may name is model_names.py's rule, shared with the in-process provider.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from .openai_shapes import error_body

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")


def host_of(value: str | None) -> str | None:
    """The host part of a `Host:` value or an origin's netloc, lower-cased; IPv6 keeps its brackets."""
    if not value:
        return None
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        return value[: end + 1] if end > 0 else None
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def _port_of(netloc: str, scheme: str) -> str:
    tail = netloc.rsplit("]", 1)[-1]
    return tail.rsplit(":", 1)[1] if ":" in tail else {"http": "80", "https": "443"}.get(scheme, "")


def normal_hosts(hosts: Iterable[str]) -> set[str]:
    """Allowed host names as `host_of` writes them (a bare IPv6 address gets brackets)."""
    out = set(LOOPBACK_HOSTS)
    for host in hosts:
        host = host.strip().lower()
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        if host:
            out.add(host)
    return out


def refusal(headers: Any, allowed: set[str]) -> str | None:
    """Why a request with these headers is refused (403), or None when its Host and Origin pass."""
    host = headers.get("host")
    if host_of(host) not in allowed:
        return (
            "Host header is not an allowed host (this server answers to localhost, 127.0.0.1 and [::1]; "
            "start it with --allowed-host NAME to add one)"
        )
    origin = headers.get("origin")
    if origin is None:
        return None
    parts = urlsplit(origin.strip().lower())
    same_port = _port_of(parts.netloc, parts.scheme) == _port_of(host.strip().lower(), "http")
    if parts.scheme in ("http", "https") and host_of(parts.netloc) in allowed and same_port:
        return None
    return "cross-origin requests are refused (a web page may not use this server)"


class HostOriginGuard:
    """ASGI middleware: 403 for a disallowed Host or a foreign Origin, before any route runs.
    Preflight OPTIONS gets the same treatment and never any Access-Control-* header."""

    def __init__(self, app: Any, allowed_hosts: Iterable[str] = ()):
        self.app = app
        self.allowed = normal_hosts(allowed_hosts)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
            why = refusal(headers, self.allowed)
            if why is not None:
                await send_json(send, 403, error_body(why, "headers", "permission_error"))
                return
        await self.app(scope, receive, send)


class Admission:
    """ASGI middleware: at most `limit` requests inside the app at once; the next gets a JSON 503
    with Retry-After (from `retry_after()`) and `Connection: close` at once, before its body is
    read. It stands in for uvicorn's limit_concurrency, whose 503 is plain text with no
    Retry-After. GET /health always passes: it answers at once and tells a client why."""

    def __init__(self, app: Any, limit: int, retry_after: Callable[[], int]):
        self.app = app
        self.limit = limit
        self.retry_after = retry_after
        self.active = 0
        self.refused = 0

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.active >= self.limit and not (scope.get("method") == "GET" and scope.get("path") == "/health"):
            self.refused += 1
            why = f"busy: {self.active} requests are in progress; try again later"
            headers = [(b"retry-after", str(self.retry_after()).encode()), (b"connection", b"close")]
            await send_json(send, 503, error_body(why, None, "server_error"), headers)
            return
        self.active += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.active -= 1


async def send_json(send: Any, status: int, content: dict, headers: list[tuple[bytes, bytes]] = ()) -> None:
    body = json.dumps(content).encode()
    start = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers]
    await send({"type": "http.response.start", "status": status, "headers": start})
    await send({"type": "http.response.body", "body": body})


def bearer_ok(header: str | None, api_key: str | None) -> bool:
    """`Authorization: Bearer KEY`, compared in constant time and exactly (no stripping)."""
    if not api_key:
        return True
    if not header or not header.startswith("Bearer "):
        return False
    return hmac.compare_digest(
        header[len("Bearer ") :].encode("utf-8", "surrogateescape"), api_key.encode("utf-8", "surrogateescape")
    )


def unsendable_key(key: str) -> str | None:
    """Why no client could send `key` as `Authorization: Bearer KEY` (every request would get
    401), or None. HTTP header values are ASCII in practice (httpx and the openai SDK refuse
    anything else), control characters end or corrupt a header, and parsers strip spaces at
    either end of a value, so the key compared would never be the key sent."""
    if not key.isascii():
        return "holds characters that are not ASCII"
    if not key.isprintable():
        return "holds control characters"
    if key != key.strip():
        return "starts or ends with whitespace"
    return None
