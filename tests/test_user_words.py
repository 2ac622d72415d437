"""What the summary carries of the user's own words, as an eighth round's held-out sessions showed
them and a second source confirms (named per test): a reviewing user's approvals between their real
directives, and a build log a user pasted whose errors sat past where a long message was clipped.
Checks go through whole passes of the summarizer, as a user's runs do, and the functions they use.
"""

import pytest
from summarizer_fakes import one_pass

from hermes_mlx.summarizer.directives import user_constraints
from hermes_mlx.summarizer.extract import pasted_problems
from hermes_mlx.summarizer.faithful import is_go_ahead
from hermes_mlx.summarizer.ledger import USER_MESSAGE_CHARS, user_message


# Codex CLI with a reviewing user ("Approved." five times, "Not blocking.", "Fine as-is."), VS Code
# Copilot's "Yes I am." answer and Aider's "ok, try that" in the corpora
@pytest.mark.parametrize(
    "said", ["Approved.", "Approved as-is.", "Fine as-is.", "Not blocking.", "ok, try that", "Sounds good, thanks!"]
)
def test_an_approval_or_go_ahead_is_no_constraint(said):
    assert is_go_ahead(said)
    assert user_constraints(said) == []
    assert user_constraints(f"{said} Keep it around 100-150 lines.") == [f"{said} Keep it around 100-150 lines."]


@pytest.mark.parametrize(
    "said", ["Don't commit.", "No mocks.", "Use pnpm.", "Approved. Please proceed with report.py."]
)
def test_a_short_directive_is_still_one(said):
    assert user_constraints(said) == [said]


def test_a_lead_in_and_the_list_under_it_are_one_constraint():
    # the end-to-end review's "Do not touch:" / "- db/migrations/" had lost the folder; Codex's reviewing
    # user's "Please run:" had been a constraint that said nothing
    review = "The fixtures look clean and each change type is exercised exactly once in them. " * 5
    assert user_constraints(f"{review}\nDo not touch:\n- db/migrations/\n- config/prod.yml\nThanks.") == [
        "Do not touch: db/migrations/; config/prod.yml"
    ]
    assert user_constraints(f"{review}\nPlease run:\n1. `pytest`\n2. `ruff check`") == [
        "Please run: `pytest`; `ruff check`"
    ]
    long_items = "\n".join(f"- never edit generated/module_{i}/schema_definitions.py" for i in range(12))
    said = user_constraints(f"{review}\nNever modify:\n{long_items}")
    assert said[0].startswith("Never modify: never edit generated/module_0/") and len(said[0]) <= 300


def test_a_reviewing_users_approvals_leave_constraints_and_stay_in_user_messages():
    s = one_pass(
        [
            {"role": "user", "content": "Build the weekly monitor. Keep the CLI defaults sensible."},
            {"role": "assistant", "content": "I wrote `clients.py`."},
            {"role": "user", "content": "Approved."},
            {"role": "assistant", "content": "I wrote `watchlist.py`."},
            {"role": "user", "content": "Not blocking. Please proceed with diff.py."},
        ]
    )
    constraints = s.ledger.constraints
    assert "Approved." not in constraints
    assert "Keep the CLI defaults sensible." in constraints
    assert "Approved." in s.ledger.asks  # the user's words are never lost


# Gemini CLI: a German user pasted `docker compose run … make` output and asked about it; the compiler's
# errors sat past the first 600 characters. An SWE-bench issue (mini-swe-agent's corpus sessions) holds its
# traceback the same way, and Cursor's user pasted `Error: Failed to run sql query: …` after prose.
_BUILD_LOG = (
    "Ich erhalte im Terminal folgende Meldung: fried@box:~/dev/app$ docker compose run --rm c-dev make clean all\n"
    "WARN[0000] /home/fried/dev/app/docker-compose.yml: the attribute `version` is obsolete, it will be ignored\n"
    "gcc main.c game_logic.c gui.c file_io.c -Wall -Wextra -std=c99 -O3 -fopenmp -lraylib -lGL -lm -o biotope\n"
    + "note: a long line of the build's own chatter that says nothing of what went wrong here\n"
    * 6
    + "gui.c:563:13: error: duplicate case value\n"
    "  563 |             case STATE_IGNITION:\n"
    "gui.c:729:9: warning: enumeration value 'STATE_IGNITION' not handled in switch [-Wswitch]\n"
    "gui.h:38:5: error: unknown type name 'bool'\n"
    "gui.h:39:5: error: unknown type name 'bool'\n"
    "make: *** [Makefile:28: biotope] Error 1\n"
    "Bitte analysiere die Fehlermeldung Zeile für Zeile. Wie kann der Fehler behoben werden?"
)


def test_a_long_message_clipped_keeps_its_start_the_errors_it_pasted_and_its_end():
    line = user_message(_BUILD_LOG)
    assert line.startswith("Ich erhalte im Terminal folgende Meldung")
    assert line.endswith("Wie kann der Fehler behoben werden?")
    assert "gui.c:563:13: error: duplicate case value" in line
    assert "gui.h:38:5: error: unknown type name 'bool'" in line
    assert "gui.h:39:5" not in line  # the same error at the next line is said once
    assert " … " in line and "\n" not in line
    assert len(line) < 2 * USER_MESSAGE_CHARS


def test_a_pasted_warning_is_kept_when_no_error_is_there():
    log = (
        "Bitte erkläre das:\n" + "x " * 400 + "\ngui.c:52:107: warning: unused parameter 'currentState'\n" + "y " * 200
    )
    assert pasted_problems(log) == ["gui.c:52:107: warning: unused parameter 'currentState'"]
    assert "gui.c:52:107: warning: unused parameter 'currentState'" in user_message(log)


def test_a_long_message_with_nothing_pasted_keeps_its_start_and_end_only():
    text = "word " * 200 + "and the question at the very end?"
    line = user_message(text)
    assert line.endswith("the question at the very end?") and line.count(" … ") == 1


def test_a_pass_keeps_the_pasted_errors_of_a_long_user_message():
    s = one_pass([{"role": "user", "content": _BUILD_LOG}, {"role": "assistant", "content": "Ich sehe zwei Fehler."}])
    said = "\n".join([s.goal, *s.ledger.asks, *s.ledger.constraints])
    assert "gui.c:563:13: error: duplicate case value" in said


def test_a_secret_in_a_pasted_error_line_is_redacted():
    key = "sk-" + "abcdefghijklmnopqrstuvwxyz012345"
    text = "x " * 400 + f"\nError: login failed with api_key={key}\n" + "y " * 200
    line = user_message(text)
    assert "Error: login failed with api_key=" in line and key not in line


def test_the_second_reviews_cases_of_user_words():
    # a traceback's error is kept as the user pasted it, without the place error_report notes after it
    trace = "Traceback (most recent call last):\n  File \"/app/main.py\", line 5, in main\nKeyError: 'key'\n"
    text = "x " * 300 + "\nsrc/a.c:3:1: warning: unused variable 'n'\n" + trace + "y " * 100
    got = pasted_problems(text)
    assert got == ["src/a.c:3:1: warning: unused variable 'n'", "KeyError: 'key'"]  # in the text's order
    # a go-ahead is read in linear time, and "Please proceed." is one
    assert not is_go_ahead("ok" + "." * 100_000 + "x")
    assert is_go_ahead("Please proceed.") and is_go_ahead("Perfect! Keep going.")
