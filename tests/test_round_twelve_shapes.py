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
