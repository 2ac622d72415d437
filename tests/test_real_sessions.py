"""Summaries an agent can carry on from, on sessions real agents wrote: each rule with the real
snippet that needed it (benchmarks/sessions/real/, MIT), and the shipped corpus scored against a
floor (batch at 32K, findings ranked by code: no model needed, so this runs in seconds)."""

import json

import pytest
from summarizer_fakes import call, count, facts_are_in_their_session

from hermes_mlx.bench.fidelity import context_fidelity, run_session
from hermes_mlx.bench.shipped import (
    REAL_DIR,
    facts_path,
    load_facts,
    load_with_facts,
    reference_summary,
    shipped_sessions,
)
from hermes_mlx.summarizer import MLXSummarizer
from hermes_mlx.summarizer.budget import hermes_tokens
from hermes_mlx.summarizer.digest import human_words, plan_state, working_folder
from hermes_mlx.summarizer.findings import findings, is_announcement
from hermes_mlx.summarizer.outcomes import outcome_line, says_passed
from hermes_mlx.summarizer.spare_lines import is_announced_change
from hermes_mlx.summarizer.summary import parse
from hermes_mlx.summarizer.text import normalize

SESSIONS = shipped_sessions(REAL_DIR)


def test_the_real_corpus_ships_with_facts_licences_and_references():
    assert len(SESSIONS) == 11
    for path in SESSIONS:
        assert facts_are_in_their_session(path), path.name
    assert (REAL_DIR / "LICENSES" / "marot_spotter.txt").is_file()
    assert (REAL_DIR / "LICENSES" / "SWE-agent_mini-swe-agent.txt").is_file()
    assert reference_summary(REAL_DIR / "claudecode_opus_spotter_fum_precompact.jsonl")


@pytest.mark.parametrize(
    "output,status,line",
    [
        (
            "Running ExUnit with seed: 75736\n....\nFinished in 1.0 seconds\n49 tests, 0 failures",
            None,
            "49 tests, 0 failures",
        ),
        ("14 doctests, 297 tests, 11 failures\n", None, "14 doctests, 297 tests, 11 failures"),
        (
            "[spotter-fum 3bb8701] feat: enrich TranscriptRenderer (spotter-fum.1)\n 2 files changed",
            None,
            "[spotter-fum 3bb8701] feat: enrich TranscriptRenderer (spotter-fum.1)",
        ),
        (
            "Exit code 1\nThe following paths are ignored by one of your .gitignore files:\npriv/static/assets\nhint: Use -f",
            1,
            "The following paths are ignored by one of your .gitignore files:",
        ),
        ("<output>\n/opt/miniconda3/bin/python: No module named pytest\n</output>", 0, None),
        (
            "===== 73 passed, 838 deselected, 1 warning in 0.52s =====",
            0,
            "73 passed, 838 deselected, 1 warning in 0.52s",
        ),
        (
            "✓ Closed spotter-fum.1: Enriched TranscriptRenderer",
            None,
            "✓ Closed spotter-fum.1: Enriched TranscriptRenderer",
        ),
        ("test result: ok. 12 passed; 0 failed; 0 ignored", 0, "test result: ok. 12 passed; 0 failed; 0 ignored"),
        ("src/a.ts(3,1): error TS2345: bad\nFound 1 error in src/a.ts:3", 2, "Found 1 error in src/a.ts:3"),
        ("bash: mix: command not found", 127, "bash: mix: command not found"),
        ("a lot of\nplain output\nthat says nothing", 0, ""),
        # a run's counts one a line: node's test runner (Codex's `npm test`), a harness's summary
        # block under its verdict (Cline's golden tests); the labels a reader needs, not `todo 0`
        (
            "✔ renders (0.1ms)\nℹ tests 9\nℹ suites 0\nℹ pass 9\nℹ fail 0\nℹ cancelled 0\nℹ todo 0\nℹ duration_ms 41.2",
            None,
            "ℹ tests 9; ℹ pass 9; ℹ fail 0",
        ),
        (
            "[PASS] TestA\n====\n TEST SUMMARY\n====\n\nTotal:  41\nPassed: 41\nFailed: 0\n\n====\n  ALL TESTS PASSED!\n",
            0,
            "Total: 41; Passed: 41; Failed: 0; ALL TESTS PASSED!",
        ),
        ("Total: 41\n", 0, "Total: 41"),  # one count alone is a readout, not a run's
        # a harness saying the run was stopped (OpenCode, Claude Code, Cursor): a push that did not happen
        (
            "(no output)\n\n<shell_metadata>\nUser aborted the command\n</shell_metadata>",
            None,
            "User aborted the command",
        ),
        ("[Request interrupted by user for tool use]", None, "[Request interrupted by user for tool use]"),
        ("Cancelled", None, "Cancelled"),
        ("The nightly job was cancelled by the user at 3pm\nDone\n", 0, ""),  # what a program said of a job
        ("Starting worker\nCancelled\nShutting down cleanly\n", 0, ""),
        # the shell's own complaint about the command line is a failure (zsh, macOS's shell, under Codex)
        ('zsh:1: unmatched "\n', None, 'zsh:1: unmatched "'),
        ('/bin/sh: 3: Syntax error: "(" unexpected\n', 0, '/bin/sh: 3: Syntax error: "(" unexpected'),
        ("User cancelled order #42\nProcessed 10 orders\n", 0, ""),
        ("5 passed in 0.1s\nUser aborted the command\n", None, "User aborted the command"),  # its last word
        (
            "The user doesn't want to proceed with this tool use. The tool use was rejected.",
            None,
            "The user doesn't want to proceed with this tool use. The tool use was rejected.",
        ),
    ],
)
def test_commands_carry_their_outcome_line(output, status, line):
    got = outcome_line(output, status)
    if line is None:  # exit 0 through a pipe, but the output names the failure
        assert "No module named pytest" in got
    else:
        assert got == line


def test_a_block_of_counts_passes_only_when_it_failed_none():
    assert says_passed(outcome_line("# tests 3\n# pass 3\n# fail 0\n"))
    failing = outcome_line("# tests 3\n# pass  2\n# fail  1\n")
    assert failing == "# tests 3; # pass 2; # fail 1" and not says_passed(failing)


def test_announcements_are_never_findings():
    for s in (
        "Now let me check the AshComputer.LiveView API and existing tests.",
        "Let me implement all the pieces.",
        "Now create the shared transcript components:",
        "I'll start by exploring the codebase to understand the issue.",
        "Writing the implementation...",
        "Running the export tests.",
    ):
        assert is_announcement(s), s
    for s in (
        "The linter added parens which breaks the macro's pattern matching.",
        "`xterm.css` was force-added.",
        "Date doesn't override `_bind_to_schema`, so it inherits from DateTime.",
    ):
        assert not is_announcement(s), s


def test_a_finding_before_an_announcement_is_kept_with_its_reason():
    turns = normalize(
        [
            {
                "role": "assistant",
                "content": "The linter added parens which breaks the macro's pattern matching. I need to use a "
                "different approach - capture the broadcast and then assert:",
            },
            {"role": "assistant", "content": "`xterm.css` was force-added. I should do the same for `spotter.css`."},
        ]
    )
    texts = [f.text for f in findings(turns)]
    # the finding, and the change it led to as its decision (test_summary_rules: a change that
    # follows a reason joins it); never the announcement alone
    assert (
        "The linter added parens which breaks the macro's pattern matching. I need to use a "
        "different approach - capture the broadcast and then assert:" in texts
    )
    assert "`xterm.css` was force-added. I should do the same for `spotter.css`." in texts
    assert not any(t.startswith(("Let me", "I need to")) for t in texts)


def test_machine_written_user_turns_are_no_directives_and_no_goal():
    note = "<task-notification>\n<task-id>b57276d</task-id>\n<status>completed</status>\n</task-notification>"
    assert human_words(note) == ""
    slash = "<command-name>/compact</command-name>\n<command-args>and continue with the reamining tasks</command-args>"
    assert human_words(slash) == "and continue with the reamining tasks"
    s = MLXSummarizer(score=None, count_tokens=count, context_window=8192)
    turns = [
        {"role": "user", "content": note},
        {"role": "user", "content": "[Request interrupted by user]"},
        {"role": "user", "content": "Work on bead spotter-fum. Run bd show spotter-fum to see the issue details."},
        {"role": "assistant", "content": "The epic has four subtasks; spotter-fum.1 is ready."},
    ]
    out = parse(s.update(None, turns).text)
    assert out.goal.startswith("Work on bead spotter-fum")
    assert not any("task-notification" in c or "interrupted" in c for c in out.ledger.constraints + out.ledger.asks)


def test_a_harness_turning_down_a_reply_is_no_user_and_quoting_the_user_is_no_progress():
    # mini-swe-agent's and SWE-agent's format errors are the harness's; an agent quoting its issue
    # back had listed the user's sentence twice (Constraints and Progress)
    for notice in (
        "Please always provide EXACTLY ONE action in triple backticks, found 3 actions.\n\n"
        "Please format your action in triple backticks as shown in <response_example>.",
        "Your output was not formatted correctly. You must always include one discussion and one command "
        "as part of your response. Make sure you do not have multiple discussion/command tags.",
    ):
        assert human_words(notice) == ""
    argued = (
        "I would argue that `Quantity.__array_ufunc__()` should really return `NotImplemented` in this instance, "
        "since it would allow for `__radd__` to be called instead of the error being raised."
    )
    s = MLXSummarizer(score=None, count_tokens=count, context_window=8192)
    turns = [
        {"role": "user", "content": f"Fix the ufunc fallback in astropy/units/quantity.py. {argued}"},
        {"role": "assistant", "content": f"{argued}\n\nThe converter at line 670 raises `ValueError`."},
        {"role": "user", "content": "Please always provide EXACTLY ONE action in triple backticks, found 3 actions."},
        {"role": "assistant", "content": "I caught `ValueError` in the loop and the 3 reproductions now pass."},
    ]
    out = parse(s.update(None, turns).text)
    assert not any("EXACTLY ONE" in x for x in out.ledger.constraints + out.ledger.asks + [out.goal])
    assert not any(p in argued for p in out.progress) and any("line 670" in p for p in out.progress)


def _bd(cid, command, output):
    return [
        {"role": "assistant", "content": "", "tool_calls": [call(cid, "terminal", command=command)]},
        {"role": "tool", "tool_call_id": cid, "content": output},
    ]


def test_current_state_and_next_steps_come_from_the_tracker():
    listing = (
        "CHILDREN\n"
        "  ↳ ✓ spotter-fum.1: Enrich TranscriptRenderer with metadata ● P2\n"
        "  ↳ ○ spotter-fum.3: Integrate highlight.js for transcript code blocks in LiveView lifecycle ● P2\n"
        "  ↳ ○ spotter-fum.4: Add regression coverage for renderer metadata, SessionLive UX, and JS highlighting behavior ● P2"
    )
    msgs = (
        _bd("c1", "bd show spotter-fum", listing)
        + _bd("c2", "bd close spotter-fum.1 --reason='done'", "✓ Closed spotter-fum.1: done")
        + _bd("c3", "bd update spotter-fum.3 --status in_progress", "✓ Updated issue: spotter-fum.3")
    )
    plan = plan_state(normalize(msgs))
    assert plan.in_progress == "spotter-fum.3: Integrate highlight.js for transcript code blocks in LiveView lifecycle"
    assert plan.next_steps == [
        "spotter-fum.4: Add regression coverage for renderer metadata, SessionLive UX, and JS highlighting behavior"
    ]
    s = MLXSummarizer(score=None, count_tokens=count, context_window=8192)
    text = s.update(None, [{"role": "user", "content": "Work on bead spotter-fum"}, *msgs]).text
    assert "## Current State\n- In progress: spotter-fum.3: Integrate highlight.js" in text
    assert "## Next Steps\n- spotter-fum.4: Add regression coverage" in text
    assert "exit ?" not in text and "→ ✓ Closed spotter-fum.1: done" in text


def test_todo_tool_items_are_the_plan():
    todos = {"todos": [{"content": "Write tests", "status": "completed"}, {"content": "Fix CI", "status": "pending"}]}
    msgs = [
        {"role": "assistant", "content": "", "tool_calls": [call("t1", "todo_write", **todos)]},
        {"role": "tool", "tool_call_id": "t1", "content": "ok"},
    ]
    assert plan_state(normalize(msgs)).next_steps == ["Fix CI"]


def _todo_turn(cid: str, name: str, arguments: dict, result: dict) -> list[dict]:
    return [
        {"role": "assistant", "content": "", "tool_calls": [call(cid, name, **arguments)]},
        {"role": "tool", "tool_call_id": cid, "content": json.dumps(result)},
    ]


def _todos(key: str, *statuses: str) -> dict:
    steps = ("Scan EF mapping patterns", "Add shared lock type", "Refactor the 4 case aggregates")
    return {key: [{"id": str(i), "content": c, "status": s} for i, (c, s) in enumerate(zip(steps, statuses))]}


# A todo tool's answer lists the whole plan as it stands: Cursor's todo_write answers
# {"finalTodos": [...]} to a call that may carry only {"merge": true}, Hermes Agent's `todo`
# answers {"todos": [...]} to a merge that names items by id. Read from the calls alone, the
# first list stayed the plan: four finished steps under Next Steps, and one In progress long done.
@pytest.mark.parametrize(
    ("name", "key", "change"),
    [
        ("todo_write", "finalTodos", {"merge": True}),
        ("todo", "todos", {"merge": True, "todos": [{"id": "0", "status": "completed"}]}),
    ],
)
def test_a_todo_tools_answer_is_the_plan_as_it_stands_in_batch_and_micro(name, key, change):
    first = _todo_turn(
        "t1",
        name,
        _todos("todos", "in_progress", "pending", "pending"),
        _todos(key, "in_progress", "pending", "pending"),
    )
    later = _todo_turn("t2", name, change, _todos(key, "completed", "in_progress", "pending"))
    done = _todo_turn("t3", name, change, _todos(key, "completed", "completed", "completed"))
    ask = [{"role": "user", "content": "Extract the shared lock."}]
    plan = plan_state(normalize(first + later))
    assert (plan.in_progress, plan.next_steps) == ("Add shared lock type", ["Refactor the 4 case aggregates"])
    s = MLXSummarizer(score=None, count_tokens=count, context_window=8192)
    text = s.update(None, ask + first + later + done).text
    assert "Next Steps" not in text and "In progress" not in text and "Scan EF" not in text
    rolling = s.merge(s.merge(None, ask + first).text, later).text
    assert "- In progress: Add shared lock type" in rolling
    assert parse(rolling).remaining == ["Refactor the 4 case aggregates"]
    rolling = s.merge(rolling, done).text
    assert "Next Steps" not in rolling and "In progress" not in rolling


def test_files_are_relative_to_the_working_folder_once_each_and_only_paths():
    root = "/home/USER/projects/spotter-worktrees/spotter-fum"
    msgs = []
    for i, rel in enumerate(["lib/a/renderer.ex", "test/a/renderer_test.exs", "assets/js/app.js"]):
        msgs += [
            {"role": "assistant", "content": "", "tool_calls": [call(f"r{i}", "read_file", path=f"{root}/{rel}")]},
            {"role": "tool", "tool_call_id": f"r{i}", "content": "ok"},
        ]
    msgs.append(
        {
            "role": "assistant",
            "content": "The entry point is `js/app.js`; see renderer.ex. Update/create the Read/Glob/Grep/Bash "
            "steps and compile/test again.",
        }
    )
    assert working_folder(normalize(msgs)) == root
    s = MLXSummarizer(score=None, count_tokens=count, context_window=8192)
    files = parse(s.update(None, msgs).text).ledger.files
    assert set(files) == {"lib/a/renderer.ex", "test/a/renderer_test.exs", "assets/js/app.js"}


def test_a_path_written_from_a_folder_above_the_working_folder_is_that_folders_file():
    # a monorepo: the agent works in projects/odysseus/aidev, its plan (and git) name files from the
    # repository's root (`projects/odysseus/aidev/src/types.ts`): Files had listed that path under
    # the working folder, where no such file is (`…/aidev/projects/odysseus/aidev/src/types.ts`)
    root = "/Users/tomo/clawd/projects/odysseus/aidev"
    msgs = [
        {
            "role": "user",
            "content": 'Implement the plan. "filesToTouch": ["projects/odysseus/aidev/src/types.ts", '
            '"projects/odysseus/aidev/src/cli.ts"]',
        }
    ]
    for i, rel in enumerate(["src/types.ts", "src/cli.ts", "test/types.test.ts"]):
        msgs += [
            {"role": "assistant", "content": "", "tool_calls": [call(f"e{i}", "Edit", file_path=f"{root}/{rel}")]},
            {"role": "tool", "tool_call_id": f"e{i}", "content": f"The file {root}/{rel} has been updated."},
        ]
    s = MLXSummarizer(score=None, count_tokens=count, context_window=8192)
    files = parse(s.update(None, msgs).text).ledger.files
    assert files == {"src/types.ts": "edited", "src/cli.ts": "edited", "test/types.test.ts": "edited"}
    # one folder of the root's name is not enough: a package inside a project of its name stays
    from hermes_mlx.summarizer.workfolder import relative

    assert relative("astropy/units/core.py", "/home/u/astropy") == "astropy/units/core.py"
    assert relative("src/mypkg/core.py", "/home/u/src/mypkg") == "src/mypkg/core.py"  # the src layout's own


def test_a_temporary_folder_never_replaces_the_working_folder():
    # Claude Code's background tasks write their output under the system's temporary folder
    # (`C:\\Users\\x\\AppData\\Local\\Temp\\claude\\…\\tasks\\b1.output`, `/tmp/claude/…`): a later span
    # that only read those had made it the working folder, and every file of the work went back to
    # its whole path. A project that lives in a temporary folder (a sandbox's) is still its own.
    from hermes_mlx.summarizer.workfolder import scratch, settle

    project = "/home/u/simclr/code"
    for temp in ("/tmp/claude/x/tasks/b1.output", "C:\\Users\\y\\AppData\\Local\\Temp\\claude\\t\\b1.output"):
        msgs = []
        for i in range(3):
            msgs += [
                {"role": "assistant", "content": "", "tool_calls": [call(f"r{i}", "Read", file_path=temp)]},
                {"role": "tool", "tool_call_id": f"r{i}", "content": f"Epoch {i}: loss=6.{i}"},
            ]
        found = working_folder(normalize(msgs))
        assert scratch(temp) and settle(project, found) == project, temp
        beside = msgs + [
            {"role": "assistant", "content": "", "tool_calls": [call("e1", "Edit", file_path=f"{project}/loss.py")]},
            {"role": "tool", "tool_call_id": "e1", "content": "The file has been updated."},
            {"role": "assistant", "content": "", "tool_calls": [call("e2", "Edit", file_path=f"{project}/train.py")]},
            {"role": "tool", "tool_call_id": "e2", "content": "The file has been updated."},
        ]
        assert working_folder(normalize(beside)) == project
    sandbox = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [call(f"e{i}", "Edit", file_path=f"/tmp/tmp8k2j/api/src/{n}.py")],
        }
        for i, n in enumerate(("users", "routes"))
    ]
    sandbox = [
        m for c in sandbox for m in (c, {"role": "tool", "tool_call_id": c["tool_calls"][0]["id"], "content": "ok"})
    ]
    assert working_folder(normalize(sandbox)) == "/tmp/tmp8k2j/api"
    assert not scratch("/home/u/tmp/a.py") and not scratch("/tmpfs/a.py")


def _score(path):
    session = load_with_facts(path)
    run = run_session(
        session.messages,
        MLXSummarizer(ranking="code"),
        mode="batch",
        context_limit=32768,
        session_id=path.stem,
    )
    row = context_fidelity(run, session.facts)
    return row, run.summary


@pytest.mark.real_model  # the tokenizer of the default model counts the tokens
def test_the_real_corpus_keeps_most_facts_at_stake_with_no_noise():
    kept = stake = 0
    for path in SESSIONS:
        row, summary = _score(path)
        kept += row["absorbed_kept_in_summary"]
        stake += row["facts_absorbed"]
        s = parse(summary)
        assert "exit ?" not in summary, path.stem
        # no announcement, but a change announced with room to spare (spare_lines.announced_changes)
        assert not any(is_announcement(x) and not is_announced_change(x) for x in s.progress), path.stem
        assert not any(p.startswith("/home/USER/projects/") for p in s.ledger.files), path.stem
        assert len(s.ledger.ids) <= 80  # 40 ranked from each of the (at most two) passes' spans
        assert not any(i.endswith(("/", "-")) for i in s.ledger.ids), path.stem
        reference = reference_summary(path)
        if reference:  # more of the session's facts than the agent's own summary, in fewer tokens
            facts = [f for _, f in load_facts(facts_path(path)).must_keep()]
            assert sum(f in summary for f in facts) > sum(f in reference for f in facts), path.stem
            assert hermes_tokens(summary) < hermes_tokens(reference), path.stem
    # the target; 56/62 when this test was written, 22/62 before
    assert stake and kept / stake >= 0.9, (kept, stake)


def test_a_pruned_tool_output_keeps_its_result_line_for_the_next_summary():
    from hermes_mlx.compactor.batch import prune_tool_results

    output = (
        "Running ExUnit with seed: 1\n" + "." * 600 + "\nFinished in 1.0 seconds\n14 doctests, 373 tests, 0 failures\n"
    )
    middle = [
        {"role": "assistant", "content": "", "tool_calls": [call("c1", "terminal", command="mix test")]},
        {"role": "tool", "tool_call_id": "c1", "content": output},
    ]
    pruned, n, _ = prune_tool_results(middle)
    assert n == 1 and "; result: 14 doctests, 373 tests, 0 failures]" in pruned[1]["content"]
    assert outcome_line(pruned[1]["content"]) == "14 doctests, 373 tests, 0 failures"
    s = MLXSummarizer(score=None, count_tokens=count, context_window=8192)
    assert "`mix test` → 14 doctests, 373 tests, 0 failures" in s.update(None, pruned).text


def test_shell_commands_name_files_but_not_sed_scripts_devices_or_routes():
    msgs = [
        {
            "role": "assistant",
            "content": "The hook posts to `/api/hooks/commit-event` on every commit.",
            "tool_calls": [
                call(
                    "s1",
                    "terminal",
                    command="cd /testbed && sed -i '956s/except/except (TypeError)/' ./astroid/helpers.py",
                ),
                call("s2", "terminal", command="cat ./astroid/typing.py > /dev/null"),
                call("s3", "terminal", command="cd /testbed && cat ../astroid/helpers.py"),
            ],
        },
        {"role": "tool", "tool_call_id": "s1", "content": "<returncode>0</returncode>"},
        {"role": "tool", "tool_call_id": "s2", "content": "<returncode>0</returncode>"},
        {"role": "tool", "tool_call_id": "s3", "content": "<returncode>0</returncode>"},
    ]
    s = MLXSummarizer(score=None, count_tokens=count, context_window=8192)
    files = parse(s.update(None, msgs).text).ledger.files
    assert files == {"astroid/helpers.py": "edited", "astroid/typing.py": "edited"}
