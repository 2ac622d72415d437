"""No network but loopback, for a whole process: the tests, the Hermes test drivers and the
`doctor` feasibility probe each install this guard before anything in them could go online.

The guard patches `socket.socket.connect`, `connect_ex` and `sendto`, so every client built on
Python sockets (http.client, urllib, httpx, requests) is covered; a subprocess is not. AF_UNIX
paths, "localhost", "" and 127.0.0.0/8 or ::1 pass; any other address, a host name included
(it would be resolved first), raises NetworkBlocked. Stdlib only: it imports no layer.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from typing import Any


class NetworkBlocked(OSError):
    """A connect or send to an address that is not loopback."""


def is_loopback_address(address: Any) -> bool:
    """Whether a socket address (an AF_UNIX path, or a (host, port, ...) tuple) stays on this machine."""
    if isinstance(address, (str, bytes)):  # AF_UNIX
        return True
    host = address[0]
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def block_non_loopback(who: str = "this process") -> Callable[[], None]:
    """Refuse every non-loopback connect, connect_ex and sendto from now on, with NetworkBlocked
    ("{who} may not reach {address!r}: only loopback is allowed"). Returns the undo."""
    connect, connect_ex, sendto = socket.socket.connect, socket.socket.connect_ex, socket.socket.sendto

    def check(address: Any, verb: str = "reach") -> None:
        if not is_loopback_address(address):
            raise NetworkBlocked(f"{who} may not {verb} {address!r}: only loopback is allowed")

    def guarded_connect(self: socket.socket, address: Any) -> None:
        check(address)
        return connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> int:
        check(address)
        return connect_ex(self, address)

    def guarded_sendto(self: socket.socket, data: Any, *args: Any) -> int:
        if args:  # sendto(data, address) or sendto(data, flags, address); none: sendto's own TypeError
            check(args[-1], "send to")
        return sendto(self, data, *args)

    socket.socket.connect = guarded_connect
    socket.socket.connect_ex = guarded_connect_ex
    socket.socket.sendto = guarded_sendto

    def undo() -> None:
        socket.socket.connect, socket.socket.connect_ex, socket.socket.sendto = connect, connect_ex, sendto

    return undo
