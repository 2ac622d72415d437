"""One request pipeline: a request is recognised once, where it enters (server.chat,
provider.create), and what was recognised travels down; the adapter handles every kind."""

import pytest
from fakes import ScriptedSummarizer
from starlette.testclient import TestClient
from test_adapter import EXCHANGE, batch_prompt, hermes_serialize

from hermes_mlx.integrations import adapter, hermes_prompts, inflight, passthrough, provider, server
from hermes_mlx.integrations.hermes_prompts import Kind, Prompt, micro_prompt, recognise
from hermes_mlx.integrations.openai_shapes import parse_request

MICRO = micro_prompt(None, hermes_serialize(EXCHANGE))


@pytest.fixture
def counted(monkeypatch):
    """Every module that recognises a request, counted."""
    calls = []

    def counting(messages):
        calls.append(messages)
        return recognise(messages)

    for module in (server, provider):
        monkeypatch.setattr(module, "recognise", counting)
    monkeypatch.setattr(adapter, "make_summarizer", lambda model, timeout: ScriptedSummarizer(["## Goal\nFix it"]))
    return calls


def test_only_the_entry_points_recognise():
    for module in (adapter, inflight, passthrough):
        assert not hasattr(module, "recognise"), module.__name__


@pytest.mark.parametrize("stream", [False, True])
def test_a_serve_request_is_recognised_once(counted, tiny_model, stream):
    with TestClient(server.build_app(tiny_model), base_url="http://127.0.0.1") as http:
        r = http.post("/v1/chat/completions", json={"messages": MICRO, "stream": stream})
    assert r.status_code == 200 and "Fix it" in r.text
    assert len(counted) == 1


@pytest.mark.parametrize("stream", [False, True])
def test_a_provider_request_is_recognised_once(counted, stream):
    reply = provider.MLXClient().chat.completions.create(model="hermes-mlx-default", messages=MICRO, stream=stream)
    if stream:
        text = "".join(c.choices[0].delta.get("content") or "" for c in reply if c.choices)
    else:
        text = reply.choices[0].message.content
    assert "Fix it" in text
    assert len(counted) == 1


@pytest.mark.parametrize(
    ("messages", "kind", "method"),
    [
        (MICRO, Kind.MICRO, "merge"),
        (micro_prompt(None, "## Goal\nold summary\n\n## Progress\n- a"), Kind.MICRO_DEFRAG, "defrag"),
        (batch_prompt(EXCHANGE), Kind.BATCH, "update"),
        (batch_prompt(EXCHANGE, previous="## Goal\nold"), Kind.BATCH_UPDATE, "update"),
    ],
)
def test_each_compaction_kind_goes_to_its_summarizer_job(messages, kind, method):
    prompt = recognise(messages)
    assert prompt.kind is kind
    fake = ScriptedSummarizer(["## Goal\nFix it"])
    adapter.complete(parse_request({"messages": messages}), prompt, summarizer=fake)
    assert fake.methods() == [method]


def test_a_passthrough_goes_to_the_model_and_an_unknown_kind_is_refused(monkeypatch):
    seen = []
    monkeypatch.setattr(passthrough, "complete", lambda request, model: seen.append(request) or "answered")
    hello = parse_request({"messages": [{"role": "user", "content": "hello"}]})
    assert adapter.complete(hello, recognise(hello.messages)) == "answered" and seen == [hello]
    with pytest.raises(ValueError, match="not a compaction prompt"):
        adapter.complete(hello, Prompt("something-else"), summarizer=ScriptedSummarizer())
    assert set(Kind) == {Kind.MICRO, Kind.MICRO_DEFRAG, Kind.BATCH, Kind.BATCH_UPDATE, Kind.PASSTHROUGH}
    assert hermes_prompts.Kind is Kind
