"""The loopback server: routes, SSE, bad input, auth, size limit (in process), and as a real
process: port 0, a busy port, and a client that hangs up mid-stream."""

import errno
import json
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from fakes import ScriptedSummarizer
from serve_process import LAUNCH, ROOT, start_server, stop_server
from starlette.testclient import TestClient
from test_adapter import EXCHANGE, hermes_serialize

from hermes_mlx.integrations import adapter
from hermes_mlx.integrations.hermes_prompts import micro_prompt
from hermes_mlx.integrations.server import bind, build_app, is_loopback

HELLO = {"messages": [{"role": "user", "content": "hello"}], "max_tokens": 4}
BASE = "http://127.0.0.1"  # TestClient's default host, "testserver", is not one the server answers to


@pytest.fixture
def client(tiny_model):
    with TestClient(build_app(tiny_model), base_url=BASE) as c:
        yield c


def sse_events(lines):
    events = []
    for line in lines:
        if line.startswith("data: "):
            data = line[6:]
            events.append(data if data == "[DONE]" else json.loads(data))
    return events


@contextmanager
def in_process(app, wait_s: float = 120):
    """`app` under uvicorn on 127.0.0.1 in this process (so a test can watch the engine); yields
    the port. Requests still in flight are cancelled on the way out."""
    import uvicorn

    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="error", access_log=False, lifespan="off", timeout_graceful_shutdown=2)
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + wait_s  # a bound on waiting, not a speed assertion
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive()
        time.sleep(0.02)
    try:
        yield sock.getsockname()[1]
    finally:
        app.state.cancel_all()
        server.should_exit = True
        thread.join(timeout=wait_s)


def test_health_and_models(client, tiny_model):
    health = client.get("/health").json()
    assert health["status"] == "ok" and health["busy"] is False
    assert health["running"] == 0 and health["waiting"] == 0
    assert {"members", "joined", "max_members"} <= set(health["batch"])
    models = client.get("/v1/models").json()
    assert models["object"] == "list" and models["data"][0]["id"] == tiny_model


def test_chat_completion(client):
    r = client.post("/v1/chat/completions", json={**HELLO, "model": "gpt-4o-mini", "frobnicate": True})
    assert r.status_code == 200
    body = r.json()
    assert body["object"] == "chat.completion"
    assert body["choices"][0]["finish_reason"] in ("stop", "length")
    assert body["usage"]["completion_tokens"] <= 4
    assert "cached_tokens" in body["usage"]["prompt_tokens_details"]


def test_streaming_sse(client):
    with client.stream(
        "POST", "/v1/chat/completions", json={**HELLO, "stream": True, "stream_options": {"include_usage": True}}
    ) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        events = sse_events(r.iter_lines())
    assert events[-1] == "[DONE]"
    assert events[0]["choices"][0]["delta"]["role"] == "assistant"
    finals = [e for e in events[:-1] if e["choices"] and e["choices"][0]["finish_reason"]]
    assert len(finals) == 1
    assert events[-2]["choices"] == [] and events[-2]["usage"]["completion_tokens"] <= 4


def test_micro_prompt_answers_with_the_summary(client, monkeypatch):
    fake = ScriptedSummarizer(["## Goal\nFix rounding"])
    monkeypatch.setattr(adapter, "make_summarizer", lambda model, timeout: fake)
    r = client.post(
        "/v1/chat/completions",
        json={"model": "mlx", "temperature": 0.1, "messages": micro_prompt(None, hermes_serialize(EXCHANGE))},
    )
    assert r.json()["choices"][0]["message"]["content"] == "## Goal\nFix rounding"
    assert fake.methods() == ["merge"]


@pytest.mark.parametrize(
    "body, field",
    [
        ({**HELLO, "n": 3}, "n"),
        ({**HELLO, "tools": [{"type": "function", "function": {"name": "f"}}]}, "tools"),
        (
            {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]},
            "messages[0].content[0]",
        ),
        ({"messages": []}, "messages"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(client, body, field):
    r = client.post("/v1/chat/completions", json=body)
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["param"] == field and error["message"].startswith(field)


def test_not_json_and_bad_model(client):
    r = client.post("/v1/chat/completions", content=b"{nope", headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["param"] == "body"
    r = client.post("/v1/chat/completions", json={**HELLO, "model": "./no/such/model"})
    assert r.status_code == 400 and r.json()["error"]["param"] == "model"


def test_size_limit(tiny_model):
    with TestClient(build_app(tiny_model, max_body_bytes=1000), base_url=BASE) as c:
        r = c.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "x" * 2000}]})
    assert r.status_code == 413 and "limit" in r.json()["error"]["message"]


def test_bearer_token(tiny_model):
    with TestClient(build_app(tiny_model, api_key="s3cret"), base_url=BASE) as c:
        assert c.post("/v1/chat/completions", json=HELLO).status_code == 401
        assert c.get("/v1/models", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert c.get("/health").status_code == 200  # liveness needs no token
        ok = c.post("/v1/chat/completions", json=HELLO, headers={"Authorization": "Bearer s3cret"})
        assert ok.status_code == 200


def test_is_loopback():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.2")


def test_other_host_warns_and_busy_port_says_so(monkeypatch, capsys):
    from hermes_mlx.commands import serve as serve_command
    from hermes_mlx.integrations import server

    def busy(host, port):
        raise OSError(
            errno.EADDRINUSE, f"port {port} on {host} is already in use (is another `hermes-mlx serve` running?)"
        )

    monkeypatch.setattr(server, "bind", busy)
    monkeypatch.setattr("hermes_mlx.engine.generate.resolve", lambda model: ("k", Path(".")))
    import argparse

    parser = argparse.ArgumentParser()
    serve_command.register(parser.add_subparsers())
    args = parser.parse_args(["serve", "--host", "10.1.2.3", "--port", "9"])
    monkeypatch.delenv(server.API_KEY_ENV, raising=False)
    assert args.func(args) == 2
    assert "refusing to serve on 10.1.2.3 without a key" in capsys.readouterr().err  # no key, no start
    monkeypatch.setenv(server.API_KEY_ENV, "k3y")
    assert args.func(args) == 2
    err = capsys.readouterr().err
    assert "warning: serving on 10.1.2.3" in err and "already in use" in err


# ------------------------------------------------------------------ as a real process


def request(port, method, path, body=None):
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request(
        method, path, body=json.dumps(body) if body is not None else None, headers={"Content-Type": "application/json"}
    )
    reply = conn.getresponse()
    data = reply.read()
    conn.close()
    return reply.status, json.loads(data)


@pytest.fixture
def served(tiny_model):
    proc, port = start_server("--model", tiny_model)
    yield proc, port
    stop_server(proc)


def test_process_serves_and_a_second_serve_on_the_port_fails_clearly(served, tiny_model):
    proc, port = served
    status, body = request(port, "POST", "/v1/chat/completions", HELLO)
    assert status == 200 and body["choices"][0]["message"]["content"] is not None
    second = subprocess.run(
        [sys.executable, "-c", LAUNCH, "serve", "--model", tiny_model, "--port", str(port)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert second.returncode == 2
    assert f"port {port} on 127.0.0.1 is already in use" in second.stderr


def test_client_hanging_up_mid_stream_frees_the_engine(served):
    proc, port = served
    body = json.dumps({**HELLO, "max_tokens": 400, "stream": True}).encode()
    sock = socket.create_connection(("127.0.0.1", port), timeout=120)
    sock.sendall(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )
    seen = b""
    while seen.count(b"data: ") < 3:  # the role chunk and some text: generation is under way
        part = sock.recv(65536)
        assert part, "server closed the stream early"
        seen += part
    sock.close()
    deadline = time.monotonic() + 120  # a bound on waiting, not a speed assertion
    while True:
        status, health = request(port, "GET", "/health")
        if not health["busy"] and health["streams_cancelled"] == 1:
            break
        assert time.monotonic() < deadline, health
        time.sleep(0.05)
    status, body = request(port, "POST", "/v1/chat/completions", HELLO)
    assert status == 200 and body["usage"]["completion_tokens"] <= 4


def test_api_key_sources(tmp_path, monkeypatch, capsys):
    import argparse

    from hermes_mlx.commands import serve as serve_command
    from hermes_mlx.integrations.server import API_KEY_ENV

    parser = argparse.ArgumentParser()
    serve_command.register(parser.add_subparsers())
    monkeypatch.delenv(API_KEY_ENV, raising=False)
    assert serve_command.api_key(parser.parse_args(["serve"])) is None
    monkeypatch.setenv(API_KEY_ENV, "from-env")
    assert serve_command.api_key(parser.parse_args(["serve"])) == "from-env"
    key_file = tmp_path / "key"
    key_file.write_text("spaced key\n")  # only the line ending goes: spaces are part of a key
    assert serve_command.api_key(parser.parse_args(["serve", "--api-key-file", str(key_file)])) == "spaced key"
    capsys.readouterr()
    assert serve_command.api_key(parser.parse_args(["serve", "--api-key", "k"])) == "k"
    assert "visible to other users in `ps`" in capsys.readouterr().err  # the "key in ps"
