"""OpenAI chat-completions shapes: one request validator and the response/chunk builders.

The HTTP server and the in-process client both go through here, so Hermes gets the same
answer (and the same one-line error naming the field) whichever path it takes.
"""

from __future__ import annotations

import logging
import math
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from hermes_mlx.errors import UsageError

logger = logging.getLogger("hermes_mlx.integrations")

KNOWN_FIELDS = {
    "model",
    "messages",
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "stream",
    "stream_options",
    "stop",
    "n",
    "tools",
    "functions",
    "tool_choice",
    "function_call",
    "timeout",
}
# Accepted and ignored (sampling knobs and client metadata a summarizer need not honour).
QUIET_FIELDS = {
    "top_p",
    "presence_penalty",
    "frequency_penalty",
    "user",
    "seed",
    "logit_bias",
    "metadata",
    "extra_body",
    "extra_headers",
    "extra_query",
    "reasoning_effort",
    "reasoning",
    "store",
    "parallel_tool_calls",
    "response_format",
    "logprobs",
    "top_logprobs",
    "prompt_cache_key",
    "service_tier",
    "modalities",
}
TEXT_PART_TYPES = {"text", "input_text"}
MAX_OUTPUT_TOKENS = 32768  # max_tokens above this is a mistake or an attack; no local model writes that much
MAX_STOP = 4  # as OpenAI
MAX_MODEL_NAME = 1024


class RequestError(UsageError):
    """A request we will not run as given; `field` names what to fix (HTTP 400)."""

    def __init__(self, field_name: str, message: str):
        super().__init__(f"{field_name}: {message}")
        self.field = field_name


@dataclass
class ChatRequest:
    messages: list[dict]  # role + plain-string content, ready for the engine
    model: str | None = None
    max_tokens: int | None = None  # None: the adapter applies its own cap
    temperature: float | None = None
    stream: bool = False
    include_usage: bool = False
    stop: list[str] = field(default_factory=list)
    timeout: float | None = None
    ignored: list[str] = field(default_factory=list)


def _text(value: str, where: str) -> str:
    """`value` if it can be written as UTF-8; a lone surrogate (JSON's \\ud800) would otherwise
    fail deep inside the tokenizer or the response as a 500."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise RequestError(where, f"is not valid Unicode text (a lone surrogate at character {exc.start})") from None
    return value


def _content_text(content: Any, where: str) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return _text(content, where)
    if not isinstance(content, list):
        raise RequestError(where, f"must be a string or a list of text parts, not {type(content).__name__}")
    texts = []
    for j, part in enumerate(content):
        if isinstance(part, str):
            texts.append(_text(part, f"{where}[{j}]"))
            continue
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in TEXT_PART_TYPES and isinstance(part.get("text"), str):
            texts.append(_text(part["text"], f"{where}[{j}]"))
        elif kind in ("image_url", "image", "input_image", "input_audio", "file"):
            raise RequestError(f"{where}[{j}]", f"{kind} parts are not supported: this is a text-only summarizer")
        else:
            raise RequestError(f"{where}[{j}]", f"unsupported content part type {_short(kind)}")
    return "\n".join(texts)


def _short(value: Any) -> str:
    """A client's value quoted in an error: repr (escapes surrogates), and never a megabyte of it."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _positive_int(body: dict, name: str, cap: int) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= cap:
        raise RequestError(name, f"must be an integer from 1 to {cap}, got {_short(value)}")
    return value


def _number(body: dict, name: str, low: float, high: float, low_open: bool = False) -> float | None:
    """A finite number in [low, high] (or (low, high]); NaN, infinities and 1e308 are refused."""
    value = body.get(name)
    if value is None:
        return None
    ok = not isinstance(value, bool) and isinstance(value, (int, float))
    try:
        number = float(value) if ok else math.nan
    except OverflowError:  # an int too big for a float
        number = math.inf
    if not (math.isfinite(number) and (low < number if low_open else low <= number) and number <= high):
        span = f"{'(' if low_open else '['}{low:g}, {high:g}]"
        raise RequestError(name, f"must be a number in {span}, got {_short(value)}")
    return number


def _stop(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or len(value) > MAX_STOP or not all(isinstance(s, str) for s in value):
        raise RequestError("stop", f"must be a string or a list of up to {MAX_STOP} strings")
    return [_text(s, "stop") for s in value if s]


def _message(message: Any, i: int) -> dict:
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        raise RequestError(f"messages[{i}]", "must be an object with a string 'role'")
    role = _text(message["role"], f"messages[{i}].role")
    text = _content_text(message.get("content"), f"messages[{i}].content")
    calls = message.get("tool_calls")
    if calls:
        # A transcript with tool calls as structure: keep the text, name the calls.
        if not isinstance(calls, list):
            raise RequestError(f"messages[{i}].tool_calls", "must be a list")
        names = []
        for call in calls:
            function = call.get("function") if isinstance(call, dict) else None
            name = function.get("name") if isinstance(function, dict) else None
            names.append(_text(name, f"messages[{i}].tool_calls") if isinstance(name, str) else "?")
        text = (text + f"\n[Tool calls: {', '.join(names)}]").strip()
    return {"role": role, "content": text}


def parse_request(body: Any) -> ChatRequest:
    """Validate an OpenAI chat-completions body. Unknown fields are logged and ignored; sampling
    values are checked even where ignored (top_p), so nonsense is named rather than run."""
    if not isinstance(body, dict):
        raise RequestError("body", "must be a JSON object")
    n = body.get("n")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n != 1):
        raise RequestError("n", f"only n=1 is supported, got {_short(n)}")
    for name in ("tools", "functions"):
        if body.get(name):
            raise RequestError(name, "tool calling is not supported by this summarizer")
    for name in ("tool_choice", "function_call"):
        if body.get(name) not in (None, "none", "auto"):
            raise RequestError(name, "tool calling is not supported by this summarizer")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError("messages", "must be a non-empty list of messages")
    clean = [_message(message, i) for i, message in enumerate(messages)]
    model = body.get("model")
    if model is not None and not isinstance(model, str):
        raise RequestError("model", f"must be a string, got {type(model).__name__}")
    if model is not None and len(_text(model, "model")) > MAX_MODEL_NAME:
        raise RequestError("model", f"is longer than {MAX_MODEL_NAME} characters")
    max_tokens = _positive_int(body, "max_tokens", MAX_OUTPUT_TOKENS)
    if max_tokens is None:
        max_tokens = _positive_int(body, "max_completion_tokens", MAX_OUTPUT_TOKENS)
    temperature = _number(body, "temperature", 0.0, 2.0)
    _number(body, "top_p", 0.0, 1.0, low_open=True)  # checked, then ignored: we sample greedily or by temperature
    stop = _stop(body.get("stop"))
    stream = body.get("stream", False)
    if stream is None:
        stream = False
    if not isinstance(stream, bool):
        raise RequestError("stream", f"must be true or false, got {_short(stream)}")
    options = body.get("stream_options") or {}
    include_usage = bool(options.get("include_usage")) if isinstance(options, dict) else False
    timeout = body.get("timeout")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 1e7:
        timeout = None  # an httpx.Timeout object, NaN or nonsense: the server's own deadline applies
    ignored = sorted(k for k in body if k not in KNOWN_FIELDS)
    unknown = [k for k in ignored if k not in QUIET_FIELDS]
    if ignored:
        logger.debug(
            "ignoring request fields: %s%s", ", ".join(_short(k) for k in ignored), " (unknown)" if unknown else ""
        )
    return ChatRequest(
        messages=clean,
        model=model or None,
        max_tokens=max_tokens,
        temperature=temperature,
        stream=stream,
        include_usage=include_usage,
        stop=stop,
        timeout=float(timeout) if timeout else None,
        ignored=ignored,
    )


# ------------------------------------------------------------------------------------ responses


def completion_id() -> str:
    return "chatcmpl-" + uuid.uuid4().hex[:24]


def usage(prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> dict:
    return {
        "prompt_tokens": int(prompt_tokens),
        "completion_tokens": int(completion_tokens),
        "total_tokens": int(prompt_tokens) + int(completion_tokens),
        "prompt_tokens_details": {"cached_tokens": int(cached_tokens)},
    }


def completion(
    text: str, finish_reason: str, model: str, usage_dict: dict, *, id: str | None = None, created: int | None = None
) -> dict:
    """A `chat.completion` object as plain JSON-ready dicts."""
    return {
        "id": id or completion_id(),
        "object": "chat.completion",
        "created": created or int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}],
        "usage": usage_dict,
    }


def chunk(
    id: str,
    model: str,
    created: int,
    *,
    content: str | None = None,
    role: str | None = None,
    finish_reason: str | None = None,
    usage_dict: dict | None = None,
    empty_choices: bool = False,
) -> dict:
    """A `chat.completion.chunk`; `empty_choices` makes the trailing usage-only chunk."""
    delta: dict = {}
    if role:
        delta["role"] = role
    if content is not None:
        delta["content"] = content
    out = {
        "id": id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [] if empty_choices else [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }
    if usage_dict is not None:
        out["usage"] = usage_dict
    return out


def stream_chunks(
    pieces: Iterable[tuple[str, Any]], id: str, label: str, created: int, include_usage: bool
) -> Iterator[dict]:
    """The `chat.completion.chunk`s after the role chunk, for the adapter's (text, None)... then
    ("", Completion) pieces. The server and the in-process client both stream through here, so
    usage goes out the same way on both: in the finish chunk, or, when the caller asked for
    `stream_options.include_usage` (Hermes does), in the trailing usage-only chunk OpenAI sends.
    The caller owns `pieces` and closes it."""
    for text, done in pieces:
        if done is None:
            yield chunk(id, label, created, content=text)
            continue
        model = done.model or label
        u = usage(done.prompt_tokens, done.completion_tokens, done.cached_tokens)
        yield chunk(id, model, created, finish_reason=done.finish_reason, usage_dict=None if include_usage else u)
        if include_usage:
            yield chunk(id, model, created, usage_dict=u, empty_choices=True)


def error_body(message: str, field_name: str | None = None, kind: str = "invalid_request_error") -> dict:
    return {"error": {"message": message, "type": kind, "param": field_name, "code": None}}


def finish_reason(engine_reason: str) -> str:
    """The engine says stop|length|deadline|repetition; OpenAI clients know stop|length. A reply
    the repetition guard ended is complete as far as the client can tell: "stop"."""
    return "length" if engine_reason in ("length", "deadline") else "stop"


class Obj(dict):
    """A response dict that also reads as attributes, like the openai SDK's objects.

    Hermes reads `response.choices[0].message.content` and, for some shapes,
    `message.get("content")`; a dict subclass with attribute access serves both.
    """

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def model_dump(self, **_: Any) -> dict:
        return _plain(self)

    def to_dict(self) -> dict:
        return _plain(self)


def wrap(value: Any) -> Any:
    """Plain dicts/lists to `Obj` trees."""
    if isinstance(value, dict):
        return Obj({k: wrap(v) for k, v in value.items()})
    if isinstance(value, list):
        return [wrap(v) for v in value]
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
