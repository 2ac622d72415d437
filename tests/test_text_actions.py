"""Agents that act in text (mini-swe-agent, SWE-agent without function calls): the command in a
fenced block, its output the next user message. Exported as they ran, the output had been read as
the user's words (no Commands, no Errors, tracebacks under User Messages)."""

from __future__ import annotations

import pytest

from hermes_mlx.summarizer.absorb import absorb
from hermes_mlx.summarizer.ledger import Ledger
from hermes_mlx.summarizer.text import normalize

MINI = [
    {
        "role": "user",
        "content": "<pr_description>Quantity.__array_ufunc__ should return NotImplemented</pr_description>",
    },
    {"role": "assistant", "content": "THOUGHT: Reproduce it first.\n\n```bash\npython3 reproduce_issue.py\n```"},
    {
        "role": "user",
        "content": '<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\n  File "r.py", line 3\n'
        "ValueError: Value not scalar compatible or convertible to an int, float, or complex array\n</output>",
    },
]
SWE = [
    {
        "role": "user",
        "content": "We're currently solving the following issue.\nISSUE:\nPixel Representation should be optional\n\n"
        "(Open file: n/a)\n(Current directory: /pydicom__pydicom)\nbash-$",
    },
    {"role": "assistant", "content": "Let's reproduce the bug.\n```\npython reproduce_bug.py\n```"},
    {
        "role": "user",
        "content": "AttributeError: Unable to convert the pixel data: PixelRepresentation is missing\n"
        "(Open file: /pydicom__pydicom/reproduce_bug.py)\n(Current directory: /pydicom__pydicom)\nbash-$",
    },
]


def test_a_text_action_and_its_output_are_a_call_and_its_result():
    for messages, cmd, error in (
        (MINI, "python3 reproduce_issue.py", "ValueError: Value not scalar compatible"),
        (SWE, "python reproduce_bug.py", "AttributeError: Unable to convert the pixel data"),
    ):
        turns = normalize(messages)
        assert [t.role for t in turns] == ["user", "assistant", "tool"]
        assert turns[1].tool_calls[0].text == cmd and turns[2].tool_call_id == turns[1].tool_calls[0].id
        led = Ledger()
        absorb(led, turns)
        assert [c.cmd for c in led.commands] == [cmd]
        assert any(e.line.startswith(error) for e in led.errors), led.errors
        assert len(led.asks) == 1  # the task, not the output


def test_a_user_turn_is_no_output_unless_it_answers_a_text_action():
    # SWE-agent's task message ends with the terminal prompt too; a reply after prose is a person's;
    # a Python block is code shown, not run
    assert [t.role for t in normalize(SWE[:1])] == ["user"]
    chat = [{"role": "assistant", "content": "Done."}, {"role": "user", "content": "observation: it works now"}]
    assert [t.role for t in normalize(chat)] == ["assistant", "user"]
    shown = [{**MINI[1], "content": "Like this:\n```python\nprint(1)\n```"}, MINI[2]]
    assert [t.role for t in normalize(shown)] == ["assistant", "user"]


@pytest.mark.timeout(20)
def test_a_long_run_of_blank_lines_is_read_in_linear_time():
    # SWE-agent's prompt pattern backtracked over newlines: 80,000 of them took 12 s, 200,000 minutes
    long = "(Current directory: /x)" + "\n" * 200_000 + "please"
    turns = normalize([{"role": "assistant", "content": "hi"}, {"role": "user", "content": long}])
    assert [t.role for t in turns] == ["assistant", "user"]


def _mini_session(pairs: int = 40) -> list[dict]:
    """A mini-swe-agent run as exported: the task, then text actions whose output comes back as user turns."""
    out = [
        {"role": "system", "content": "You can interact with a shell. Reply with one ```bash block."},
        {
            "role": "user",
            "content": "<pr_description>Quantity.__array_ufunc__ should return NotImplemented</pr_description>",
        },
    ]
    for k in range(pairs):
        out.append(
            {
                "role": "assistant",
                "content": f"THOUGHT: Look at part {k}.\n\n```bash\nnl -ba astropy/units/q{k}.py\n```",
            }
        )
        listing = "\n".join(f"{n:6d}\tvalue_{k}_{n} = compute({n})" for n in range(60))
        out.append({"role": "user", "content": f"<returncode>0</returncode>\n<output>\n{listing}\n</output>"})
    return out


@pytest.mark.parametrize("mode", ["batch", "micro"])
def test_a_compaction_folds_a_text_action_with_its_output_and_keeps_only_the_users_words(mode):
    # the outputs had joined the batch pass's user row (kept verbatim, read back as the user's words
    # at the next pass: the Goal was an `ls -la` listing) and micro passes could never fold them
    from hermes_mlx.bench.fidelity import run_session
    from hermes_mlx.compactor import markers
    from hermes_mlx.summarizer.summarizer import MLXSummarizer
    from hermes_mlx.summarizer.summary import parse

    session = _mini_session()
    run = run_session(session, MLXSummarizer(ranking="code"), mode=mode, context_limit=8192, session_id="mini")
    live = markers.display_view(run.messages)
    kept_outputs = sum("<returncode>" in str(m.get("content")) for m in live)
    assert kept_outputs < 40 // 2, kept_outputs  # folded, not kept
    for i, m in enumerate(run.messages):
        if "<returncode>" in str(m.get("content")) and not markers.is_marker(m):  # never apart from its action
            assert run.messages[i - 1].get("role") == "assistant" and "```bash" in run.messages[i - 1]["content"]
    s = parse(run.summary)
    assert "Quantity.__array_ufunc__" in s.goal or "<returncode>" not in s.goal
    assert not any("<returncode>" in x for x in [*s.ledger.asks, *s.ledger.constraints])
    assert any(p.startswith("astropy/units/q") for p in s.ledger.files)  # what the actions read


def test_a_persons_words_are_never_taken_for_a_text_actions_output():
    # review: "Observation: the page is still blank" after a reply that ends in an unlabelled block is
    # a person's; a merged row (an output and the user's next words, merged by a pass) is kept whole
    from hermes_mlx.compactor import markers
    from hermes_mlx.compactor.transcript import observes

    reply = {"role": "assistant", "content": "Start it with:\n```\nnpm run dev\n```"}
    person = {
        "role": "user",
        "content": "Observation: after your change the login page is still blank. Keep the old CSS.",
    }
    assert not observes([reply, person], 1)
    assert [t.role for t in normalize([reply, person])] == ["assistant", "user"]
    react = {"role": "assistant", "content": "Thought: list it.\n```bash\nls\n```"}
    assert observes([react, {"role": "user", "content": "Observation: a.py b.py"}], 1)
    merged = markers.merge_users(MINI[2], {"role": "user", "content": "STOP - do not touch setup.py"})
    assert not observes([MINI[1], merged], 1)
