"""What a thirteenth round's held-out sessions showed, each with a second source named per test.
Checks go through whole passes of the summarizer or compactor where a user's run would.
"""

from summarizer_fakes import one_pass, ran


def asked(request: str, steps: list[dict], said: str, reply: str = "ok"):
    """One batch pass over a user's request, the calls made for it, what the agent said, the user's reply."""
    return one_pass(
        [
            {"role": "user", "content": request},
            *steps,
            {"role": "assistant", "content": said},
            {"role": "user", "content": reply},
        ]
    )


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


def test_a_pruning_pass_keeps_a_sub_agents_report_whole_when_that_still_gets_under():
    from hermes_mlx.compactor.batch import PRUNED_TAG, prune_tool_results

    middle = [
        *ran("c1", "Task", REPORT, description="Explore"),
        *ran("c2", "delegate_task", REPORT.replace("12", "13"), goal="check the sheet"),
        *ran("c3", "Read", "x = 1\n" * 200, file_path="stack.tsx"),
    ]
    assert prune_tool_results(middle)[1] == 3  # what a pass prunes when keeping them would not get it there
    out, pruned, _ = prune_tool_results(middle, keep_reports=True)
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
    s = asked(
        "add the subcommands and run the tests",
        [*ran("c1", "shell", wrapped, command=["bash", "-lc", "pytest -q"])],
        "The tests cannot import `opk` from the repo root.",
        "go on",
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
    s = asked(
        "review the spec",
        [*ran("c1", "shell", one_line("shell", raw), command=["bash", "-lc", "sed -n '1,260p' docs/spec.md"])],
        "The spec covers install and rollback in section F.",
        "ok",
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
    s = asked(
        "redeploy the API",
        [
            *ran("c1", "run_terminal_cmd", PARSER, command="cd terraform && terraform apply -auto-approve"),
            *ran("c2", "run_terminal_cmd", "\nPS E:\\Dev\\app\\terraform>", command="terraform plan"),
        ],
        "PowerShell 5 has no `&&`; I ran the steps one at a time.",
        "ok",
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


# the rules review of this round's rules (reproductions in the round's notes): a record's message starts at its
# `Source : ` line, never the output above it or a line before the prompt; a program's stderr that PowerShell 5
# wraps as a NativeCommandError record (`git : Switched to a new branch`) is no error unless its line is one
def test_a_powershell_record_is_never_the_output_above_it_nor_a_programs_notice():
    from hermes_mlx.summarizer.error_lines import scan_errors

    record = (
        "{msg}\nAt line:1 char:40\n+ dotnet restore; Remove-Item bin -Recurse\n+                 ~~~~~~~~~~\n"
        "    + CategoryInfo          : ObjectNotFound: (C:\\src\\bin:String) [Remove-Item], ItemNotFoundException\n"
        "    + FullyQualifiedErrorId : {fqid}\n"
    )
    missing = "Remove-Item : Cannot find path 'C:\\src\\bin' because it does not exist."
    output = "Restoring packages for C:\\src\\app.csproj...\nAll projects are up-to-date for restore.\n"
    assert scan_errors(output + record.format(msg=missing, fqid="PathNotFound"))[0] == [missing]
    echoed = "Build succeeded.\nPS C:\\src> dotnet build; Remove-Item bin\n"
    assert scan_errors(echoed + record.format(msg=missing, fqid="PathNotFound"))[0] == [missing]
    notice = "git : Switched to a new branch 'feature/login'"
    assert scan_errors(record.format(msg=notice, fqid="NativeCommandError"))[0] == []
    failed = "python : ModuleNotFoundError: No module named 'foo'"
    assert scan_errors(record.format(msg=failed, fqid="NativeCommandError"))[0] == [failed]


# a label that leads a question, an offer or a plan is no finding ("**Problem:** should we keep the retry?")
def test_a_label_before_a_question_an_offer_or_a_plan_still_announces():
    from hermes_mlx.summarizer.findings import is_announcement

    for s in (
        "**Fix:** I'll look at the queue worker next and then decide.",
        "**Problem:** should we keep the retry in `client.py` or move it to the queue?",
        "**Solution:** If you want, I can also add a retry.",
        "Issue: Let me re-run the tests to see if it reproduces.",
    ):
        assert is_announcement(s), s


# a sub-agent's refusal, error or status is no report, a JSON answer's report is its summary field, and the
# trailer goes whether or not `<usage>` follows it; a user's own `<usage>` block is theirs, whole
def test_only_a_sub_agents_report_is_read_as_findings_and_a_users_usage_block_stays():
    from hermes_mlx.summarizer.text import normalize
    from hermes_mlx.summarizer.written import delegate_reports

    def reports(result: str) -> dict:
        return delegate_reports(normalize([*ran("t1", "Task", result, description="look")]))

    assert reports("The user doesn't want to proceed with this tool use. The tool use was rejected. " * 4) == {}
    assert reports("Error: Agent type 'code-reviewer' not found. Available agents: general-purpose, Explore " * 3) == {}
    assert reports("Agent stopped: the maximum number of turns (25) was reached.") == {}
    found = "The cache key in `src/cache.ts` omits the locale, so French users get English pages. " * 3
    assert reports(found + "\nagentId: a3a6980a87c9a2b58 (for resuming to continue this agent's work if needed)") == {
        1: found.strip()
    }
    import json

    assert reports(json.dumps({"results": [{"task_index": 0, "status": "completed", "summary": found}]})) == {
        1: found.strip()
    }
    spec = "Write a CLI `pkgsync` like this:\n<usage>\npkgsync pull <remote> [--force]\n</usage>\nKeep it in `cli/pkgsync.py`."
    assert normalize([{"role": "user", "content": spec}])[0].text == spec


# a session whose old output is mostly sub-agent reports: when keeping them whole would not get a pruning
# pass under its target, the summary reads them (a pass that only pruned had left each one's first line);
# if the summary fails, the pruning is what the pass leaves, as before (the review's reproduction)
def test_reports_too_big_to_keep_are_summarized_and_pruned_when_the_summary_fails():
    from summarizer_fakes import code_summarizer, rough_count

    from hermes_mlx.compactor.batch import BatchCompactor
    from hermes_mlx.summarizer import MLXSummarizer

    report = (
        "## Findings\n\nThe middleware reads the token in `src/auth.ts`.\n"
        + "Checked `src/routes/f.ts`: nothing.\n" * 250
    )
    msgs = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "audit the auth flow"},
    ]
    for k in range(6):
        msgs += [*ran(f"t{k}", "Task", report.replace("f.ts", f"f{k}.ts"), description=f"area {k}")]
        msgs += [
            {"role": "assistant", "content": f"Report {k} read."},
            {"role": "user", "content": f"continue with {k}"},
        ]
    msgs += [{"role": "assistant", "content": "Now summarizing."}, {"role": "user", "content": "go on"}]
    r = BatchCompactor(code_summarizer(), threshold_tokens=12000, tail_tokens=300).compact(msgs)
    assert r.outcome != "pruned" and "src/auth.ts" in str(r.messages)

    class Down(MLXSummarizer):
        def update(self, *a, **k):
            raise RuntimeError("summarizer down")

    r = BatchCompactor(Down(score=None, count_tokens=rough_count), threshold_tokens=12000, tail_tokens=300).compact(
        msgs
    )
    assert r.outcome == "pruned" and r.changed


# a change of approach said with what the new one does is a decision, not what comes next (OpenCode's held-out
# "Let me use a different approach to count speaker notes." after `grep -P` failed on macOS; Cursor's held-out
# "Let me try a different approach and analyze the issues based on what I can see from the files"); a bare
# "Let me try a different approach." or one before a colon still announces
def test_a_change_of_approach_with_what_it_does_is_a_decision():
    from hermes_mlx.summarizer.findings import is_announcement, is_musing

    for s in (
        "Let me use a different approach to count speaker notes.",
        "Let me try a different approach and analyze the issues based on what I can see from the files",
    ):
        assert not is_announcement(s) and not is_musing(s), s
    assert is_announcement("Let me try a different approach.")
    assert is_announcement("Let me try a different approach to get the documentation:")


# aider's own history file quotes what its console printed (`> Commit 8145bab chore: …  `, markdown's quote and
# two-space line break: the corpora's aider sessions' source files, a held-out one converted as written): read
# less the quote marks, its commits are outcomes; a shell's `> ` echo before real output is not a quote
def test_a_quoted_console_is_read_as_printed():
    from hermes_mlx.summarizer.tool_results import tool_output

    quoted = "> Tokens: 6.3k sent, 191 received.  \n> Applied edit to nginx/q.conf  \n> Commit 8145bab chore: Remove auth check  \n"
    assert (
        tool_output(quoted)
        == "Tokens: 6.3k sent, 191 received.\nApplied edit to nginx/q.conf\nCommit 8145bab chore: Remove auth check"
    )
    echo = "> import os\n> print(1)\n1\n"
    assert tool_output(echo) == echo
    s = asked(
        "why does qbittorrent redirect to admin?",
        [*ran("c1", "aider", quoted, stream="aider console output")],
        "The auth check is gone; reload nginx and try again.",
        "ok",
    )
    assert any("Commit 8145bab chore: Remove auth check" in c.outcome for c in s.ledger.commands)


# the end-to-end review's hand-made sessions: Gemini CLI's first turn (its environment, sent in the user's name;
# a held-out Gemini CLI session opens with it) is no Goal, nor is Copilot's `@agent Continue: "Continue to
# iterate?"` button (a held-out Copilot session; exported chats of many repositories show it); and a numbered line
# an edit tool echoes from the file it changed (Claude Code's `2→// error: …`) is no error, as a read's is not
def test_harness_turns_are_no_goal_and_an_edits_echoed_file_line_no_error():
    gemini = (
        "This is the Gemini CLI. We are setting up the context for our chat.\nToday's date is Saturday, December 7, "
        "2024.\nMy operating system is: linux\nI'm currently working in the directory: /home/a/proj"
    )
    for first in (gemini, '@agent Continue: "Continue to iterate?"'):
        s = one_pass(
            [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "hello"},
                {"role": "user", "content": first},
                {"role": "assistant", "content": "Got it."},
                {"role": "user", "content": "Make the retry policy respect Retry-After on 429."},
                {"role": "assistant", "content": "I'll read `retry.go` first."},
            ]
        )
        assert s.goal.startswith("Make the retry policy"), s.goal
    snippet = (
        "The file /w/src/lib/redis.ts has been updated. Here's the result of running `cat -n` on a snippet of the "
        "edited file:\n     2→// error: connection refused is expected in local dev\n     3→export const redis = 1;"
    )
    s = asked(
        "Make the redis client fail fast.",
        [*ran("c1", "Edit", snippet, file_path="/w/src/lib/redis.ts", old_string="20", new_string="1")],
        "Done: one retry per request.",
        "thanks",
    )
    assert not any("connection refused" in e.line for e in s.ledger.errors + s.ledger.resolved)


# the second rules review (reproductions in the round's notes): a PowerShell record with no `Source : ` line is the
# line above `At` (a method's null-valued expression, a script's `throw`), and a script's path is a source; a
# report that opens with the error it explains is read; a label before a plain finding stays one; a search for
# "another way" still announces; a user's own "@agent continue the migration …" is their request; a terminal
# reader's long output keeps its result and error when pruned; a shell's `> ` echo is no quoted console
def test_the_second_reviews_cases():
    from hermes_mlx.compactor.batch import one_line
    from hermes_mlx.summarizer.digest import machine_written
    from hermes_mlx.summarizer.error_lines import scan_errors
    from hermes_mlx.summarizer.findings import is_announcement
    from hermes_mlx.summarizer.text import normalize
    from hermes_mlx.summarizer.tool_results import tool_output
    from hermes_mlx.summarizer.written import delegate_reports

    record = "{msg}\nAt C:\\x\\deploy.ps1:12 char:5\n+     throw $x\n+     ~~~~~~~~\n    + CategoryInfo          : x\n"
    for msg in ("You cannot call a method on a null-valued expression.", "Deployment failed: missing appsettings.json"):
        assert scan_errors("Restoring…\n" + record.format(msg=msg))[0] == [msg]
    policy = (
        ".\\deploy.ps1 : File C:\\x\\deploy.ps1 cannot be loaded because running scripts is disabled on this system."
    )
    assert scan_errors(record.format(msg=policy))[0] == [policy]
    report = (
        "Error: useAuth must be used within an AuthProvider is thrown on the login page.\n\nThe crash comes from " * 3
    )
    assert delegate_reports(normalize(ran("t1", "Task", report, description="debug"))) == {1: report.strip()}
    assert not is_announcement("**Root cause:** Let me be clear — the cache key in `src/fmt.py` omits the locale, so …")
    assert is_announcement("Let me check if there is another way to do this.")
    assert is_announcement("Let me try another way to run the tests.")
    assert not machine_written("@agent continue the migration to Vite; never edit vite.config.ts by hand")
    assert machine_written('@agent Continue: "Continue to iterate?"')
    run = (
        "test_0 PASSED\n" * 400
        + "FAILED tests/test_api.py::test_login - AssertionError\n1 failed, 400 passed in 12.3s\n"
    )
    assert "result: 1 failed, 400 passed" in one_line("get_terminal_output", run)
    echo = "> ERROR: connection refused\n> retrying\n"
    assert tool_output(echo) == echo


# files alike but for their numbers (Hermes's probe `~/patch_test_10k.txt` … `_64k.txt`, npm's dated debug logs in a
# held-out Cursor session) tell a reader one thing: after the first, each is worth what a command run again is,
# so a finding outlives the ninth size of a probe
def test_files_alike_but_for_their_numbers_are_worth_less_after_the_first():
    from hermes_mlx.summarizer.budget import SAID_LATER, _entries
    from hermes_mlx.summarizer.summary import parse

    s = parse(
        "## Files\n- `~/patch_test_10k.txt` (edited)\n- `~/patch_test_30k.txt` (edited)\n- `src/app.py` (edited)\n"
    )
    worth = {e.kind: [] for e in _entries(s, len)}
    for e in _entries(s, len):
        worth[e.kind].append(e.value * e.tokens)
    first, second, other = worth["changed_file"]
    assert abs(second - first * SAID_LATER) < 1e-9 and abs(other - first) < 1e-9


# a command that only prints its own here-document (OpenCode's held-out `cat << 'EOF'` checklist, "✓ Created file:
# state-of-ai-2026.2.md"; Claude Code's and OpenCode's "IMPLEMENTATION COMPLETE" summaries in public transcripts)
# prints the agent's own words: no result line; one that writes or pipes its here-document is another matter
def test_a_here_document_printed_to_the_terminal_is_no_result():
    from hermes_mlx.summarizer.shell_words import prints_own_text

    assert prints_own_text("cat << 'EOF'\n=== DONE ===\nEOF") and prints_own_text('cat <<- "END"\n x\nEND')
    assert not prints_own_text("cat << 'EOF' > notes.md\nx\nEOF") and not prints_own_text(
        "cat << 'EOF' | python3\nx\nEOF"
    )
    checklist = "=== TASK COMPLETION VALIDATION ===\n\n✓ Created file: deck.md\n✓ 12 slides"
    s = asked(
        "build the deck",
        ran("c1", "bash", checklist, command=f"cat << 'EOF'\n{checklist}\nEOF"),
        "The deck is built.",
    )
    assert not any(c.outcome for c in s.ledger.commands)
