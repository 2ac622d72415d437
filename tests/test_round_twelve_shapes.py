"""What a twelfth round's held-out sessions showed, each with a second source named per test.
Checks go through whole passes of the summarizer where a user's run would.
"""

from summarizer_fakes import call, one_pass, ran  # noqa: F401


# a cut error line can end in what reads as a credential's value (Cursor's held-out `bun test`:
# `… cannot change to '/…/test-session': No such file or directory` shown as `…test-session': No…`), which
# the verifier found as a secret: every pass of that session failed; the same cut of any `token: …`,
# `session: …` or `password …` phrase in a long line did it (the clip is shared by every list)
def test_a_cut_line_never_reads_as_a_secret_the_whole_line_was_not():
    from hermes_mlx.summarizer.redact import redact
    from hermes_mlx.summarizer.text import clip

    for line in (
        "stderr: \"fatal: cannot change to '/Users/u/.local/state/minsky/git/repo/test-session': No such file or dir\"",
        "ValueError: the refresh token: None was given where the login flow expected a mapping of scopes here",
    ):
        assert redact(line) == line
        for n in range(40, len(line)):
            cut = clip(line, n)
            assert redact(cut) == cut, cut


# a script's verdict as a count with a pass word (IBM Bob's held-out `CITADEL Test Suite: 76/76 PASS`; the
# issue's "`npm test` passed: N/N" shape, which the agent's own reports already counted as a verdict)
def test_a_count_with_a_pass_word_is_a_runs_verdict_and_a_short_count_no_pass():
    from hermes_mlx.summarizer.outcomes import all_passed, outcome_of

    out = "L0: scaffold\n  [✓ PASS] L0: healthcheck\n=====\nCITADEL Test Suite: 76/76 PASS\nAll layers PASS\n====="
    assert outcome_of(out, 0) == ("tests", "CITADEL Test Suite: 76/76 PASS")
    assert outcome_of("checks\nResults: passed 12/12\n", 0) == ("tests", "Results: passed 12/12")
    assert all_passed("tests", "CITADEL Test Suite: 76/76 PASS")
    assert not all_passed("tests", "CITADEL Test Suite: 75/76 PASS")
    assert not all_passed("tests", "3 of 5 tests passed")


# the rules review of round eleven's rules: each a regression a6f02c7 did not have, its shape in other agents'
# runs (Codex, Claude Code, Gemini CLI, Aider); reproductions of whole passes in the round's notes
def test_an_install_is_a_step_the_shell_runs_led_by_its_package_manager():
    from hermes_mlx.summarizer.shell_words import installs_missing

    flask = "ModuleNotFoundError: No module named 'flask'"
    assert installs_missing("pip install flask -q", flask)
    assert installs_missing("cd app && sudo python3 -m pip install flask", flask)
    assert not installs_missing("cat > Dockerfile <<'EOF'\nFROM python:3.12\nRUN pip install flask\nEOF", flask)
    assert not installs_missing('grep -rn "npm install esbuild" README.md', "Error: Cannot find module 'esbuild'")


def test_a_runners_count_at_exit_0_stands_whatever_shutdown_noise_follows():
    from hermes_mlx.summarizer.outcomes import outcome_of

    out = "........\n8 passed in 1.21s\nException ignored in: <function X.__del__>\nRuntimeError: Event loop is closed"
    assert outcome_of(out, 0) == ("tests", "8 passed in 1.21s")
    crashed = "Planning test OK\nError [ERR_MODULE_NOT_FOUND]: Cannot find module 'x'"
    assert outcome_of(crashed, 0)[0] == "failure"  # a bare verdict, no count: what failed after it says


def test_a_quantified_verdict_is_no_pass():
    from hermes_mlx.summarizer.outcomes import outcome_of

    for said in ("Most of the tests passed.", "Half the tests passed", "Checking whether tests passed"):
        assert outcome_of(said, 0)[0] != "tests", said


def test_what_a_shell_or_ssh_runs_is_steps_and_a_quoted_argument_is_data():
    from hermes_mlx.summarizer.outcomes import may_hide
    from hermes_mlx.summarizer.shell_words import blind_step

    assert may_hide('docker compose exec api sh -c "npm test 2>&1 | head -3"')
    assert blind_step("ssh deploy@host 'cd app; make restart'")
    assert not blind_step("python -c 'import stripe; print(stripe.VERSION)'")
    assert not may_hide("grep -E 'a|b' src/x.py")


def test_a_port_is_what_failed_not_where():
    from hermes_mlx.summarizer.error_lines import error_shape

    assert error_shape("connect ECONNREFUSED 127.0.0.1:5432") != error_shape("connect ECONNREFUSED 127.0.0.1:6379")
    assert error_shape("Config.kt:147:12: error: x") == error_shape("Config.kt:9:1: error: x")
    assert error_shape("Tests.cs(11,23): error CS1519") == error_shape("Tests.cs(11,34): error CS1519")
    assert error_shape("  12:4  error  'a' is unused") == error_shape("  30:9  error  'a' is unused")


def test_a_request_that_sends_is_no_page_read():
    from hermes_mlx.summarizer.shell_words import fetches_web

    assert fetches_web("curl -sL https://example.org/docs | head -50")
    assert not fetches_web('curl -s -X POST https://api.github.com/repos/a/b/pulls -d \'{"title": "x"}\'')
    assert not fetches_web("curl -s https://api.vercel.com/v13/deployments --data @deploy.json")


def test_an_edit_tools_automatic_commit_leaves_a_failed_test_open():
    s = one_pass(
        [
            {"role": "user", "content": "pytest tests/test_cart.py fails, fix the rounding"},
            *ran(
                "c1",
                "run",
                "FAILED tests/test_cart.py::test_total - AssertionError: assert 9.99 == 10.0\n1 failed in 0.1s",
                command="pytest -q tests/test_cart.py",
            ),
            *ran("c2", "patch", "Applied edit to shop/cart.py\nCommit 3e1f0a2 fix: quantize", path="shop/cart.py"),
            {"role": "assistant", "content": "I changed the rounding to quantize."},
        ]
    )
    assert any(x.startswith("Open error") and "test_total" in x for x in s.state)


def test_one_file_given_two_ways_is_one_heading():
    from hermes_mlx.summarizer.ledger import ErrorItem, Ledger
    from hermes_mlx.summarizer.summary import Summary, render

    led = Ledger(root="/home/u/app")
    led.errors = [
        ErrorItem("Could not find a match", "patch /home/u/app/src/c.py"),
        ErrorItem("No match", "patch src/c.py"),
    ]
    text = render(Summary(goal="Fix c.py", ledger=led))
    assert text.count("- after `patch src/c.py`:") == 1


# Hermes sends notices in the user's role (its `[IMPORTANT: Background process … completed`, `[ASYNC DELEGATION`,
# the todo list carried over a compression): a held-out Hermes session's Goal had been a push's rejection; the
# notices' own markers are listed by Hermes's code and by clients that render them as notes, not user bubbles.
# What a background run printed, in that notice, is its command's result (` ! [remote rejected] main -> main
# (refusing …)`, git's own line for a push turned down, as `! [rejected] … (fetch first)` is)
def test_hermes_notices_are_no_goal_and_a_background_runs_end_is_its_commands_result():
    s = one_pass(
        [
            {"role": "user", "content": "Merge upstream into my fork and keep my skills folder."},
            *ran(
                "c1",
                "terminal",
                '{"output": "Background process started", "exit_code": 0}',
                command="git push origin main",
            ),
            {
                "role": "user",
                "content": "[IMPORTANT: Background process proc_6361b64bb6fb completed (exit code 1).\nCommand: git push "
                "origin main\nOutput:\nTo https://github.com/me/fork.git\n ! [remote rejected] main -> main (refusing to "
                "allow an OAuth App to create or update workflow)\nerror: failed to push some refs]",
            },
            {"role": "assistant", "content": "The push was rejected for the workflow scope."},
        ]
    )
    assert s.goal.startswith("Merge upstream")
    assert not any("IMPORTANT" in a for a in s.ledger.asks)
    lines = [e.line for e in s.ledger.errors]
    assert any("[remote rejected] main -> main (refusing to allow an OAuth App" in x for x in lines), lines
    assert any(x.startswith("Open error") for x in s.state)


# a step said with its reason, ending on the colon before the call that takes it (Claude Code's "Now let me also
# remove the `.dialyzerignore` file since we no longer need it:", Hermes's Chinese "直接使用上游的 README（因为上游的是
# 官方文档）："): a decision, not an announcement; a read with its reason still announces
def test_a_step_with_its_reason_before_a_colon_is_a_decision():
    from hermes_mlx.summarizer.findings import changes_course, is_announcement

    assert not is_announcement("Now let me also remove the `.dialyzerignore` file since we no longer need it:")
    assert not is_announcement("直接使用上游的 README（因为上游的是官方文档）：")
    assert is_announcement("Let me check L003.py since it is large:")
    assert is_announcement("Let me read the README since it explains the setup:")
    assert changes_course("需要**先移除 skills 目录**，合并后再恢复：")  # "we need to remove …" said in Chinese


# a terminal's prompt with the command typed at it (Cursor's `me@host app % bun run …` around what it printed)
# and an export's record of the call (Copilot's `Ran terminal command: cargo test`) are no result of it
def test_an_echo_of_the_command_is_no_result():
    from hermes_mlx.summarizer.error_lines import echoed_lines

    assert echoed_lines("Ran terminal command: cargo test", "cargo test") == ""
    out = 'me@host minsky % bun run cli.ts tasks status set "#008" DONE\nStatus for task #008 updated to: DONE\nme@host minsky %'
    assert echoed_lines(out, 'bun run cli.ts tasks status set "#008" DONE') == "Status for task #008 updated to: DONE"
    assert echoed_lines("compiling\nok", "make test") == "compiling\nok"


# a count of tests and that all passed, in the agent's report (Copilot's "**Total: 33 tests**, all passing", "61
# total tests (including doc tests) - all passing"); "tests to check all passing cases" says no result
def test_a_count_of_tests_all_passing_is_a_report():
    from hermes_mlx.summarizer.outcomes import is_report

    assert is_report("**Total: 33 tests**, all passing successfully.")
    assert is_report("- **61 total tests** (including doc tests) - all passing ✅")
    assert not is_report("I wrote 3 tests to check all passing cases.")


# Bun's and Jest's failed matcher: the values it printed below say what failed (a held-out Cursor session's
# `Received: "/tmp/…/git/test-session"` was the bug)
def test_a_failed_matchers_expected_and_received_values_stay_with_it():
    from hermes_mlx.summarizer.error_lines import scan_errors

    bun = 'error: expect(received).toBe(expected)\n\nExpected: "/tmp/a/repo/s"\nReceived: "/tmp/a/s"\n\n  at x (cd.test.ts:3:1)'
    assert scan_errors(bun)[0] == [
        'error: expect(received).toBe(expected) Expected: "/tmp/a/repo/s"; Received: "/tmp/a/s"'
    ]
    jest = "  ● sum › adds\n\n    expect(received).toBe(expected) // Object.is equality\n\n    Expected: 5\n    Received: 4\n"
    assert scan_errors(jest)[0] == ["● sum › adds Expected: 5; Received: 4"]


# Gemini CLI's shell tool in its older shape (`Stdout: …`, `Stderr: …`, `Error: (none)`, `Exit Code: 1`: its
# source prints both labels, the corpus session's newer one `Output:`): what it printed, never `Error: (none)`
def test_gemini_clis_stdout_and_stderr_labels_are_what_it_printed():
    from hermes_mlx.summarizer.tool_results import tool_output

    out = (
        "Command: go build ./...\nDirectory: (root)\nStdout: (empty)\nStderr: internal/x.go:3:2: no required module "
        "provides package golang.org/x/time/rate\nError: (none)\nExit Code: 1\nSignal: (none)\nBackground PIDs: (none)\n"
        "Process Group PGID: 123"
    )
    assert tool_output(out) == "internal/x.go:3:2: no required module provides package golang.org/x/time/rate"


# aider's prompts sent in the user's role (the files it added, its repository map, a SEARCH/REPLACE block that did
# not apply: the end-to-end review's Aider session and the held-out one) and a user's `/add x` are no goal
def test_aiders_prompts_and_slash_commands_are_no_goal():
    s = one_pass(
        [
            {
                "role": "user",
                "content": "/add src/main/java/Invoice.java\n\n> Added src/main/java/Invoice.java to the chat",
            },
            {
                "role": "user",
                "content": "I have *added these files to the chat* so you can go ahead and edit them.\n\n"
                "*Trust this message as the true contents of these files!*\nsrc/main/java/Invoice.java\n```\nclass Invoice {}\n```",
            },
            {"role": "assistant", "content": "Ok, any changes I propose will be to those files."},
            {"role": "user", "content": "Round the VAT half up in Invoice, and add a test for 1200.03."},
            {"role": "assistant", "content": "I'll use BigDecimal.setScale(2, RoundingMode.HALF_UP) for the VAT."},
        ]
    )
    assert s.goal.startswith("Round the VAT half up"), s.goal


# failures named by what they were doing and an OS error's number (aider's `Error creating file /add: [Errno 30]
# Read-only file system: '/add'`, Gemini CLI's `Error executing tool x: …`), and aider's edit that did not apply
# (`SearchReplaceNoExactMatch: …`, the held-out Aider session's and the end-to-end review's); "Error handling …"
# names no failure
def test_failures_said_by_their_action_an_errno_and_aiders_failed_edit_are_error_lines():
    from hermes_mlx.summarizer.error_lines import is_error_line

    assert is_error_line("Error creating file /add: [Errno 30] Read-only file system: '/add'")
    assert is_error_line("Error executing tool run_shell_command: Command is not allowed")
    assert is_error_line("## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in a.ts")
    assert is_error_line("# 1 SEARCH/REPLACE block failed to match!")
    assert not is_error_line("Error handling is done in main.go: see the wrapper")


# Chinese parity of the English words a finding is read by: need, must, should, not, missing (SIGNAL), "I now …"
# (我现在, as 现在我), and update/add/fix/create as changes (a held-out Hermes session's "… 没有在自检报告中详细展开。
# 我现在更新自检报告，补充…：" is a finding and the change it led to, as "… isn't covered. Let me update …:" is)
def test_a_chinese_finding_and_the_change_it_led_to_is_one_finding():
    from hermes_mlx.summarizer.findings import is_announcement, is_musing

    assert not is_announcement("用户说的是**双层自演进机制**没有在报告中展开。我现在更新自检报告，补充完整的六层架构：")
    assert is_announcement("我现在更新自检报告：")
    assert not is_musing("README 中的描述也需要补充 L6 的细节")


# the names a patch or a diff argument declares (Cursor's `edit_file` diff `+ export interface TestDependencies {`,
# Codex's apply_patch `+def load(…):`, Roo Code's and Cline's SEARCH/REPLACE) and a new file's (`write_to_file`),
# as an edit's new_string already gave them: Identifiers
def test_what_a_patch_or_a_new_file_declares_is_an_identifier():
    from hermes_mlx.summarizer.agent_code import added_code

    diff = "```diff\n  }\n+ // For tests\n+ export interface TestDependencies {\n+   execAsync?: typeof execAsync;\n+ }\n```"
    assert added_code({"target_file": "src/domain/workspace.ts", "diff": diff}) == [
        "export interface TestDependencies {"
    ]
    patch = "*** Begin Patch\n*** Update File: app.py\n@@\n-RETRIES = 2\n+RETRIES = 3\n*** End Patch"
    assert added_code({"input": patch}) == ["RETRIES = 3"]
    replace = "<<<<<<< SEARCH\nTIMEOUT = 5\n=======\nTIMEOUT = 30\n>>>>>>> REPLACE"
    assert added_code({"path": "cfg.py", "diff": replace}) == ["TIMEOUT = 30"]
    new_file = "import os\n\nclass CactusAdapter:\n    def generate(self, prompt: str) -> str:\n        return prompt\n"
    assert added_code({"path": "a.py", "content": new_file}, "created") == [
        "class CactusAdapter:",
        "def generate(self, prompt: str) -> str:",
    ]
    assert added_code({"path": "notes.md", "content": "x = 1\ny = 2\n"}) == []  # not a write: nothing said
    assert added_code({"new_string": "if (ready) {", "old_string": ""}) == []


# a call through an agent's MCP wrapper (Cline's, Roo Code's, IBM Bob's `use_mcp_tool`) is read as the tool it
# names, as Claude Code's `mcp__github__get_file_contents` is: a held-out Cline session's GitHub reads had listed
# the API's blob URLs and made a `Not Found` of a wrong path the Open error; a read that found nothing tells what is
# not there (as a failed `ls` does), while a read tool's other errors stay to act on
def test_an_mcp_wrappers_call_is_the_tool_it_names_and_a_read_that_found_nothing_is_no_open_error():
    import json

    args = {
        "server_name": "github.com/modelcontextprotocol/servers/tree/main/src/github",
        "tool_name": "get_file_contents",
    }
    args["arguments"] = json.dumps({"owner": "cline", "repo": "prompts", "path": "clinerules"})
    s = one_pass(
        [
            {"role": "user", "content": "Read the rules in the cline/prompts repo and design our docs from them."},
            {"role": "assistant", "content": "", "tool_calls": [call("c1", "use_mcp_tool", **args)]},
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": 'Error executing MCP tool: {"code":-32603,"message":"MCP error -32603: Not Found"}',
            },
            {
                "role": "assistant",
                "content": "The folder is `.clinerules`, not `clinerules`; the docs go under ai-dev-docs/.",
            },
        ]
    )
    assert not any(x.startswith("Open error") for x in s.state)
    from hermes_mlx.summarizer.text import normalize

    (t,) = normalize([{"role": "assistant", "content": "", "tool_calls": [call("c1", "use_mcp_tool", **args)]}])
    assert (t.tool_calls[0].name, t.tool_calls[0].arguments["path"]) == ("mcp__github__get_file_contents", "clinerules")
    from hermes_mlx.summarizer.ledger import ErrorItem
    from hermes_mlx.summarizer.state import _to_act_on

    assert _to_act_on(ErrorItem("src/A.cs(3,1): error CS1061: no definition for 'Products'", "get_errors"))


# a handoff read back may list a thing twice (Hermes's own summary: "添加 upstream: `https://…`" under one heading,
# "upstream: `https://…`" under the next; the duplicates a Hermes handoff left in round eleven's and twelve's
# held-out sessions): the later replaces the earlier, unless the earlier says twice as much, as add_progress does
def test_a_narrative_line_that_says_what_an_earlier_one_says_goes():
    from hermes_mlx.summarizer.summary import Summary
    from hermes_mlx.summarizer.verify import unrepeated

    s = Summary(
        progress=[
            "添加 upstream: `https://github.com/nousresearch/hermes-agent.git`",
            "Merged with --allow-unrelated-histories",
            "upstream: `https://github.com/nousresearch/hermes-agent.git`",
            "Reviewing module 3 of the API",
            "Reviewing module 4 of the API",
        ],
        decisions=["Merged with --allow-unrelated-histories -X ours, since skills/ is a repository of its own"],
    )
    unrepeated(s)
    assert s.progress == [
        "upstream: `https://github.com/nousresearch/hermes-agent.git`",
        "Reviewing module 4 of the API",
    ]
    assert s.decisions == ["Merged with --allow-unrelated-histories -X ours, since skills/ is a repository of its own"]
    # add_progress's rule whole: a line that a twice-longer earlier one says goes, and takes no other with it
    said = "the job runs daily at noon per the new schedule"
    long = "the job runs daily at noon, reads `queue.yaml` first and posts to #ops with retries"
    s = Summary(progress=[said, long, "the job runs daily at noon"])
    unrepeated(s)
    assert s.progress == [said, long]


# a rerun with another trim of its output is the same run (the end-to-end review's Codex session: `python manage.py
# test bookings -v 1 2>&1 | tail -25` failed, `python manage.py test bookings 2>&1 | tail -4` passed; Claude Code's
# `npm test 2>&1 | tail -20` then `| head -40` in the corpora): its pass fixes what the other failed
def test_a_rerun_with_another_trim_of_its_output_fixes_what_it_failed():
    from hermes_mlx.summarizer.fixes import chain_steps, cleared_by
    from hermes_mlx.summarizer.ledger import ErrorItem

    assert chain_steps("python manage.py test bookings 2>&1 | tail -4") == chain_steps(
        "python manage.py test bookings | tail -25"
    )
    failed = ErrorItem("AssertionError: 200 != 400", "python manage.py test bookings -v 1 2>&1 | tail -25")
    assert cleared_by("python manage.py test bookings 2>&1 | tail -4", "OK", [failed]) == [failed]
    assert chain_steps('npm test | grep -E "FAIL|PASS"') == frozenset({'npm test | grep -E "FAIL|PASS"'})
    chain_steps("a " + "| tail " * 20_000 + "| x")  # linear: a run of trims then no trim had backtracked for minutes


def test_a_shell_commands_not_found_stays_to_act_on():
    from hermes_mlx.summarizer.ledger import ErrorItem
    from hermes_mlx.summarizer.state import _to_act_on

    assert _to_act_on(ErrorItem("ERROR 404: Not Found.", "wget https://app.example.com/health"))
    assert not _to_act_on(ErrorItem("MCP error -32603: Not Found", "mcp__github__get_file_contents clinerules"))
