"""Request validation and the OpenAI response shapes shared by the server and the in-process client."""

import logging

import pytest

from hermes_mlx.integrations.openai_shapes import (
    RequestError,
    chunk,
    completion,
    finish_reason,
    parse_request,
    stream_chunks,
    usage,
    wrap,
)

MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"}]


def test_minimal_request_defaults():
    req = parse_request({"messages": MESSAGES})
    assert req.messages == MESSAGES
    assert req.model is None and req.max_tokens is None and req.temperature is None
    assert req.stream is False and req.stop == [] and req.ignored == []


def test_fields_are_read():
    req = parse_request(
        {
            "model": "m",
            "messages": MESSAGES,
            "max_completion_tokens": 7,
            "temperature": 0.1,
            "stream": True,
            "stream_options": {"include_usage": True},
            "stop": "###",
            "n": 1,
        }
    )
    assert (req.model, req.max_tokens, req.temperature, req.stream, req.include_usage, req.stop) == (
        "m",
        7,
        0.1,
        True,
        True,
        ["###"],
    )


def test_text_parts_are_joined_and_none_content_is_empty():
    req = parse_request(
        {
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "a"}, "b"]},
                {"role": "assistant", "content": None},
            ]
        }
    )
    assert req.messages == [{"role": "user", "content": "a\nb"}, {"role": "assistant", "content": ""}]


@pytest.mark.parametrize(
    "body, field",
    [
        ({"messages": MESSAGES, "n": 2}, "n"),
        ({"messages": MESSAGES, "tools": [{"type": "function", "function": {"name": "f"}}]}, "tools"),
        ({"messages": MESSAGES, "functions": [{"name": "f"}]}, "functions"),
        ({"messages": MESSAGES, "tool_choice": "required"}, "tool_choice"),
        (
            {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]},
            "messages[0].content[0]",
        ),
        ({"messages": []}, "messages"),
        ({"messages": "hi"}, "messages"),
        ({"messages": [{"content": "no role"}]}, "messages[0]"),
        ({"messages": MESSAGES, "max_tokens": 0}, "max_tokens"),
        ({"messages": MESSAGES, "max_tokens": "10"}, "max_tokens"),
        ({"messages": MESSAGES, "temperature": -1}, "temperature"),
        ({"messages": MESSAGES, "stop": [1]}, "stop"),
        ({"messages": MESSAGES, "stream": "yes"}, "stream"),
        ({"messages": MESSAGES, "model": 3}, "model"),
        ([], "body"),
    ],
)
def test_bad_input_names_the_field(body, field):
    with pytest.raises(RequestError) as err:
        parse_request(body)
    assert err.value.field == field
    assert str(err.value).startswith(field + ":")
    assert isinstance(err.value, ValueError)


def test_unknown_fields_are_ignored_with_a_debug_log(caplog):
    with caplog.at_level(logging.DEBUG, logger="hermes_mlx.integrations"):
        req = parse_request({"messages": MESSAGES, "frobnicate": 1, "top_p": 0.5, "extra_body": {"x": 1}})
    assert req.ignored == ["extra_body", "frobnicate", "top_p"]
    assert any("frobnicate" in r.getMessage() and r.levelno == logging.DEBUG for r in caplog.records)


def test_completion_shape_reads_as_dict_and_attributes():
    body = completion("sum", "stop", "m", usage(10, 3, 4))
    assert body["object"] == "chat.completion"
    obj = wrap(body)
    assert obj.choices[0].message.content == "sum"
    assert obj.choices[0].message.get("content") == "sum"
    assert obj.choices[0].finish_reason == "stop"
    assert obj.usage.prompt_tokens_details.cached_tokens == 4
    assert obj.usage.total_tokens == 13
    assert obj.model_dump() == body
    with pytest.raises(AttributeError):
        _ = obj.nope


def test_chunks():
    first = chunk("id", "m", 1, role="assistant", content="")
    assert first["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    last = chunk("id", "m", 1, finish_reason="length", usage_dict=usage(1, 2))
    assert last["choices"][0]["finish_reason"] == "length" and last["usage"]["completion_tokens"] == 2
    tail = chunk("id", "m", 1, usage_dict=usage(1, 2), empty_choices=True)
    assert tail["choices"] == [] and tail["object"] == "chat.completion.chunk"


def _pieces():
    from hermes_mlx.integrations.passthrough import Completion

    done = Completion(text="ab", finish_reason="stop", prompt_tokens=7, completion_tokens=2, model="tiny")
    return iter([("a", None), ("b", None), ("", done)])


def test_stream_chunks_put_usage_in_the_finish_chunk_unless_asked_for_the_usage_chunk():
    plain = list(stream_chunks(_pieces(), "id", "label", 1, include_usage=False))
    assert [c["choices"][0]["delta"].get("content") for c in plain] == ["a", "b", None]
    assert plain[-1]["choices"][0]["finish_reason"] == "stop" and plain[-1]["usage"]["total_tokens"] == 9
    assert plain[-1]["model"] == "tiny" and plain[0]["model"] == "label"
    asked = list(stream_chunks(_pieces(), "id", "label", 1, include_usage=True))
    assert len(asked) == 4 and "usage" not in asked[2] and asked[2]["choices"][0]["finish_reason"] == "stop"
    assert asked[-1]["choices"] == [] and asked[-1]["usage"]["completion_tokens"] == 2


def test_finish_reasons_map_to_openai_words():
    assert [finish_reason(r) for r in ("stop", "length", "deadline", "repetition")] == [
        "stop",
        "length",
        "length",
        "stop",
    ]
