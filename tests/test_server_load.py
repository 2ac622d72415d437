"""`hermes-mlx serve` under load: every 503 says when to come back (Retry-After) and closes its
connection; 100 clients at once all get an answer or such a 503, and afterwards the server holds
no client connection and still answers. /health reports the engine's prompt-cache counters.
Loopback only, on the tiny random-weight model; every wait is bounded, nothing asserts a speed."""

import http.client
import json
import math
import threading
import time
from pathlib import Path

import pytest
from serve_process import start_server, stop_server
from starlette.testclient import TestClient
from test_server import BASE, HELLO

from hermes_mlx.engine import errors
from hermes_mlx.integrations.inflight import RETRY_AFTER_MAX_S, State, engine_error
from hermes_mlx.integrations.server import MAX_RUNNING, MAX_WAITING, build_app

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
    app.state.running = MAX_RUNNING  # as if every place in the engine were taken
    app.state.waiting = MAX_WAITING - 1  # and all but one place in the queue
    app.state.service_s = 2.0  # each recently held its place for ~2 s
    with TestClient(app, base_url=BASE) as c:
        # One more may still queue: it waits, and gives up at its own deadline.
        r = c.post(CHAT, json={**HELLO, "timeout": 0.3})
        assert r.status_code == 504 and "waited for the engine" in r.json()["error"]["message"], r.text
        app.state.waiting = MAX_WAITING
        r = c.post(CHAT, json=HELLO)
        assert r.status_code == 503 and r.json()["error"]["message"].startswith("busy")
        # The queue ahead at the recent pace, MAX_RUNNING finishing every ~2 s.
        assert retry_after_of(r.headers) == math.ceil(2.0 * MAX_WAITING / MAX_RUNNING)
        assert r.headers["connection"] == "close"
        health = c.get("/health").json()
        assert health["refused_busy"] == 1 and health["running"] == MAX_RUNNING and health["busy"]


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
    assert State(service_s=3.0, waiting=4, running=2).retry_after() == 6  # two finish every 3 s
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
        stop_server(proc)


# ------------------------------------------------------------------ requests through serve share the engine's batch

PROMPTS = [
    "The quick brown fox jumps over the lazy dog.",
    "pytest tests/test_engine.py -q failed with AssertionError at line 42 " * 3,
]
LINE = "pytest tests/test_engine.py -q failed with AssertionError at line 42. "  # 23 tiny-model tokens


def chat(port: int, body: dict) -> tuple[int, dict]:
    """(status, answer) for a request, streamed or not; a stream's answer is gathered into the
    shape of a plain one: its text, finish reason and usage."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_S)
    if body.get("stream"):
        body = {**body, "stream_options": {"include_usage": True}}
    conn.request("POST", CHAT, body=json.dumps(body), headers={"Content-Type": "application/json"})
    reply = conn.getresponse()
    raw = reply.read().decode()
    conn.close()
    if not body.get("stream") or reply.status != 200:
        return reply.status, json.loads(raw)
    events = [json.loads(line[6:]) for line in raw.splitlines() if line.startswith("data: {")]
    assert raw.rstrip().endswith("data: [DONE]"), raw[-300:]
    assert all("error" not in e for e in events), events[-1]
    choices = [e["choices"][0] for e in events if e["choices"]]
    text = "".join(c["delta"].get("content") or "" for c in choices)
    finish = [c["finish_reason"] for c in choices if c["finish_reason"]]
    message = {"message": {"content": text}, "finish_reason": finish[-1]}
    return 200, {"choices": [message], "usage": events[-1]["usage"]}


def answer_of(body: dict) -> tuple[str, str, int]:
    return (
        body["choices"][0]["message"]["content"],
        body["choices"][0]["finish_reason"],
        body["usage"]["completion_tokens"],
    )


def user(text: str, **extra) -> dict:
    return {"messages": [{"role": "user", "content": text}], **extra}


def test_concurrent_generations_through_serve_decode_in_one_batch(tiny_model):
    from test_engine_batched import held_worker
    from test_server import in_process

    from hermes_mlx.engine.generate import engine_state

    worker = engine_state()[1]
    bodies = [user(PROMPTS[0], max_tokens=24), user(PROMPTS[1], max_tokens=24, stream=True)]
    app = build_app(tiny_model)
    with in_process(app, WAIT_S) as port:
        alone = [chat(port, body) for body in bodies]
        assert [status for status, _ in alone] == [200, 200], alone
        before = get(port, "/health")[1]["batch"]
        worker.stepper.max_width = 0
        release = held_worker()  # both requests reach the engine before either starts
        try:
            out: list = [None, None]
            threads = [threading.Thread(target=lambda i=i: out.__setitem__(i, chat(port, bodies[i]))) for i in (0, 1)]
            for t in threads:
                t.start()
            deadline = time.monotonic() + WAIT_S
            while worker._queue.qsize() < 2:  # one lock for the engine would keep the second out
                assert time.monotonic() < deadline and all(t.is_alive() for t in threads), out
                time.sleep(0.01)
            health = get(port, "/health")[1]
            assert health["running"] == 2 and health["waiting"] == 0 and health["busy"]
            release.set()
            for t in threads:
                t.join(WAIT_S)
        finally:
            release.set()  # also when an assertion failed: the worker must not stay held
        after = get(port, "/health")[1]
    assert [o[0] for o in out] == [200, 200], out
    for (_, together), (_, single) in zip(out, alone):
        assert answer_of(together) == answer_of(single)  # greedy: the batch changes nothing
    assert after["batch"]["max_members"] >= 2  # they did decode together
    assert after["batch"]["joined"] == before["joined"] + 2 and after["batch"]["members"] == 0
    assert after["running"] == 0 and not after["busy"] and after["served"] == 4


def test_an_over_window_request_leaves_a_streaming_member_of_the_batch_alone(tiny_model, monkeypatch):
    """A long stream decodes; meanwhile a prompt over --max-prompt-tokens is refused and one over
    the model's 512-token window is folded to fit, its fold calls decoding in the stream's batch.
    The stream finishes as it does alone."""
    import importlib

    from test_server import in_process

    from hermes_mlx.engine.generate import engine_state

    mlx_generate = importlib.import_module("mlx_lm.generate")
    worker = engine_state()[1]
    batcher = worker.stepper
    long_stream = user("hello", max_tokens=400, stream=True)
    engaged, released = threading.Event(), threading.Event()
    real_next = mlx_generate.GenerationBatch.next

    def step(batch):
        # While the stream decodes alone, hold it until other work reaches the engine, so the
        # stream is certainly still in the batch when the other requests are answered.
        end = time.monotonic() + WAIT_S
        while engaged.is_set() and not released.is_set() and batcher.members() == 1 and worker._queue.qsize() == 0:
            assert time.monotonic() < end
            time.sleep(0.005)
        return real_next(batch)

    app = build_app(tiny_model, max_prompt_tokens=3000)
    with in_process(app, WAIT_S) as port:
        status, alone = chat(port, long_stream)
        # Longer than the ~130 steps the others decode (their 120-token budget plus prompt steps).
        assert status == 200 and answer_of(alone)[2] >= 200, alone
        batcher.max_width = 0
        monkeypatch.setattr(mlx_generate.GenerationBatch, "next", step)
        engaged.set()
        try:
            out: list = []
            first = threading.Thread(target=lambda: out.append(chat(port, long_stream)))
            first.start()
            deadline = time.monotonic() + WAIT_S
            while batcher.members() != 1:
                assert time.monotonic() < deadline and first.is_alive(), out
                time.sleep(0.01)

            status, refused = chat(port, user(LINE * 200, max_tokens=50))  # ~4600 tokens: over 3000
            assert status == 413 and "3000-token limit" in refused["error"]["message"], refused
            assert refused["error"]["param"] == "messages"
            health = get(port, "/health")[1]
            assert health["running"] == 1 and health["batch"]["members"] == 1 and first.is_alive()

            status, folded = chat(port, user(LINE * 30, max_tokens=120))  # ~690 tokens: over the window
            assert status == 200, folded
            assert folded["usage"]["prompt_tokens"] > 512  # the fold calls read the whole prompt
            assert folded["usage"]["completion_tokens"] <= 120
            assert first.is_alive() and batcher.max_width >= 2  # folded alongside the stream
            released.set()
            first.join(WAIT_S)
        finally:
            released.set()  # also when an assertion failed: the engine must not stay held
        after = get(port, "/health")[1]
    assert out and out[0][0] == 200, out
    assert answer_of(out[0][1]) == answer_of(alone)
    assert after["running"] == 0 and after["batch"]["members"] == 0


# ------------------------------------------------------------------ streams held to the queue bound


def test_a_stream_stays_counted_as_waiting_until_it_asks_for_a_place(tiny_model):
    """A stream's generator asks for its place in the engine only once its response has started;
    until then it still counts against MAX_RUNNING + MAX_WAITING, so clients that read slowly
    cannot pile up streams past the bound (the 4th here gets a 503)."""
    import asyncio

    from starlette.requests import ClientDisconnect

    app = build_app(tiny_model, max_running=1, max_waiting=2)
    body = json.dumps({**HELLO, "stream": True}).encode()
    headers = [(b"host", b"127.0.0.1"), (b"content-type", b"application/json")]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": CHAT,
        "raw_path": CHAT.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [*headers, (b"content-length", str(len(body)).encode())],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 80),
    }

    async def burst() -> list[tuple[int, bytes]]:
        reading = asyncio.Event()  # the clients start reading their streams

        async def one(answered: asyncio.Event) -> tuple[int, bytes]:
            status, chunks, requested = [], [], []

            async def receive():
                if not requested:
                    requested.append(1)
                    return {"type": "http.request", "body": body, "more_body": False}
                await asyncio.Event().wait()  # never hangs up

            async def send(message):
                if message["type"] == "http.response.start":
                    status.append(message["status"])
                    answered.set()
                    if message["status"] == 200:
                        await reading.wait()
                else:
                    chunks.append(message.get("body", b""))

            await app(scope, receive, send)
            return status[0], b"".join(chunks)

        tasks = []
        for _ in range(5):  # one after another, each answered before the next arrives
            answered = asyncio.Event()
            tasks.append(asyncio.create_task(one(answered)))
            await asyncio.wait_for(answered.wait(), WAIT_S)
        reading.set()
        return await asyncio.wait_for(asyncio.gather(*tasks), WAIT_S)

    replies = asyncio.run(burst())
    assert [status for status, _ in replies] == [200, 200, 200, 503, 503]
    assert all(b"data: [DONE]" in body and b'"error"' not in body for _, body in replies[:3])
    assert app.state.refused_busy == 2 and app.state.served == 3
    assert app.state.waiting == 0 and app.state.running == 0 and not app.state.queue

    async def gone_before_streaming() -> None:  # its generator never starts; the count comes back
        requested = []

        async def receive():
            if not requested:
                requested.append(1)
                return {"type": "http.request", "body": body, "more_body": False}
            return {"type": "http.disconnect"}

        async def send(message):
            raise OSError("the client went away")

        with pytest.raises((OSError, ClientDisconnect)):
            await app(scope, receive, send)

    asyncio.run(gone_before_streaming())
    assert app.state.waiting == 0 and app.state.running == 0
