"""What a twelfth round's held-out sessions showed, each with a second source named per test.
Checks go through whole passes of the summarizer where a user's run would.
"""

from summarizer_fakes import call, one_pass  # noqa: F401


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
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [call("c1", "run", command="pytest -q tests/test_cart.py")],
            },
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": "FAILED tests/test_cart.py::test_total - AssertionError: assert 9.99 == 10.0\n1 failed in 0.1s",
            },
            {"role": "assistant", "content": "", "tool_calls": [call("c2", "patch", path="shop/cart.py")]},
            {
                "role": "tool",
                "tool_call_id": "c2",
                "content": "Applied edit to shop/cart.py\nCommit 3e1f0a2 fix: quantize",
            },
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
