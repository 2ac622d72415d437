"""`hermes-mlx serve`: an OpenAI-compatible server on loopback, for Hermes 0.19 and any other agent.

One engine, one model: requests queue on a lock and run one at a time, so each keeps the
prompt cache its template's prefix built. A streamed answer whose client goes away is stopped at
the next token and the engine is free for the next request.
"""

from __future__ import annotations

import asyncio
import errno
import hmac
import ipaddress
import json
import logging
import socket
import sys
import threading
import time
from typing import Any, AsyncIterator

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from . import adapter
from .openai_shapes import (RequestError, chunk, completion, completion_id, error_body, parse_request, usage)

logger = logging.getLogger("hermes_mlx.integrations")

DEFAULT_PORT = 8765
DEFAULT_HOST = "127.0.0.1"
MAX_BODY_BYTES = 8 * 1024 * 1024  # Hermes sends 50 KB prompts; 8 MiB is room without inviting abuse
API_KEY_ENV = "HERMES_MLX_SERVE_API_KEY"


def _error(status: int, message: str, field_name: str | None = None, kind: str = "invalid_request_error") -> JSONResponse:
    return JSONResponse(error_body(message, field_name, kind), status_code=status)


def _engine_error(exc: Exception) -> JSONResponse:
    from hermes_mlx.engine import errors

    if isinstance(exc, errors.ModelNotFound):
        return _error(400, str(exc), "model")
    if isinstance(exc, errors.InvalidRequest):
        return _error(400, str(exc))
    if isinstance(exc, errors.DeadlineExceeded):
        return _error(504, str(exc), kind="timeout")
    logger.exception("request failed")
    return _error(500, f"{type(exc).__name__}: {exc}", kind="server_error")


async def _read_json(request: Request, limit: int) -> Any:
    length = request.headers.get("content-length")
    if length and length.isdigit() and int(length) > limit:
        raise RequestError("body", f"request is {int(length)} bytes, over the {limit}-byte limit")
    body = bytearray()
    async for part in request.stream():
        body += part
        if len(body) > limit:
            raise RequestError("body", f"request is over the {limit}-byte limit")
    try:
        return json.loads(body or b"null")
    except ValueError as exc:
        raise RequestError("body", f"not valid JSON: {exc}") from None


def build_app(model: str | None = None, *, api_key: str | None = None, max_body_bytes: int = MAX_BODY_BYTES) -> Starlette:
    """The ASGI app. `model` is what every request runs on (the request's `model` may name
    another local model; a foreign model id falls back to this one)."""
    label = model or "hermes-mlx-default"
    state: dict[str, Any] = {"lock": None, "served": 0, "streams_cancelled": 0}

    def lock() -> asyncio.Lock:
        if state["lock"] is None:
            state["lock"] = asyncio.Lock()
        return state["lock"]

    def authorised(request: Request) -> bool:
        if not api_key:
            return True
        given = request.headers.get("authorization", "")
        return given.startswith("Bearer ") and hmac.compare_digest(given[7:].strip().encode(), api_key.encode())

    async def health(request: Request) -> Response:
        from hermes_mlx.engine.generate import warm_models

        return JSONResponse({"status": "ok", "model": label, "served": state["served"],
                             "streams_cancelled": state["streams_cancelled"], "busy": lock().locked(),
                             "warm": warm_models()})

    async def models(request: Request) -> Response:
        if not authorised(request):
            return _error(401, "missing or wrong bearer token", kind="authentication_error")
        return JSONResponse({"object": "list", "data": [
            {"id": label, "object": "model", "created": 0, "owned_by": "hermes-mlx"}]})

    async def chat(request: Request) -> Response:
        if not authorised(request):
            return _error(401, "missing or wrong bearer token", kind="authentication_error")
        try:
            req = parse_request(await _read_json(request, max_body_bytes))
            name = await run_in_threadpool(adapter.model_name, req.model, model)
        except RequestError as exc:
            return _error(413 if "limit" in str(exc) else 400, str(exc), exc.field)
        except Exception as exc:
            return _engine_error(exc)
        if req.stream:
            return StreamingResponse(_sse(req, name, label, lock(), state), media_type="text/event-stream",
                                     headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        async with lock():
            try:
                done = await run_in_threadpool(adapter.complete, req, model=name)
            except Exception as exc:
                return _engine_error(exc)
            finally:
                state["served"] += 1
        return JSONResponse(completion(done.text, done.finish_reason, done.model or label,
                                       usage(done.prompt_tokens, done.completion_tokens, done.cached_tokens)))

    return Starlette(routes=[
        Route("/health", health, methods=["GET"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/v1/chat/completions", chat, methods=["POST"]),
        Route("/chat/completions", chat, methods=["POST"]),
    ])


def _sse_line(data: Any) -> str:
    return "data: " + (data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)) + "\n\n"


async def _sse(req, name: str | None, label: str, lock: asyncio.Lock, state: dict) -> AsyncIterator[str]:
    """Server-sent events. The adapter's generator runs on its own thread; when the client goes
    away Starlette cancels us, and the thread closes the generator, which stops the engine."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue = asyncio.Queue()
    stop = threading.Event()

    def put(item: tuple) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # loop closed: nobody is listening any more
            pass

    def produce() -> None:
        pieces = adapter.stream(req, model=name)
        try:
            for item in pieces:
                put(("item", item))
                if stop.is_set():
                    break
        except Exception as exc:
            put(("error", exc))
        finally:
            pieces.close()
            put(("end", None))

    id, created = completion_id(), int(time.time())
    finished = False
    async with lock:
        thread = threading.Thread(target=produce, name="hermes-mlx-stream", daemon=True)
        thread.start()
        try:
            yield _sse_line(chunk(id, label, created, role="assistant", content=""))
            while True:
                kind, value = await queue.get()
                if kind == "end":
                    break
                if kind == "error":
                    message = f"{type(value).__name__}: {value}"
                    yield _sse_line(error_body(message, kind="server_error"))
                    break
                text, done = value
                if done is None:
                    yield _sse_line(chunk(id, label, created, content=text))
                    continue
                u = usage(done.prompt_tokens, done.completion_tokens, done.cached_tokens)
                yield _sse_line(chunk(id, done.model or label, created, finish_reason=done.finish_reason,
                                      usage_dict=None if req.include_usage else u))
                if req.include_usage:
                    yield _sse_line(chunk(id, done.model or label, created, usage_dict=u, empty_choices=True))
            yield _sse_line("[DONE]")
            finished = True
        finally:
            stop.set()
            state["served"] += 1
            if not finished:
                state["streams_cancelled"] += 1
            # Hold the lock until the engine has really let go (one token at most).
            await asyncio.shield(asyncio.to_thread(thread.join))


def is_loopback(host: str) -> bool:
    if host in ("localhost",):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    """Bind before starting uvicorn so a busy port is reported in one clear line."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise OSError(exc.errno, f"port {port} on {host} is already in use (is another `hermes-mlx serve` "
                                     f"running? stop it or pick another --port)") from None
        raise
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def serve(model: str | None = None, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
          api_key: str | None = None, max_body_bytes: int = MAX_BODY_BYTES, log_level: str = "warning") -> int:
    """Run until interrupted; returns an exit status."""
    import uvicorn

    from hermes_mlx.engine.generate import resolve

    if not is_loopback(host):
        print(f"warning: serving on {host}, reachable from other machines; "
              "prompts carry whole conversations, so set --api-key", file=sys.stderr)
    resolve(model)  # a bad --model fails here, before the port is taken
    sock = bind(host, port)
    actual = sock.getsockname()[1]
    print(f"hermes-mlx serving {model or 'the embedded default model'} on http://{host}:{actual}/v1", file=sys.stderr, flush=True)
    config = uvicorn.Config(build_app(model, api_key=api_key, max_body_bytes=max_body_bytes),
                            log_level=log_level, access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    server.run(sockets=[sock])
    return 0
