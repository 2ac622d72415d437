"""What a fourteenth round's held-out sessions showed, each with a second source named per test.
Checks go through whole passes of the summarizer or compactor where a user's run would.
"""

import json

from summarizer_fakes import one_pass, ran


def created(cid: str, n: int, subject: str) -> list[dict]:
    """Claude Code's TaskCreate call for `subject` and its answer naming task #n."""
    return ran(cid, "TaskCreate", f"Task #{n} created successfully: {subject}", subject=subject, description="…")


HOME = "/Users/paul/Library/CloudStorage/Dropbox/iCloud/RiverTies/development-projects/community-platform.com/community-platform/app"


# a long `cd` prefix cut at the width left only the folder: Cursor's eight different commands run there
# (`npx convex init`, `npx convex deploy`, `rm -rf .next`) were one line of 8 runs with the last one's
# result (held out); Codex CLI and Hermes prefix commands the same way (`cd /Users/chunrui/… && sed …`)
def test_a_long_cd_prefix_keeps_what_ran_and_commands_run_there_stay_apart():
    s = one_pass(
        [
            {"role": "user", "content": "start the dev servers"},
            *ran("c1", "run_terminal_cmd", "✖ No CONVEX_DEPLOYMENT set", command=f"cd {HOME} && npx convex deploy"),
            *ran(
                "c2", "run_terminal_cmd", "✖ The `init` command is deprecated.", command=f"cd {HOME} && npx convex init"
            ),
            {"role": "assistant", "content": "Both failed; the project needs configuring first."},
            {"role": "user", "content": "ok"},
        ]
    )
    shown = [c.cmd for c in s.ledger.commands]
    assert (
        "cd …/community-platform/app && npx convex deploy" in shown
        and "cd …/community-platform/app && npx convex init" in shown
    )
    assert all(c.runs == 1 for c in s.ledger.commands)


def test_a_short_cd_prefix_is_shown_as_it_ran():
    from hermes_mlx.summarizer.ledger import shown_command

    assert shown_command("cd /srv/app && make test") == "cd /srv/app && make test"
    long = "cd /srv/app && " + "x" * 200
    assert shown_command(long).startswith("cd /srv/app && xxx")  # a short folder is no cut's cause


# a read whose exit status alone failed printed what it read: Claude Code's `env | grep …; ls …; cat
# config.toml` (exit 1: the last `cat` found no file) got `PWD=/Users/…` as its result, Codex CLI's `sed -n
# '1,200p' create-new-feature.sh` (exit 1) got `#!/usr/bin/env bash`, Hermes's `grep -r … -l` a path (held out)
def test_a_failed_read_keeps_no_line_of_what_it_read_as_its_result():
    s = one_pass(
        [
            {"role": "user", "content": "why does the cli stall on exit?"},
            *ran(
                "c1",
                "Bash",
                "Exit code 1\nPWD=/Users/jake/dev/cli\nOLDPWD=/Users/jake/dev\n---\nbin\nhistory",
                command='env | grep -iE "OTEL|CLI" ; echo "---"; ls ~/.cli/ 2>/dev/null; cat ~/.cli/config.toml 2>/dev/null',
            ),
            *ran("c2", "Bash", "Exit code 1\nls: specs: No such file or directory", command="ls specs"),
            {"role": "assistant", "content": "No telemetry variables are set in the environment."},
            {"role": "user", "content": "ok"},
        ]
    )
    outcomes = {c.cmd: c.outcome for c in s.ledger.commands}
    assert not any("PWD=" in o for o in outcomes.values())
    assert outcomes.get("ls specs") == "ls: specs: No such file or directory"  # a read that says it failed


# Gemini CLI prints a script it ran as its `Command:` label's value; a here-document longer than the header's
# first dozen lines (and its own `Tech Stack:` line) hid the wrapper, so `Error: (none)` was the result (held
# out; the corpora's Gemini session has the same wrapper on one-line commands)
def test_gemini_clis_wrapper_around_a_long_script_is_no_result():
    from hermes_mlx.summarizer.tool_results import tool_output

    script = "cat <<EOF >> NOTES.md\n\n## User\n" + "".join(f"line {i} of the notes\n" for i in range(30))
    wrapped = (
        f"Command: {script}Tech Stack: \nEOF\n\nDirectory: (root)\nOutput: (empty)\nError: (none)\n"
        "Exit Code: 0\nSignal: 0\nBackground PIDs: (none)\nProcess Group PGID: 22013"
    )
    assert tool_output(wrapped) == ""
    failed = wrapped.replace("Output: (empty)", "Output: bash: -c: line 21: syntax error: unexpected end of file")
    assert tool_output(failed) == "bash: -c: line 21: syntax error: unexpected end of file"


# what a user pasted from a program is no directive of theirs: Aider's user pasted a Windows terminal session
# (`(aider-env) D:\…\calculator>npx babel --version` and npm's warnings: "Do not use it.", "Please, upgrade your
# dependencies"); Cursor's user pasted Chrome's console (`… 404 (Not Found)Understand this error`, "Please make
# sure it has an appropriate `as` value") (both held out)
def test_a_pasted_terminal_session_or_console_holds_no_constraint():
    from hermes_mlx.summarizer.directives import user_constraints

    terminal = (
        r"(aider-env) D:\Zeyad\calculator>npx babel --version Need to install the following packages:babel@5.8.38"
        "Ok to proceed? (y) ynpm warn deprecated inflight@1.0.6: This module is not supported. Do not use it. "
        "Please, upgrade your dependencies to the actual version of core-js."
    )
    assert user_constraints(terminal) == []
    console = (
        "main-app.js:1  GET http://localhost:3000/_next/static/chunks/main-app.js 404 (Not Found)Understand this error\n"
        "The resource <URL> was preloaded but not used. Please make sure it has an appropriate `as` value.Understand this warning"
    )
    assert user_constraints(console) == []
    mixed = "Please keep the API stable.\nPS C:\\app> npm test\nnpm warn deprecated inflight@1.0.6: Do not use it.\n\nAnd never touch db/."
    assert user_constraints(mixed) == ["Please keep the API stable.", "And never touch db/."]
    # the user's own words right under what they pasted end the paste (the rules review's cases)
    after = "(venv) C:\\proj>python main.py\nTraceback (most recent call last):\nValueError: bad\nfix this but do not change the public API"
    assert user_constraints(after) == ["fix this but do not change the public API"]
    # a path with a `>` or a `#` in a sentence is no prompt
    assert user_constraints("C:\\work\\api must stay on Node >= 18, don't upgrade it.")
    assert user_constraints("git@github.com:acme/infra.git#v2 is the only module source; never pin to main.")


def test_a_pasted_session_in_a_users_turn_leaves_constraints_empty_through_a_pass():
    s = one_pass(
        [
            {"role": "user", "content": "add a history panel"},
            {"role": "assistant", "content": "Added the history panel to `App.js`."},
            {"role": "user", "content": r"C:\app>npm start npm warn deprecated core-js@1.2.7: Do not use it."},
            {"role": "assistant", "content": "That warning comes from an old Babel; it is harmless."},
            {"role": "user", "content": "ok"},
        ]
    )
    assert not any("Do not use it" in c for c in s.ledger.constraints)


# the reason a call gives for itself is the agent's own note: Codex CLI's escalated `shell` `justification`
# ("Need to create new feature branch and spec files per workflow script"), Roo Code's `switch_mode`
# `reason` (both held out)
def test_a_calls_stated_reason_is_read_as_the_agents_note():
    s = one_pass(
        [
            {"role": "user", "content": "design an extension system"},
            *ran(
                "c1",
                "shell",
                json.dumps({"output": "Switched to a new branch '001-extension-system'", "metadata": {"exit_code": 0}}),
                command=["bash", "-lc", ".specify/scripts/bash/create-new-feature.sh --json"],
                with_escalated_permissions=True,
                justification="Need to create new feature branch and spec files per workflow script",
            ),
            {"role": "assistant", "content": "Created the branch."},
            {"role": "user", "content": "next"},
        ]
    )
    assert "Need to create new feature branch and spec files per workflow script" in s.progress


# `a | tail -5 && b`: the pipe's status is tail's, so b ran whatever a did; a's error is no pass of b's
# (Claude Code's `golangci-lint run 2>&1 | tail -5 && go test … | tail -3` printed golangci-lint's
# `Error: can't load config` and then `ok …`, held out; Claude Code pipes to tail in the corpora's sessions)
def test_a_piped_step_before_and_and_can_fail_unseen():
    from hermes_mlx.summarizer.shell_words import blind_step

    assert blind_step("golangci-lint run 2>&1 | tail -5 && go test ./pkg/ 2>&1 | tail -3")
    assert not blind_step("go test ./... 2>&1 | tail -3")
    assert not blind_step("cd app && go test ./...")
    s = one_pass(
        [
            {"role": "user", "content": "lint and test the telemetry package"},
            *ran(
                "c1",
                "Bash",
                "Error: can't load config: the Go language version (go1.25) used to build golangci-lint is lower "
                "than the targeted Go version (1.26.4)\nok  \tgithub.com/x/cli/pkg/telemetry\t0.338s",
                command="golangci-lint run 2>&1 | tail -5 && go test ./pkg/telemetry/ 2>&1 | tail -3",
            ),
            {"role": "assistant", "content": "Tests pass."},
            {"role": "user", "content": "ok"},
        ]
    )
    errors = [e.line for e in s.ledger.errors] + list(s.ledger.resolved)
    assert any("used to build golangci-lint is lower" in e for e in errors)


# a server's log the user pasted is the program's words (Roo Code's user, held out: `INFO: 127.0.0.1:64607 -
# "GET /.well-known/agent.json HTTP/1.1" 200 OK`, `[21:11:01] 👤 User: …`, `INFO:orchestrator…:Session not
# found.`; the corpora's Aider user pasted `[11328:0508/211118.115:ERROR:node_bindings.cc(380)]` lines)
def test_a_pasted_log_line_holds_no_constraint_but_the_users_words_around_it_do():
    from hermes_mlx.summarizer.directives import user_constraints

    pasted = (
        'INFO: 127.0.0.1:64607 - "GET /.well-known/agent.json HTTP/1.1" 200 OK\n'
        "[21:11:01] 👤 User: lavandino che perde acqua, i need a plumber\n"
        "2025-05-23 21:15:25,562 - httpx - INFO - HTTP Request: GET http://localhost:8000/ not found\n"
        "ERROR:orchestrator.task_manager:Session not found.\n"
        "the problem is in the orchestrator, please fix it without touching the client"
    )
    assert user_constraints(pasted) == ["the problem is in the orchestrator, please fix it without touching the client"]
    assert user_constraints("Info: keep the old API, do not rename it") == ["Info: keep the old API, do not rename it"]
    # a level word that leads the user's own sentence is theirs (the rules review's cases)
    for said in ("DEBUG mode must stay off in production.", "WARNING: never commit the .env file."):
        assert user_constraints(said) == [said]


def test_a_listed_message_that_is_a_pasted_terminal_session_gives_no_constraint_when_read_back():
    from hermes_mlx.summarizer.directives import directives_within

    listed = (
        r"(venv) D:\app>npm start npm warn deprecated inflight@1.0.6: Do not use it. Please, upgrade your dependencies."
    )
    assert directives_within(listed) == []


# Claude Code's task tools (2.1.16 on) keep the plan a task a call: TaskCreate's answer names the task, and
# TaskUpdate sets a status by id (held out: Track A … B6 and a build check; the corpora's Claude Code user
# forbids "TodoWrite, TaskCreate" by name); the plan is read as TodoWrite's list is
def test_claude_codes_task_tools_give_the_task_in_progress_and_the_open_ones():
    s = one_pass(
        [
            {"role": "user", "content": "Implement the plan: fix the headless login"},
            *created("c1", 1, "Track A: Update deploy-staging.yml"),
            *created("c2", 2, "Track B1: Extract shared post-auth helper"),
            *created("c3", 3, "Verify cargo build succeeds"),
            *ran("c4", "TaskUpdate", "Updated task #1 status", taskId="1", status="completed"),
            *ran("c5", "TaskUpdate", "Updated task #2 status", taskId="2", status="in_progress"),
            {"role": "assistant", "content": "Extracting the helper now."},
            {"role": "user", "content": "go on"},
        ]
    )
    assert any("Track B1: Extract shared post-auth helper" in x for x in s.state)
    assert any("Verify cargo build succeeds" in x for x in s.remaining)
    assert not any("Track A" in x for x in [*s.state, *s.remaining])


def test_cursors_explanation_on_a_call_is_no_finding():
    s = one_pass(
        [
            {"role": "user", "content": "make the build pass"},
            *ran(
                "c1", "run_terminal_cmd", "ok", command="npm test", explanation="Run the tests to verify the fix works."
            ),
            {"role": "assistant", "content": "The build passes."},
            {"role": "user", "content": "go on"},
        ]
    )
    assert not any("Run the tests to verify" in p for p in s.progress)


# a sentence too long for a line was dropped whole; one led by a clause keeps its main clause, as one led by
# a label keeps what the label introduces (Codex CLI's answer, held out: "Because existing workflows … ,
# commenting out the … services … leaves those queues with no consumers, so any job routed there will sit
# indefinitely …"; the colon lead-in's sources are in the corpora)
def test_a_long_sentence_led_by_a_clause_keeps_its_main_clause():
    said = (
        "Because existing workflows continue to set `queue=codex-1` or `codex-2`, commenting out the "
        "`celery-codex-1`/`celery-codex-2` services (see `docker-compose.yaml:254-320`) leaves those queues with "
        "no consumers, so any job routed there will sit indefinitely until a matching worker comes back."
    )
    s = one_pass(
        [
            {"role": "user", "content": "why would jobs be routed to codex-1 and codex-2?"},
            *ran("c1", "shell", "docs/SpecKitAutomation.md:12: three named queues", command="rg -n codex docs"),
            {"role": "assistant", "content": said},
            {"role": "user", "content": "ok, use one queue then"},
        ]
    )
    assert any(p.startswith("commenting out the `celery-codex-1`") and "sit indefinitely" in p for p in s.progress)


# the rules review's cases: a failed read that printed only why keeps that line; two projects' folders with one
# last name are two commands; a later pass's TaskUpdate finds the tasks an earlier pass listed; tasks that
# share a `Fix:` prefix are not one task
def test_a_failed_read_that_says_only_why_keeps_it():
    s = one_pass(
        [
            {"role": "user", "content": "show me the settings"},
            *ran(
                "c1",
                "shell",
                json.dumps({"output": "The system cannot find the file specified.", "exit_code": 1}),
                command="type config\\settings.json",
            ),
            {"role": "assistant", "content": "The settings file is missing."},
            {"role": "user", "content": "ok"},
        ]
    )
    assert s.ledger.commands[0].outcome == "The system cannot find the file specified."


def test_two_projects_folders_with_one_last_name_stay_two_commands():
    from hermes_mlx.summarizer.ledger import shown_command

    a = "cd /home/dev/work/clients/acme-corp/monorepo-backend/services/api && python -m pytest tests/ -q 2>&1 | tail -20"
    b = "cd /home/dev/work/clients/globex-inc/legacy-monorepo/services/api && python -m pytest tests/ -q 2>&1 | tail -20"
    assert shown_command(a) != shown_command(b)


def test_claude_code_tasks_carry_over_to_a_later_pass_and_never_share_a_prefix():
    from summarizer_fakes import code_summarizer

    from hermes_mlx.summarizer.summary import parse

    first = [
        {"role": "user", "content": "fix the three login bugs"},
        *created("c1", 1, "Fix: login redirect loop"),
        *created("c2", 2, "Fix: signup email validation"),
        *created("c3", 3, "Fix: password reset token expiry"),
        *ran("c4", "TaskUpdate", "Updated task #1 status", taskId="1", status="in_progress"),
        {"role": "assistant", "content": "Working on the redirect loop."},
        {"role": "user", "content": "go on"},
    ]
    later = [
        *ran("c5", "TaskUpdate", "Updated task #1 status", taskId="1", status="completed"),
        *ran("c6", "TaskUpdate", "Updated task #2 status", taskId="2", status="in_progress"),
        {"role": "assistant", "content": "Now the email validation."},
        {"role": "user", "content": "continue"},
    ]
    text = code_summarizer().update(None, first).text
    s = parse(code_summarizer().update(text, later).text)
    assert "In progress: Task #2: Fix: signup email validation" in s.state
    assert s.remaining == ["Task #3: Fix: password reset token expiry"]


# the end-to-end review's: a script's own `Output:` line inside Gemini CLI's `Command:` is no label; Gemini
# CLI's `write_todos` items say their text as `description` (its docs; the review's Gemini session lost its plan)
def test_a_scripts_own_output_line_is_no_gemini_label_and_write_todos_gives_the_plan():
    from hermes_mlx.summarizer.tool_results import tool_output

    script = "cat <<'EOF' > report.sh\necho 'Output: a JSON report'\n" + "echo step\n" * 20 + "EOF"
    wrapped = f"Command: {script}\nDirectory: (root)\nOutput: (empty)\nError: (none)\nExit Code: 0"
    assert tool_output(wrapped) == ""
    s = one_pass(
        [
            {"role": "user", "content": "add retries to the job queue client"},
            *ran(
                "c1",
                "write_todos",
                "Successfully updated the todo list.",
                todos=[
                    {"description": "Add one retry to GET requests", "status": "in_progress"},
                    {"description": "Run a 500-request load check", "status": "pending"},
                ],
            ),
            {"role": "assistant", "content": "Adding the retry."},
            {"role": "user", "content": "go on"},
        ]
    )
    assert any("Add one retry to GET requests" in x for x in s.state)
    assert "Run a 500-request load check" in s.remaining


# the second review's: a failed read's first line that merely has a name and a colon (`version: '3.8'`) or a
# failure word in a file's text is no result; git's `hint:` lines under a pasted prompt are no directives while
# the user's last words are; Codex's output that prints `Directory:` keeps it; tasks whose subjects differ only
# by a number stay two tasks in Next Steps
def test_a_failed_reads_yaml_line_is_no_result_and_its_own_programs_line_is():
    s = one_pass(
        [
            {"role": "user", "content": "which services does compose start?"},
            *ran(
                "c1",
                "shell",
                json.dumps(
                    {
                        "output": "version: '3.8'\nservices:\n  api:\n    image: api\n  db:\n    image: pg",
                        "exit_code": 1,
                    }
                ),
                command="cat docker-compose.yml docker-compose.override.yml 2>/dev/null",
            ),
            *ran(
                "c2",
                "shell",
                json.dumps({"output": "cat: Cargo.toml: Is a directory", "exit_code": 1}),
                command="cat Cargo.toml",
            ),
            {"role": "assistant", "content": "Compose starts api and db."},
            {"role": "user", "content": "ok"},
        ]
    )
    outcomes = {c.cmd: c.outcome for c in s.ledger.commands}
    assert not any("version:" in o for o in outcomes.values())
    assert outcomes.get("cat Cargo.toml") == "cat: Cargo.toml: Is a directory"


def test_gits_hints_under_a_pasted_prompt_are_no_directives_but_the_users_last_words_are():
    from hermes_mlx.summarizer.directives import user_constraints

    pasted = (
        "me@box repo % git pull\n"
        "hint: You have divergent branches and need to specify how to reconcile them.\n"
        "hint:   git config pull.rebase false  # merge\n"
        "hint: or --ff-only on the command line to override the configured default per\n"
        "fatal: Need to specify how to reconcile divergent branches.\n"
        "Don't rebase onto main, merge it and keep the merge commit."
    )
    assert user_constraints(pasted) == ["Don't rebase onto main, merge it and keep the merge commit."]


def test_codexs_output_that_prints_a_directory_line_keeps_it():
    from hermes_mlx.summarizer.tool_results import tool_output

    assert tool_output(
        "Exit code: 0\nWall time: 0.4 seconds\nOutput:\nDirectory: dist\nBundled 12 files (340 kB)\n"
    ).startswith("Directory: dist")


def test_tasks_that_differ_by_a_number_stay_apart_in_next_steps():
    s = one_pass(
        [
            {"role": "user", "content": "write the four modules"},
            *[x for n in range(1, 5) for x in created(f"c{n}", n, f"Write module {n}")],
            *ran("c9", "TaskUpdate", "Updated task #1 status", taskId="1", status="in_progress"),
            {"role": "assistant", "content": "Writing module 1."},
            {"role": "user", "content": "go on"},
        ]
    )
    assert s.remaining == ["Task #2: Write module 2", "Task #3: Write module 3", "Task #4: Write module 4"]
