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
