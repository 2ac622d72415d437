"""`hermes-mlx serve` under load: every 503 says when to come back (Retry-After) and closes its
connection; 100 clients at once all get an answer or such a 503, and afterwards the server holds
no client connection and still answers. /health reports the engine's prompt-cache counters.
Loopback only, on the tiny random-weight model; every wait is bounded, nothing asserts a speed."""

import http.client
import json
import subprocess
import threading
import time
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from test_server import BASE, HELLO, start_server

from hermes_mlx.engine import errors
from hermes_mlx.integrations.inflight import RETRY_AFTER_MAX_S, State, engine_error
from hermes_mlx.integrations.server import MAX_WAITING, build_app

CHAT = "/v1/chat/completions"
CLIENTS = 100
WAIT_S = 120  # a bound on waiting, never a speed assertion
PROMPT_CACHE_KEYS = {"hits", "misses", "evictions", "entries", "bytes", "budget_bytes"}


def retry_after_of(headers) -> int:
    value = headers.get("retry-after")
    assert value is not None and value.isdigit(), dict(headers)
    assert 1 <= int(value) <= RETRY_AFTER_MAX_S
    return int(value)


# ------------------------------------------------------------------ each 503 path, in process


@pytest.fixture
def app(tiny_model):
    return build_app(tiny_model)


def test_a_full_queue_is_a_503_with_retry_after(app):
    app.state.waiting = MAX_WAITING  # as if MAX_WAITING requests were already queued
    app.state.service_s = 2.0  # each recently held the engine for ~2 s
    with TestClient(app, base_url=BASE) as c:
        r = c.post(CHAT, json=HELLO)
        assert r.status_code == 503 and r.json()["error"]["message"].startswith("busy")
        assert retry_after_of(r.headers) == 2 * MAX_WAITING  # the queue ahead, at the recent pace
        assert r.headers["connection"] == "close"
        assert c.get("/health").json()["refused_busy"] == 1


def test_shutting_down_is_a_503_with_retry_after(app):
    app.state.closing.set()
    with TestClient(app, base_url=BASE) as c:
        r = c.post(CHAT, json=HELLO)
    assert r.status_code == 503 and "shutting down" in r.json()["error"]["message"]
    retry_after_of(r.headers)
    state = State()
    state.closing.set()
    cut = engine_error(errors.Cancelled("stopped"), state)  # a request the shutdown cut short
    assert cut.status_code == 503 and retry_after_of(cut.headers)


def test_over_the_concurrency_limit_is_a_json_503_with_retry_after(tiny_model):
    app = build_app(tiny_model, max_active=0)  # every request is over the limit
    with TestClient(app, base_url=BASE) as c:
        r = c.post(CHAT, json=HELLO)
        assert r.status_code == 503 and r.json()["error"]["type"] == "server_error"
        retry_after_of(r.headers)
        assert r.headers["connection"] == "close"
        health = c.get("/health")  # always answers: it is how a client learns why
    assert health.status_code == 200 and health.json()["refused_busy"] == 1
    assert app.refused == 1 and app.active == 0


def test_retry_after_estimate_is_bounded():
    state = State(service_s=3.0, waiting=4)
    assert state.retry_after() == 12
    assert State(service_s=0.01, waiting=1).retry_after() == 1
    assert State(service_s=500.0, waiting=8).retry_after() == RETRY_AFTER_MAX_S
    state.note_service(13.0)
    assert 3.0 < state.service_s < 13.0


def test_health_reports_the_prompt_cache(app):
    with TestClient(app, base_url=BASE) as c:
        before = c.get("/health").json()["prompt_cache"]
        assert PROMPT_CACHE_KEYS <= set(before)
        assert c.post(CHAT, json=HELLO).status_code == 200
        c.post(CHAT, json=HELLO)
        after = c.get("/health").json()["prompt_cache"]
    assert after["hits"] + after["misses"] >= before["hits"] + before["misses"] + 2  # each request looked
    assert after["hits"] > before["hits"]  # the same prompt again reuses its prefix
    assert 0 <= after["bytes"] <= after["budget_bytes"]


def test_health_without_prompt_cache_stats(app, monkeypatch):
    from hermes_mlx.engine import generate

    monkeypatch.delattr(generate, "prompt_cache_stats")
    with TestClient(app, base_url=BASE) as c:
        assert c.get("/health").json()["prompt_cache"] is None


# ------------------------------------------------------------------ 100 clients against a real process


def server_sockets(port: int) -> dict[str, int]:
    """The server's side of its TCP connections on `port`, by state, from /proc/net/tcp (the
    server is a process on this machine, so its sockets are listed here too)."""
    names = {"01": "ESTABLISHED", "08": "CLOSE_WAIT", "04": "FIN_WAIT1", "09": "LAST_ACK"}
    counts: dict[str, int] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            if int(local.rsplit(":", 1)[1], 16) == port and state in names:
                counts[names[state]] = counts.get(names[state], 0) + 1
    return counts


def ask(port: int, barrier: threading.Barrier, out: list, i: int) -> None:
    """Every fourth client streams; a stream's body is its events, ending with [DONE]."""
    stream = i % 4 == 0
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_S)
        barrier.wait(timeout=WAIT_S)
        body = json.dumps({**HELLO, "stream": stream})
        conn.request("POST", CHAT, body=body, headers={"Content-Type": "application/json"})
        reply = conn.getresponse()
        raw = reply.read().decode()
        if stream and reply.status == 200:
            events = [line[6:] for line in raw.splitlines() if line.startswith("data: ")]
            assert events[-1] == "[DONE]", raw[-300:]
            content = "".join(
                (json.loads(e)["choices"] or [{}])[0].get("delta", {}).get("content") or "" for e in events[:-1]
            )
            out[i] = (200, reply.headers, {"choices": [{"message": {"content": content}}]})
        else:
            out[i] = (reply.status, reply.headers, json.loads(raw))
        conn.close()
    except Exception as exc:  # recorded: the test says which client got no answer
        out[i] = exc


def get(port: int, path: str) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_S)
    conn.request("GET", path)
    reply = conn.getresponse()
    body = json.loads(reply.read())
    conn.close()
    return reply.status, body


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="counts sockets through /proc/net/tcp")
def test_a_hundred_clients_get_answers_or_503_and_no_connection_stays_open(tiny_model):
    proc, port = start_server("--model", tiny_model)
    try:
        assert get(port, "/health")[0] == 200
        out: list = [None] * CLIENTS
        barrier = threading.Barrier(CLIENTS)
        threads = [threading.Thread(target=ask, args=(port, barrier, out, i), daemon=True) for i in range(CLIENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=WAIT_S)
        assert not any(t.is_alive() for t in threads), "a client is still waiting: something hangs"
        failed = [r for r in out if not isinstance(r, tuple)]
        assert not failed, failed[:3]
        statuses = sorted({status for status, _, _ in out})
        assert set(statuses) <= {200, 503}, statuses
        ok = [body for status, _, body in out if status == 200]
        busy = [(headers, body) for status, headers, body in out if status == 503]
        assert ok and busy  # some were answered; the rest were told to come back
        for headers, body in busy:
            retry_after_of(headers)
            assert body["error"]["message"].startswith("busy"), body
        assert all(body["choices"][0]["message"]["content"] is not None for body in ok)

        deadline = time.monotonic() + WAIT_S
        while (held := server_sockets(port)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert held == {}, f"the server still holds client connections: {held}"

        status, health = get(port, "/health")
        assert status == 200 and health["active"] == 1 and health["waiting"] == 0 and not health["busy"]
        assert health["refused_busy"] == len(busy)
        assert health["prompt_cache"]["hits"] + health["prompt_cache"]["misses"] >= len(ok)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_S)
        conn.request("POST", CHAT, body=json.dumps(HELLO), headers={"Content-Type": "application/json"})
        assert conn.getresponse().status == 200  # still answers
        conn.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
