"""Hermes's prompts recognised by their structure, not their wording: each prompt below is
reworded (labels, preamble, section names) the way Hermes rewords them between releases and
keeps its structure; the separate defrag prompt is written from upstream PR #104486's
description (a mode of its own that asks for the rolling summary at most half as long)."""

from fakes import ScriptedSummarizer
from hermes_templates import FORK_TEMPLATE, hermes_batch_prompt
from test_adapter import EXCHANGE, TURNS
from test_ahead import create, schedule

from hermes_mlx.compactor import ahead
from hermes_mlx.integrations import adapter, provider
from hermes_mlx.integrations.hermes_prompts import Kind, micro_prompt, recognise
from hermes_mlx.integrations.hermes_wire import hermes_serialize

SUMMARY = "## Goal\nShip the export\n\n## Progress\n- found the rounding bug in csv_export.py"


def message(text):
    return [{"role": "user", "content": text}]


def test_a_reworded_first_batch_prompt():
    text = f"""Condense the transcript for a handoff.

CONVERSATION:
{hermes_serialize(TURNS)}

MEMORY PROVIDER CONTEXT:
<memory-provider-context>"recall: none"</memory-provider-context>

Follow this layout:

{FORK_TEMPLATE.format(budget=5500)}"""
    p = recognise(message(text))
    assert p.kind == Kind.BATCH and p.summary is None
    assert [m["role"] for m in p.turns] == [m["role"] for m in TURNS]
    assert "memory-provider-context" not in p.turns[-1]["content"]
    assert (
        p.budget_tokens == 1500 and p.layout
    )  # the target less the lean session log's 4,000[0].title == "Historical Task Snapshot"


def test_a_reworded_update_prompt_finds_the_previous_summary_before_the_turns():
    text = f"""Refresh the handoff.

EARLIER HANDOFF:
{SUMMARY}

NOTE: a label-looking line inside the summary stays in it

LATEST TURNS:
{hermes_serialize(TURNS)}

Refresh it in this layout:

{FORK_TEMPLATE.format(budget=900)}"""
    p = recognise(message(text))
    assert p.kind == Kind.BATCH_UPDATE
    assert p.summary.startswith("## Goal\nShip the export") and "NOTE: a label-looking" in p.summary
    assert p.turns[0]["content"] == TURNS[0]["content"]


def test_the_forks_own_prompts_still_read_the_same():
    first = recognise(hermes_batch_prompt(TURNS))
    update = recognise(hermes_batch_prompt(TURNS, previous=SUMMARY))
    assert first.kind == Kind.BATCH and update.kind == Kind.BATCH_UPDATE and update.summary == SUMMARY
    assert len(first.turns) == len(update.turns) == len(TURNS)


def test_a_reworded_micro_prompt():
    text = (
        "Fold the next exchange into the rolling record.\n\n"
        f"## Rolling Record\n{SUMMARY}\n\n## Exchange\n{hermes_serialize(EXCHANGE)}\n\n"
        "Return the record only."
    )
    p = recognise(message(text))
    assert p.kind == Kind.MICRO and p.summary == SUMMARY
    assert [m["role"] for m in p.turns] == [m["role"] for m in EXCHANGE]
    assert p.turns[-1]["content"] == EXCHANGE[-1]["content"]  # the closing instruction is not the exchange's


def test_a_first_micro_prompt_has_no_summary_and_the_fork_defrag_is_a_defrag():
    first = recognise(micro_prompt(None, hermes_serialize(EXCHANGE)))
    assert first.kind == Kind.MICRO and first.summary is None
    defrag = recognise(micro_prompt(None, SUMMARY))
    assert defrag.kind == Kind.MICRO_DEFRAG and defrag.text == SUMMARY


DEFRAG_104486 = (
    "You are a summarization agent. The running summary below has grown too long. Rewrite it to at most "
    "half its current length (at most 2,000 characters) while preserving key decisions, requirements, "
    "file paths, and open questions.\n\n"
    "NEVER include API keys, tokens, passwords, secrets, credentials, or connection strings.\n\n"
    f"## Current Running Summary\n{SUMMARY}\n\n"
    "Return ONLY the rewritten summary text, no preamble or explanation."
)


def test_a_defrag_prompt_of_its_own_is_a_defrag_with_its_bound():
    p = recognise(message(DEFRAG_104486))
    assert p.kind == Kind.MICRO_DEFRAG
    assert "found the rounding bug" in p.text and "Return ONLY" not in p.text
    assert p.budget_tokens == 500  # 2,000 characters, Hermes's four to a token


def test_a_defrag_of_its_own_is_answered_within_its_bound(monkeypatch):
    fake = ScriptedSummarizer()
    monkeypatch.setattr(adapter, "make_summarizer", lambda model, timeout: fake)
    monkeypatch.setattr(adapter, "hermes_settings", lambda: type("S", (), {"defrag_threshold_tokens": 4000})())
    from hermes_mlx.integrations.openai_shapes import parse_request

    request = parse_request({"messages": message(DEFRAG_104486)})
    adapter.complete(request, recognise(request.messages))
    assert fake.methods() == ["defrag"] and fake.calls[0][1]["budget_tokens"] <= 500


def test_the_ahead_guess_of_a_separate_defrag_prompt_is_used(monkeypatch):
    fake = ScriptedSummarizer()
    monkeypatch.setattr(adapter, "make_summarizer", lambda model, timeout: fake)
    messages = [
        {"role": "system", "content": "You are a conversation summarization assistant."},
        *message(DEFRAG_104486),
    ]
    client = provider.MLXClient()
    monkeypatch.setattr(provider, "_micro_shape", dict(provider._FIRST_GUESS))  # no request seen before this test
    monkeypatch.setenv(ahead.ENV_SWITCH, "0")
    create(client, messages)  # a first request, answered as usual, shows the provider Hermes's request fields
    monkeypatch.delenv(ahead.ENV_SWITCH)
    ahead.CACHE.clear()
    schedule(messages)
    create(client, messages)
    assert fake.methods() == ["defrag", "defrag"] and ahead.CACHE.stats.hits == 1


def test_markdown_that_is_no_compaction_prompt_passes_through():
    assert recognise(message("## Setup\nHow do I install it?\n\n## Notes\nThanks")).kind == Kind.PASSTHROUGH
    assert recognise(message("PLAN:\n- a\n\n## Goal\n[what]\n")).kind == Kind.PASSTHROUGH  # one bracketed heading
