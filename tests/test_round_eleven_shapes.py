"""What an eleventh round's held-out sessions showed, each with a second source named per test.
Checks go through whole passes of the summarizer where a user's run would.
"""

from summarizer_fakes import call, one_pass, ran


# Hermes's `patch` answers `{"success": true, "diff": …}` with no word that it changed the file
# (the Hermes corpus session's patches; OpenCode's and Gemini CLI's JSON tools answer alike): a failed
# edit of a file, then a successful one, is an error fixed, never the Open error
def test_a_failed_edit_then_a_json_success_on_the_same_file_is_fixed():
    path = "/home/u/proj/src/c.py"
    s = one_pass(
        [
            {"role": "user", "content": "Fix the crash in src/c.py when the config is empty."},
            {"role": "assistant", "content": "", "tool_calls": [call("c1", "patch", path=path, old_string="x")]},
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": '{"success": false, "error": "Could not find match for old_string in src/c.py"}',
            },
            {"role": "assistant", "content": "", "tool_calls": [call("c2", "patch", path=path, old_string="y")]},
            {"role": "tool", "tool_call_id": "c2", "content": '{"success": true, "diff": "--- a\\n+++ b\\n-y\\n+z"}'},
            {"role": "assistant", "content": "Fixed the empty-config crash."},
        ]
    )
    assert not s.ledger.errors
    assert s.ledger.resolved == ["Could not find match for old_string in src/c.py"]
    assert not any(x.startswith("Open error") for x in s.state)


def test_a_json_success_of_a_read_fixes_no_failed_edit():
    path = "/home/u/proj/src/c.py"
    s = one_pass(
        [
            {"role": "user", "content": "Fix the crash in src/c.py when the config is empty."},
            {"role": "assistant", "content": "", "tool_calls": [call("c1", "patch", path=path, old_string="x")]},
            {"role": "tool", "tool_call_id": "c1", "content": '{"success": false, "error": "Could not find match"}'},
            {"role": "assistant", "content": "", "tool_calls": [call("c2", "read_file", path=path)]},
            {"role": "tool", "tool_call_id": "c2", "content": '{"success": true, "content": "def load(cfg): ..."}'},
            {"role": "assistant", "content": "The match failed; the text differs."},
        ]
    )
    assert [e.line for e in s.ledger.errors] == ["Could not find match"]


# Aider's user typed `/ask` with Chinese words right after it (`/ask从代码结构来看…`, twice in the held-out
# session); the slash-command rule (Aider's `/add x`, `/undo` in the corpora) read no command there
def test_a_slash_command_with_words_of_another_script_glued_on_is_no_work():
    s = one_pass(
        [
            {"role": "user", "content": "整理 models.py 的结构。"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    call("c1", "aider_command", command="/ask从代码结构来看，当前的 models.py 确实存在臃肿问题")
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "Invalid command: /ask从代码结构来看，当前的"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [call("c2", "aider_command", command="/usr/bin/env true")],
            },
            {"role": "tool", "tool_call_id": "c2", "content": ""},
            {"role": "assistant", "content": "已拆分 ASPP 模块。"},
        ]
    )
    ran = [c.cmd for c in s.ledger.commands]
    assert not any(c.startswith("/ask") for c in ran)
    assert "/usr/bin/env true" in ran  # a path is no slash command


# a bold label on the line after a hard break opens its own part (Aider's Chinese `**问题**：…  ` then
# `**建议**：`), while a label's own text after its hard break stays its (Cursor's `**Роль (Persona):**  `)
def test_a_bold_label_after_a_hard_break_is_no_word_of_the_line_before():
    from hermes_mlx.summarizer.sentences import paragraphs

    text = "**问题**：`num_workers=0` 会显著降低训练速度  \n**建议**：  \n\n**Роль (Persona):**  \nэксперт по Python"
    assert paragraphs(text) == [
        ["**问题**：`num_workers=0` 会显著降低训练速度"],
        ["**建议**："],
        ["**Роль (Persona):** эксперт по Python"],
    ]


# a task tracker's record of a decision (OpenCode's `arbeit_context_add {"type": "decision", …}`) is the
# agent's own note, as Hermes's `memory` add is (the Hermes corpus session)
def test_a_decision_saved_to_a_task_tracker_is_a_note_of_the_agent():
    from hermes_mlx.summarizer.text import normalize
    from hermes_mlx.summarizer.written import memory_notes

    decided = "Use event-sourced task model with deterministic conflict resolution; ULID ids for ordering"
    turns = normalize(
        [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [call("c1", "arbeit_context_add", task_id="tkt-1", type="decision", content=decided)],
            },
            {"role": "tool", "tool_call_id": "c1", "content": '{"success": true}'},
        ]
    )
    assert memory_notes(turns[0]) == [decided]


# a command that failed with a result line, then passed with none, listed `(exit 1 → 0) → KeyError`: the
# old error read as what the passing run printed (an end-to-end review's micro session; Codex's `npm test`
# in the corpora, `(exit 1 → 0 → 0) → Error: MISTRAL_API_KEY required ⇒ …`)
def test_a_run_whose_status_changed_with_no_result_line_keeps_no_result_from_before():
    from hermes_mlx.summarizer.ledger import Ledger

    led = Ledger()
    led.add_command("python app.py", 1, "KeyError: 'name'")
    led.add_command("python app.py", 0, "")
    assert led.commands[0].outcome == "" and led.commands[0].statuses == [1, 0]
    led.add_command("pytest -q", 0, "4 passed in 0.1s")
    led.add_command("pytest -q", 0, "")  # the same status again: its result still stands
    led.add_command("make", 2, "make: *** [all] Error 2")
    led.add_command("make", None, "")  # a status not known: nothing said changed
    led.add_command("python train.py", 0, "Accuracy: 0.941")
    led.add_command("python train.py", 137, "")  # killed with nothing said: the result said is still the latest
    assert [c.outcome for c in led.commands[1:]] == ["4 passed in 0.1s", "make: *** [all] Error 2", "Accuracy: 0.941"]
    # a command read back from a summary that showed no exit status has none: its rerun is read alike
    from hermes_mlx.summarizer.ledger import Command

    led.commands = [Command("python app.py", [], "KeyError: 'name'")]
    led.add_command("python app.py", 0, "")
    assert led.commands[0].outcome == ""


# Hermes's background review sends its prompt as the user (agent/background_review.py upstream; a held-out
# Hermes session's Constraints had become its skill-library rules)
def test_hermes_review_prompt_is_no_users_words():
    from hermes_mlx.summarizer.harness import without_automated

    prompt = (
        "Review the conversation above and update two things:\n\n**Memory**: who the user is.\n\n"
        "**Skills**: Not a long flat list of narrow one-session-one-skill entries.\n\n"
        "If genuinely nothing stands out on either, say 'Nothing to save.' and stop."
    )
    assert without_automated(prompt) == ""
    older = "Review the conversation above and consider saving to memory if appropriate.\n\nIf nothing is worth saving, just say 'Nothing to save.' and stop."
    assert without_automated(older) == ""
    mine = "Review the conversation above and tell me which options we picked."
    assert without_automated(mine) == mine
    s = one_pass(
        [
            {"role": "user", "content": "Update the persistence layers for the new CLI."},
            {"role": "assistant", "content": "Updated MEMORY.md and SOUL.md, committed f491337."},
            {"role": "user", "content": prompt},
            {"role": "assistant", "content": "Saved one memory entry."},
        ]
    )
    assert not any("one-session-one-skill" in x for x in [*s.ledger.constraints, *s.ledger.asks, s.goal])


# `git commit && git push` prints both lines; the push's range alone did not say what was committed (a held-out
# Hermes session; the synthetic ledgerly and quayside sessions' `git commit … && git push`)
def test_a_commit_then_push_says_both():
    from hermes_mlx.summarizer.outcomes import outcome_of

    out = "[main f491337e2] Update all persistence layers\n 3 files changed\nTo github.com:u/r.git\n   0924ed231..f491337e2  main -> main"
    assert outcome_of(out, 0) == (
        "git",
        "[main f491337e2] Update all persistence layers; 0924ed231..f491337e2  main -> main",
    )
    assert outcome_of("To github.com:u/r.git\n   0924ed2..f491337  main -> main", 0) == (
        "git",
        "0924ed2..f491337  main -> main",
    )


# a page curl printed is the page's: its links (an HTML head's RDF namespaces, a CSP's hosts) are none the work
# used (a held-out Codex session listed 18; Cursor's `curl -sI -X POST` in the corpora printed 9); a URL
# template in code (`…/films_of_{year}`, `http://127.0.0.1:${PORT}/api` in the corpora) is no address
def test_a_fetched_pages_links_and_url_templates_are_not_listed():
    from hermes_mlx.summarizer.extract import find_urls

    assert find_urls("BASE = f'https://x.org/films_of_{year}' and http://127.0.0.1:${PORT}/api ok https://x.org/a") == [
        "https://x.org/a"
    ]
    page = '<html><head><link rel="dc" href="http://purl.org/dc/terms/"/></head>' + "x" * 500
    s = one_pass(
        [
            {"role": "user", "content": "Scrape the table."},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [call("c1", "shell", command="curl -s https://en.wikipedia.org/wiki/A | head -50")],
            },
            {"role": "tool", "tool_call_id": "c1", "content": page},
            {"role": "assistant", "content": "The table is in the second section."},
        ]
    )
    assert "http://purl.org/dc/terms/" not in s.ledger.urls


# the same error again: at another line of one file (flake8's F821 at lines 143 to 146 in a held-out Aider
# session; Kotlin's `Test.kt:61:` and `:74:` in the corpora) the first; a retry with other numbers (Aider's
# `Input length 173754 exceeds …` four times) the first and the latest; another test, or the same test with
# other parameters, or another file's failure stays its own (the rules review)
def test_the_same_error_again_is_listed_once():
    from hermes_mlx.summarizer.ledger import Ledger

    led = Ledger()
    for n, rid in (
        (173754, "0217682301377579936a5f6e8f40"),
        (173821, "021768230181940e53a20c38311f"),
        (141649, "0217682313987b"),
    ):
        led.add_error(f"Input length {n} exceeds the maximum length 131072. Request id: {rid}", "")
    led.add_error("models.py:143:21: F821 undefined name 'DecoderBlock'", "flake8 models.py")
    led.add_error("models.py:144:21: F821 undefined name 'DecoderBlock'", "flake8 models.py")
    for line in (
        "FAILED tests/test_a.py::test_1 - assert 500 == 200",
        "FAILED tests/test_a.py::test_1 - assert 404 == 200",
        "FAILED tests/test_a.py::test_2 - assert 500 == 200",
        "FAILED tests/test_r.py::test_round[0.125-0.13] - assert 0.12 == 0.13",
        "FAILED tests/test_r.py::test_round[2.675-2.68] - assert 2.67 == 2.68",
    ):
        led.add_error(line, "pytest")
    led.add_error("Failed to read file: /home/t/patch_test_70k.txt", "patch")
    led.add_error("Failed to read file: /home/t/patch_test_65k.txt", "patch")
    assert [e.line for e in led.errors] == [
        "Input length 173754 exceeds the maximum length 131072. Request id: 0217682301377579936a5f6e8f40",
        "Input length 141649 exceeds the maximum length 131072. Request id: 0217682313987b",
        "models.py:143:21: F821 undefined name 'DecoderBlock'",
        "FAILED tests/test_a.py::test_1 - assert 500 == 200",
        "FAILED tests/test_a.py::test_1 - assert 404 == 200",
        "FAILED tests/test_a.py::test_2 - assert 500 == 200",
        "FAILED tests/test_r.py::test_round[0.125-0.13] - assert 0.12 == 0.13",
        "FAILED tests/test_r.py::test_round[2.675-2.68] - assert 2.67 == 2.68",
        "Failed to read file: /home/t/patch_test_70k.txt",
        "Failed to read file: /home/t/patch_test_65k.txt",
    ]


# Errors and Fixes said `fixed by X:` twice when another fix came between (a held-out Codex session)
def test_each_fix_is_said_once_with_all_it_cleared():
    from hermes_mlx.summarizer.summary import Summary, parse, render

    s = Summary()
    s.ledger.resolved = ["ValueError: a", "AttributeError: b", "ValueError: c"]
    s.ledger.fixes = {
        "ValueError: a": "python s.py",
        "AttributeError: b": "python t.py",
        "ValueError: c": "python s.py",
    }
    text = render(s)
    assert text.count("fixed by `python s.py`") == 1
    assert parse(text).ledger.fixes == s.ledger.fixes


# a report's "Next steps" list is what is left, not progress (a held-out Codex session listed both)
def test_a_next_step_is_not_also_progress():
    s = one_pass(
        [
            {"role": "user", "content": "Write the scraper."},
            {"role": "assistant", "content": "", "tool_calls": [call("c1", "shell", command="python scrape.py")]},
            {"role": "tool", "tool_call_id": "c1", "content": "wrote 330 rows to highest_grossing.csv"},
            {
                "role": "assistant",
                "content": "Generated `highest_grossing.csv` with 330 rows covering 1994 through 2024.\n\n"
                "Next steps:\n1. Spot-check a few recent years in `highest_grossing.csv` for the currency format.\n"
                "2. Commit `scrape.py` and the CSV if you are happy with the output.",
            },
        ]
    )
    assert s.remaining and not set(s.remaining) & set(s.progress)


# a script's own verdict on its checks (mini-swe-agent's `All tests passed!`, `All legacy functionality tests
# passed!`; Codex's npm scripts' `CodeAct tests passed`, `Modern Tool Use test OK`) is the run's result, unless
# the run failed after it (`Planning test OK`, then a crash, exit 1)
def test_a_scripts_verdict_on_its_tests_is_the_result_unless_a_failure_follows():
    from hermes_mlx.summarizer.outcomes import outcome_of

    assert outcome_of("setup done\nAll legacy functionality tests passed!", 0) == (
        "tests",
        "All legacy functionality tests passed!",
    )
    assert outcome_of("> test\nModern Tool Use test OK", 0) == ("tests", "Modern Tool Use test OK")
    crashed = "Planning test OK\nnode:internal/modules\nError [ERR_MODULE_NOT_FOUND]: Cannot find module 'x'"
    assert outcome_of(crashed, 1) == ("failure", "Error [ERR_MODULE_NOT_FOUND]: Cannot find module 'x'")


# an object's key in a dump (axios's `clarifyTimeoutError: false` in Codex's npm test output) is no exception
def test_an_exceptions_name_is_a_class_name():
    from hermes_mlx.summarizer.outcomes import outcome_of

    assert outcome_of("    clarifyTimeoutError: false\nError: connect ECONNREFUSED 127.0.0.1:3031", 1) == (
        "failure",
        "Error: connect ECONNREFUSED 127.0.0.1:3031",
    )
    assert outcome_of("Traceback\nrequests.exceptions.ConnectionError: refused", 1) == (
        "failure",
        "requests.exceptions.ConnectionError: refused",
    )


# `pip install asgiref -q` after `No module named 'asgiref'` is that error's fix (mini-swe-agent's django,
# astroid `wrapt` and marshmallow `simplejson`, `pytz` sessions)
def test_an_install_of_what_was_missing_fixes_it():
    s = one_pass(
        [
            {"role": "user", "content": "Reproduce the session decode crash."},
            {"role": "assistant", "content": "", "tool_calls": [call("c1", "shell", command="python3 repro.py")]},
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": "Traceback (most recent call last):\nModuleNotFoundError: No module named 'asgiref'\n[exit code: 1]",
            },
            {"role": "assistant", "content": "", "tool_calls": [call("c2", "shell", command="pip install asgiref -q")]},
            {"role": "tool", "tool_call_id": "c2", "content": "[exit code: 0]"},
            {"role": "assistant", "content": "Installed the missing dependency."},
        ]
    )
    assert s.ledger.fixes == {"ModuleNotFoundError: No module named 'asgiref'": "pip install asgiref -q"}
    assert not s.ledger.errors


# the rules review's cases, each a wrong turn of one of this round's rules
def test_a_verdict_that_some_tests_failed_is_no_pass():
    from hermes_mlx.summarizer.outcomes import outcome_of, says_passed

    out = "FAIL: test_tax: AssertionError: 1.49 != 1.50\nNot all tests passed."
    assert outcome_of(out, 0) == ("tests", "FAIL: test_tax: AssertionError: 1.49 != 1.50")
    for said in ("No tests passed", "Only some tests passed"):
        assert outcome_of(said, 0)[0] != "tests", said
    assert not says_passed(outcome_of("3 of 5 tests passed", 0)[1])  # a count: the run's verdict, no pass
    assert outcome_of("Traceback\nsocket.gaierror: [Errno -2] Name or service not known", 1) == (
        "failure",
        "socket.gaierror: [Errno -2] Name or service not known",
    )


def test_what_is_no_fetch_no_install_and_no_slash_command():
    from hermes_mlx.summarizer.shell_words import fetches_web, installs_missing
    from hermes_mlx.summarizer.vocabulary import SLASH_COMMAND

    assert fetches_web("cd /srv && curl -sI https://example.com | head")
    assert not fetches_web("npx wrangler deploy && curl -s https://api.example.com/health")  # the deploy's URL
    assert not fetches_web("python - <<'EOF'\nhttp = urllib3.PoolManager()\nEOF")
    assert not installs_missing("cd backend && pip install -r requirements.txt", "No module named 'backend'")
    assert installs_missing("pip install wrapt lazy-object-proxy -q", "ModuleNotFoundError: No module named 'wrapt'")
    assert not SLASH_COMMAND.match("/backend下的测试先别管。Do not modify the database schema.")
    assert SLASH_COMMAND.match("/fixIssue 123")


def test_done_work_like_a_next_step_stays_progress():
    s = one_pass(
        [
            {"role": "user", "content": "Fix the login redirect."},
            {
                "role": "assistant",
                "content": "Fixed the login redirect bug in auth.py: it now sends users to the dashboard.\n\n"
                "Next steps:\n1. Fix the login redirect bug in signup.py the same way.\n2. Add a test for both.",
            },
        ]
    )
    assert "Fixed the login redirect bug in auth.py: it now sends users to the dashboard." in s.progress


# Hermes's `patch` answers `{"success": true, "diff": …, "lint": {"output": …}}`: a lint finding is no sign the
# edit failed; the earlier failed edit of the file is fixed, and the finding stays an error of its own
def test_a_json_success_with_lint_findings_still_fixes_the_failed_edit():
    path = "/home/u/proj/src/c.py"
    lint = '{"success": true, "diff": "-a\\n+b", "lint": {"output": "src/c.py:14:12: F821 undefined name \'total\'"}}'
    s = one_pass(
        [
            {"role": "user", "content": "Fix the total in src/c.py."},
            {"role": "assistant", "content": "", "tool_calls": [call("c1", "patch", path=path, old_string="x")]},
            {"role": "tool", "tool_call_id": "c1", "content": '{"success": false, "error": "Could not find match"}'},
            {"role": "assistant", "content": "", "tool_calls": [call("c2", "patch", path=path, old_string="y")]},
            {"role": "tool", "tool_call_id": "c2", "content": lint},
            {"role": "assistant", "content": "Patched; lint reports an undefined name next."},
        ]
    )
    assert s.ledger.resolved == ["Could not find match"]
    assert [e.line for e in s.ledger.errors] == ["src/c.py:14:12: F821 undefined name 'total'"]


def test_a_review_prompt_joined_to_the_users_turn_leaves_the_users_words():
    from hermes_mlx.summarizer.harness import without_automated

    joined = "Use Decimal for money, not float.\n\nReview the conversation above and update two things:\n\n**Memory**: x\nsay 'Nothing to save.' and stop."
    assert without_automated(joined) == "Use Decimal for money, not float."


def test_a_numbered_bold_label_after_a_hard_break_is_not_glued_on():
    from hermes_mlx.summarizer.sentences import paragraphs

    said = [x for p in paragraphs("Training is slow  \n1. **Cause**: the GPU box is shared") for x in p]
    assert "Training is slow" in said and not any(x.startswith("Training is slow 1") for x in said)


# an error's `after` and `fixed by` name a file tool's path as Files does, relative to the working folder (the
# Hermes corpus session's `after \`patch ~/.hermes/hermes-agent/TODO.md\``; a held-out Hermes session's
# `fixed by \`patch /Users/…/.hermes/MASTER.md\``); a shell command stays as it ran; and a failed edit read
# back from a summary that way is still fixed by a later edit of the file under its whole path
def test_a_file_tools_label_says_its_path_as_files_does():
    from hermes_mlx.summarizer.workfolder import relative_label

    assert relative_label("patch /home/u/app/src/c.py", "/home/u/app") == "patch src/c.py"
    assert relative_label("cat /home/u/app/x.log", "/home/u/app") == "cat /home/u/app/x.log"
    assert relative_label("python3 /home/u/app/run.py", "/home/u/app") == "python3 /home/u/app/run.py"
    assert relative_label("patch /elsewhere/c.py", "/home/u/app") == "patch /elsewhere/c.py"

    from hermes_mlx.summarizer.summary import parse, render

    path = "/home/u/app/src/c.py"
    first = [
        {"role": "system", "content": "Working directory: /home/u/app"},
        {"role": "user", "content": "Fix the crash in src/c.py."},
        {"role": "assistant", "content": "", "tool_calls": [call("c1", "patch", path=path, old_string="x")]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"success": false, "error": "Could not find match"}'},
        {"role": "assistant", "content": "The text differs; I will read the file first."},
    ]
    s = one_pass(first)
    text = render(s)
    assert "after `patch src/c.py`" in text and "/home/u/app/src" not in text.split("## Errors", 1)[1]
    again = parse(text)
    again.ledger.resolve_file(f"patch {path}")
    assert again.ledger.resolved == ["Could not find match"]


# an export with no exit status (Claude Code): a chain that ends by pushing what it committed went past the
# rebase conflict before it (the end-to-end review's Spanish session; the corpora's Claude Code commits)
def test_a_push_that_went_through_moves_past_an_earlier_error_where_no_status_is_given():
    s = one_pass(
        [
            {"role": "user", "content": "Rebase on main and push."},
            *ran(
                "c1",
                "Bash",
                "CONFLICT (content): Merge conflict in package.json\nerror: could not apply 5e8a0c2... fix(reservas): tz",
                command="git pull --rebase origin main 2>&1 | tail -4",
            ),
            *ran(
                "c2",
                "Bash",
                "added 98 packages in 6s\nfound 0 vulnerabilities\n[detached HEAD 1b9f3d7] fix(reservas): tz\nSuccessfully "
                "rebased and updated refs/heads/main.\nTo github.com:l/r.git\n   f02b6e4..1b9f3d7  main -> main",
                command="npm install 2>&1 | tail -2 && git add package.json && GIT_EDITOR=true git rebase --continue && "
                "git push origin main",
            ),
            {"role": "assistant", "content": "Pushed 1b9f3d7 to main."},
        ]
    )
    assert not any(x.startswith("Open error") for x in s.state)


# a quoted argument's `;` or `|` is no step of the shell's (`python -c 'import stripe; print(stripe.VERSION)'`,
# `grep -E 'a|b'`): a rerun that printed `8.11.0` where the export gives no status passed, and keeps no
# `ModuleNotFoundError` of the run before as its result (the end-to-end review's Claude Code session)
def test_a_quoted_semicolon_is_no_blind_step_and_a_rerun_that_passed_unseen_drops_the_old_failure():
    from hermes_mlx.summarizer.outcomes import may_hide

    assert not may_hide("cd /x && .venv/bin/python -c 'import stripe; print(stripe.VERSION)'")
    assert not may_hide("grep -E 'a|b' app.log")
    assert may_hide("npm test | tail -5") and may_hide("make; make test")
    cmd = "cd /x && .venv/bin/python -c 'import stripe; print(stripe.VERSION)'"
    s = one_pass(
        [
            {"role": "user", "content": "Check the stripe version."},
            {"role": "assistant", "content": "", "tool_calls": [call("c1", "Bash", command=cmd)]},
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": "Traceback (most recent call last):\nModuleNotFoundError: No module named 'stripe'",
            },
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [call("c2", "Bash", command="cd /x && .venv/bin/pip install stripe")],
            },
            {"role": "tool", "tool_call_id": "c2", "content": "Successfully installed stripe-8.11.0"},
            {"role": "assistant", "content": "", "tool_calls": [call("c3", "Bash", command=cmd)]},
            {"role": "tool", "tool_call_id": "c3", "content": "8.11.0"},
            {"role": "assistant", "content": "stripe 8.11.0 is installed."},
        ]
    )
    ran = {c.cmd: c for c in s.ledger.commands}
    assert "ModuleNotFoundError" not in ran[cmd].outcome
    assert not s.ledger.errors


# cargo prints a `test result:` line for each test target and the doc-tests' last, `0 passed` for a binary:
# that line had stood for the run (the end-to-end review's Rust session); the one that says most does
def test_cargos_verdict_is_the_target_that_says_most():
    from hermes_mlx.summarizer.outcomes import outcome_of

    out = (
        "test result: ok. 25 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s\n"
        "     Running tests/it.rs\ntest result: ok. 9 passed; 0 failed; 0 ignored\n"
        "   Doc-tests tilemap\ntest result: ok. 0 passed; 0 failed; 0 ignored"
    )
    assert outcome_of(out, 0)[1].startswith("test result: ok. 25 passed")
    failed = out.replace("ok. 9 passed; 0 failed", "FAILED. 8 passed; 1 failed")
    assert outcome_of(failed, 101) == ("tests", "test result: FAILED. 8 passed; 1 failed; 0 ignored")
