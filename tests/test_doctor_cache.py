"""`hermes-mlx doctor`'s prompt-cache and residency lines: a running `serve`'s counters when one
answers on loopback, this process's otherwise, and what is wired ("n/a on CPU" here)."""

import argparse
import json
import socket

import pytest
from serve_process import start_server, stop_server
from test_server import HELLO, request

from hermes_mlx.commands import doctor
from hermes_mlx.engine import residency


def run_doctor(capsys, *argv: str) -> str:
    parser = argparse.ArgumentParser()
    doctor.register(parser.add_subparsers())
    args = parser.parse_args(["doctor", *argv])
    assert args.func(args) == 0
    return capsys.readouterr().out


def free_port() -> int:
    """A loopback port nothing listens on (bound, then let go)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def line_of(out: str, prefix: str) -> str:
    found = [line for line in out.splitlines() if line.startswith(prefix)]
    assert len(found) == 1, out
    return found[0]


@pytest.fixture
def served(tiny_model):
    proc, port = start_server("--model", tiny_model)
    yield port
    stop_server(proc)


def test_doctor_reports_a_running_serves_prompt_cache(served, capsys):
    for _ in range(2):  # the same prompt twice: the second reuses the first's prefix
        assert request(served, "POST", "/v1/chat/completions", HELLO)[0] == 200
    cache = request(served, "GET", "/health")[1]["prompt_cache"]
    assert cache["hits"] >= 1 and cache["hits"] + cache["misses"] >= 2
    line = line_of(run_doctor(capsys, "--serve-port", str(served)), "prompt cache: ")
    assert f"{cache['hits']} hits, {cache['misses']} misses, {cache['evictions']} evictions" in line
    assert line.endswith(f"(serve on 127.0.0.1:{served})")
    report = json.loads(run_doctor(capsys, "--json", "--serve-port", str(served)))
    assert report["prompt_cache"]["hits"] == cache["hits"]


def test_without_a_serve_doctor_reports_this_process(capsys):
    port = free_port()
    line = line_of(run_doctor(capsys, "--serve-port", str(port)), "prompt cache: ")
    assert "hits" in line and "evictions" in line and " MB (this process; no serve answered" in line


def test_an_engine_without_prompt_cache_stats(monkeypatch, capsys):
    from hermes_mlx.engine import generate

    monkeypatch.delattr(generate, "prompt_cache_stats")
    out = run_doctor(capsys, "--serve-port", str(free_port()))
    assert line_of(out, "prompt cache: ") == "prompt cache: not reported by this engine"


def test_wired_line(monkeypatch, capsys):
    out = run_doctor(capsys, "--serve-port", str(free_port()))
    assert line_of(out, "wired: ") == "wired: n/a on CPU"
    faked = {"device": "metal", "wired_bytes": 1_250_000_000, "model_bytes": 10**9, "cache_bytes": 250_000_000}
    monkeypatch.setattr(residency, "status", lambda: {**faked, "max_recommended": 20 * 10**9})
    out = run_doctor(capsys, "--serve-port", str(free_port()))
    assert line_of(out, "wired: ") == (
        "wired: 1.25 GB (weights 1.00 GB + prompt caches 0.25 GB); the device recommends at most 20.0 GB"
    )
