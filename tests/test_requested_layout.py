"""A batch answer comes in the structure its prompt asks for: the template's headings, in its
order, each once, ours mapped onto them by meaning, the template's own word where we have
nothing, nothing before the first heading. Prompts: the 0.22 fork's template and the
continuation schema of upstream PR #85291 (tests/hermes_templates.py)."""

import re

import pytest
from hermes_templates import (
    CONTINUATION_NO_USER_TEMPLATE,
    CONTINUATION_TEMPLATE,
    FORK_HEADINGS,
    FORK_TEMPLATE,
    hermes_batch_prompt,
)
from summarizer_fakes import FakeModel, call, count
from test_adapter import batch_prompt
from upstream_checks import NO_USER_VALUES, compaction_summary_threats, continuation_errors

from hermes_mlx.integrations import adapter
from hermes_mlx.integrations.hermes_prompts import Kind, micro_prompt, recognise
from hermes_mlx.integrations.hermes_wire import hermes_serialize
from hermes_mlx.integrations.openai_shapes import parse_request
from hermes_mlx.summarizer import summary as our
from hermes_mlx.summarizer.requested_layout import (
    PLACEMENT,
    drop_empty,
    meaning,
    place,
    read_layout,
    render_requested,
)
from hermes_mlx.summarizer.summarizer import MLXSummarizer

TURNS = [
    {"role": "user", "content": "Fix the CSV export rounding. Do not touch the ledger schema."},
    {
        "role": "assistant",
        "content": "Running the export tests.",
        "tool_calls": [call("c1", "terminal", command="pytest tests/test_export.py -q")],
    },
    {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "FAILED tests/test_export.py::test_round - AssertionError\n1 failed",
    },
    {
        "role": "assistant",
        "content": "Decided to round with Decimal.quantize in ledgerly/export/csv_export.py. Next: rerun the tests.",
        "tool_calls": [call("c2", "read_file", path="ledgerly/export/csv_export.py")],
    },
    {"role": "tool", "tool_call_id": "c2", "content": "def export(rows): ..."},
    {"role": "assistant", "content": "The rounding happens in ledgerly/export/csv_export.py line 41."},
]


def answer(messages, **kw):
    s = MLXSummarizer(score=FakeModel().score, count_tokens=count, context_window=8192)  # no model
    request = parse_request({"messages": messages, **kw})
    return adapter.complete(request, recognise(request.messages), summarizer=s)


def titles(text):
    return re.findall(r"^## (.+)$", text, re.M)


def section(text, title):
    return re.search(rf"(?ms)^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text).group(1).strip()


def test_the_fork_template_is_read_by_structure():
    layout = read_layout(hermes_batch_prompt(TURNS)[0]["content"])
    assert [h.title for h in layout] == FORK_HEADINGS
    by = {h.title: h for h in layout}
    assert by["Pruned Skills"].optional and not by["Critical Context"].optional  # "omit this section entirely"
    assert by["Historical Task Snapshot"].empty == "None"  # the template's own word
    assert all(h.fixed is None for h in layout)


def test_a_previous_summary_with_headings_is_not_the_template():
    previous = "## Goal\nShip it\n\n## Relevant Files\n[read_file] a.py\n\n## Critical Context\n[REDACTED] key"
    layout = read_layout(hermes_batch_prompt(TURNS, previous=previous)[0]["content"])
    assert [h.title for h in layout] == FORK_HEADINGS


def test_no_template_no_requested_layout():
    assert read_layout("## Goal\nx\n\n## Progress\n- a") == []
    assert read_layout("one heading\n\n## Goal\n[what]\n") == []


def test_the_fork_prompt_is_answered_in_its_headings_with_ours_mapped_by_meaning():
    done = answer(hermes_batch_prompt(TURNS))
    assert done.kind == Kind.BATCH
    assert done.text.startswith("## Historical Task Snapshot\n")  # nothing before the first heading
    assert titles(done.text) == FORK_HEADINGS[:-1]  # each once, in order; the optional one left out
    assert "pytest tests/test_export.py -q" in section(done.text, "Completed Actions")  # commands
    assert "ledgerly/export/csv_export.py" in section(done.text, "Relevant Files")
    assert "Decimal.quantize" in section(done.text, "Completed Actions")  # outcomes
    assert "FAILED tests/test_export.py::test_round" in section(done.text, "Active State")  # the open error
    assert "Fix the CSV export rounding" in done.text  # the user's words, verbatim
    # ... but not under the task snapshot: Hermes overwrites that section with its own (0.19 and 0.22)
    assert "Fix the CSV export rounding" not in section(done.text, "Historical Task Snapshot")
    assert section(done.text, "Resolved Questions") == "None"


def test_the_continuation_schema_prompt_is_answered_so_upstream_accepts_it():
    done = answer(hermes_batch_prompt(TURNS, CONTINUATION_TEMPLATE))
    assert titles(done.text)[:5] == [
        "Historical Task Snapshot",
        "Governing User Outcome",
        "Current Subtask",
        "Latest User Correction",
        "Next Outcome-Relevant Step (Reference Only)",
    ]
    assert "Goal" not in titles(done.text)  # a competing reserved heading would be rejected
    assert continuation_errors(done.text, has_user_turn=True) == []
    assert compaction_summary_threats(done.text) == []


OURS = """## Goal
Ship the export fix

## Constraints & Preferences
- keep the ledger schema

## User Messages
- Fix the CSV export rounding.

## Progress
- Rounded with Decimal.quantize

## Decisions
- Use Decimal, not float

## Open Questions
- Which locale?

## Current State
- Open error: `AssertionError`

## Next Steps
- rerun the tests

## Files
- `a.py` (read)

## Commands
- `pytest -q` → 1 failed

## Errors
- `AssertionError`

## Resolved Errors
- `ImportError`

## URLs
- https://example.com/issue/1

## Identifiers
`abc123`
"""

WHERE = {  # ours -> the fork's heading, the continuation schema's heading
    "Ship the export fix": ("Goal", "Governing User Outcome"),
    "keep the ledger schema": ("Constraints & Preferences", "Constraints & Preferences"),
    "Fix the CSV export rounding.": ("Constraints & Preferences", "Constraints & Preferences"),
    "Decimal.quantize": ("Completed Actions", "Completed Actions"),
    "Use Decimal, not float": ("Key Decisions", "Key Decisions"),
    "Which locale?": ("Blocked", "Blocked"),
    "Open error": ("Active State", "Active State"),
    "rerun the tests": ("Active State", "Next Outcome-Relevant Step (Reference Only)"),
    "`a.py` (read)": ("Relevant Files", "Relevant Files"),
    "`pytest -q`": ("Completed Actions", "Completed Actions"),
    "- `AssertionError`": ("Blocked", "Blocked"),
    "`ImportError`": ("Errors & Fixes", "Completed Actions"),
    "https://example.com/issue/1": ("Critical Context", "Critical Context"),
    "`abc123`": ("Critical Context", "Critical Context"),
}


@pytest.mark.parametrize("k,template", [(0, FORK_TEMPLATE), (1, CONTINUATION_TEMPLATE)])
def test_each_of_our_sections_goes_under_the_heading_that_means_it(k, template):
    text = render_requested(OURS, read_layout(template.format(budget=1)))
    for needle, headings in WHERE.items():
        assert needle in section(text, headings[k]), (needle, headings[k])


def test_with_no_user_turn_the_templates_exact_values_are_written():
    machine = [m for m in TURNS if m["role"] != "user"]
    done = answer(hermes_batch_prompt(machine, CONTINUATION_NO_USER_TEMPLATE))
    for heading, value in NO_USER_VALUES.items():
        assert section(done.text, heading[3:]) == value
    assert section(done.text, "Resolved Questions") == "None. No user-authored questions exist."
    assert continuation_errors(done.text, has_user_turn=False) == []


def test_an_update_prompt_keeps_the_previous_summary_under_the_requested_headings():
    first = answer(hermes_batch_prompt(TURNS)).text
    later = [{"role": "user", "content": "Now add a test for negative amounts."}, TURNS[-1]]
    done = answer(hermes_batch_prompt(later, previous=first))
    assert done.kind == Kind.BATCH_UPDATE and titles(done.text) == FORK_HEADINGS[:-1]
    assert "pytest tests/test_export.py -q" in done.text and "negative amounts" in done.text


def test_our_layout_stays_where_no_template_is_asked_for():
    done = answer(batch_prompt(TURNS))  # test_adapter's template: three headings
    assert titles(done.text) == ["Historical Task Snapshot", "Goal", "Critical Context"]
    micro = recognise(hermes_batch_prompt(TURNS)[:0] + [{"role": "user", "content": "hello"}])
    assert micro.kind == Kind.PASSTHROUGH and micro.layout == []


@pytest.mark.parametrize("section_name", sorted(PLACEMENT))
def test_every_section_of_ours_has_a_place_in_the_fork_template(section_name):
    layout = read_layout(FORK_TEMPLATE.format(budget=1))
    assert place(section_name, layout).title in FORK_HEADINGS


def test_the_table_covers_every_section_constant_of_the_summary():
    from hermes_mlx.summarizer import ledger

    constants = {
        v
        for k, v in vars(our).items()
        if k.isupper() and isinstance(v, str) and not k.startswith("MARKER") and k not in vars(ledger)  # its own
    }
    assert constants <= set(PLACEMENT), constants - set(PLACEMENT)


def test_meanings_read_the_continuation_headings():
    assert meaning("Next Outcome-Relevant Step (Reference Only)") == "next_step"
    assert meaning("Governing User Outcome") == "goal"
    assert meaning("Current Subtask") == "subtask"
    assert meaning("Resolved Questions") == "resolved"


def test_a_heading_we_carry_over_keeps_its_name_when_requested():
    layout = read_layout(FORK_TEMPLATE.format(budget=1))
    text = render_requested("## Historical Task Snapshot\nUser asked for X\n\n## Earlier Summary\nold", layout)
    assert section(text, "Historical Task Snapshot") == "User asked for X"
    assert section(text, "Critical Context") == "old"


def test_a_summary_in_the_template_read_back_drops_the_empty_headings():
    first = answer(hermes_batch_prompt(TURNS)).text
    assert "## Resolved Questions\nNone" in first
    back = drop_empty(first)
    assert "Resolved Questions" not in back and "## Completed Actions" in back
    assert our.parse(back).extras == [e for e in our.parse(back).extras if e[1].strip() != "None"]
    micro = answer(micro_prompt(first, hermes_serialize(TURNS[1:3])))  # Hermes reloads it as its rolling summary
    assert "Resolved Questions" not in micro.text and "pytest tests/test_export.py -q" in micro.text
