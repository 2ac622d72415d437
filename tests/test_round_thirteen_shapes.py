"""What a thirteenth round's held-out sessions showed, each with a second source named per test.
Checks go through whole passes of the summarizer or compactor where a user's run would.
"""

from summarizer_fakes import one_pass, ran


# a structured report's label says what follows is what it found or did (Cursor's held-out CI analysis:
# "**Fix**: Add the missing `type-check` script to the root `package.json`:" before the JSON; Claude Code's
# "**Solution:** Before rendering events for each day, estimate if all events will fit:" in the corpora)
def test_a_labelled_fix_or_solution_is_a_finding_whatever_its_verb_or_colon():
    from hermes_mlx.summarizer.findings import is_announcement

    assert not is_announcement("**Fix**: Add the missing `type-check` script to the root `package.json`:")
    assert not is_announcement("**Solution:** Before rendering events for each day, estimate if all events will fit:")
    assert not is_announcement("Root cause: the pool is closed before the drain finishes.")
    assert is_announcement("Let me add the missing `type-check` script:")
    assert is_announcement("**Fixing the build**: let me check the config.")
    s = one_pass(
        [
            {"role": "user", "content": "CI fails on type-check, please fix"},
            *ran("c1", "read_file", '{"scripts": {"build": "next build"}}', target_file="package.json"),
            {
                "role": "assistant",
                "content": "### Root Cause #1: Missing `type-check` Script\n"
                "**Fix**: Add the missing `type-check` script to the root `package.json`:\n\n"
                '```json\n"type-check": "tsc --noEmit"\n```',
            },
            {"role": "user", "content": "thanks"},
        ]
    )
    assert any("Add the missing `type-check` script" in p for p in s.progress)


# another agent's report is the session's own findings (Claude Code's Explore sub-agent, held out: "**What's
# missing:** `ColorSchemeProvider` is NOT wrapped around the dialog content!"; the corpora's week-widget
# session kept its facts in such a report too); its Claude Code trailer (`agentId: … (for resuming …)`,
# `<usage>…</usage>`, three corpora sessions) is no one's words
REPORT = (
    "Perfect! Now I have all the pieces.\n\n## Key Findings\n\n"
    "**What's missing:** `ColorSchemeProvider` is NOT wrapped around the dialog content in `stack.tsx`!\n"
    "So `useColorScheme()` inside the dialog reads the parent context, and `CodeBlockRenderer` picks the wrong theme.\n"
    + "Checked file number 12 of the dialog package for providers and found none there.\n"
    * 20
    + "    agentId: a3a6980a87c9a2b58 (for resuming to continue this agent's work if needed)\n"
    "    <usage>total_tokens: 59501\n    tool_uses: 31\n    duration_ms: 65706</usage>\n"
)


def test_a_sub_agents_report_is_read_as_the_agents_findings_less_its_trailer():
    s = one_pass(
        [
            {"role": "user", "content": "the code block in the dialog has the wrong color scheme"},
            *ran(
                "c1",
                "Agent",
                REPORT,
                description="Explore color scheme",
                prompt="find how the theme reaches code blocks",
            ),
            {"role": "assistant", "content": "I'll wrap the dialog content in `ColorSchemeProvider`."},
            {"role": "user", "content": "go on"},
        ]
    )
    said = "\n".join(s.progress)
    assert "`ColorSchemeProvider` is NOT wrapped around the dialog content" in said
    assert "agentId" not in said and "tool_uses" not in said and "usage>" not in said


def test_a_pruning_pass_keeps_a_sub_agents_report_whole():
    from hermes_mlx.compactor.batch import PRUNED_TAG, prune_tool_results

    middle = [
        *ran("c1", "Task", REPORT, description="Explore"),
        *ran("c2", "delegate_task", REPORT.replace("12", "13"), goal="check the sheet"),
        *ran("c3", "Read", "x = 1\n" * 200, file_path="stack.tsx"),
    ]
    out, pruned, _ = prune_tool_results(middle)
    assert pruned == 1
    assert out[1]["content"] == REPORT and out[3]["content"] == REPORT.replace("12", "13")
    assert out[5]["content"].startswith(PRUNED_TAG)


# Codex CLI's sandbox error wraps what a failed command printed (held-out Codex session: "failed in sandbox
# LinuxSeccomp with execution error: sandbox denied exec error, exit code: 2, stdout: … ModuleNotFoundError:
# No module named 'opk' …, stderr: "; codex-rs's SandboxErr::Denied message, which other tools parse alike)
def test_codexs_sandbox_error_is_read_as_the_commands_status_and_output():
    from hermes_mlx.summarizer.tool_results import exit_status, tool_output

    wrapped = (
        "failed in sandbox LinuxSeccomp with execution error: sandbox denied exec error, exit code: 2, stdout: \n"
        "==== ERRORS ====\nE   ModuleNotFoundError: No module named 'opk'\n2 errors in 0.27s\n, stderr: "
    )
    assert exit_status(wrapped) == 2
    assert tool_output(wrapped) == "==== ERRORS ====\nE   ModuleNotFoundError: No module named 'opk'\n2 errors in 0.27s"
    err = "failed in sandbox MacosSeatbelt with execution error: sandbox denied exec error, exit code: 127, stdout: , stderr: bash: dist: command not found"
    assert tool_output(err) == "bash: dist: command not found"
    s = one_pass(
        [
            {"role": "user", "content": "add the subcommands and run the tests"},
            *ran("c1", "shell", wrapped, command=["bash", "-lc", "pytest -q"]),
            {"role": "assistant", "content": "The tests cannot import `opk` from the repo root."},
            {"role": "user", "content": "go on"},
        ]
    )
    assert any("No module named 'opk'" in e.line for e in s.ledger.errors)


# a pruned read's placeholder counts the lines the read printed, not the JSON result's one escaped line: a
# 258-line spec read by Codex (`{"output": "# Spec\n…", "metadata": {"exit_code": 0}}`) counted as 1 line was
# read back as a failed short read, and its "* Permission denied → clear message" line became its result
def test_a_pruned_json_read_counts_its_output_lines_and_has_no_result_line():
    import json

    from hermes_mlx.compactor.batch import one_line

    spec = "# Spec\n\n" + "* a line of the spec\n" * 120 + "* Permission denied → clear message and instructions.\n"
    raw = json.dumps({"output": spec, "metadata": {"exit_code": 0}})
    assert ", 123 lines," in one_line("shell", raw)
    s = one_pass(
        [
            {"role": "user", "content": "review the spec"},
            *ran("c1", "shell", one_line("shell", raw), command=["bash", "-lc", "sed -n '1,260p' docs/spec.md"]),
            {"role": "assistant", "content": "The spec covers install and rollback in section F."},
            {"role": "user", "content": "ok"},
        ]
    )
    assert not any("Permission denied" in c.outcome for c in s.ledger.commands)


# PowerShell's error record (a held-out Cursor session on Windows; the same records in Copilot's and Codex's
# Windows terminals): the message, wrapped at the console's width, not the `+ CategoryInfo : ParserError: …`
# field whose type name looked like the error; the prompt PowerShell prints after a command is no result
PARSER = (
    "PS E:\\Dev\\app> cd terraform && terraform apply -target=aws_api_gate\nway_deployment.api -auto-approve\n"
    "At line:1 char:14\n+ cd terraform && terraform apply -target=aws_api_gateway_deployment.vi ...\n"
    "+              ~~\nThe token '&&' is not a valid statement separator in this version.\n"
    "    + CategoryInfo          : ParserError: (:) [], ParentContainsErrorRecordEx \n   ception\n"
    "    + FullyQualifiedErrorId : InvalidEndOfLine\n \nPS E:\\Dev\\app>"
)
CMDLET = (
    "\n\nGet-Date : Parameter cannot be processed because the parameter name 'd' is ambiguous. Possible matches \n"
    'include: -Date -Day -DisplayHint -Debug.\nAt line:1 char:134\n+ ... --start-time $(date -d "10 min ...\n'
    "+                                   ~~\n    + CategoryInfo          : InvalidArgument: (:) [Get-Date], Parameter \n"
    "   BindingException\n    + FullyQualifiedErrorId : AmbiguousParameter,Microsoft.PowerShell.Commands.GetDateCommand\n"
)


def test_a_powershell_error_record_is_its_message_and_its_prompt_no_result():
    from hermes_mlx.summarizer.error_lines import scan_errors

    assert scan_errors(PARSER)[0] == ["The token '&&' is not a valid statement separator in this version."]
    assert scan_errors(CMDLET)[0] == [
        "Get-Date : Parameter cannot be processed because the parameter name 'd' is ambiguous. Possible matches "
        "include: -Date -Day -DisplayHint -Debug."
    ]
    s = one_pass(
        [
            {"role": "user", "content": "redeploy the API"},
            *ran("c1", "run_terminal_cmd", PARSER, command="cd terraform && terraform apply -auto-approve"),
            *ran("c2", "run_terminal_cmd", "\nPS E:\\Dev\\app\\terraform>", command="terraform plan"),
            {"role": "assistant", "content": "PowerShell 5 has no `&&`; I ran the steps one at a time."},
            {"role": "user", "content": "ok"},
        ]
    )
    said = [e.line for e in s.ledger.errors + s.ledger.resolved] + [c.outcome for c in s.ledger.commands]
    assert any("is not a valid statement separator" in x for x in said)
    assert not any("CategoryInfo" in x or x.startswith("PS E:") for x in said)


# a reading tool's long output, pruned, keeps no line of the file as its result or error (Gemini CLI's held-out
# read_file of a Go file: `result := "Agent execution was terminated …"`, `// Handle error: tool not found`
# became an Error of the summary; the corpora's reads of Python gave `error: Optional[str] = None`)
def test_a_pruned_long_read_keeps_no_line_of_the_file_as_result_or_error():
    from hermes_mlx.compactor.batch import one_line

    source = (
        "package agents\n\n"
        + "\tx := 1\n" * 100
        + (
            '\tresult := "Agent execution was terminated before completion."\n'
            "\tif err != nil {\n\t\t// Handle error: tool not found\n\t\treturn\n\t}\n"
        )
    )
    assert one_line("read_file", source).endswith(" chars; first line: package agents]")
    assert "error: " in one_line("terminal", source + "\nError: build failed\nexit code: 1")
