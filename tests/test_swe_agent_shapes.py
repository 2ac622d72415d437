"""SWE-agent's own interface, run as shell commands (`open`, `goto`, `search_dir`, `create`,
`edit 12:14 ... end_of_edit`, `submit`), read as what each does: reads are no results and hold no
errors, an edit changes the file the agent has open, a rejected edit changes nothing. The turns
follow two real SWE-agent trajectories (swe-agent-llama-70b on konradhalas/dacite#216 and
package-url/packageurl-python#29), clipped; the numbered-line rule is also shown on Claude Code's
and Hermes's read shapes."""

import json

import pytest

from hermes_mlx.summarizer.absorb import absorb
from hermes_mlx.summarizer.ledger import Ledger
from hermes_mlx.summarizer.outcomes import outcome_of
from hermes_mlx.summarizer.summarizer import MLXSummarizer
from hermes_mlx.summarizer.summary import parse
from hermes_mlx.summarizer.text import normalize

_PROMPT = "\n(Open file: {open})\n(Current directory: {cwd})\nbash-$"


def _session(cwd: str, issue: str, steps: list[tuple[str, str, str, str]]) -> list[dict]:
    """SWE-agent's turns as the shipped corpora convert them: the thought as the assistant's text,
    the action as a `terminal` call, the observation (with its prompt lines) as the tool's answer."""
    messages = [{"role": "user", "content": f"ISSUE:\n{issue}" + _PROMPT.format(open="n/a", cwd=cwd)}]
    for i, (thought, action, observation, open_file) in enumerate(steps):
        call = {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": "terminal", "arguments": json.dumps({"command": action})},
        }
        messages.append({"role": "assistant", "content": thought, "tool_calls": [call]})
        messages.append(
            {
                "role": "tool",
                "tool_call_id": f"c{i}",
                "name": "terminal",
                "content": observation + _PROMPT.format(open=open_file, cwd=cwd),
            }
        )
    return messages


_UPDATED = "File updated. Please review the changes and make sure they are correct (correct indentation, no duplicate lines, etc). Edit the file again if necessary."

DACITE = _session(
    "/dacite",
    "Incorrect work when using field with default_factory\n`default_factory` is called only once if a field absent in the data",
    [
        ("We'll create a new file called `reproduce_bug.py` to reproduce the bug.", "create reproduce_bug.py",
         "[File: /dacite/reproduce_bug.py (1 lines total)]\n1:", "/dacite/reproduce_bug.py"),
        ("Now let's paste the example code from the issue into `reproduce_bug.py`.",
         "edit 1:1\nfrom dacite import from_dict\nprint('Test identity:', a1.items is a2.items)\nend_of_edit",
         "[File: /dacite/reproduce_bug.py (2 lines total)]\n1:from dacite import from_dict\n2:print('Test identity:', a1.items is a2.items)\n" + _UPDATED,
         "/dacite/reproduce_bug.py"),
        ("Let's run the script to see if we can reproduce the bug.", "python reproduce_bug.py", "Test identity: True", "/dacite/reproduce_bug.py"),
        ("The output confirms the bug: the `items` field is identical between instances.", 'search_dir "default_factory"',
         'Found 11 matches for "default_factory" in /dacite:\n/dacite/dacite/config.py (2 matches)\n/dacite/dacite/dataclasses.py (2 matches)\nEnd of matches for "default_factory" in /dacite',
         "/dacite/reproduce_bug.py"),
        ("Let's open the `core.py` file.", "open dacite/core.py",
         "[File: /dacite/dacite/core.py (155 lines total)]\n72:                value = get_default_value_for_field(field, field_type)\n73:            except DefaultValueNotFoundError:",
         "/dacite/dacite/core.py"),
        ("Let's make the necessary edit to the `dataclasses.py` file to remove the caching.",
         "edit 15:15\ndef get_default_value_for_field(field: Field, type_: Type) -> Any:\nend_of_edit",
         "Your proposed edit has introduced new syntax error(s). Please read this error message carefully and then retry editing the file.\n"
         "ERRORS:\n- E999 SyntaxError: invalid syntax\nThis is how your edit would have looked if applied\n"
         "[File: /dacite/dacite/core.py (155 lines total)]\n15:def get_default_value_for_field(field: Field, type_: Type) -> Any:\n"
         "Your changes have NOT been applied. Please fix your edit command and try again.",
         "/dacite/dacite/core.py"),
        ("The edit went to `core.py`, the open file.", "open dacite/dataclasses.py 14",
         "[File: /dacite/dacite/dataclasses.py (33 lines total)]\n14:@cache\n15:def get_default_value_for_field(field: Field, type_: Type) -> Any:",
         "/dacite/dacite/dataclasses.py"),
        ("Now remove the `@cache` decorator.", "edit 14:14\n\nend_of_edit",
         "[File: /dacite/dacite/dataclasses.py (33 lines total)]\n14:\n15:def get_default_value_for_field(field: Field, type_: Type) -> Any:\n" + _UPDATED,
         "/dacite/dacite/dataclasses.py"),
        ("The output should now be False. Let's run the tests.", "pytest tests -q", "90 passed in 0.61s", "/dacite/dacite/dataclasses.py"),
        ("All 90 tests pass. Let's remove the reproduction script.", "rm reproduce_bug.py", "", "/dacite/dacite/dataclasses.py"),
        ("Submitting the change.", "submit", "diff --git a/dacite/dataclasses.py b/dacite/dataclasses.py\n-@cache", "n/a"),
    ],
)  # fmt: skip

PACKAGEURL = _session(
    "/packageurl-python",
    "PackageURL type is not hashable\nStoring `PackageURL` instances in a set can be useful.",
    [
        ("Let's create a new file called `reproduce.py`.", "create reproduce.py",
         "[File: /packageurl-python/reproduce.py (1 lines total)]\n1:", "/packageurl-python/reproduce.py"),
        ("Now let's paste in the example code from the issue.",
         "edit 1:1\nfrom packageurl import PackageURL\n{PackageURL(name='test', type='pypi')}\nend_of_edit",
         "[File: /packageurl-python/reproduce.py (2 lines total)]\n1:from packageurl import PackageURL\n2:{PackageURL(name='test', type='pypi')}\n" + _UPDATED,
         "/packageurl-python/reproduce.py"),
        ("Let's search for the `PackageURL` class definition.", 'search_dir "class PackageURL"',
         'Found 2 matches for "class PackageURL" in /packageurl-python:\n/packageurl-python/src/packageurl/__init__.py (1 matches)\nEnd of matches',
         "/packageurl-python/reproduce.py"),
        ("Let's open the `__init__.py` file.", "open src/packageurl/__init__.py",
         "[File: /packageurl-python/src/packageurl/__init__.py (392 lines total)]\n170:            raise ValueError(\n171:                'Invalid qualifier. '",
         "/packageurl-python/src/packageurl/__init__.py"),
        ("The class is further down.", "goto 300",
         "[File: /packageurl-python/src/packageurl/__init__.py (392 lines total)]\n337:            raise ValueError('A purl string argument is required.')",
         "/packageurl-python/src/packageurl/__init__.py"),
        ("We need to add a `__hash__` method.", "edit 330:330\n    def __hash__(self):\n        return hash(self.to_string())\nend_of_edit",
         "[File: /packageurl-python/src/packageurl/__init__.py (394 lines total)]\n330:    def __hash__(self):\n" + _UPDATED,
         "/packageurl-python/src/packageurl/__init__.py"),
    ],
)  # fmt: skip


def _summary(messages: list[dict]):
    result = MLXSummarizer().update(None, messages, budget_tokens=2000)
    assert result.ok, result.error
    return result.text, parse(result.text)


def test_the_file_an_edit_changes_is_the_one_the_agent_has_open_unless_the_edit_was_turned_down():
    _, dacite = _summary(DACITE)
    assert dacite.ledger.root == "/dacite"  # its `(Current directory: /dacite)`
    # the edit its linter rejected named core.py (the open file) and changed nothing; the later one
    # changed dataclasses.py; the reproduction script was made, then removed
    assert dacite.ledger.files == {
        "reproduce_bug.py": "deleted",
        "dacite/core.py": "read",
        "dacite/dataclasses.py": "edited",
    }
    _, purl = _summary(PACKAGEURL)
    assert purl.ledger.files["reproduce.py"] == "created"
    assert purl.ledger.files["src/packageurl/__init__.py"] == "edited"


def test_its_reads_are_no_results_and_hold_no_errors_and_its_edits_are_not_runs():
    for messages in (DACITE, PACKAGEURL):
        text, s = _summary(messages)
        shown = [c.cmd for c in s.ledger.commands]
        assert not [c for c in shown if c.split()[0] in ("open", "goto", "search_dir", "create", "edit")], shown
        # `73: except DefaultValueNotFoundError:` and `170: raise ValueError(` are lines of a file read back
        assert all(
            "DefaultValueNotFoundError" not in e.line and "raise ValueError" not in e.line for e in s.ledger.errors
        )
        assert "Open file" not in text and "bash-$" not in text
    _, dacite = _summary(DACITE)
    assert {c.cmd: c.outcome for c in dacite.ledger.commands}["pytest tests -q"] == "90 passed in 0.61s"
    # the rejected edit's error is its file's (core.py, the file open then, named as Files names it):
    # an edit applied to another file fixes nothing
    assert [(e.line, e.cmd) for e in dacite.ledger.errors] == [
        ("- E999 SyntaxError: invalid syntax", "edit dacite/core.py")
    ]


def test_a_worked_example_the_harness_shows_is_another_sessions_and_is_not_read():
    # SWE-agent's demonstration (a whole marshmallow trajectory before a pydicom task) had been the
    # Goal and filled Files with marshmallow's paths; OpenHands' running example leads the task
    demo = (
        "Here is a demonstration of how to correctly accomplish this task.\nIt is included to show you how to "
        "correctly use the interface.\nYou do not need to follow exactly what is done in the demonstration.\n"
        "--- DEMONSTRATION ---\nISSUE:\nTimeDelta serialization precision\n"
        "[File: /marshmallow-code__marshmallow/src/marshmallow/fields.py (1 lines total)]"
        + _PROMPT.format(
            open="/marshmallow-code__marshmallow/src/marshmallow/fields.py", cwd="/marshmallow-code__marshmallow"
        )
        + "\nsubmit\n--- END OF DEMONSTRATION ---\n"
    )
    text, s = _summary([{"role": "user", "content": demo}, *DACITE])
    assert "marshmallow" not in text and "demonstration" not in text.lower()
    assert s.goal.startswith("ISSUE: Incorrect work when using field with default_factory")
    running = (
        "Here's a running example of how to perform a task with the provided tools.\n\n"
        "--------------------- START OF EXAMPLE ---------------------\n\nUSER: Create a list of numbers from 1 "
        "to 10.\nASSISTANT: Sure! Let me create /workspace/app.py\n"
        "--------------------- END OF EXAMPLE ---------------------\n\n\nFix the separability matrix of nested models."
    )
    text, s = _summary([{"role": "user", "content": running}])
    assert s.goal == "Fix the separability matrix of nested models." and "app.py" not in text


def test_a_numbered_line_a_short_read_prints_is_the_file_in_claude_code_and_hermes_shapes():
    claude_code = "    41→def load(path):\n    42→    raise FileNotFoundError(path)\n"
    hermes = json.dumps(
        {"content": "   12|    except KeyError:\n   13|        raise ValueError('bad key')", "total_lines": 13}
    )
    led = Ledger()
    absorb(
        led,
        normalize(
            [
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "a", "type": "function", "function": {"name": "read_file", "arguments": json.dumps({"path": "src/io.py"})}},
                    {"id": "b", "type": "function", "function": {"name": "read_file", "arguments": json.dumps({"path": "src/keys.py"})}},
                ]},
                {"role": "tool", "tool_call_id": "a", "content": claude_code},
                {"role": "tool", "tool_call_id": "b", "content": hermes},
            ]
        ),
    )  # fmt: skip
    assert led.errors == []
    assert led.files == {"src/io.py": "read", "src/keys.py": "read"}


def test_a_scripts_readout_is_its_result_whatever_its_status_in_swe_agent_and_cursor_shapes():
    # SWE-agent prints no exit status: its reproduction script's readout, before and after the fix,
    # is what came of it; Cursor's export has none either (alpamayo-gpu-driver's environment check)
    _, dacite = _summary(DACITE)
    assert {c.cmd: c.outcome for c in dacite.ledger.commands}["python reproduce_bug.py"] == "Test identity: True"
    cursor = "venv torch: 2.8.0+cu128\nvenv cuda available: False\n"
    assert outcome_of(cursor) == ("output", "venv torch: 2.8.0+cu128; venv cuda available: False")
    # not a readout: a line of prose, a listing, an error (it is the failure's), or more than a few lines
    assert outcome_of("Downloading the model weights now\n") == ("", "")
    assert outcome_of("src/a.py\nsrc/b.py\n") == ("", "")
    assert outcome_of("Error: unhashable type: 'collections.OrderedDict'")[0] == "failure"
    assert outcome_of("\n".join(f"key{i}: {i}" for i in range(6))) == ("", "")
    assert outcome_of("https://github.com/o/r/issues/482#issuecomment-1\n") == ("", "")  # a URL is no label
    # a status script that leads with its readout and adds notes (Codex's `sh scripts/service.sh
    # status`): the readout, when the run succeeded; an unknown or failed status says no more
    codex = (
        "\n[EmailBuddy] LaunchAgent status: not loaded\n\n[EmailBuddy][warn] Plist not installed (run: npm run "
        "service:install)\n\n[EmailBuddy][warn] No process currently listening on 127.0.0.1:48123\n"
    )
    assert outcome_of(codex, 0) == ("output", "[EmailBuddy] LaunchAgent status: not loaded")
    health = "Database: reachable\nNote that the replica lag is not checked by this script.\n"
    assert outcome_of(health, 0) == ("output", "Database: reachable")
    assert outcome_of(health) == ("", "")
    assert outcome_of("Downloading the model weights now\nDone in 3 s, see the log for details.\n", 0) == ("", "")


def test_a_removal_alone_deletes_a_file_and_a_restore_after_one_edits_it():
    # mini-swe-agent on django-13321 restored a file from its backup in one command
    led = Ledger()
    calls = [
        "rm reproduce.py",
        "cd /testbed && rm django/x/base.py && cp django/x/base.py.backup django/x/base.py",
    ]
    messages = []
    for i, cmd in enumerate(calls):
        call = {
            "id": f"r{i}",
            "type": "function",
            "function": {"name": "terminal", "arguments": json.dumps({"command": cmd})},
        }
        messages += [
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"r{i}", "content": ""},
        ]
    absorb(led, normalize(messages))
    assert led.files["reproduce.py"] == "deleted"
    assert led.files["django/x/base.py"] == "edited"


def test_what_a_pruned_output_kept_still_tells_what_the_call_did():
    # an earlier pass pruned OpenDevin's outputs to one line each, and the summary read them later:
    # the `edit 688:693 <<EOF` output began with the shell's `> ` echo of the here-document, so the
    # editor's `[File: …]` line was lost and fields.py stayed "(read)"; a rejected edit and a failed
    # test run kept no error at all
    from hermes_mlx.compactor.batch import prune_tool_results

    cwd = "/workspace/django"
    shown = "[File: /workspace/django/django/forms/fields.py (1283 lines total)]\n" + "\n".join(
        f"{n}:    line {n}" for n in range(600, 700)
    )
    rejected = (
        "Your proposed edit has introduced new syntax error(s). Please understand the fixes and retry.\n"
        "ERRORS:\n- E999 IndentationError: unexpected indent\n\nThis is how your edit would have looked if applied\n"
        + "\n".join(f"{n}:    x = {n}" for n in range(120, 160))
        + "\nYour changes have NOT been applied. Please fix your edit command and try again."
    )
    failed = (
        "Testing against Django installed in '/workspace/django/django'\n"
        + "\n".join(f"test_{n} (forms_tests.tests) ... ok" for n in range(30))
        + "\nModuleNotFoundError: No module named 'tests'\n\nFAILED (errors=6, skipped=1)"
    )
    session = _session(
        cwd,
        "URLField throws ValueError instead of ValidationError on clean",
        [
            ("Open the file.", "open django/forms/fields.py 671", shown, "/workspace/django/django/forms/fields.py"),
            ("Catch the ValueError.", "edit 688:693 <<EOF\n            try:\n                return list(urlsplit(url))\nEOF",
             ">             try:\n>                 return list(urlsplit(url))\n> EOF\n" + shown,
             "/workspace/django/django/forms/fields.py"),
            ("Fix the validator.", "edit 133:136 <<EOF\n        validate_ipv6_address(potential_ip)\nEOF", rejected,
             "/workspace/django/django/core/validators.py"),
            ("Run the tests.", "python3 tests/runtests.py forms_tests", failed, "/workspace/django/django/core/validators.py"),
        ],
    )  # fmt: skip
    pruned, n, _ = prune_tool_results(session)
    assert n == 4
    placeholders = [m["content"] for m in pruned if m["role"] == "tool"]
    assert "first line: [File: /workspace/django/django/forms/fields.py (1283 lines total)]" in placeholders[1]
    assert "; error: - E999 IndentationError: unexpected indent" in placeholders[2]
    assert (
        "result: FAILED (errors=6, skipped=1); error: ModuleNotFoundError: No module named 'tests'" in placeholders[3]
    )
    text, s = _summary(pruned)
    assert s.ledger.files.get("django/forms/fields.py") == "edited", s.ledger.files
    lines = [e.line for e in s.ledger.errors]
    assert any("E999 IndentationError" in x for x in lines) and any("No module named 'tests'" in x for x in lines)


def test_a_read_that_failed_read_nothing_and_a_program_the_command_runs_is_its_own():
    # SWE-agent's `open` of a path relative to the wrong folder ("File … not found"), and `javac`
    # missing in a long-lived shell whose line numbers count on (`line 192`): the file had been
    # listed as read and the compiler's absence was no error at all
    session = _session(
        "/google__gson",
        "Gson serializes a cyclic field wrongly",
        [
            ("Compile the reproduction.", "javac ReproduceIssue.java", "/bin/bash: line 192: javac: command not found", "n/a"),
            ("Open the wrapper.", "open gson/src/TypeAdapterRuntimeTypeWrapper.java", "File gson/src/TypeAdapterRuntimeTypeWrapper.java not found", "n/a"),
        ],
    )  # fmt: skip
    _, s = _summary(session)
    assert "gson/src/TypeAdapterRuntimeTypeWrapper.java" not in {p: a for p, a in s.ledger.files.items() if a == "read"}
    lines = [e.line for e in s.ledger.errors]
    assert "/bin/bash: line 192: javac: command not found" in lines
    assert "File gson/src/TypeAdapterRuntimeTypeWrapper.java not found" in lines


def test_a_command_run_again_and_again_says_how_many_times():
    # SWE-agent ran the same failing command dozens of times until its cost limit: the summary
    # showed it as one run
    missing = "/bin/bash: line 192: javac: command not found"
    session = _session(
        "/google__gson",
        "Gson serializes a cyclic field wrongly",
        [("Compile it again.", "javac ReproduceIssue.java", missing, "n/a") for _ in range(5)],
    )
    text, s = _summary(session)
    assert f"`javac ReproduceIssue.java` (5 runs) → {missing}" in text
    assert s.ledger.commands[0].runs == 5  # read back, it counts on
    one, _ = _summary(session[:3])
    assert "runs)" not in one
    # micro passes read the count back one run at a time: it counts on (it had stayed at one)
    from hermes_mlx.summarizer.summary import Summary, render

    text = ""
    for _ in range(4):
        s = parse(text) if text else Summary(goal="x")
        s.ledger.add_command("npm test", None, "")
        text = render(s)
    assert "`npm test` (4 runs)" in text


def test_a_placeholder_keeps_the_exit_status_and_reads_a_json_result_by_its_output():
    # review: Hermes's terminal answers `{"output": …, "exit_code": 1}`; its placeholder had no
    # error and no status, and read back as a run that passed
    from hermes_mlx.compactor.batch import one_line
    from hermes_mlx.summarizer.tool_results import exit_status

    hermes = json.dumps(
        {"output": "x\n" * 50 + "FAIL src/App.test.tsx\nTests: 1 failed, 4 passed, 5 total", "exit_code": 1}
    )
    kept = one_line("terminal", hermes)
    assert exit_status(kept) == 1 and "first line: x; result: Tests: 1 failed, 4 passed, 5 total" in kept
    assert "; error: FAIL src/App.test.tsx" in kept


@pytest.mark.timeout(30)
def test_a_block_the_user_calls_an_example_is_theirs_and_a_demonstration_is_read_in_linear_time():
    # review: only a harness's introduced example goes; a run of header lines with no end, and an
    # error envelope over a run of blank lines, were read in quadratic time (minutes at 200 KB)
    from hermes_mlx.summarizer.text import normalize

    own = "Change the logger.\nDo NOT change log().\n--- EXAMPLE ---\n2024-05-01T10:00:00Z [INFO] up\n--- END OF EXAMPLE ---"
    assert normalize([{"role": "user", "content": own}])[0].text == own
    normalize([{"role": "user", "content": "--- EXAMPLE ---\n" * 12_500}])
    normalize([{"role": "user", "content": "<tool_use_error>x" + "\n" * 40_000}])
