"""What the agent asked the user through a tool travels with what the user chose: Claude Code's
prose answer as it is, Cursor's option ids as their labels, Codex's unrecorded answer as the
question alone (shapes from the real-session corpora)."""

from __future__ import annotations

import json

from summarizer_fakes import call

from hermes_mlx.summarizer.absorb import absorb
from hermes_mlx.summarizer.ledger import Ledger
from hermes_mlx.summarizer.questions import asked, asked_and_chosen
from hermes_mlx.summarizer.text import normalize


def _asks(name: str, arguments: dict, result: str) -> list[str]:
    led = Ledger()
    absorb(
        led,
        normalize(
            [
                {"role": "assistant", "content": "", "tool_calls": [call("q1", name, **arguments)]},
                {"role": "tool", "tool_call_id": "q1", "name": name, "content": result},
            ]
        ),
    )
    return led.asks


CURSOR = {
    "questions": [
        {
            "id": "delete_scope",
            "prompt": "Delete the local copy or the GitHub repository?",
            "options": [
                {"id": "local", "label": "local folder (/data/z/alpamayo)"},
                {"id": "remote", "label": "GitHub"},
            ],
        }
    ]
}
CURSOR_ANSWER = json.dumps(
    {"answers": [{"questionId": "delete_scope", "selectedOptionIds": ["local"], "freeformText": ""}]}
)
CODEX = {
    "questions": "[map[header:Service Mode id:mode options:[map[description:Use LaunchAgent (`launchctl`) "
    "(Recommended). label:macOS native] map[description:PM2. label:Cross-platform CLI]] "
    "question:Which operating mode do you want to optimize for first?]]"
}


def test_cursor_option_ids_become_the_labels_the_user_chose():
    assert _asks("ask_question", CURSOR, CURSOR_ANSWER) == [
        "Asked: Delete the local copy or the GitHub repository? → local folder (/data/z/alpamayo)"
    ]


def test_codex_questions_in_go_maps_travel_without_the_answer_the_export_lost():
    assert asked(CODEX) == [("", "Which operating mode do you want to optimize for first?", {})]
    assert _asks("request_user_input", CODEX, "") == ["Asked: Which operating mode do you want to optimize for first?"]


def test_a_prose_answer_is_kept_verbatim_and_free_text_is_an_answer():
    prose = 'User has answered your questions: "Which rig?"="No rig". You can now continue.'
    claude = {"questions": [{"question": "Which rig?", "options": [{"label": "spotter"}, {"label": "No rig"}]}]}
    assert _asks("AskUserQuestion", claude, prose) == [prose]
    free = json.dumps({"answers": [{"questionId": "delete_scope", "selectedOptionIds": [], "freeformText": "both"}]})
    assert asked_and_chosen(CURSOR, free) == ["Asked: Delete the local copy or the GitHub repository? → both"]
    assert asked_and_chosen({"path": "a.py"}, "{}") == []  # no question asked: nothing said


def test_hermes_clarify_answers_travel_with_their_questions_not_as_json():
    """Hermes's `clarify` answers in JSON that repeats what was offered; the user's pick is
    `user_response`, one per question in a batch (`responses`), never `choices_offered`."""
    one = {"question": "Which database should we use?", "choices": ["Postgres", "SQLite"]}
    answer = {"question": one["question"], "choices_offered": one["choices"], "user_response": "SQLite"}
    assert _asks("clarify", one, json.dumps(answer)) == ["Asked: Which database should we use? → SQLite"]
    batch = {"questions": [one, {"question": "Which port?"}]}
    answers = {"responses": [answer, {"question": "Which port?", "choices_offered": None, "user_response": "8080"}]}
    assert _asks("clarify", batch, json.dumps(answers)) == [
        "Asked: Which database should we use? → SQLite",
        "Asked: Which port? → 8080",
    ]
    several = {**answer, "user_response": ["Postgres", "SQLite"]}  # multi_select
    assert _asks("clarify", one, json.dumps(several)) == ["Asked: Which database should we use? → Postgres; SQLite"]


def test_answers_keyed_by_question_id_are_read():
    """Codex's `request_user_input` answers as a map from each question's id to its answers."""
    asked_for = {"questions": [{"id": "mode", "question": "Which mode first?", "options": [{"label": "macOS native"}]}]}
    answer = json.dumps({"answers": {"mode": {"answers": ["macOS native"]}}})
    assert _asks("request_user_input", asked_for, answer) == ["Asked: Which mode first? → macOS native"]
