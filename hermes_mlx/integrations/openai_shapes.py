"""OpenAI chat-completions shapes: one request validator and the response/chunk builders.

The HTTP server and the in-process client both go through here, so Hermes gets the same
answer (and the same one-line error naming the field) whichever path it takes.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

logger = logging.getLogger("hermes_mlx.integrations")

KNOWN_FIELDS = {
    "model", "messages", "max_tokens", "max_completion_tokens", "temperature", "stream",
    "stream_options", "stop", "n", "tools", "functions", "tool_choice", "function_call", "timeout",
}
# Accepted and ignored (sampling knobs and client metadata a summarizer need not honour).
QUIET_FIELDS = {
    "top_p", "presence_penalty", "frequency_penalty", "user", "seed", "logit_bias", "metadata",
    "extra_body", "extra_headers", "extra_query", "reasoning_effort", "reasoning", "store",
    "parallel_tool_calls", "response_format", "logprobs", "top_logprobs", "prompt_cache_key",
    "service_tier", "modalities",
}
TEXT_PART_TYPES = {"text", "input_text"}


class RequestError(ValueError):
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


def _content_text(content: Any, where: str) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise RequestError(where, f"must be a string or a list of text parts, not {type(content).__name__}")
    texts = []
    for j, part in enumerate(content):
        if isinstance(part, str):
            texts.append(part)
            continue
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in TEXT_PART_TYPES and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind in ("image_url", "image", "input_image", "input_audio", "file"):
            raise RequestError(f"{where}[{j}]", f"{kind} parts are not supported: this is a text-only summarizer")
        else:
            raise RequestError(f"{where}[{j}]", f"unsupported content part type {kind!r}")
    return "\n".join(texts)


def _positive_int(body: dict, name: str) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise RequestError(name, f"must be a positive integer, got {value!r}")
    return value


def parse_request(body: Any) -> ChatRequest:
    """Validate an OpenAI chat-completions body. Unknown fields are logged and ignored."""
    if not isinstance(body, dict):
        raise RequestError("body", "must be a JSON object")
    n = body.get("n")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n != 1):
        raise RequestError("n", f"only n=1 is supported, got {n!r}")
    for name in ("tools", "functions"):
        if body.get(name):
            raise RequestError(name, "tool calling is not supported by this summarizer")
    for name in ("tool_choice", "function_call"):
        if body.get(name) not in (None, "none", "auto"):
            raise RequestError(name, "tool calling is not supported by this summarizer")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError("messages", "must be a non-empty list of messages")
    clean = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise RequestError(f"messages[{i}]", "must be an object with a string 'role'")
        if message.get("tool_calls"):
            # A transcript with tool calls as structure: keep the text, name the calls.
            names = [((c or {}).get("function") or {}).get("name", "?") for c in message["tool_calls"] if isinstance(c, dict)]
            text = _content_text(message.get("content"), f"messages[{i}].content")
            clean.append({"role": message["role"], "content": (text + f"\n[Tool calls: {', '.join(names)}]").strip()})
            continue
        clean.append({"role": message["role"], "content": _content_text(message.get("content"), f"messages[{i}].content")})
    model = body.get("model")
    if model is not None and not isinstance(model, str):
        raise RequestError("model", f"must be a string, got {type(model).__name__}")
    max_tokens = _positive_int(body, "max_tokens")
    if max_tokens is None:
        max_tokens = _positive_int(body, "max_completion_tokens")
    temperature = body.get("temperature")
    if temperature is not None:
        if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or temperature < 0:
            raise RequestError("temperature", f"must be a number >= 0, got {temperature!r}")
        temperature = float(temperature)
    stop = body.get("stop")
    if stop is None:
        stop = []
    elif isinstance(stop, str):
        stop = [stop]
    elif not isinstance(stop, list) or not all(isinstance(s, str) for s in stop):
        raise RequestError("stop", "must be a string or a list of strings")
    stream = body.get("stream", False)
    if stream is None:
        stream = False
    if not isinstance(stream, bool):
        raise RequestError("stream", f"must be true or false, got {stream!r}")
    options = body.get("stream_options") or {}
    include_usage = bool(options.get("include_usage")) if isinstance(options, dict) else False
    timeout = body.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        timeout = None  # an httpx.Timeout object or nonsense: the engine's own limits apply
    ignored = sorted(k for k in body if k not in KNOWN_FIELDS)
    unknown = [k for k in ignored if k not in QUIET_FIELDS]
    if ignored:
        logger.debug("ignoring request fields: %s%s", ", ".join(ignored), " (unknown)" if unknown else "")
    return ChatRequest(
        messages=clean, model=model or None, max_tokens=max_tokens, temperature=temperature, stream=stream,
        include_usage=include_usage, stop=[s for s in stop if s], timeout=float(timeout) if timeout else None,
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


def completion(text: str, finish_reason: str, model: str, usage_dict: dict, *, id: str | None = None,
               created: int | None = None) -> dict:
    """A `chat.completion` object as plain JSON-ready dicts."""
    return {
        "id": id or completion_id(),
        "object": "chat.completion",
        "created": created or int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}],
        "usage": usage_dict,
    }


def chunk(id: str, model: str, created: int, *, content: str | None = None, role: str | None = None,
          finish_reason: str | None = None, usage_dict: dict | None = None, empty_choices: bool = False) -> dict:
    """A `chat.completion.chunk`; `empty_choices` makes the trailing usage-only chunk."""
    delta: dict = {}
    if role:
        delta["role"] = role
    if content is not None:
        delta["content"] = content
    out = {
        "id": id, "object": "chat.completion.chunk", "created": created, "model": model,
        "choices": [] if empty_choices else [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }
    if usage_dict is not None:
        out["usage"] = usage_dict
    return out


def error_body(message: str, field_name: str | None = None, kind: str = "invalid_request_error") -> dict:
    return {"error": {"message": message, "type": kind, "param": field_name, "code": None}}


def finish_reason(engine_reason: str) -> str:
    """The engine says stop|length|deadline; OpenAI clients know stop|length."""
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
