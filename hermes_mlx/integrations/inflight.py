"""Running one request's work in `hermes-mlx serve`: its place in the engine, the deadline and the
cancel flag, for a plain JSON answer and for server-sent events.

Up to MAX_RUNNING requests run into the engine at once, so their generations decode together in
the engine's batch (engine/batched.py); the rest wait for a place in arrival order (State.take_slot).

The work runs on a thread inside engine.generate.request_scope, so the engine checks the flag at
every prompt step and token and refuses further calls once it is up. The flag goes up when the
client hangs up (polled for a JSON answer; Starlette cancels a stream) and, through
State.cancel_all, for every request in flight when the server is told to stop.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from . import adapter
from .hermes_prompts import Prompt
from .openai_shapes import ChatRequest, chunk, completion, completion_id, error_body, stream_chunks, usage

logger = logging.getLogger("hermes_mlx.integrations")

POLL_S = 0.2  # how often a non-streaming request looks for its client having gone
KEEPALIVE_S = 10.0  # an SSE comment this often while the engine works without output
RETRY_AFTER_MAX_S = 60  # the openai SDK only honours a Retry-After of at most 60 s
SHUTDOWN_RETRY_AFTER_S = 5  # a restarted server takes a few seconds to bind and load
# Requests in the engine at once. mlx-lm's BatchGenerator decodes up to 32 together and reads up
# to 8 prompts at a time; 8 lets every running request read its prompt in the same step, and a
# Hermes gateway rarely has more conversations than that compacting at the same moment.
MAX_RUNNING = 8


class Closed(Exception):
    """The work stopped because its client went away or the server is stopping."""


@dataclass
class State:
    served: int = 0
    streams_cancelled: int = 0
    requests_cancelled: int = 0
    waiting: int = 0  # requests admitted that hold no place in the engine yet
    running: int = 0  # requests holding a place in the engine
    max_running: int = MAX_RUNNING
    refused_busy: int = 0  # 503s for a full queue
    closing: threading.Event = field(default_factory=threading.Event)
    inflight: set = field(default_factory=set)  # cancel flags of requests being answered
    service_s: float = 1.0  # moving average of how long a request holds its place in the engine
    queue: deque = field(default_factory=deque)  # futures of the requests waiting for a place, oldest first

    def note_service(self, seconds: float) -> None:
        self.service_s = 0.8 * self.service_s + 0.2 * max(0.0, seconds)

    def retry_after(self) -> int:
        """Seconds until a refused client has a fair chance: the queue ahead of it drained at
        the recent pace, as many at a time as are running; within what clients honour."""
        pace = self.service_s / max(1, self.running)
        return max(1, min(RETRY_AFTER_MAX_S, math.ceil(pace * max(1, self.waiting))))

    async def take_slot(self, deadline: float, gone: Callable[[], Awaitable[bool]]) -> None:
        """A place in the engine, first come first served; TimeoutError at the deadline, Closed
        when `gone()` says the caller left. The holder must give_slot() when its work is over."""
        if self.running < self.max_running and not self.queue:
            self.running += 1
            return
        turn = asyncio.get_running_loop().create_future()
        self.queue.append(turn)
        self.waiting += 1
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(
                        f"the request's deadline passed while it waited for the engine "
                        f"({self.running} requests were running)"
                    )
                done, _ = await asyncio.wait([turn], timeout=min(POLL_S, left))
                if done:
                    return
                if await gone():
                    raise Closed()
        except BaseException:
            if turn.done() and not turn.cancelled():
                self.give_slot()  # handed a place just as it left: pass it on
            turn.cancel()
            raise
        finally:
            self.waiting -= 1
            if turn in self.queue:
                self.queue.remove(turn)

    def give_slot(self) -> None:
        """Pass the place to the oldest request still waiting, or free it."""
        while self.queue:
            turn = self.queue.popleft()
            if not turn.done():
                turn.set_result(None)
                return
        self.running -= 1

    def cancel_all(self) -> None:
        """Stop every request in flight at its next engine step (safe from a signal handler)."""
        self.closing.set()
        for flag in list(self.inflight):
            flag.set()


class JSON(JSONResponse):
    def render(self, content: Any) -> bytes:  # ASCII-only: no text can make encoding fail
        return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode()


def error(
    status: int,
    message: str,
    field_name: str | None = None,
    kind: str = "invalid_request_error",
    retry_after: int | None = None,
) -> Response:
    """Every 503 says when to come back (Retry-After, seconds) and closes the connection, so a
    refused client holds no socket here while it waits."""
    if status != 503:
        return JSON(error_body(message, field_name, kind), status_code=status)
    headers = {"Retry-After": str(retry_after or SHUTDOWN_RETRY_AFTER_S), "Connection": "close"}
    return JSON(error_body(message, field_name, kind), status_code=status, headers=headers)


def engine_error(exc: BaseException, state: State) -> Response:
    from hermes_mlx.engine import errors

    if isinstance(exc, (errors.Cancelled, Closed)):
        if state.closing.is_set():
            return error(503, "the server is shutting down", kind="server_error")
        return error(499, "the client closed the request", kind="cancelled")
    if isinstance(exc, errors.ModelNotFound):
        return error(400, str(exc), "model")
    if isinstance(exc, errors.InvalidRequest):
        return error(400, str(exc))
    if isinstance(exc, (errors.DeadlineExceeded, TimeoutError)):
        message = str(exc) if "deadline" in str(exc) else f"the request's deadline passed: {exc}"
        return error(504, message, kind="timeout")
    if isinstance(exc, UnicodeError):
        return error(400, "the request holds text that cannot be encoded", "messages")
    logger.exception("request failed", exc_info=exc)
    return error(500, f"internal error ({type(exc).__name__}); the server's log has the details", kind="server_error")


def _work(req: ChatRequest, prompt: Prompt, name: str | None, cancel: threading.Event, deadline: float) -> Any:
    from hermes_mlx.engine.generate import request_scope

    with request_scope(cancel, deadline):
        return adapter.complete(req, prompt, model=name)


async def answer(
    request: Request, req: ChatRequest, prompt: Prompt, name: str | None, label: str, state: State, deadline: float
) -> Response:
    """A non-streaming answer. The work runs on a thread while this coroutine watches the client:
    when it hangs up, the cancel flag stops the engine at its next step (its batch member leaves)."""
    cancel = threading.Event()
    state.inflight.add(cancel)

    async def gone() -> bool:
        if cancel.is_set() or await request.is_disconnected():
            cancel.set()
            return True
        return False

    try:
        await state.take_slot(deadline, gone)
        held = time.monotonic()
        try:
            # anyio's thread pool (40 threads), not asyncio's default (cores + 4): every running
            # request waits on a thread of its own while the engine batches them.
            work = asyncio.ensure_future(anyio.to_thread.run_sync(_work, req, prompt, name, cancel, deadline))
            while not work.done():
                await asyncio.wait([work], timeout=POLL_S)
                if not work.done():
                    await gone()
            done = work.result()
        finally:
            state.give_slot()
            state.note_service(time.monotonic() - held)
            state.served += 1
        if cancel.is_set():
            raise Closed()
    except BaseException as exc:
        if cancel.is_set() and not state.closing.is_set():
            state.requests_cancelled += 1
        if isinstance(exc, Exception):
            return engine_error(exc, state)
        raise
    finally:
        state.inflight.discard(cancel)
    return JSON(
        completion(
            done.text,
            done.finish_reason,
            done.model or label,
            usage(done.prompt_tokens, done.completion_tokens, done.cached_tokens),
        )
    )


def _sse_line(data: Any) -> str:
    return "data: " + (data if isinstance(data, str) else json.dumps(data)) + "\n\n"


async def sse(
    req: ChatRequest,
    prompt: Prompt,
    name: str | None,
    label: str,
    state: State,
    deadline: float,
    queued: Callable[[], None] = lambda: None,
) -> AsyncIterator[str]:
    """Server-sent events. The adapter's generator runs on its own thread under the request's
    cancel flag; when the client goes away Starlette cancels us, we raise the flag, and the
    engine stops at its next step. `queued()` runs just before the request asks for its place in
    the engine: the server counts it in `waiting` until then (take_slot counts it from there)."""
    from hermes_mlx.engine.generate import request_scope

    loop = asyncio.get_running_loop()
    queue: asyncio.Queue = asyncio.Queue()
    stop = threading.Event()

    def put(item: tuple) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # loop closed: nobody is listening any more
            pass

    def produce() -> None:
        with request_scope(stop, deadline):
            pieces = adapter.stream(req, prompt, model=name)
            try:
                for item in stream_chunks(pieces, id, label, created, req.include_usage):
                    put(("item", item))
                    if stop.is_set():
                        break
            except Exception as exc:
                put(("error", exc))
            finally:
                pieces.close()
                put(("end", None))

    async def stopping() -> bool:  # the server is shutting down
        return stop.is_set()

    id, created = completion_id(), int(time.time())
    finished = False
    thread = threading.Thread(target=produce, name="hermes-mlx-stream", daemon=True)
    state.inflight.add(stop)
    try:
        yield _sse_line(chunk(id, label, created, role="assistant", content=""))
        try:
            queued()
            await state.take_slot(deadline, stopping)  # a client that leaves cancels this coroutine
        except (TimeoutError, Closed) as exc:
            yield _sse_line(json.loads(engine_error(exc, state).body))  # an error event and no [DONE]
            finished = isinstance(exc, TimeoutError)  # else the server stopped it
            return
        held = time.monotonic()
        try:
            if stop.is_set():  # shutting down while we waited: an error event, no [DONE]
                yield _sse_line(json.loads(engine_error(Closed(), state).body))
                return
            thread.start()
            while True:
                try:
                    kind, value = await asyncio.wait_for(queue.get(), KEEPALIVE_S)
                except TimeoutError:
                    yield ": keep-alive\n\n"  # also finds a client that has gone
                    continue
                if kind == "end":
                    break
                if kind == "error":
                    response = engine_error(value, state)
                    yield _sse_line(json.loads(response.body))
                    finished = not stop.is_set()
                    return  # no [DONE]: a client must not take what came before for a whole answer
                yield _sse_line(value)
            if stop.is_set():  # cut short (the server is stopping) after a chunk: say so, and no [DONE]
                yield _sse_line(json.loads(engine_error(Closed(), state).body))
                return
            yield _sse_line("[DONE]")
            finished = True
        finally:
            stop.set()
            # Hold the place until the engine has really let go (its batch member leaves at the
            # next step), even when this generator is being cancelled.
            with anyio.CancelScope(shield=True):
                if thread.ident is not None:
                    await anyio.to_thread.run_sync(thread.join)
            state.give_slot()
            state.note_service(time.monotonic() - held)
    finally:
        state.inflight.discard(stop)
        state.served += 1
        if not finished:
            state.streams_cancelled += 1
