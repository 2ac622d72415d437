"""generate / stream_generate: the engine's public face, safe to call from any thread.

Each request is tokenized, handed to the MLX worker, and decoded in its model's batch (mlx-lm's
BatchGenerator, engine/batched.py) together with whatever else is running, starting from a copy
of the nearest cached prefix (engine/prompt_cache.py, one LRU of prefixes per model): when a
request starts with tokens an earlier one computed (a template's fixed instructions, the same
session's previous turn), only the new tail is computed.
"""

from __future__ import annotations

import atexit
import contextvars
import queue
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from hermes_mlx.engine import errors
from hermes_mlx.engine.batched import Batcher, Member
from hermes_mlx.engine.cache import ModelCache, TokenizerCache, context_window, read_config
from hermes_mlx.engine.prompt_cache import PromptCacheStats
from hermes_mlx.engine.repetition import RepetitionGuard
from hermes_mlx.engine.worker import DEFERRED, Job, Priority, Worker, priority_rank, wait

Request = str | list[dict]


@dataclass
class GenerationResult:
    text: str
    finish_reason: str  # "stop" | "length" | "deadline" | "repetition" (the repetition guard ended it)
    prompt_tokens: int
    cached_tokens: int
    generation_tokens: int
    prompt_tps: float
    generation_tps: float
    peak_memory_mb: float
    load_s: float
    ttft_s: float
    total_s: float
    model: str
    blas_threads: int | None = None  # OpenBLAS threads this request ran with (CPU only)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class GenerationChunk:
    text: str  # new text since the previous chunk
    result: GenerationResult | None = None  # set on the last chunk only


@dataclass
class ModelInfo:
    name: str
    path: Path
    context_window: int
    eos_token_ids: list[int]
    config: dict


_models = ModelCache()
_tokenizers = TokenizerCache()
_batch = Batcher(_models, lambda member: _result(member))
_worker = Worker(on_idle=_models.evict_idle, stepper=_batch)
atexit.register(_worker.quiesce)
_resolved: dict[str, Path] = {}
_folder_keys: dict[Path, str] = {}  # model folder -> the cache key of the first name that reached it
_resolve_lock = threading.Lock()
_scope: contextvars.ContextVar[tuple[threading.Event, float | None] | None] = contextvars.ContextVar(
    "hermes_mlx_request_scope", default=None
)


_priority: contextvars.ContextVar[str | Priority] = contextvars.ContextVar("hermes_mlx_priority", default="foreground")


@contextmanager
def request_scope(
    cancel: threading.Event, deadline: float | None = None, priority: str | Priority | None = None
) -> Iterator[None]:
    """Bound every engine call made in this context as one request: once `cancel` is set, the
    running call stops at its next prompt step or token and later calls raise Cancelled; no call
    runs past `deadline` (a time.monotonic() value). A request that folds many chunks, or a
    summary of many calls, is thereby cancelled and timed as a whole. `priority="background"`
    queues its calls behind every call a caller is waiting for (work computed ahead); a Priority
    holder instead is read at each call, so promoting it moves the calls queued or still to come
    ahead (Priority lives in engine/worker.py)."""
    if priority is not None and not isinstance(priority, Priority):
        priority_rank(priority)
    token = _scope.set((cancel, deadline))
    ptoken = _priority.set(priority) if priority is not None else None
    try:
        yield
    finally:
        if ptoken is not None:
            _priority.reset(ptoken)
        _scope.reset(token)


def check_scope() -> float | None:
    """Raise Cancelled or DeadlineExceeded when the current request_scope says to stop (for the
    work between engine calls: tokenizing, chunking); else its deadline, if any."""
    cancel, deadline = _scope.get() or (None, None)
    if cancel is not None and cancel.is_set():
        raise errors.Cancelled("the request was cancelled")
    if deadline is not None and time.monotonic() >= deadline:
        raise errors.DeadlineExceeded("the request's deadline passed")
    return deadline


def job_bounds(timeout: float | None, priority: str | None) -> tuple[float | None, threading.Event | None, str]:
    """(deadline, cancel flag, priority) for one engine call: its own timeout within the current
    request_scope's deadline, the scope's cancel flag, its own priority or else the scope's."""
    if timeout is not None and timeout <= 0:
        raise errors.DeadlineExceeded(f"timeout must be positive, got {timeout}")
    deadline = None if timeout is None else time.monotonic() + timeout
    scope_deadline = check_scope()
    if scope_deadline is not None:
        deadline = scope_deadline if deadline is None else min(deadline, scope_deadline)
    cancel = (_scope.get() or (None, None))[0]
    if not priority:
        scoped = _priority.get()
        priority = scoped.value if isinstance(scoped, Priority) else scoped
    priority_rank(priority)
    return deadline, cancel, priority


def scope_holder(priority: str | None) -> Priority | None:
    """The request_scope's Priority holder when a call takes the scope's priority (no keyword):
    the worker re-ranks the call's queued job when the holder is promoted."""
    scoped = _priority.get()
    return scoped if not priority and isinstance(scoped, Priority) else None


def resolve(model: str | None) -> tuple[str, Path]:
    """(cache key, local folder) for a manifest name, a local mlx-lm folder, or None (the default).

    Only the lookup holds the lock: a first use that downloads must not stall token counting
    for other models. A remembered folder that has since vanished is resolved afresh."""
    key = model or "default"
    with _resolve_lock:
        path = _resolved.get(key)
    if path is not None and (path / "config.json").is_file():
        return _key_for(key, path), path
    candidate = Path(model).expanduser() if model else None
    if candidate is not None and (candidate / "config.json").is_file():
        path = candidate.resolve()
    else:
        from hermes_mlx.engine.models import resolve_model

        path = Path(resolve_model(model))
    with _resolve_lock:
        _resolved[key] = path
    return _key_for(key, path), path


def _key_for(key: str, path: Path) -> str:
    """One cache key per model folder, whatever the model was called: the default by its
    manifest name, or its folder, must not load a second copy of the same weights."""
    folder = path.resolve()
    with _resolve_lock:
        return _folder_keys.setdefault(folder, key)


def model_info(model: str | None = None) -> ModelInfo:
    key, path = resolve(model)
    config = read_config(path)
    eos = config.get("eos_token_id")
    eos = eos if isinstance(eos, list) else [eos] if eos is not None else []
    return ModelInfo(key, path, context_window(config), eos, config)


def tokenize(request: Request, tokenizer: Any) -> list[int]:
    if isinstance(request, str):
        add_special = tokenizer.bos_token is None or not request.startswith(tokenizer.bos_token)
        return list(tokenizer.encode(request, add_special_tokens=add_special))
    if not isinstance(request, list) or not request:
        raise errors.InvalidRequest("request must be a prompt string or a non-empty list of messages")
    messages = []
    for i, message in enumerate(request):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise errors.InvalidRequest(f"message {i} must be a dict with a string 'role'")
        content = message.get("content")
        if content is None:
            content = ""
        if not isinstance(content, str):
            raise errors.InvalidRequest(f"message {i}: content must be a string, not {type(content).__name__}")
        messages.append({"role": message["role"], "content": content})
    # Thinking off: a summarizer wants the answer, not a reasoning trace. Templates without
    # the switch ignore it.
    return list(tokenizer.apply_chat_template(messages, add_generation_prompt=True, enable_thinking=False))


def count_tokens(request: Request, *, model: str | None = None) -> int:
    """Tokens the request would occupy, chat template included; never waits for the worker."""
    key, path = resolve(model)
    return len(tokenize(request, _tokenizers.get(key, path)))


def _check(max_tokens: int, temperature: float, stop: list[str] | None) -> list[str]:
    if not isinstance(max_tokens, int) or max_tokens <= 0:
        raise errors.InvalidRequest(f"max_tokens must be a positive integer, got {max_tokens!r}")
    if temperature < 0:
        raise errors.InvalidRequest(f"temperature must be >= 0, got {temperature!r}")
    stop = [s for s in (stop or []) if s]
    if not all(isinstance(s, str) for s in stop):
        raise errors.InvalidRequest("stop must be a list of strings")
    return stop


def prompt_cache_stats() -> PromptCacheStats:
    """Prefix-cache hits, misses, evictions, bytes and entries, for `doctor` and /health."""
    return _models.prompts.stats()


def _run(
    job: Job,
    key: str,
    path: Path,
    request: Request,
    max_tokens: int,
    temperature: float,
    stop: list[str],
    emit: Any,
    guard: bool = False,
) -> object:
    """On the worker thread: load (or reuse) the model, check the prompt, and hand the request to
    its model's batch (engine/batched.py), which settles the job's future when it finishes. A
    prompt over the window is refused here, before it can touch the batch."""
    import mlx.core as mx

    start = time.perf_counter()
    loaded, load_s = _models.get(key, path)
    if _batch.refit_threads():  # nothing was in flight: the peak starts afresh
        mx.reset_peak_memory()
    tokens = tokenize(request, loaded.tokenizer)
    window = loaded.context_window
    if len(tokens) > window:
        raise errors.PromptTooLong(
            f"prompt is {len(tokens)} tokens, {len(tokens) - window} over the model's {window}-token window"
        )
    if not tokens:
        raise errors.InvalidRequest("the prompt encodes to no tokens")
    cache, cached = _models.prompts.fetch(key, loaded.model, tokens)
    member = Member(
        job=job,
        key=key,
        tokens=tokens,
        cached=cached,
        max_tokens=min(max_tokens, window - len(tokens)) or 1,
        stop=stop,
        emit=emit,
        detok=loaded.tokenizer.detokenizer,
        eos=set(loaded.tokenizer.eos_token_ids),
        load_s=load_s,
        threads=_batch.threads,
        start=start,
        hold=max((len(s) for s in stop), default=1) - 1,  # text that could still begin a stop string
        guard=RepetitionGuard() if guard else None,
    )
    _batch.add(member, loaded, cache, temperature)
    return DEFERRED


def _result(m: Member) -> GenerationResult:
    """A finished batch member's figures: its own tokens and times, the batch's peak memory."""
    import mlx.core as mx

    loaded = _models.models.get(m.key)
    if loaded is not None:
        loaded.last_used = time.monotonic()
    prompt_s = m.t_first - m.start if m.t_first else 0.0
    decode_s = m.t_end - m.t_first if m.t_first and m.n else 0.0
    return GenerationResult(
        text=m.text,
        finish_reason=m.finish,
        prompt_tokens=len(m.tokens),
        cached_tokens=m.cached,
        generation_tokens=m.n,
        prompt_tps=(len(m.tokens) - m.cached) / prompt_s if prompt_s else 0.0,
        generation_tps=m.n / decode_s if decode_s else 0.0,
        peak_memory_mb=mx.get_peak_memory() / 1e6,
        load_s=m.load_s,
        ttft_s=prompt_s,
        total_s=m.t_end - m.start,
        model=m.key,
        blas_threads=m.threads,
    )


def _submit(
    request: Request,
    model: str | None,
    max_tokens: int,
    temperature: float,
    stop: list[str] | None,
    timeout: float | None,
    emit: Any,
    priority: str | None,
    repetition_guard: bool = False,
) -> Job:
    stop = _check(max_tokens, temperature, stop)
    return submit(
        model,
        timeout,
        priority,
        lambda job, key, path: _run(job, key, path, request, max_tokens, temperature, stop, emit, repetition_guard),
    )


def submit(model: str | None, timeout: float | None, priority: str | None, run: Any) -> Job:
    """Queue `run(job, key, path)` on the worker for `model`, bounded as one engine call: its own
    timeout within the request_scope's deadline, the scope's cancel flag, and its priority (or
    the scope's, re-ranked if the scope's holder is promoted while it waits)."""
    key, path = resolve(model)
    holder = scope_holder(priority)
    deadline, cancel, priority = job_bounds(timeout, priority)
    return _worker.submit(lambda job: run(job, key, path), deadline, cancel, priority, holder)


def generate(
    request: Request,
    *,
    model: str | None = None,
    max_tokens: int = 256,
    temperature: float = 0.0,
    stop: list[str] | None = None,
    timeout: float | None = None,
    priority: str | None = None,
    repetition_guard: bool = False,
) -> GenerationResult:
    """Generate a completion for a prompt string or a list of chat messages; blocks until done.
    `priority="background"` for work no caller waits on yet (default: the request_scope's, else
    "foreground"). `repetition_guard=True` ends the reply once it repeats itself verbatim and
    keeps one copy (finish_reason "repetition"; engine/repetition.py). It is off here, as in
    mlx-lm, because a caller of the engine may want every token (tests drive long generations
    with random tiny models, which loop at once); `hermes-mlx generate` turns it on."""
    return wait(_submit(request, model, max_tokens, temperature, stop, timeout, None, priority, repetition_guard))


def stream_generate(
    request: Request,
    *,
    model: str | None = None,
    max_tokens: int = 256,
    temperature: float = 0.0,
    stop: list[str] | None = None,
    timeout: float | None = None,
    priority: str | None = None,
    repetition_guard: bool = False,
) -> Iterator[GenerationChunk]:
    """Like `generate`, yielding text as it comes; the last chunk carries the result. With
    `repetition_guard`, the copies of a loop already streamed stay streamed; the rest are dropped.

    Closing the iterator early (a client that went away) stops the generation at once.
    """
    chunks: queue.Queue[GenerationChunk] = queue.Queue()
    job = _submit(
        request,
        model,
        max_tokens,
        temperature,
        stop,
        timeout,
        lambda text, result: chunks.put(GenerationChunk(text, result)),
        priority,
        repetition_guard,
    )
    try:
        while True:
            try:
                chunk = chunks.get(timeout=0.1)
            except queue.Empty:
                if job.future.done():
                    if job.future.cancelled():
                        raise errors.Cancelled("the request was cancelled") from None
                    job.future.result()  # raises the job's error, if any
                    if chunks.empty():
                        return
                continue
            yield chunk
            if chunk.result is not None:
                return
    finally:
        job.cancelled.set()


def unload(model: str | None = None) -> None:
    """Drop a model from the warm cache (on the worker, after what is queued)."""
    key, _ = resolve(model)
    wait(_worker.submit(lambda job: _models.unload(key)))


def warm_models() -> list[dict]:
    """What the warm cache holds now, for `doctor` and tests."""
    return [
        {
            "name": m.name,
            "path": str(m.path),
            "weights": m.weights,
            "mb": round(m.nbytes / 1e6, 1),
            "load_s": round(m.load_s, 3),
            "idle_s": round(time.monotonic() - m.last_used, 1),
        }
        for m in list(_models.models.values())
    ]


def engine_state() -> tuple[ModelCache, Worker]:
    return _models, _worker
