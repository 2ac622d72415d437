"""Where a finding comes from, and what is no finding: a short list read with its lead-in, a plan the
agent shows as it writes it to a file, and the notes a todo tool keeps on the steps it marks done.

Each shape is one that real sessions of two agents or sessions show (named per test); the checks go
through `findings.candidates` and through a whole batch pass of the summarizer, as a user's runs do.
"""

import json

import pytest

from hermes_mlx.summarizer import MLXSummarizer
from hermes_mlx.summarizer.digest import done_notes
from hermes_mlx.summarizer.findings import candidates
from hermes_mlx.summarizer.sentences import paragraphs
from hermes_mlx.summarizer.summary import parse
from hermes_mlx.summarizer.text import normalize


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


@pytest.mark.parametrize("lead", ["Let me summarize what I found:", "### Root cause:", "I'll fix these two issues:"])
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


# ------------------------------------------------------------------ a plan shown as it is written


PLAN = (
    "Spotter has no automated code quality checks. No static analysis, type checking, or dependency scanning.\n"
    "Install via `mix igniter.install`, generate Credo config, and add a unified `mix quality` alias.\n"
    "Dialyzer PLT building is slow on first run (2+ minutes) — just document, don't optimize.\n"
    "Credo may report style issues in existing code — don't fix them in this task.\n"
    "If igniter can't install, fall back to a manual dep entry in `mix.exs`.\n"
)


def test_what_a_turn_writes_into_a_file_is_that_files_text_not_its_findings():
    # Claude Code shows the plan for approval and writes it to plan.md in the same turn (Cursor's
    # course notes likewise): its lines are plan.md's text, which Files names, not 27 progress lines
    said = "Let me write the plan for your approval.\n\n" + PLAN
    write = _call("write_file", {"path": "/home/u/spotter/plan.md", "content": "# Plan\n\n" + PLAN})
    messages = [
        {"role": "user", "content": "Draft a plan to add credo, dialyzer and mix_audit to the project."},
        {"role": "assistant", "content": said, "tool_calls": [write]},
        {"role": "tool", "tool_call_id": "call_1", "content": "File created successfully at: plan.md"},
    ]
    assert _texts(messages) == []
    s = parse(MLXSummarizer(score=None, context_window=8192).update(None, messages).text)
    assert s.progress == [] and s.ledger.files["plan.md"] == "created"  # relative to the folder found
    # the same words with no file written, or written by a tool that keeps no file (a memory, a
    # message sent to the user), are the turn's own findings
    alone = _texts(messages[:1] + [{"role": "assistant", "content": said}])
    assert len(alone) >= 2
    memory = _call("memory", {"action": "add", "target": "memory", "content": PLAN})
    assert set(alone) <= set(_texts([{"role": "assistant", "content": said, "tool_calls": [memory]}]))


def test_a_file_written_in_another_turn_as_a_diff_is_still_the_files_text():
    # Cursor's course session writes each lecture's notes to a file (its export shows the edit as a
    # diff of `+ ` lines) and tells the same sentences in the chat a turn later: 31 such lines, no fact
    notes = "+ # Раздел 2.3 — Prompting\n+ \n+ " + PLAN.replace("\n", "\n+ ")
    edit = _call("edit_file", {"target_file": "notes/2.3.md", "code_edit": "```diff\n" + notes + "\n```"})
    messages = [
        {"role": "assistant", "content": "", "tool_calls": [edit]},
        {"role": "tool", "tool_call_id": "call_1", "content": ""},
        {"role": "assistant", "content": "Итак, коротко:\n\n" + PLAN},
    ]
    assert _texts(messages) == []


def test_a_finding_the_agent_also_wrote_down_stays_a_finding():
    # a root cause written to INVESTIGATION.md and told to the user is what a reader needs: only a
    # message that repeats much of a file (WRITTEN_ECHO sentences) is that file's text; what an edit
    # replaces was never written
    cause = "The crash happens because `session.user` is None when the token refresh races the logout handler."
    doc = "# Investigation notes\n\n## Root cause\n\n" + cause + "\n\nWe reproduced it 3 times with 50 clients.\n"
    messages = [
        {"role": "user", "content": "Why does the app crash on logout?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [_call("Write", {"file_path": "/u/app/NOTES.md", "content": doc})],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "File created successfully"},
        {"role": "assistant", "content": "Found it.\n\n" + cause + "\n\nI documented it in NOTES.md."},
    ]
    s = parse(MLXSummarizer(score=None, context_window=8192).update(None, messages).text)
    assert cause in s.progress
    edit = _call("Edit", {"file_path": "/u/app/plan.md", "old_string": "# Plan\n\n" + PLAN, "new_string": "# Plan"})
    assert len(_texts([{"role": "assistant", "content": PLAN, "tool_calls": [edit]}])) >= 4


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

    messages = [
        {"role": "user", "content": "The app never offers the V2.17.3 release. Please find out why and fix it."},
        {"role": "assistant", "content": "", "tool_calls": [_call("manage_todo_list", {"todos": COPILOT_TODOS})]},
        {"role": "tool", "tool_call_id": "call_1", "content": "Successfully wrote todo list"},
    ]
    s = parse(MLXSummarizer(score=None, context_window=8192).update(None, messages).text)
    said = "\n".join(s.progress)
    assert "semver.clean('V2.17.3') returns null" in said and "Lint passes (all 115 files)" in said
    assert "Release V2.17.4" not in said
