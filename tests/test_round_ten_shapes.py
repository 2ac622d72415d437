"""What a tenth round's held-out sessions showed, each with a second source named per test: a shell
tool's command under another spelling of its key, a Windows drive's path spelled two ways in one
session, a user's directive listed twice. Checks go through whole passes of the summarizer where a
user's run would.
"""

import json

import pytest
from summarizer_fakes import call, code_summarizer, one_pass

from hermes_mlx.summarizer.summary import Summary, parse, render
from hermes_mlx.summarizer.workfolder import relative


# Windsurf's Cascade (held out) and Google's Antigravity call `run_command` with `{"CommandLine": ...}`
def test_a_command_under_another_spelling_of_its_key_is_a_command_run():
    s = one_pass(
        [
            {"role": "user", "content": "Regenerate the schemas and check them."},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    call("c1", "run_command", CommandLine="python tools/validate_contracts.py --output-schemas")
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "Generated 180 schemas\nAll contracts valid"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [call("c2", "shell", command_line="npm run build")],
            },
            {"role": "tool", "tool_call_id": "c2", "content": "Build succeeded in 8.0s"},
            {"role": "assistant", "content": "The schemas are regenerated."},
        ]
    )
    ran = [c.cmd for c in s.ledger.commands]
    assert "python tools/validate_contracts.py --output-schemas" in ran and "npm run build" in ran


# Windsurf writes `file:///c:/Users/…` links (a working folder read `/c:/Users/…`, VS Code's spelling)
# while its file tools take `c:/Users/…`; Copilot and Cursor take `C:\Users\…` and `/c:/Users/…`
def test_a_drive_path_in_any_spelling_is_relative_to_the_working_folder():
    root = "/c:/Users/m/engineering-tools"
    assert relative("c:/Users/m/engineering-tools/docs/GAP.md", root) == "docs/GAP.md"
    assert relative("C:\\Users\\m\\engineering-tools\\src\\a.ts", root) == "src\\a.ts"
    assert relative("/c:/Users/m/engineering-tools/x.py", "C:\\Users\\m\\engineering-tools") == "x.py"
    assert relative("c:/Users/m/engineering-tools-old/a.py", root) == "c:/Users/m/engineering-tools-old/a.py"
    assert relative("d:/Users/m/engineering-tools/a.py", root) == "d:/Users/m/engineering-tools/a.py"


def test_a_session_on_a_drive_lists_its_files_relative_to_the_folder_its_links_name():
    link = "[GAP.md](file:///c:/Users/m/tools/docs/GAP.md:0:0-0:0)"
    s = one_pass(
        [
            {"role": "user", "content": "Review the gap analysis."},
            *[
                m
                for i, p in enumerate(["docs/GAP.md", "docs/dat/DAT_GAP.md", "src/app.py"])
                for m in (
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [call(f"c{i}", "view_file", AbsolutePath=f"c:/Users/m/tools/{p}")],
                    },
                    {"role": "tool", "tool_call_id": f"c{i}", "content": "# Gap analysis\n"},
                )
            ],
            {"role": "assistant", "content": f"Updated {link} with the status of each gap."},
        ]
    )
    assert {"docs/GAP.md", "docs/dat/DAT_GAP.md", "src/app.py"} <= set(s.ledger.files)


# A user's message that ends in directives (Windsurf: "… Please poke through and ensure we have the right
# validation and compliance here."; Claude Code's: "… Don't touch the migrations."): listed whole, its
# directives are not listed again under Constraints, and come back there when the message must go
def test_a_directive_a_listed_message_shows_is_not_listed_twice():
    ask = (
        "Now working outward from our contracts, ADRs and SPECs, where do we generate the contract schemas "
        "and messages from? We used a gen_json_schema.py file for this before, but create whatever is most "
        "efficient in a solo-dev setup, and say which checks run it on every push and which run it by hand "
        "before a release, and what each prints when a contract drifts from its schema or a message has no "
        "schema at all. Please keep it tied in with our CI pipeline and tests."
    )
    s = one_pass(
        [
            {"role": "user", "content": "Audit the contracts."},
            {"role": "assistant", "content": "The contracts are audited: 29 ADRs read."},
            {"role": "user", "content": ask},
            {"role": "assistant", "content": "Schemas come from tools/validate_contracts.py now."},
        ]
    )
    text = render(s)
    directive = "Please keep it tied in with our CI pipeline and tests."
    assert directive in s.ledger.constraints and text.count(directive) == 1 and ask in text
    s.ledger.asks.remove(ask)
    assert directive in render(s)


def test_the_budget_prices_a_directive_a_listed_message_shows_at_nothing_saved():
    from hermes_mlx.summarizer.budget import fit_summary, hermes_tokens

    ask = "Can you update the README for the new refresh options? Do not change the public API while doing it."
    s = Summary(goal="Review the auth package.")
    s.ledger.add_list("asks", [ask])
    s.ledger.add_list("constraints", ["Do not change the public API while doing it."])
    s.progress = [f"Finding {i}: `extractToken` prefers the Authorization header in case {i}." for i in range(30)]
    before = render(s)
    fit_summary(s, hermes_tokens(before) - 40)
    assert ask in render(s) and "Do not change the public API while doing it." in s.ledger.constraints


def test_a_summary_read_back_keeps_a_directive_said_once():
    ask = (
        "What failed in CI this time, and was it the same job as yesterday's, the one that timed out on the "
        "integration tests, or something new in the lint step that the last merge brought in? I want to know "
        "which commit started it, whether the cache was involved, and what the logs of the failing job say "
        "about the first error, before we touch anything in the workflow files or the runner images again. "
        "Always run the linter before you commit."
    )
    summarizer = code_summarizer()
    msgs = [
        {"role": "user", "content": "Fix CI."},
        {"role": "assistant", "content": "CI fails on lint: 3 errors in src/app.ts."},
        {"role": "user", "content": ask},
        {"role": "assistant", "content": "Lint failed on unused imports; I removed them."},
    ]
    first = summarizer.update(None, msgs)
    again = parse(summarizer.update(first.text, [{"role": "user", "content": "ok"}]).text)
    assert render(again).count("Always run the linter before you commit.") == 1
    assert json.dumps(msgs)  # the session itself is unchanged


# A Cursor user pasting a browser console between tries (held out: 20,000 characters of `[Log] …` lines,
# one per avatar), a Cursor user pasting a request log (`GET https://… 406 (Not Acceptable)` and its
# stack, real-2's hyperank): the lines said once carry the run; the message keeps them and the user's words
def test_a_pasted_log_keeps_the_lines_it_says_once_and_the_users_words():
    from hermes_mlx.summarizer.ledger import user_message, without_repeats

    rows = "\n".join(
        f'[Log] Set representativeNode for author – "{n}" – (script.js, line 164)\n'
        f'<img src="https://files.example.social/avatars/{n}.png" class="avatar-img" data-author-id="{n}">\n'
        for n in range(1093360, 1093375)
    )
    pasted = (
        f"Kein Erfolg\n\n{rows}\n"
        "[Log] Start rects collected: – 0 (script.js, line 368)\n"
        '[Log] Animation setup complete - Start rects: – 0 – "End rects:" – 15 (script.js, line 403)\n'
        f"{rows}"
    )
    kept = user_message(pasted)
    assert kept.startswith("Kein Erfolg … [Log] Start rects collected: – 0")
    assert '[Log] Animation setup complete - Start rects: – 0 – "End rects:" – 15' in kept
    assert "representativeNode" not in kept and len(kept) < 300
    # a message of different lines (a spec, a list of asks) is unchanged, and one all of a shape too
    spec = "\n".join(
        f"{i}. {w}" for i, w in enumerate(["add the route", "wire the form", "test it", "ship", "tag", "log"])
    )
    assert without_repeats(spec) == spec
    phases = "\n".join(f"Phase {i}: as planned" for i in range(9))
    assert without_repeats(phases) == phases
    short = "Fix it\nline 1\nline 2"
    assert without_repeats(short) == short


# Hermes's compressor leaves a stub for each tool output it pruned (`[terminal] ran `cmd` -> exit 1, 81
# lines output`, `[write_file] wrote to a.py (12 lines)`; a failed call's ends `FAILED: <reason>`): a
# held-out Hermes session exported without call arguments named its commands and files only there, and
# a port of that compressor (a second project) writes the same lines
def test_a_hermes_compaction_stub_names_its_call_and_is_no_output():
    from hermes_mlx.summarizer.tool_results import failed_field, tool_output

    s = one_pass(
        [
            {"role": "user", "content": "Fix the build."},
            {"role": "assistant", "content": "", "tool_calls": [call("c1", "terminal")]},
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": "[terminal] ran `cd /w/app && npm run build` -> exit 2, 40 lines output",
            },
            {"role": "assistant", "content": "", "tool_calls": [call("c2", "write_file")]},
            {
                "role": "tool",
                "tool_call_id": "c2",
                "content": "[write_file] wrote to /w/app/src-tauri/capabilities/default.json (68 lines)",
            },
            {"role": "assistant", "content": "", "tool_calls": [call("c3", "read_file", path="/w/app/src/App.tsx")]},
            {
                "role": "tool",
                "tool_call_id": "c3",
                "content": "[read_file] read /w/app/src/Other.tsx from line 1 (10,024 chars)",
            },
            {"role": "assistant", "content": "The capabilities file allows the devtools toggle now."},
        ]
    )
    [ran] = [c for c in s.ledger.commands if "npm run build" in c.cmd]
    assert ran.cmd == "cd /w/app && npm run build" and ran.statuses == [2] and not ran.outcome
    files = {p for p in s.ledger.files if p.endswith(("default.json", ".tsx"))}
    assert any(p.endswith("capabilities/default.json") for p in files)
    assert not any(p.endswith("Other.tsx") for p in files)  # a call's own argument stands: the stub fills none
    assert tool_output("[terminal] ran `pytest` -> exit 1, 81 lines output") == ""
    assert failed_field("[read_file] read gone.py from line 40 (61 chars) FAILED: File not found: gone.py") == (
        "File not found: gone.py"
    )
    assert failed_field("[terminal] ran `ls` -> exit 0, 3 lines output") == ""


# a benchmark script's summary (held-out Qwen Code: `Total tests: 12` / `Successful: 12` / `Failed: 0`)
# counts its passes as dotnet's terminal logger words them (`succeeded: 52`): the block is the run's result
@pytest.mark.parametrize(
    ("printed", "line", "passed"),
    [
        (
            "SUMMARY\n=====\nTotal tests: 12\nSuccessful: 12\nFailed: 0\n\nAverage: 13.0s\n",
            "Total tests: 12; Successful: 12; Failed: 0",
            True,
        ),
        ("Total tests: 60\nSuccessful: 36\nFailed: 24\n", "Total tests: 60; Successful: 36; Failed: 24", False),
        ("Succeeded: 41\nFailed: 2\n", "Succeeded: 41; Failed: 2", False),
    ],
)
def test_counts_of_successes_and_failures_one_a_line_are_a_runs_result(printed, line, passed):
    from hermes_mlx.summarizer.outcomes import all_passed, outcome_of

    assert outcome_of(printed, 0) == ("tests", line)
    assert all_passed("tests", line, "python run_benchmark.py") is passed


_NO_TOOL = (
    "[ERROR] You did not use a tool in your previous response! Please retry with a tool use.\n\n"
    "# Reminder: Instructions for Tool Use\n\nTool uses are formatted using XML-style tags.\n\n"
    "Always adhere to this format for all tool uses to ensure proper parsing and execution.\n\n# Next Steps\n\n"
    "If you have completed the user's task, use the attempt_completion tool.\n"
    "(This is an automated message, so do not respond to it conversationally.)"
)
_TODO_NOTE = (
    "# TODO LIST RECOMMENDED\nWhen starting a new task, it is recommended to create a todo list.\n\n"
    "1. Include the task_progress parameter in your next tool call\n\n"
    "Keeping the todo list updated helps track progress and ensures nothing is missed.\n\n"
)


# Cline, Roo Code and Kilo Code answer a reply that called no tool as the user (`noToolsUsed`), and Cline's
# focus chain adds a todo-list note to a user turn: a held-out Cline session's Goal was the first, its
# Constraints the call format's rules; exports of Cline (Spanish users) and of Roo Code carry the same
def test_a_harness_note_to_the_agent_is_no_users_words():
    s = one_pass(
        [
            {"role": "user", "content": "<task>\nanalyze the current project\n</task>\n\n\n" + _TODO_NOTE},
            {"role": "assistant", "content": "The project is an MCP server with a RAG engine and a workflow engine."},
            {
                "role": "user",
                "content": _NO_TOOL + "\n<environment_details>\n# Current Mode\nACT MODE\n</environment_details>",
            },
            {"role": "assistant", "content": "The analysis is done: 3 engines, 2 config files."},
        ]
    )
    text = render(s)
    assert s.goal == "analyze the current project"
    for harness_words in ("did not use a tool", "adhere to this format", "TODO LIST", "task_progress"):
        assert harness_words not in text


# a report's label before what it concluded (Cline's "**Bottom line:** …", Copilot's "**Root cause:** …",
# Cursor's "**Verdict:** …", Qwen Code's "**Key finding:** …") ranks its sentence as a result's
def test_a_reports_conclusion_ranks_as_a_result():
    from hermes_mlx.summarizer.findings import features

    said = "**Bottom line:** Configure Agent OS MCP for **ONLY Cline**, use Cursor AI without it."
    plain = "Configure Agent OS MCP for **ONLY Cline**, use Cursor AI without it."
    kw = {"reaction": False, "before_action": False, "report": True, "recency": 0.5}
    assert features(said, **kw)["outcome"] == 1.0 and features(plain, **kw)["outcome"] == 0.0
    assert features("**Root cause:** the map keeps the last avatar of each author.", **kw)["outcome"] == 1.0


# a long request whose directive runs into the clip of its message (real-2's hyperank: "ignore what we did in
# the past, … lets do this fresh new aproach:" then an 80,000-character spec): read back, the summary still
# verifies, and no directive is made of the cut's two sides
def test_a_clipped_message_read_back_verifies_and_makes_no_directive_across_its_cut():
    from hermes_mlx.summarizer.directives import directives_within

    parts = ("auth", "feed", "votes", "shop", "admin", "search", "profile", "billing")
    spec = "\n".join(f"- [ ] {a} talks to {b} through its own client" for a in parts for b in parts if a != b)
    ask = (
        "ignore what we did in the past, we will still use the old logo but dont hoard, lets do this fresh:\n\n" + spec
    )
    summarizer = code_summarizer()
    msgs = [
        {"role": "user", "content": "Rebuild the app."},
        {"role": "assistant", "content": "The old app is archived in `legacy/`."},
        {"role": "user", "content": ask},
        {"role": "assistant", "content": "The auth module is wired: 12 tests pass."},
    ]
    first = summarizer.update(None, msgs)
    again = summarizer.update(first.text, [{"role": "assistant", "content": "The feed module is wired too."}])
    assert "ignore what we did in the past" in again.text
    listed = [line[2:] for line in again.text.splitlines() if line.startswith("- ignore what")]
    assert listed and all(" … " not in c for line in listed for c in directives_within(line))
    back = parse(again.text)  # the directive the message shows is the ledger's, and listed once it goes
    directive = "ignore what we did in the past, we will still use the old logo but dont hoard, lets do this fresh:"
    assert directive in back.ledger.constraints
    back.ledger.asks = [a for a in back.ledger.asks if not a.startswith("ignore")]
    assert f"- {directive}" in render(back)


# Cline's, Roo Code's and Kilo Code's `toolDenied` (held-out Cline: a design doc the user would not have
# written), Claude Code's rejection, Codex's "patch rejected by user": the call did nothing, and it says so
@pytest.mark.parametrize(
    "refused",
    [
        "The user denied this operation. The file was not created.",
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
        "edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user.",
        "patch rejected by user",
    ],
)
def test_a_call_the_user_turned_down_changed_nothing_and_says_so(refused):
    s = one_pass(
        [
            {"role": "user", "content": "Write the design down."},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [call("c1", "write_to_file", path="DESIGN.md", content="# Design\n")],
            },
            {"role": "tool", "tool_call_id": "c1", "content": refused},
            {"role": "assistant", "content": "Understood: the design stays in this conversation only."},
        ]
    )
    assert s.ledger.files.get("DESIGN.md") != "created"
    assert any(e.line.startswith(refused.split(" (")[0][:40]) for e in s.ledger.errors)


# Gemini CLI's and Qwen Code's note before an output they saved to a file, then the labelled output (held-out
# Qwen Code; Gemini CLI's coreToolScheduler writes it): the command's output and status are read past it,
# and the shell's "Error: (none)" says there was none
def test_an_output_cut_and_saved_by_its_harness_is_read_past_the_note():
    from hermes_mlx.summarizer.error_lines import is_error_line
    from hermes_mlx.summarizer.tool_results import exit_status, tool_output

    saved = (
        "Tool output was too large and has been truncated.\n"
        "The full output has been saved to: C:\\Users\\a\\.qwen\\tmp\\x\\run_shell_command:60.output\n"
        "To read the complete output, use the read_file tool with the absolute file path above.\n"
        "The truncated output below shows the beginning and end of the content.\n"
        "Truncated part of the output:\n"
        "Command: python research\\analyze.py\nDirectory: (root)\nOutput: ANALYSIS\nLoading results\n"
        "... [CONTENT TRUNCATED] ...\n"
        "UnicodeEncodeError: 'charmap' codec can't encode character '\\u2705' in position 157\n"
        "Error: (none)\nExit Code: 1\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: (none)"
    )
    out = tool_output(saved)
    assert out.startswith("ANALYSIS") and out.endswith("in position 157") and exit_status(saved) == 1
    assert not is_error_line("Error: (none)") and is_error_line("Error: connection refused")


# a reading tool's output pruned by an earlier pass keeps no "result" from the file's own lines (held-out
# Qwen Code's read_file of a dataclass: `error: Optional[str] = None` came back as an error)
def test_a_pruned_read_keeps_no_line_of_its_file_as_a_result():
    from hermes_mlx.compactor.batch import one_line

    code = "Showing lines 1-168 of 664 total lines.\n\n---\n\n@dataclass\nclass TestResult:\n    error: Optional[str] = None\n"
    assert "result:" not in one_line("read_file", code)
    assert "result: FAILED (errors=2)" in one_line("terminal", "Ran 5 tests in 0.1s\n\nFAILED (errors=2)\n")


# a link to a local file reads as its text in a finding (held-out Windsurf's `[anova.py](file:///c:/…:0:0-0:0)`;
# Codex's `[scripts/service.sh](/Users/…/scripts/service.sh#L1)` in real-2): no absolute path in Progress
def test_a_link_to_a_local_file_reads_as_its_text():
    from hermes_mlx.summarizer.sentences import paragraphs

    said = (
        "Added the ANOVA interaction terms to [anova.py](file:///c:/Users/m/tools/shared/anova.py:0:0-0:0) because "
        "the two-way model needs them. The service is in [scripts/service.sh](/Users/i/dev/scripts/service.sh#L1) "
        "now. Docs: [the guide](https://example.org/guide)."
    )
    [sentences] = paragraphs(said)
    assert sentences[0] == "Added the ANOVA interaction terms to anova.py because the two-way model needs them."
    assert sentences[1] == "The service is in scripts/service.sh now."
    assert "(https://example.org/guide)" in sentences[2]


# ---------------------------------------------------------------- the round's review: what the rules must not do


def test_a_user_quoting_the_no_tool_message_keeps_every_word():
    from hermes_mlx.summarizer.text import without_context

    said = (
        'My agent keeps replying with "[ERROR] You did not use a tool in your previous response! Please retry with a '
        'tool use." after every answer. Please find where src/core/prompts/responses.ts builds that text. '
        "Do not change the other messages in that file."
    )
    assert without_context(said, "user")[0] == said


def test_a_pasted_log_keeps_the_users_words_after_it_and_their_own_list():
    from hermes_mlx.summarizer.ledger import user_message, without_repeats

    log = "\n".join(f'[Log] Set node for author – "{i}" – (script.js, line 164)' for i in range(3000))
    ask = "QUESTION: why does the author loop never stop? Please fix only script.js and do not touch index.html."
    assert user_message(f"My page hangs, here is the console:\n{log}\n\n{ask}").endswith(ask)
    listed = "Apply the security review before the release:\n\n" + "\n".join(
        f"- In parser.py, change line {n} to use '{m}' mode"
        for n, m in ((12, "strict"), (48, "lenient"), (97, "legacy"), (120, "safe"), (150, "fast"))
    )
    assert without_repeats(listed) == listed


def test_a_directive_read_back_is_one_the_message_shows_whole_and_no_code_or_dash():
    from hermes_mlx.summarizer.directives import directives_within

    said = (
        "The login page still returns 500 after the deploy. I tried the fix from yesterday - it did not work. "
        "The server still returns 500 - no idea why. Can you look? Here is the code: if (!user) { return; } "
        "// we never get here. Please keep the session cookie as it is."
    )
    got = directives_within(said)
    assert "Please keep the session cookie as it is." in got
    assert all(c in said and len(c) >= 20 and "{" not in c and not c.startswith("-") for c in got)


def test_a_budget_that_drops_a_long_message_keeps_the_latest_two():
    from hermes_mlx.summarizer.budget import fit_summary

    cons = "Do not change the public API of the auth package while doing this."
    long_ask = "Please review the whole auth package line by line and list every problem you find. " * 6 + cons
    s = Summary(goal="Review the auth package.")
    s.ledger.add_list("asks", [long_ask, "second message about the refresh flow", "third message about cookies"])
    s.ledger.add_list("constraints", [cons, "Keep it short.", "Use tabs."])
    fit_summary(s, 130, lambda t: max(1, len(t) // 4))
    assert s.ledger.asks[-2:] == ["second message about the refresh flow", "third message about cookies"]


def test_a_refusal_inside_a_file_read_is_no_refusal_and_stubs_name_only_their_own_shapes():
    from hermes_mlx.summarizer.compaction_stubs import stub_arguments
    from hermes_mlx.summarizer.tool_results import failed_field, tool_output

    assert failed_field("# Responses\n\nThe user denied this operation.\n") == ""
    assert stub_arguments("[terminal] ran `make` -> exit ?, 0 lines output") == {"command": "make"}
    for printed in (
        "[build] done in 2.3s (cached)",
        "[info] read config.json (ok)",
        "[server] listening in prod (port 8080)",
    ):
        assert stub_arguments(printed) == {} and tool_output(printed) == printed
    assert stub_arguments("[read_file] read ? from line 1 (0 chars)") == {}


def test_a_link_in_code_or_an_image_is_kept_and_two_spellings_of_a_command_keep_the_first():
    from hermes_mlx.summarizer.sentences import paragraphs
    from hermes_mlx.summarizer.vocabulary import with_command_keys

    [said] = paragraphs("The route is `handlers[name](/api/v1)` and the shot is ![shot](/tmp/shot.png) here.")
    assert said == ["The route is `handlers[name](/api/v1)` and the shot is ![shot](/tmp/shot.png) here."]
    assert with_command_keys({"COMMAND": "a", "Command": "b"}) == {"command": "a", "Command": "b"}


def test_a_programs_own_bracketed_failure_is_no_hermes_stub():
    from hermes_mlx.summarizer.compaction_stubs import stub_failure

    assert stub_failure("[x] Tests FAILED: 3 of 10") == "" and stub_failure("[web] FAILED: timeout") == ""
    assert stub_failure("[web_search] query='hermes' (52 chars result) FAILED: rate limited") == "rate limited"


# the end-to-end review: a turned-down call is the user's decision, never the Open error; the user's words after
# Cline's todo note stay; a directive read back is never a piece a cut broke off
def test_a_turned_down_call_is_no_open_error():
    s = one_pass(
        [
            {"role": "user", "content": "Add a rate limiter."},
            {"role": "assistant", "content": "", "tool_calls": [call("c1", "terminal", command="npx tsc --noEmit")]},
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": "src/api.ts(12,7): error TS2322: Type 'string' is not assignable.\nexit code: 2",
            },
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [call("c2", "write_to_file", path="src/middleware/limiter.ts", content="x")],
            },
            {
                "role": "tool",
                "tool_call_id": "c2",
                "content": "The user denied this operation. The file was not created.",
            },
        ]
    )
    [opened] = [x for x in s.state if x.startswith("Open error")]
    assert "TS2322" in opened and any("denied" in e.line for e in s.ledger.errors)


def test_the_users_words_after_a_todo_note_are_kept():
    from hermes_mlx.summarizer.harness import without_automated

    note = _TODO_NOTE + "Use the redis store for the limiter, we run 4 instances."
    assert without_automated(note) == "Use the redis store for the limiter, we run 4 instances."
    unclosed = "# TODO LIST RECOMMENDED\nWhen starting a new task, create a todo list.\n\nUse the redis store."
    assert "Use the redis store." in without_automated(unclosed)


def test_no_directive_is_read_back_from_either_side_of_a_cut():
    from hermes_mlx.summarizer.directives import directives_within

    line = (
        "We are migrating billing and keep the old totals column only for reporting until the f … services must "
        "keep the totals column written for now. Never push to main directly, open a PR from a branch."
    )
    assert directives_within(line) == ["Never push to main directly, open a PR from a branch."]


# the end-to-end review: a user named dev (`/home/dev/…`) had every file read back as a device's, and a micro
# pass whose files lay there failed verification ("ledger does not parse back"), 3 passes of 9
def test_files_under_a_home_named_dev_are_files_and_a_device_is_not():
    from hermes_mlx.summarizer.ledger import Ledger

    led = Ledger()
    for p in ("/home/dev/ledger/services/billing/f0.py", "/dev/null", "/proc/self/status", "/usr/lib/x.so"):
        led.add_file(p, "edited")
    assert list(led.files) == ["/home/dev/ledger/services/billing/f0.py"]
    back = parse("## Files\n- `/home/dev/ledger/services/billing/f0.py` (edited)\n")
    assert back.ledger.files == {"/home/dev/ledger/services/billing/f0.py": "edited"}
