"""Shapes of agents and tools that held-out sessions of a sixth round showed (Roo Code, Cursor on a
Python CLI, Claude Code with a Stop hook, Hermes Agent in Korean, VS Code Copilot in Japanese) and a
second source confirms (named per test): errors a compiler reports several times over, results a
run repeats at another time, what an install installed, a program's own "Failed to …:" line,
Cline's and Roo Code's envelopes and resumption notes, a hook's feedback, a script of reads,
Japanese and Korean cues, a home folder spelled out; then the cases two reviews found. A seventh
round's held-out sessions (Claude Code on a charm's CI, Cline, Gemini CLI, Aider, mini-swe-agent)
added a checker's count as a result, a CI log read less its stamps, a script's own complaint, a
harness's saved output, a markdown hard break inside a sentence, and Latin names in Korean prose.
Checks go through the ledger a pass fills and through whole passes of the summarizer, as a user's
runs do.
"""

import pytest
from summarizer_fakes import call, one_pass

from hermes_mlx.summarizer.absorb import absorb
from hermes_mlx.summarizer.digest import machine_written
from hermes_mlx.summarizer.error_lines import at_source_line, is_error_line
from hermes_mlx.summarizer.ledger import OUTCOME_SEP, Ledger
from hermes_mlx.summarizer.outcomes import outcome_of
from hermes_mlx.summarizer.text import normalize


def _run(cid: str, name: str, output: str, **args) -> list[dict]:
    return [
        {"role": "assistant", "content": "", "tool_calls": [call(cid, name, **args)]},
        {"role": "tool", "tool_call_id": cid, "name": name, "content": output},
    ]


def _with_a_note(request: str, note: str):
    """A whole pass over a request, a reply, a harness's note in a user turn, and a reply."""
    return one_pass(
        [
            {"role": "user", "content": request},
            {"role": "assistant", "content": "Done: `streak` is in `HabitStats`, 29 tests pass."},
            {"role": "user", "content": note},
            {"role": "assistant", "content": "The note is the harness's; the work stands."},
        ]
    )


def _ledger(messages: list[dict]) -> Ledger:
    led = Ledger()
    absorb(led, normalize(messages))
    return led


# ------------------------------------------------------------------ errors a tool says several times

CASCADE = (
    "/Users/j/Shop/tests/Shop.Tests/RegTests.cs(11,23): error CS1519: Invalid token '(' in a member declaration\n"
    "/Users/j/Shop/tests/Shop.Tests/RegTests.cs(11,34): error CS8124: Tuple must contain at least two elements.\n"
    "/Users/j/Shop/tests/Shop.Tests/RegTests.cs(11,34): error CS1026: ) expected\n"
    "/Users/j/Shop/src/Shop/Order.cs(40,9): error CS0103: The name 'total' does not exist in the current context\n"
    "Build FAILED.\n"
)


def test_a_fix_that_cleared_one_mistake_reported_several_times_says_so_once():
    # Cursor's `dotnet test` of a C# syntax error (CS1519, CS8124, CS1026 at one line) and Gemini
    # CLI's Gradle run (`widget_date.xml:41:1` said three ways): Errors and Fixes had listed each.
    # While they are open each line stays (a rerun's other error at that line is news)
    assert at_source_line("/a/RegTests.cs(11,23): error CS1519: x") == "RegTests.cs:11"
    assert at_source_line("e: file:///a/ConfigActivity.kt:256:6 Missing '}'") == "ConfigActivity.kt:256"
    assert at_source_line("no place named here") == ""
    led = _ledger(_run("c1", "terminal", CASCADE, command="dotnet build"))
    assert [e.line.split(": error ")[1][:6] for e in led.errors] == ["CS1519", "CS8124", "CS1026", "CS0103"]
    fixed = _ledger(
        _run("c1", "terminal", CASCADE, command="dotnet build")
        + _run("c2", "terminal", "Build succeeded.\n    0 Error(s)", command="dotnet build")
    )
    assert [r.split(": error ")[1][:6] for r in fixed.resolved] == ["CS1519", "CS0103"] and not fixed.errors
    first = "src/app.py:10:1: F401 `os` imported but unused\nFound 1 error."
    second = "src/app.py:10:5: E999 SyntaxError: invalid syntax\nFound 1 error."
    rerun = _ledger(
        _run("c1", "terminal", first, command="ruff check src")
        + _run("c2", "terminal", second, command="ruff check src")
    )
    assert len(rerun.errors) == 2  # another mistake at the same line, later: both stand


# ------------------------------------------------------------------ a result said again, later


def test_a_result_that_differs_only_by_how_long_the_run_took_is_no_history():
    # Cursor's `dotnet test` (`Duration: 81 ms` then `102 ms`) and Gemini CLI's Gradle runs
    # (`BUILD FAILED in 2s` then `in 10s`) had listed each run's time as a history
    passed = "Passed!  - Failed: 0, Passed: 87, Skipped: 0, Total: 87, Duration: {} ms - Shop.Tests.dll"
    led = _ledger(
        _run("c1", "terminal", passed.format(81), command="dotnet test")
        + _run("c2", "terminal", passed.format(102), command="dotnet test")
        + _run("c3", "terminal", "FAILURE: x\nBUILD FAILED in 2s", command="./gradlew assembleDebug")
        + _run("c4", "terminal", "FAILURE: y\nBUILD FAILED in 10s", command="./gradlew assembleDebug")
        + _run("c5", "terminal", "14 doctests, 297 tests, 11 failures", command="mix test")
        + _run("c6", "terminal", "14 doctests, 297 tests, 0 failures", command="mix test")
    )
    outcomes = {c.cmd: c.outcome for c in led.commands}
    assert (
        outcomes["dotnet test"] == passed.format(102) and outcomes["./gradlew assembleDebug"] == "BUILD FAILED in 10s"
    )
    assert outcomes["mix test"] == f"14 doctests, 297 tests, 11 failures{OUTCOME_SEP}14 doctests, 297 tests, 0 failures"
    assert [c.runs for c in led.commands] == [2, 2, 2]


# ------------------------------------------------------------------ what an install installed


def test_an_install_says_what_it_installed_by_name():
    # Cursor's `brew install openvpn` (held out), Claude Code's `cargo install cargo-llvm-cov`
    # (held out), mini-swe-agent's `pip install -e .` (corpus): the command had shown no result
    brew = "==> Auto-updated Homebrew!\n\nWarning: openvpn 2.6.13 is already installed and up-to-date.\nTo reinstall 2.6.13, run:\n  brew reinstall openvpn\n"
    assert outcome_of(brew, 0) == ("install", "Warning: openvpn 2.6.13 is already installed and up-to-date.")
    pip = "Collecting simplejson\n  Downloading simplejson-3.20.2.tar.gz\nSuccessfully installed simplejson-3.20.2\n"
    assert outcome_of(pip, 0) == ("install", "Successfully installed simplejson-3.20.2")
    cargo = "    Updating crates.io index\n     Ignored package `cargo-llvm-cov v0.6.23` is already installed, use --force to override\n"
    assert outcome_of(cargo, 0)[1].startswith("Ignored package `cargo-llvm-cov v0.6.23` is already installed")
    # npm's count of packages names nothing it installed: no result line
    assert (
        outcome_of("added 124 packages, and audited 125 packages in 2s\n\nfound 0 vulnerabilities\n", 0)[0] != "install"
    )
    led = _ledger(_run("c1", "run_terminal_cmd", brew, command="brew install openvpn"))
    assert led.commands[0].outcome == "Warning: openvpn 2.6.13 is already installed and up-to-date."


def test_a_checkers_count_of_what_it_found_is_its_result():
    # sqlfluff's `fix` (mini-swe-agent, corpus and held out: its exit-0 run had shown no result), RuboCop's
    # and pylint's documented summaries: the count or the score, not the header or the module line above
    sqlfluff = (
        "==== finding fixable violations ====\n== [t.sql] FAIL\nL:   2 | P:   8 | L060 | Use 'COALESCE' instead of "
        "'IFNULL'.\n==== fixing violations ====\n10 fixable linting violations found\nFORCE MODE: Attempting fixes...\n"
        "Persisting Changes...\n== [t.sql] PASS\nDone. Please check your files to confirm.\n"
    )
    assert outcome_of(sqlfluff, 0) == ("build", "10 fixable linting violations found")
    rubocop = "Inspecting 12 files\n....C.......\n\n12 files inspected, 1 offense detected, 1 offense autocorrectable\n"
    assert outcome_of(rubocop, 1)[1] == "12 files inspected, 1 offense detected, 1 offense autocorrectable"
    assert outcome_of("Inspecting 3 files\n...\n\n3 files inspected, no offenses detected\n", 0)[0] == "build"
    pylint = (
        "************* Module app\napp.py:1:0: C0114: Missing module docstring\n\nYour code has been rated at 5.00/10\n"
    )
    assert outcome_of(pylint, 16) == ("build", "Your code has been rated at 5.00/10")
    # prose that counts what a review found is no checker's line, nor is a parser's complaint
    assert outcome_of("The review found 3 issues in `auth.ts`.\nFix them first.\n", 0)[0] != "build"
    assert outcome_of("3 problems found while parsing config\n", 1)[0] != "build"
    # a test run before the checker says more: what failed (`pytest -q; pylint shop`)
    chained = "FAILED tests/test_cart.py::test_total\n1 failed, 7 passed in 0.42s\n" + pylint
    assert outcome_of(chained, 16) == ("tests", "1 failed, 7 passed in 0.42s")
    crashed = 'Traceback (most recent call last):\n  File "lint.py", line 3\nRuntimeError: boom\n0 issues found\n'
    assert outcome_of(crashed, 1) == ("failure", "RuntimeError: boom")  # a crash, then its count: the crash
    led = _ledger(_run("c1", "bash", sqlfluff, command="sqlfluff fix t.sql --force"))
    assert led.commands[0].outcome == "10 fixable linting violations found"


def test_a_ci_log_read_back_is_read_less_its_time_stamps():
    # `gh run view --log-failed` (Claude Code on a charm's CI and Gemini CLI on a Rust release, both
    # held out): each line led by the job, the step and a UTC stamp, so no error reader knew a line,
    # and a script's `charmcraft: command not found` had been taken for the agent's own shell's
    from hermes_mlx.summarizer.tool_results import tool_output, unstamped

    lead = "Integration Tests\tRun integration tests via spread\t2026-01-10T07:42:17.27{}Z "
    log = "\n".join(
        lead.format(i) + line
        for i, line in enumerate(
            [
                "##[group]Run charmcraft test",
                "shell: /usr/bin/bash -e {0}",
                "/home/runner/work/_temp/1a9d.sh: line 1: charmcraft: command not found",
                "##[error]Process completed with exit code 127.",
            ]
        )
    )
    assert tool_output(log).splitlines()[2] == "/home/runner/work/_temp/1a9d.sh: line 1: charmcraft: command not found"
    gh = "gh run view 20875098934 --log-failed"
    led = _ledger(_run("c1", "Bash", f"Exit code 127\n{log}", command=gh))
    assert led.commands[0].outcome.endswith("charmcraft: command not found")
    assert [e.line for e in led.errors] == ["/home/runner/work/_temp/1a9d.sh: line 1: charmcraft: command not found"]
    rust = (
        "Build x86_64-pc-windows-msvc\tBuild (Windows)\t2025-12-30T04:58:03.2670988Z    Compiling wenget v0.7.1\n"
        "Build x86_64-pc-windows-msvc\tBuild (Windows)\t2025-12-30T04:58:03.5868222Z error[E0432]: unresolved import `x`"
    )
    assert unstamped(rust).splitlines()[1] == "error[E0432]: unresolved import `x`"
    docker = (  # its blank lines are stamped too
        "2026-01-10T07:42:17.1Z Listening on :8080\n2026-01-10T07:42:18.0Z\n2026-01-10T07:42:18.5Z\n"
        "2026-01-10T07:42:19.9Z Error: connect ECONNREFUSED 10.0.0.5:5432"
    )
    assert unstamped(docker).splitlines() == ["Listening on :8080", "", "", "Error: connect ECONNREFUSED 10.0.0.5:5432"]
    # a stamp that is a line's own is left where it is (a commit's date, one log line among others)
    for said in (
        "f61ae28 2026-01-10T07:42:17Z Fix cart rounding\n0c1d2e3 2026-01-09T11:02:40Z Add cart",  # git log %h %cI %s
        "Deployed at 2026-01-10T07:42:17Z to prod\nURL: https://x.example\nok",
    ):
        assert unstamped(said) == said
    # a script's own complaint is the script's (`./build.sh`, which the command ran); the agent's own
    # shell not finding what the command never names (Cursor's wrapper, a `.bashrc`) is still no error of it
    led = _ledger(_run("c2", "Bash", "./build.sh: line 3: protoc: command not found", command="./build.sh"))
    assert [e.line for e in led.errors] == ["./build.sh: line 3: protoc: command not found"]
    for noise in (
        "bash: dump_bash_state: command not found",
        "/usr/bin/bash: line 1: dump_bash_state: command not found",  # the shell itself, by its path
        "/home/u/.bashrc: line 12: pyenv: command not found",
    ):
        assert not _ledger(_run("c3", "Bash", f"{noise}\nok", command="cat app.log")).errors


def test_a_harness_s_saved_output_is_no_file_of_the_work():
    # Claude Code saves a command's long output to `…/tool-results/<id>.txt` and Cursor to `…/agent-tools/<id>.txt`
    # (a held-out Claude Code session, a corpus Cursor session): the agent reads it back; Files had listed it
    from hermes_mlx.summarizer.tidy import tidy_files

    files = {
        "/home/u/.claude/projects/-home-u-app/f1ac/tool-results/toolu_01A.txt": "read",
        "/Users/j/.cursor/projects/Users-j-app/agent-tools/1a12af5d.txt": "read",
        "/home/u/app/spread.yaml": "edited",
    }
    assert tidy_files(files, "/home/u/app") == {"spread.yaml": "edited"}


# ------------------------------------------------------------------ a program's own failure line


def test_a_programs_own_failed_to_line_with_its_reason_is_an_error():
    # a Python CLI's `Failed to get status: …` (Cursor, held out) and Hermes's patch tool's
    # `Failed to read file: /x` (corpus): a status-less run had kept neither
    assert is_error_line("Failed to get status: Failed to get status")
    assert is_error_line("Unable to connect to server: connection refused")
    assert not is_error_line("Failed to compile.")  # Next.js's verdict: the lines after it say why
    assert not is_error_line("Failed to find a good name, so I kept the old one.")
    out = "Using njord VPN API\nInitialized VPN client\nFailed to get status: Failed to get status\nNot connected to VPN\n"
    led = _ledger(_run("c1", "run_terminal_cmd", out, command="python -m nyord_vpn status"))
    assert [e.line for e in led.errors] == ["Failed to get status: Failed to get status"]


# ------------------------------------------------------------------ Cline's and Roo Code's envelopes

ENV = "<environment_details>\n# VSCode Visible Files\nsrc/app.ts\n\n# Current Time\n2025-09-17T13:46:12Z\n</environment_details>"
RESUMED = (
    "[TASK RESUMPTION] This task was interrupted 2 hours ago. It may or may not be complete, so please "
    "reassess the task context.\n\nNew instructions for task continuation:\n<user_message>\n"
    "Rebuild the task index for the Epita workspace only\n</user_message>\n" + ENV
)


def test_cline_and_roo_codes_envelopes_say_no_words_of_their_own():
    # a Roo Code session (held out; its Goal had been "New instructions for task continuation:
    # <user_message> …") and Cline's and IBM Bob's exports of the same shapes (public repositories)
    messages = [
        {"role": "user", "content": RESUMED},
        *_run(
            "c1",
            "use_mcp_tool",
            "[use_mcp_tool for 'roo-state-manager'] Result:\nThe tool execution failed with the following error:\n"
            f'<error>\nTool "use_mcp_tool" is not allowed in orchestrator mode.\n</error>\n{ENV}',
            server_name="roo-state-manager",
        ),
        *_run(
            "c2",
            "ask_followup_question",
            "[ask_followup_question for 'How many tasks do you see?'] Result:\n<answer>\nI see 22 tasks since mid-August\n</answer>",
            question="How many tasks do you see?",
        ),
        *_run(
            "c3",
            "execute_command",
            "[execute_command for 'npm test'] Result:\nCommand executed.\nOutput:\n  Tests  9 passed (9)\n",
            command="npm test",
        ),
    ]
    s = one_pass(messages)
    assert s.goal == "Rebuild the task index for the Epita workspace only"
    assert [e.line for e in s.ledger.errors] == ['Tool "use_mcp_tool" is not allowed in orchestrator mode.']
    assert any(a.endswith("I see 22 tasks since mid-August") and "Result:" not in a for a in s.ledger.asks)
    assert [c.outcome for c in s.ledger.commands if c.cmd == "npm test"] == ["Tests  9 passed (9)"]
    text = repr(s)
    assert "TASK RESUMPTION" not in text and "user_message" not in text and "<error>" not in text


# ------------------------------------------------------------------ a hook's feedback


def test_claude_codes_stop_hook_feedback_is_no_request_of_the_users():
    # Claude Code records a Stop hook that sent the agent back to work as a user turn ("Stop hook
    # feedback:", marked isMeta): a held-out session's Goal had been its text. Other tools that read
    # these transcripts drop it the same way (public repositories).
    hook = (
        "Stop hook feedback:\n[${CLAUDE_PLUGIN_ROOT}/scripts/hooks/stop.sh]: # Uncommitted Changes Detected\n"
        "Cannot exit with unstaged changes, untracked files."
    )
    assert machine_written(hook) and machine_written("SubagentStop hook feedback:\ngo on")
    assert not machine_written("The stop hook feedback was confusing, can you explain it?")
    s = _with_a_note("Port the library to Rust and delete the Python files.", hook)
    assert s.goal == "Port the library to Rust and delete the Python files."
    assert not any("hook" in a.lower() for a in s.ledger.asks + s.ledger.constraints)


# ------------------------------------------------------------------ a script of reads


def test_a_script_is_a_read_only_when_every_line_reads_once_its_set_up_lines_are_left_aside():
    # Hermes Agent's scripts open with `set -e` and an assignment, then read a binary's strings
    # (held out: the strings `Login server error: …` and `OAuth callback error: …` had been Errors);
    # a script that runs something after a read had been a read too, its result line dropped
    from hermes_mlx.summarizer.shell_words import read_only

    strings = 'set -e\nBIN=/opt/codex/bin/codex\nfile "$BIN"\nstrings "$BIN" | grep -Ei \'oauth|login\' | head -n 200'
    assert read_only(strings) and read_only("ls src\ncat README.md") and read_only("git log \\\n  --oneline -5")
    assert not read_only("git status\ngit commit -am 'Port to Rust'")
    assert not read_only("cat x.py\npython x.py") and not read_only('TMP=$(mktemp -d)\ncd "$TMP"\ngit init -q')
    assert not read_only("set -e\ncat > t.sql <<'EOF'\nselect 1;\nEOF")
    hits = "/opt/codex/bin/codex: ELF 64-bit LSB pie executable\nLogin server error: failed to login to MCP server '\n"
    hits += "".join(f"oauth_flow_step_{i}_pkce_verifier_login_browser_callback\n" for i in range(20))
    hits += "OAuth callback error: /oauth/authorize?\n"
    led = _ledger(_run("c1", "terminal", hits, command=strings))
    assert led.errors == [] and [c.outcome for c in led.commands] == [""]
    commit = (
        "On branch master\nnothing added yet\n[master 7e2d976] Port Python utility library to Rust\n 9 files changed"
    )
    led = _ledger(
        _run("c1", "terminal", commit, command="git status\ngit commit -am 'Port Python utility library to Rust'")
    )
    assert led.commands[0].outcome == "[master 7e2d976] Port Python utility library to Rust"


# ------------------------------------------------------------------ Japanese and Korean cues


def test_a_japanese_or_korean_cause_or_conclusion_is_a_finding_not_a_musing():
    # VS Code Copilot with a Japanese user (held out: "…適用できなかったので、…当て直します。", the
    # patch failed because its path was relative) and Hermes Agent on Slack in Korean (held out:
    # "그래서 현재로선 …", so for now …): with no cue of theirs the lines had been musings
    from hermes_mlx.summarizer.findings import candidates, is_musing

    japanese = "パッチの対象パスが相対になっていて適用できなかったので、絶対パス指定で当て直します。"
    korean = "그래서 현재로선 예정이라기보다, 다른 기능이랑 섞여 퍼진 말일 가능성이 더 큽니다."
    assert not is_musing(japanese) and not is_musing(korean)
    assert is_musing("これは大きな作業です。") and is_musing("이건 큰 작업입니다.")  # says nothing of its own
    # a Latin word beside Hangul or kana is a name (the same Hermes session: "Codex는 …", the answer it
    # led with), and a claim the agent takes back says what was wrong (부정확: inaccurate)
    assert not is_musing("짧게 말하면, 아니요. Codex는 기본적으로 이미지 생성용이 아니라 코딩 에이전트 쪽입니다.")
    assert not is_musing("ChatGPT で設定を確認しました。")
    assert not is_musing("즉, 제가 전에 말한 답은 지금 시점 기준으로 부정확했습니다.")
    # a chat word or a command's word is no name ("はい、commitします。", "これでOKですね。"), and a
    # Korean sentence that ends saying what comes next, or a Japanese one that opens so, announces
    from hermes_mlx.summarizer.findings import is_announcement

    assert is_musing("はい、commitします。") and is_musing("これでOKですね。")
    assert is_announcement("이제 pytest를 실행하겠습니다.") and is_announcement(
        "네 좋습니다, 그럼 Docker 설정을 볼게요."
    )
    # a Korean will-do ending with its cause is a decision; a Japanese lead that opens a conclusion is no announcement
    assert not is_announcement("타임아웃 때문에 `config.py`를 수정하겠습니다.")
    assert not is_announcement("これから分かるように、`config.py` のタイムアウトが短すぎます。")
    found = [c[0] for c in candidates(normalize([{"role": "assistant", "content": f"{japanese}\n\n{korean}"}]))]
    assert found == [japanese, korean]


def test_a_markdown_hard_break_inside_a_sentence_does_not_end_it():
    # a Korean reply (Hermes on Slack) breaks one sentence over three lines with two trailing spaces each,
    # and Cursor's Russian lecture puts a term's definition under its bold label the same way: one line
    # each; a sentence that ended at the break still ends its line
    from hermes_mlx.summarizer.sentences import paragraphs

    korean = (
        "- 그래서 `codex image generation`은 보통  \n  1) **Codex로 이미지 생성 코드를 짜게 한다** 또는  \n"
        "  2) **다른 모델로 이미지를 생성한다**  \n  로 해석하는 게 맞습니다."
    )
    assert paragraphs(korean) == [
        ["- 그래서 `codex image generation`은 보통 **Codex로 이미지 생성 코드를 짜게 한다** 또는 "
         "**다른 모델로 이미지를 생성한다** 로 해석하는 게 맞습니다."]
    ]  # fmt: skip
    label = "**Роль (Persona):**  \n   Определяет, кем должна быть модель."
    assert paragraphs(label) == [["**Роль (Persona):** Определяет, кем должна быть модель."]]
    ended = "The build passed.  \nThen I pushed `main`."
    assert paragraphs(ended) == [["The build passed."], ["Then I pushed `main`."]]


# ------------------------------------------------------------------ what the review found


def test_the_new_shapes_stay_out_of_ordinary_text():
    # an install followed by a failure is that failure; a label in capitals is output, not Cline's;
    # a user who types a tag in prose keeps every word; a program carrying on is no error
    assert outcome_of(
        "Successfully installed mypkg-0.1.0\nTraceback (most recent call last):\nImportError: x", None
    ) == (
        "failure",
        "ImportError: x",
    )
    assert outcome_of("the tool is already installed on most systems, so we skip it", 0)[0] != "install"
    assert not is_error_line("Unable to connect: retrying (1/5)") and not is_error_line(
        "Failed to load x: using defaults"
    )
    led = _ledger(_run("c1", "terminal", "[ERROR] Result: schema validation failed\nexit 1", command="make check"))
    assert any("[ERROR] Result: schema validation failed" in e.line for e in led.errors)
    said = "Rename the XML element <task>build</task> to <job>. Don't touch the migrations folder."
    s = one_pass([{"role": "user", "content": said}, {"role": "assistant", "content": "Renamed it in schema.xsd."}])
    assert "Rename the XML element build to <job>." in s.goal and "Don't touch the migrations folder." in repr(s)


@pytest.mark.timeout(10)
def test_harness_shapes_read_a_hostile_turn_in_linear_time():
    from hermes_mlx.summarizer.findings import is_musing

    assert is_musing("a" * 200_000)  # one long run of letters is read once (a path's shape was quadratic)
    from hermes_mlx.summarizer.text import without_context
    from hermes_mlx.summarizer.tool_results import tool_output

    for text in (
        "<task>" + " " * 20_000 + "x",
        "<user_message>" + "\n" * 20_000,
        "[TASK RESUMPTION] x\n" + "a\n" * 20_000,
        "The tool execution failed with the following error:\n<error>" + " " * 20_000 + "x",
        "[execute_command for '" + "'" * 20_000,
    ):
        without_context(text, "user"), without_context(text, "tool"), tool_output(text)
    from hermes_mlx.summarizer.harness import tagged_words

    assert len(tagged_words("<feedback>ok</feedback>" * 20_000 + "<task>" * 20_000)) == 20_000


def test_a_read_piped_into_a_program_that_changes_things_is_no_read():
    from hermes_mlx.summarizer.shell_words import read_only

    assert read_only('find ~/.hermes/hermes-agent -maxdepth 1 -name "*.py" | xargs wc -l | sort -n')
    assert read_only("find . -print0 | xargs -0 grep -l TODO")
    assert not read_only("find . -name '*.pyc' | xargs rm -f") and not read_only("find . -print0 | xargs -0 -n 1 rm")
    assert not read_only("cat install.sh | sh") and not read_only("ls & rm -rf build")


def test_a_home_folder_spelled_out_is_the_tilde_of_the_working_folder():
    # Hermes's file tools echo `/home/teknium/.hermes/hermes-agent/TODO.md` while the agent works in
    # `~/.hermes/hermes-agent`: the error naming it had put the whole path in Files beside `TODO.md`
    from hermes_mlx.summarizer.workfolder import relative

    assert relative("/home/teknium/.hermes/hermes-agent/TODO.md", "~/.hermes/hermes-agent") == "TODO.md"
    assert relative("/Users/ana/app/src/a.ts", "~/app") == "src/a.ts"
    assert relative("/home/teknium/other/a.py", "~/.hermes/hermes-agent") == "/home/teknium/other/a.py"
    assert relative("/srv/.hermes/hermes-agent/a.py", "~/.hermes/hermes-agent") == "/srv/.hermes/hermes-agent/a.py"


def test_the_second_reviews_cases():
    # Cline's plan mode resumes with another lead line; quoted shell syntax is an argument's; a
    # Japanese question is a musing still; a tolerated error after a passing install is no failure
    from hermes_mlx.summarizer.harness import without_resumption
    from hermes_mlx.summarizer.shell_words import read_only
    from hermes_mlx.summarizer.vocabulary import SIGNAL

    plan_mode = (
        "[TASK RESUMPTION] This task was interrupted 3 minutes ago.\n\nNew message to respond to with "
        "plan_mode_respond tool (be sure to provide your response in the <response> parameter):\n"
        "<user_message>\nOnly plan the API part\n</user_message>"
    )
    assert without_resumption(plan_mode) == "<user_message>\nOnly plan the API part\n</user_message>"
    assert (
        without_resumption("Keep the [TASK RESUMPTION] tag in the docs.")
        == "Keep the [TASK RESUMPTION] tag in the docs."
    )
    assert (
        read_only("grep 'Tom & Jerry' cast.txt")
        and read_only("grep -E 'zsh|bash' ~/.profile")
        and read_only("grep x f |& head")
    )
    assert not SIGNAL.search("どうなるのでしょうか。") and SIGNAL.search("失敗したので直します。")
    assert outcome_of("Successfully installed a-1.0\nError: tolerated notice\n", 0) == (
        "install",
        "Successfully installed a-1.0",
    )
    assert not is_error_line("Failed to connect: retrying (1/5)") and is_error_line(
        "Failed to connect: giving up after 5 retry attempts"
    )


def test_a_resumed_task_with_no_new_words_is_no_goal():
    # Cline resumes a task with its notes alone when the user typed nothing new: the notes had been the Goal
    resumed = (
        "[TASK RESUMPTION] This task was interrupted 1 day ago. It may or may not be complete, so please "
        "reassess the task context.\n\nNote: If you previously attempted a tool use that the user did not "
        "provide a result for, you should assume the tool use was not successful."
    )
    s = _with_a_note("<task>\nAdd a streak counter to the habit API\n</task>", resumed)
    assert s.goal == "Add a streak counter to the habit API" and "TASK RESUMPTION" not in repr(s)
