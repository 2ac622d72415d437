"""What an eleventh round's held-out sessions showed, each with a second source named per test.
Checks go through whole passes of the summarizer where a user's run would.
"""

from summarizer_fakes import call, one_pass


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
                "tool_calls": [call("c1", "aider_command", command="/ask你把文件搬运到哪里了")],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "Invalid command: /ask你把文件搬运到哪里了"},
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
    assert [c.outcome for c in led.commands[1:]] == ["4 passed in 0.1s", "make: *** [all] Error 2"]
