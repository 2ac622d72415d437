"""Where a finding comes from: a short list read with its lead-in, and the notes a todo tool keeps on
the steps it marks done.

Each shape is one that real sessions of two agents or sessions show (named per test); the checks go
through `findings.candidates` and through a whole batch pass of the summarizer, as a user's runs do.
"""

import json

import pytest

from hermes_mlx.summarizer import MLXSummarizer
from hermes_mlx.summarizer.digest import done_notes, plan_state
from hermes_mlx.summarizer.findings import candidates
from hermes_mlx.summarizer.sentences import paragraphs
from hermes_mlx.summarizer.summary import parse
from hermes_mlx.summarizer.text import ToolCall, Turn, normalize


def _texts(messages: list[dict]) -> list[str]:
    return [c[0] for c in candidates(normalize(messages))]


def _call(name: str, args: dict, cid: str = "call_1") -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


# ------------------------------------------------------------------ a short list under its lead-in


TOOLS = (
    "Add three standard Elixir quality tools as dev dependencies:\n"
    "- **Credo** for static code analysis and style checking\n"
    "- **Dialyxir** for gradual type checking via Dialyzer\n"
    "- **mix_audit** for dependency vulnerability scanning\n"
)


def test_a_short_list_is_read_with_its_lead_in_and_no_item_stands_alone():
    # Claude Code's plan in the README's own example: alone, "**mix_audit** for dependency
    # vulnerability scanning" was half a sentence in Progress (its siblings had gone as musings)
    found = _texts([{"role": "assistant", "content": TOOLS}])
    assert found == [
        "Add three standard Elixir quality tools as dev dependencies: **Credo** for static code analysis and "
        "style checking; **Dialyxir** for gradual type checking via Dialyzer; **mix_audit** for dependency "
        "vulnerability scanning"
    ]


def test_a_long_list_a_list_of_results_and_a_list_under_a_heading_stay_a_line_an_item():
    long_items = "The review found these problems:\n" + "".join(
        f"- Problem {i}: `handler_{i}` swallows the error from the retry loop and returns an empty list\n"
        for i in range(4)
    )
    assert len(paragraphs(long_items)) == 5  # too long for one finding: the lead-in, then each item
    results = "Results:\n- 63KB (64,573 bytes): WORKS\n- 64KB (65,594 bytes): FAILS\n"
    assert ["63KB (64,573 bytes): WORKS; 64KB (65,594 bytes): FAILS"] in paragraphs(results)
    heading = "## Acceptance tests\n- GIVEN tools installed WHEN `mix quality` runs THEN all execute\n- GIVEN x\n"
    assert ["- GIVEN tools installed WHEN `mix quality` runs THEN all execute"] in paragraphs(heading)


@pytest.mark.parametrize(
    "lead",
    [
        "Let me summarize what I found:",
        "### Root cause:",
        "I'll fix these two issues:",
        "Reviewing the config now:",
        "If you want, I can also change these:",
    ],
)
def test_a_lead_in_that_announces_or_heads_leaves_its_items_as_findings(lead):
    items = "- The token expires after 5 minutes on staging\n- Refresh is never called when the API answers 401\n"
    found = _texts([{"role": "user", "content": "why?"}, {"role": "assistant", "content": f"{lead}\n{items}"}])
    assert found == ["The token expires after 5 minutes on staging", "Refresh is never called when the API answers 401"]


@pytest.mark.timeout(20)
def test_long_lists_and_long_lines_are_read_in_linear_time():
    many = "\n".join(f"- src/module_{i}/file_{i}.py" for i in range(20_000))
    long_line = "x" * 200_000 + "\n- a\n- b\n" + "y" * 200_000 + ":\n- a\n- b"
    for text in (many, long_line, "Lead-in to the list:\n" + many):
        paragraphs(text)


# ------------------------------------------------------------------ a todo tool's notes on done steps


COPILOT_TODOS = (
    "**Completed: *Implement the fix* (4/5)**\n\n"
    "- [x] Analyze semver.clean() handling\n"
    "  > Identified: semver.clean('V2.17.3') returns null, causing version comparison to fail with early return\n"
    "- [x] Validate the fix\n"
    "  > Verified: Lint passes (all 115 files), Build succeeds, V2.17.3 > 2.17.2 now true\n"
    "- [ ] Test the release\n"
    "  > Release V2.17.4 and check that the app offers the update\n"
)


def test_a_todo_tools_notes_on_done_steps_are_the_agents_findings():
    # VS Code Copilot's manage_todo_list keeps a `> ` note under each item (two sessions: its notes
    # on done steps held "ROOT CAUSE FOUND: …" and the checks it ran); OpenHands' task_tracker keeps
    # `notes` on an item. An open step's note is what is still to do: the plan, no finding.
    assert done_notes({"todos": COPILOT_TODOS}) == [
        "Identified: semver.clean('V2.17.3') returns null, causing version comparison to fail with early return",
        "Verified: Lint passes (all 115 files), Build succeeds, V2.17.3 > 2.17.2 now true",
    ]
    tracker = {
        "command": "plan",
        "task_list": [
            {"id": "1", "title": "Reproduce", "status": "done", "notes": "Fails only when the cache is warm"},
            {"id": "2", "title": "Fix", "status": "todo", "notes": "Clear the cache on reload"},
        ],
    }
    assert done_notes(tracker) == ["Fails only when the cache is warm"]
    assert done_notes({"todos": "- [x] Done it\n- [ ] Next"}) == [] and done_notes({"todos": 3}) == []
    # Roo Code's checklist has no dashes; Cline's is its `task_progress`; a cancelled step's note is no finding
    assert done_notes({"todos": "[x] Reproduce\n  > Fails only on a warm cache\n[ ] Fix"}) == [
        "Fails only on a warm cache"
    ]
    assert done_notes({"task_progress": "- [x] Reproduce\n  > Fails only on a warm cache"}) == [
        "Fails only on a warm cache"
    ]
    cancelled = [{"title": "Port", "status": "cancelled", "notes": "Not needed after all"}]
    assert done_notes({"task_list": cancelled}) == []
    pretty = json.dumps([{"content": "Reproduce", "status": "completed", "notes": "Fails on a warm cache"}], indent=2)
    assert done_notes({"todos": pretty}) == ["Fails on a warm cache"]


@pytest.mark.timeout(20)
def test_a_checklist_line_with_long_runs_of_spaces_is_read_in_linear_time():
    line = "- [x] " + "a " + " \t" * 100_000 + "b"
    assert done_notes({"task_progress": line + "\n  > found it"}) == ["found it"]
    assert plan_state(
        [Turn(role="assistant", text="", tool_calls=[ToolCall("c1", "todo", {"task_progress": line}, "todo")])]
    ).listed

    messages = [
        {"role": "user", "content": "The app never offers the V2.17.3 release. Please find out why and fix it."},
        {"role": "assistant", "content": "", "tool_calls": [_call("manage_todo_list", {"todos": COPILOT_TODOS})]},
        {"role": "tool", "tool_call_id": "call_1", "content": "Successfully wrote todo list"},
    ]
    s = parse(MLXSummarizer(score=None, context_window=8192).update(None, messages).text)
    said = "\n".join(s.progress)
    assert "semver.clean('V2.17.3') returns null" in said and "Lint passes (all 115 files)" in said
    assert "Release V2.17.4" not in said
