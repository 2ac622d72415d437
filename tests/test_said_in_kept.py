"""What the turns kept verbatim still show is worth little in the summary beside them: a file,
command, name or error line the tail spells out goes first when the budget is short, so the room
goes to what only the summary can carry. The compactors tell the summarizer what they keep."""

import json

from fakes import ScriptedSummarizer, assistant, session, tool, user
from summarizer_fakes import call

from hermes_mlx.compactor.batch import BatchCompactor
from hermes_mlx.compactor.markers import is_marker
from hermes_mlx.compactor.markers import parse as parse_marker
from hermes_mlx.compactor.micro import MicroCompactor
from hermes_mlx.compactor.settings import CompactorSettings
from hermes_mlx.summarizer.budget import fit_summary, hermes_tokens
from hermes_mlx.summarizer.ledger import Ledger
from hermes_mlx.summarizer.summarizer import MLXSummarizer
from hermes_mlx.summarizer.summary import Summary, render


def edited_files(n: int) -> Summary:
    led = Ledger()
    for i in range(n):
        led.add_file(f"src/pkg/module_{i:02d}.py", "edited")
    led.add_list("asks", ["Rename the module helpers.", "Also src/pkg/module_00.py please."])
    return Summary(goal="Rename the module helpers", ledger=led)


def test_an_entry_the_kept_turns_show_goes_before_its_equals():
    s = edited_files(20)
    budget = hermes_tokens(render(s)) - 5  # room for all files but one
    kept = "read_file src/pkg/module_17.py\n…the helper is now `load_all`."
    dropped = fit_summary(s, budget, kept=kept)
    files = list(s.ledger.files)
    assert dropped == {"changed_file": len(edited_files(20).ledger.files) - len(files)}
    assert "src/pkg/module_17.py" not in files  # the tail still shows it
    assert "src/pkg/module_01.py" in files  # the first of its equals stays (it went first before)
    without = edited_files(20)
    fit_summary(without, budget)
    assert "src/pkg/module_01.py" not in without.ledger.files and "src/pkg/module_17.py" in without.ledger.files
    assert "src/pkg/module_00.py" in without.ledger.files  # the user named it: no equal of the others


def test_the_users_words_keep_their_worth_whatever_the_tail_shows():
    s = edited_files(20)
    kept = "Rename the module helpers.\nAlso src/pkg/module_00.py please."  # the row of user turns
    fit_summary(s, hermes_tokens(render(s)) - 40, kept=kept)
    assert s.ledger.asks == ["Rename the module helpers.", "Also src/pkg/module_00.py please."]
    assert s.goal == "Rename the module helpers"


def work(i: int) -> list:
    """An exchange that edits a file and runs its test: a file, a command and a finding each."""
    cid = f"w{i}"
    return [
        user(f"Go on with module {i}."),
        {
            "role": "assistant",
            "content": f"The parser in `src/pkg/module_{i:02d}.py` dropped the last token of line {i}.",
            "tool_calls": [call(cid, "patch", path=f"src/pkg/module_{i:02d}.py", old="a", new="b")],
        },
        tool(cid, json.dumps({"success": True}), name="patch"),
        {
            "role": "assistant",
            "content": f"Fixed module {i}.",
            "tool_calls": [call(f"t{i}", "terminal", command=f"pytest tests/test_module_{i:02d}.py -q")],
        },
        tool(f"t{i}", json.dumps({"output": f"{i + 3} passed in 0.4{i}s", "exit_code": 0}), name="terminal"),
        assistant(f"Module {i} passes its {i + 3} tests."),
    ]


def test_a_batch_pass_lets_go_first_of_what_its_tail_still_shows():
    """Hermes's session loop as our compactor runs it: the tail re-reads module 03; with room
    short, module 03 leaves the summary and a file only the summary holds stays."""
    messages = [{"role": "system", "content": "You are a coding agent."}]
    for i in range(14):
        messages += work(i)
    messages += [
        user("Show me module 3 again."),
        {
            "role": "assistant",
            "content": "Here it is.",
            "tool_calls": [call("r", "read_file", path="src/pkg/module_03.py")],
        },
        tool("r", "def parse(line):\n    return line.split()\n"),
        assistant("That is module 3 as it stands."),
    ]

    def summary(budget: int) -> str:
        settings = CompactorSettings(context_limit=40_000, tail_tokens=120, summary_budget_tokens=budget)
        out = BatchCompactor(MLXSummarizer(), settings).compact(messages, force=True).messages
        return parse_marker(next(m["content"] for m in out if is_marker(m)))

    def files(text: str) -> str:
        return text.split("## Files", 1)[-1].split("##", 1)[0]

    whole = summary(10**6)
    assert "src/pkg/module_03.py" in files(whole) and "src/pkg/module_01.py" in files(whole)
    short = summary(hermes_tokens(whole) - 200)  # enough must go to reach the files, which a finding names
    assert "src/pkg/module_03.py" not in files(short)  # the tail shows it
    assert "src/pkg/module_01.py" in files(short)  # the first of its equals, which went first before
    assert "Go on with module 13." in short  # the user's words stay


def test_the_compactors_tell_the_summarizer_what_they_keep():
    fake = ScriptedSummarizer()
    messages = session(10)
    BatchCompactor(fake, tail_tokens=300, threshold_tokens=600).compact(messages, force=True)
    (_, args) = fake.calls[-1]
    kept = args["kept"]
    assert kept[0] == messages[0] and kept[-1] == messages[-1]  # the head and the tail
    assert not any(m in args["turns"] for m in kept)
    fake = ScriptedSummarizer()
    micro = MicroCompactor(fake, tail_tokens=300, threshold_tokens=10**6)
    out = micro.compact(messages).messages
    out = micro.compact(out + [user("next")]).messages
    merges = [args for name, args in fake.calls if name == "merge"]
    assert merges and all(not any(is_marker(m) for m in a["kept"]) for a in merges)
    assert all(a["kept"][-1]["content"] in ("next", messages[-1]["content"]) for a in merges)
