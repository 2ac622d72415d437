"""`hermes-mlx serve`: an OpenAI-compatible server on loopback, for Hermes 0.19 and any other agent.

One engine: up to MAX_RUNNING requests run into it at once and their generations decode together
in its batch (a request that arrives joins at the next step), each starting from the prefix its
template or session left in the engine's prompt cache; more wait for a place in arrival order.
Every request's work is bounded: a deadline (the server's --request-timeout, lowered by the
request's own `timeout`), a prompt-size limit checked before any model work, and a cancel flag
that the engine checks at every prompt step and token (engine.generate.request_scope). The flag
is raised when the client goes away, streaming or not (its batch member leaves at the next
step), and for every request in flight when the server is told to stop.

Load: at most MAX_WAITING requests wait beyond the MAX_RUNNING places and MAX_ACTIVE are inside
the app; past either a client gets a JSON 503 with Retry-After (the queue ahead at the recent
pace) and the connection closes, so a flood of clients is answered at once and leaves no socket
open here. A prompt over --max-prompt-tokens is refused (413) before it reaches the engine, and
one over the model's window is folded to fit (integrations/passthrough.py); neither touches the
other requests in the batch.
"""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import json
import logging
import socket
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from .hermes_config import DEFAULT_AUX_MODEL, DEFAULT_PORT
from .hermes_prompts import Kind, Prompt, recognise
from .hermes_settings import PLANNING_CONTEXT_TOKENS
from .http_guard import Admission, HostOriginGuard, bearer_ok
from .inflight import JSON, MAX_RUNNING, State, answer, engine_error, error, sse
from .model_names import ModelPolicy
from .openai_shapes import RequestError, parse_request

DEFAULT_HOST = "127.0.0.1"
logger = logging.getLogger("hermes_mlx.integrations")
MAX_BODY_BYTES = 8 * 1024 * 1024  # Hermes sends 50 KB prompts; 8 MiB is room without inviting abuse
API_KEY_ENV = "HERMES_MLX_SERVE_API_KEY"
DEFAULT_REQUEST_TIMEOUT = 300.0
# Prompt tokens one request may send: about what folds within the default deadline. Measured on
# 2 x86 cores with the embedded 135M model: folding runs at ~60-75 prompt tokens/s when the cores
# are free (reading ~115 tok/s, notes ~9 tok/s) and ~15 tok/s when six processes share them, so
# 16k tokens (~65 KB of text; Hermes sends ~50 KB) takes ~250 s with the answer on a free machine.
DEFAULT_MAX_PROMPT_TOKENS = 16384
# Seconds a client has to send its whole body (8 MiB arrives in well under a second on loopback):
# a slow sender holds one of MAX_ACTIVE places for this long, and none of the engine's queue.
BODY_TIMEOUT_S = 10.0
MAX_WAITING = 8  # requests waiting for a place in the engine (beyond MAX_RUNNING) before new ones get 503
MAX_ACTIVE = 4 * MAX_WAITING  # requests inside the app at once, any route, before new ones get 503


class Stream(StreamingResponse):
    """Server-sent events for a request that stays counted in `state.waiting` until its generator
    asks for a place in the engine, which happens only once the response has started: a burst of
    streams to slow readers is thereby held to MAX_RUNNING + MAX_WAITING. However the response
    ends, even before its generator starts (the client gone), the count is given back once."""

    def __init__(self, state: State, events: Callable[[Callable[[], None]], AsyncIterator[str]]):
        self._state, self._waiting = state, True
        super().__init__(
            events(self._stop_waiting),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    def _stop_waiting(self) -> None:
        if self._waiting:
            self._waiting = False
            self._state.waiting -= 1

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._stop_waiting()


class TooLarge(RequestError):
    """A request over a size limit (HTTP 413)."""


@dataclass
class Limits:
    max_body_bytes: int = MAX_BODY_BYTES
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT
    max_prompt_tokens: int = DEFAULT_MAX_PROMPT_TOKENS
    max_waiting: int = MAX_WAITING
    body_timeout: float = BODY_TIMEOUT_S


async def _read_json(request: Request, limit: int) -> Any:
    length = request.headers.get("content-length")
    if length and length.isdigit() and int(length) > limit:
        raise TooLarge("body", f"request is {int(length)} bytes, over the {limit}-byte limit")
    body = bytearray()
    async for part in request.stream():
        body += part
        if len(body) > limit:
            raise TooLarge("body", f"request is over the {limit}-byte limit")
    try:
        return json.loads(body or b"null")
    except ValueError as exc:
        raise RequestError("body", f"not valid JSON: {exc}") from None
    except RecursionError:
        raise RequestError("body", "JSON nested too deeply") from None


def queue_full(state: State, limits: Limits) -> Response | None:
    """The 503 for a request that finds every running and waiting place taken, or None."""
    if state.waiting + state.running < state.max_running + limits.max_waiting:
        return None
    state.refused_busy += 1
    message = f"busy: {state.running} requests are running and {state.waiting} already waiting"
    return error(503, message, kind="server_error", retry_after=state.retry_after())


def check_prompt_size(messages: list[dict], model: str | None, limit: int) -> None:
    """TooLarge when the prompt is over `limit` tokens; runs before any model work. A quarter of
    the characters is what text usually takes, so far over that is refused uncounted; a byte
    count (no tokenizer yields more tokens than bytes) clears most prompts; only the ones
    between are counted with the tokenizer."""
    chars = sum(len(m["content"]) + len(m["role"]) for m in messages)
    if chars // 4 > limit:
        raise TooLarge(
            "messages",
            f"the prompt is about {chars // 4} tokens, over this server's {limit}-token limit (--max-prompt-tokens)",
        )
    overhead = 16 + 8 * len(messages)  # chat-template tokens
    if chars + overhead <= limit and sum(len(m["content"].encode()) for m in messages) + overhead <= limit:
        return
    from hermes_mlx.engine.generate import count_tokens

    tokens = count_tokens(messages, model=model)
    if tokens > limit:
        raise TooLarge(
            "messages", f"the prompt is {tokens} tokens, over this server's {limit}-token limit (--max-prompt-tokens)"
        )


def prompt_limit(prompt: Prompt, limits: Limits) -> int:
    """Hermes's compaction prompts go to the summarizer, which folds any input chunk by chunk
    within its deadline (code carries the facts past it), so they are held to the context we
    tell Hermes to plan with, not to the model-window limit that bounds a passthrough prompt."""
    if prompt.kind is not Kind.PASSTHROUGH:
        return max(limits.max_prompt_tokens, PLANNING_CONTEXT_TOKENS)
    return limits.max_prompt_tokens


def build_app(
    model: str | None = None,
    *,
    api_key: str | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
    max_prompt_tokens: int = DEFAULT_MAX_PROMPT_TOKENS,
    allowed_hosts: tuple[str, ...] = (),
    allowed_models: tuple[str, ...] = (),
    max_active: int = MAX_ACTIVE,
    max_running: int = MAX_RUNNING,
    max_waiting: int = MAX_WAITING,
    body_timeout: float = BODY_TIMEOUT_S,
) -> Any:
    """The ASGI app. `model` is what requests run on unless they name a manifest model present
    here or one of `allowed_models`; a foreign model id falls back to `model`. The returned app
    has `.state` (a State: counters, and cancel_all() for shutdown); it is the Admission
    limit itself (`.active`, `.refused`). `max_running` requests run into the engine at once, and
    `max_waiting` more may wait for a place."""
    label = model or DEFAULT_AUX_MODEL
    limits = Limits(max_body_bytes, request_timeout, max_prompt_tokens, max_waiting, min(body_timeout, request_timeout))
    state = State(max_running=max_running)
    policy = ModelPolicy(model, allowed_models)

    def refused(request: Request) -> Response | None:
        if bearer_ok(request.headers.get("authorization"), api_key):
            return None
        return error(401, "missing or wrong bearer token", kind="authentication_error")

    async def health(request: Request) -> Response:
        from hermes_mlx.engine.generate import warm_models

        body: dict[str, Any] = {
            "status": "ok",
            "served": state.served,
            "streams_cancelled": state.streams_cancelled,
            "requests_cancelled": state.requests_cancelled,
            "busy": state.running > 0,
            "running": state.running,
            "waiting": state.waiting,
            "active": admission.active,
            "refused_busy": admission.refused + state.refused_busy,
            "prompt_cache": prompt_cache_report(),
            "batch": batch_report(),
        }
        if refused(request) is None:  # model names and paths only for those holding the key
            body.update(model=label, warm=warm_models())
        return JSON(body)

    async def models(request: Request) -> Response:
        return refused(request) or JSON(
            {"object": "list", "data": [{"id": label, "object": "model", "created": 0, "owned_by": "hermes-mlx"}]}
        )

    async def chat(request: Request) -> Response:
        started = time.monotonic()
        if (no := refused(request)) is not None:
            return no
        if state.closing.is_set():
            return error(503, "the server is shutting down", kind="server_error")
        if (busy := queue_full(state, limits)) is not None:  # refused at once, its body unread
            return busy
        try:  # a body counts toward the queue only once it is in, within its own short deadline
            body = await asyncio.wait_for(_read_json(request, limits.max_body_bytes), limits.body_timeout)
        except TimeoutError:
            return error(408, f"the request body did not arrive within {limits.body_timeout:g} s", "body")
        except ClientDisconnect:
            logger.info("client hung up while sending its request body")
            return error(499, "the client closed the request", kind="cancelled")
        except RequestError as exc:
            return error(413 if isinstance(exc, TooLarge) else 400, str(exc), exc.field)
        if (busy := queue_full(state, limits)) is not None:
            return busy
        state.waiting += 1  # until it asks for its place (a stream: once streaming); take_slot counts it from there
        checked = False
        try:
            try:
                req = parse_request(body)
                prompt = recognise(req.messages)  # once: the size limit, the adapter and passthrough read it
                deadline = started + min(limits.request_timeout, req.timeout or limits.request_timeout)
                name = await run_in_threadpool(policy.pick, req.model)
                await run_in_threadpool(check_prompt_size, req.messages, name, prompt_limit(prompt, limits))
            except RequestError as exc:
                return error(413 if isinstance(exc, TooLarge) else 400, str(exc), exc.field)
            except Exception as exc:
                return engine_error(exc, state)
            checked = True
            if req.stream:
                return Stream(state, lambda queued: sse(req, prompt, name, label, state, deadline, queued))
            state.waiting -= 1  # answer() asks for its place at once
            return await answer(request, req, prompt, name, label, state, deadline)
        finally:
            if not checked:
                state.waiting -= 1

    app = Starlette(
        routes=[
            Route("/health", health, methods=["GET"]),
            Route("/v1/models", models, methods=["GET"]),
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/chat/completions", chat, methods=["POST"]),
        ]
    )
    admission = Admission(HostOriginGuard(app, allowed_hosts), max_active, state.retry_after)
    admission.state = state  # type: ignore[attr-defined]
    return admission


def prompt_cache_report() -> dict | None:
    """The engine's prefix-cache counters (hits, misses, evictions, entries, bytes, budget), or
    None from an engine that keeps none."""
    from hermes_mlx.engine import generate

    stats = getattr(generate, "prompt_cache_stats", None)
    if stats is None:
        return None
    found = stats()
    return found.to_dict() if hasattr(found, "to_dict") else dict(found)


def batch_report() -> dict | None:
    """The engine's batch: members decoding now, members ever joined, and the most that decoded
    together (what shows that requests through serve share the batch); None without a batcher."""
    from hermes_mlx.engine.generate import engine_state

    batcher = getattr(engine_state()[1], "stepper", None)
    if batcher is None:
        return None
    return {"members": batcher.members(), "joined": batcher.joined, "max_members": batcher.max_width}


def is_loopback(host: str) -> bool:
    if host in ("localhost",):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    """Bind before starting uvicorn so a busy port is reported in one clear line."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise OSError(
                exc.errno,
                f"port {port} on {host} is already in use (is another `hermes-mlx serve` "
                f"running? stop it or pick another --port)",
            ) from None
        raise
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def serve(
    model: str | None = None,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    api_key: str | None = None,
    log_level: str = "warning",
    allowed_hosts: tuple[str, ...] = (),
    allowed_models: tuple[str, ...] = (),
    **limits: Any,
) -> int:
    """Run until interrupted; returns an exit status. `limits` are build_app's (max_body_bytes,
    request_timeout, max_prompt_tokens, ...). The first SIGTERM or Ctrl-C cancels the requests in
    flight (each stops at its next engine step) and exits within a few seconds."""
    import uvicorn

    from hermes_mlx.engine.generate import resolve

    if not is_loopback(host):
        if not api_key:
            print(
                f"hermes-mlx serve: refusing to serve on {host} without a key: prompts carry whole "
                f"conversations. Set {API_KEY_ENV} (or --api-key-file) and start again.",
                file=sys.stderr,
            )
            return 2
        print(f"warning: serving on {host}, reachable from other machines", file=sys.stderr)
        if host not in ("0.0.0.0", "::", "[::]"):
            allowed_hosts = (*allowed_hosts, host)
    resolve(model)  # a bad --model fails here, before the port is taken
    for extra in allowed_models:
        resolve(extra)
    sock = bind(host, port)
    actual = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    print(
        f"hermes-mlx serving {model or 'the embedded default model'} on http://{shown}:{actual}/v1",
        file=sys.stderr,
        flush=True,
    )
    app = build_app(model, api_key=api_key, allowed_hosts=allowed_hosts, allowed_models=allowed_models, **limits)
    config = uvicorn.Config(
        app,
        log_level=log_level,
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=2,
        limit_concurrency=None,  # build_app's Admission limits instead, with a Retry-After
    )

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            app.state.cancel_all()
            super().handle_exit(sig, frame)

    Server(config).run(sockets=[sock])
    return 0
