"""What a ninth round's held-out sessions showed, each with a second source named per test: a test
run's counts written `Label: N` (dotnet's terminal logger, NUnit, PHPUnit), a terminal harness's status
lines and drawn tables, a merge stopped on conflicts, a CJK sentence in bold, a go-ahead and a change
reported made in the languages users and agents write in, a working folder above the relative paths
given. Checks go through whole passes of the summarizer where a user's run would.
"""

import json

import pytest
from summarizer_fakes import call, code_summarizer, one_pass

from hermes_mlx.summarizer.budget import fit_summary, hermes_tokens
from hermes_mlx.summarizer.faithful import is_go_ahead
from hermes_mlx.summarizer.outcomes import all_passed, outcome_of
from hermes_mlx.summarizer.redact import redact
from hermes_mlx.summarizer.sentences import split_sentences
from hermes_mlx.summarizer.summary import Summary, parse, render
from hermes_mlx.summarizer.vocabulary import CHANGE_MADE
from hermes_mlx.summarizer.workfolder import above_given

_DOTNET = (
    "  DiffMore.Test succeeded (0.9s) → DiffMore.Test\\bin\\Debug\\net9.0\\ktsu.DiffMore.Test.dll\n\n"
    "  DiffMore.Test test succeeded (1.8s)\n\n"
    "Test summary: total: 52, failed: 0, succeeded: 52, skipped: 0, duration: 1.2s\n"
    "Build succeeded in 8.0s\n"
)


# Cursor running `dotnet test` on .NET 9 (held out): the terminal logger's summary is the run's result;
# NUnit's console runner and PHPUnit count the same way, `Label: N`
def test_counts_written_label_colon_number_are_a_test_runs_result():
    s = one_pass(
        [
            {"role": "user", "content": "Fix the failing grouping tests."},
            {"role": "assistant", "content": "", "tool_calls": [call("c1", "run_terminal_cmd", command="dotnet test")]},
            {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"output": _DOTNET, "exit_code": 0})},
            {"role": "assistant", "content": "All 52 tests pass now."},
        ]
    )
    [ran] = [c for c in s.ledger.commands if c.cmd == "dotnet test"]
    assert ran.outcome == "Test summary: total: 52, failed: 0, succeeded: 52, skipped: 0, duration: 1.2s"
    nunit = (
        "Test Run Summary\n  Overall result: Passed\n  Test Count: 4, Passed: 4, Failed: 0, Skipped: 0\n  Start time: x"
    )
    assert outcome_of(nunit, 0) == ("tests", "Test Count: 4, Passed: 4, Failed: 0, Skipped: 0")
    phpunit = "..F..\n\nFAILURES!\nTests: 5, Assertions: 9, Failures: 1."
    family, line = outcome_of(phpunit, 1)
    assert (family, line) == ("tests", "Tests: 5, Assertions: 9, Failures: 1.") and not all_passed(
        family, line, "phpunit"
    )
    # a line of settings is no count of a run: nothing failed or passed in it
    assert outcome_of("Options: retries: 3, timeout: 30s, workers: 4", 0)[0] != "tests"


# Claude Code's `/export` text (held out): its turn timer and collapsed groups are the harness's lines,
# and a table it drew in box characters is no sentence; public exports and tmux captures of Claude Code
# carry the same lines (`✻ Worked for 2m 40s`, `Thought for 18s (ctrl+o to expand)`)
def test_a_terminal_harness_status_lines_and_drawn_tables_are_no_findings():
    report = (
        "Fixed both problems: the buttons no longer wrap and the radio labels are plain text now.\n\n"
        "│ tela-time.png │ Rep cards, R$ 54.467 em risco, export CSV │\n"
        "│ tela-saude.png │ 16% sem conta, R$ 302.340 em risco │\n\n"
        "✻ Baked for 6m 13s"
    )
    s = one_pass(
        [
            {"role": "user", "content": "Fix the kanban and the selector."},
            {
                "role": "assistant",
                "content": "  Thought for 18s (ctrl+o to expand)\n\nThe selector breaks because `st.radio` renders emojis as icons.",
            },
            {"role": "assistant", "content": report},
        ]
    )
    text = "\n".join(s.progress)
    assert "st.radio" in text and "buttons no longer wrap" in text
    assert "Baked" not in text and "ctrl+o" not in text and "tela-time.png" not in text


# Hermes Agent merging upstream into a fork (held out): the merge stopped on two conflicts, and its
# result had read "Auto-merging README.md"; git prints the same CONFLICT lines for a rebase, a pull and
# a cherry-pick (the end-to-end review's failed merge in tests/test_turn_shapes.py)
def test_a_merge_that_stopped_on_conflicts_has_them_as_its_result():
    out = (
        "Auto-merging README.md\nCONFLICT (add/add): Merge conflict in README.md\n"
        "CONFLICT (file/directory): directory in the way of skills from HEAD; moving it to skills~HEAD instead.\n"
        "Automatic merge failed; fix conflicts and then commit the result."
    )
    assert outcome_of(out, 1) == (
        "git",
        "CONFLICT (add/add): Merge conflict in README.md; CONFLICT (file/directory): directory in the way of "
        "skills from HEAD; moving it to skills~HEAD instead.",
    )
    many = "\n".join(f"CONFLICT (content): Merge conflict in m{i}.py" for i in range(5))
    assert outcome_of(many, 1)[1].endswith("Merge conflict in m2.py (+2 more)")


# the same agent's Chinese report: a sentence in bold ends at its full stop and the bold's close, not
# between them (a "**原来 … submodule！" line had been a fragment); a closing quote stays with its stop too
def test_a_cjk_sentence_keeps_the_bold_or_quote_it_closes():
    assert split_sentences("**原来 `skills` 本身是一个 submodule！** 让我检查。然后合并。") == [
        "**原来 `skills` 本身是一个 submodule！**",
        "让我检查。",
        "然后合并。",
    ]
    assert split_sentences("他说「好的。」然后走了。") == ["他说「好的。」", "然后走了。"]


# a Russian user driving a course with "Далее" and "продолжай" (Cursor, corpora), and Claude Code's "y":
# a go-ahead in so many words, in the languages users write to agents in, never a goal or constraint,
# and the first of the user's messages to go when a summary must shrink (none of 26 held a fact)
def test_a_go_ahead_in_any_common_language_is_priced_as_nothing_said():
    for said in ["Далее", "продолжай", "да", "y", "Готово", "continúa", "weiter", "继续", "Sim, pode"]:
        assert is_go_ahead(said), said
    for said in ["Продолжай курс", "далее 2.3.5", "you", "дальше к 2.5"]:
        assert not is_go_ahead(said), said
    s = Summary(goal="Teach the course, chapter by chapter.")
    s.ledger.asks = ["Далее", "продолжай", "Сначала перечисли упражнения в конце второй главы", "да", "Готово"]
    s.progress = ["The chapter 2.3 lessons are written in `lessons/`."]
    budget = hermes_tokens(render(s)) - 8
    fit_summary(s, budget)
    assert "Сначала перечисли упражнения в конце второй главы" in s.ledger.asks
    assert "Далее" not in s.ledger.asks


# a report of a change made, in the European languages agents write in (Roo Code in French, a Russian
# Cursor session, Claude Code in Portuguese): CHANGE_MADE weighs it as it weighs "I've added …"
def test_a_change_reported_made_in_another_language_is_one():
    for said in [
        "J'ai identifié et corrigé la boucle infinie.",
        "He añadido el test de regresión.",
        "Adicionei o seletor ao CSS.",
        "Ich habe die Prüfung hinzugefügt.",
        "Я исправил путь к папке.",
    ]:
        assert CHANGE_MADE.search(said), said
    for said in ["Je vais ajouter le test.", "Changed files are listed below."]:
        assert not CHANGE_MADE.search(said), said


# a Cursor session (corpora, micro): its edits named `references/tech/course_log.md` as the agent gave them,
# then one read of `/home/c/course/references/tech/lanham/2.5_Exercises.txt` made that read's folder the
# working folder, and Files listed `references/tech/course_log.md` under it, a path that is not there;
# `workfolder.relative` reads a monorepo's git paths (`projects/app/src/a.ts`) by the same rule
def test_a_first_working_folder_lies_above_the_relative_paths_the_agent_gave():
    summarizer = code_summarizer()
    edit = call("e1", "patch", path="references/tech/course_log.md", diff="+ 2.4 done")
    first = summarizer.update(
        None,
        [
            {"role": "user", "content": "Log each finished section in the course log."},
            {"role": "assistant", "content": "", "tool_calls": [edit]},
            {"role": "tool", "tool_call_id": "e1", "content": "Applied the patch."},
        ],
    ).text
    read = call("r1", "read_file", path="/home/c/course/references/tech/lanham/2.5_Exercises.txt")
    s = parse(
        summarizer.update(
            first,
            [
                {"role": "assistant", "content": "", "tool_calls": [read]},
                {"role": "tool", "tool_call_id": "r1", "content": "Exercises for chapter 2."},
                {"role": "assistant", "content": "Section 2.5 has four exercises."},
            ],
        ).text
    )
    assert s.ledger.root == "/home/c/course"
    assert "references/tech/course_log.md" in s.ledger.files


# the rules review of this round: each shape it broke, held
@pytest.mark.timeout(10)
def test_the_rules_review_of_the_ninth_round():
    # a line of many counts had backtracked for 43 s; a script's upload stats name no test
    stats = (
        "test total: 184467, failed: 1204, succeeded: 183263, skipped: 0, bytes: 912837465, elapsed: 9843.2s (4.9 MB/s)"
    )
    outcome_of(stats * 3, 0)
    assert outcome_of("Upload summary: total: 120, failed: 0, succeeded: 120", 0)[0] != "tests"
    assert outcome_of("ERRORS!\nTests: 5, Assertions: 9, Errors: 1.", 2) == (
        "tests",
        "Tests: 5, Assertions: 9, Errors: 1.",
    )
    # a rebase's `error: could not apply` after its conflicts: the conflicts say where it stopped
    rebase = "CONFLICT (content): Merge conflict in a.py\nerror: could not apply 3bb8701... feat: x\nhint: Resolve all conflicts"
    assert outcome_of(rebase, 1) == ("git", "CONFLICT (content): Merge conflict in a.py")
    # a bold that opens the next CJK sentence is that sentence's
    assert split_sentences("修复完成。**注意：** 需要重启服务。") == ["修复完成。", "**注意：** 需要重启服务。"]
    # a change denied is no change made
    for said in ["No he modificado nada.", "Não alterei nada.", "Ich habe nichts geändert.", "Я ничего не изменил."]:
        assert not CHANGE_MADE.search(said), said
    # a src layout's own path moves no root: `src/mypkg/core.py` in the project `/home/u/src/mypkg`
    assert above_given("/home/u/src/mypkg", ["src/mypkg/core.py"]) == "/home/u/src/mypkg"
    # an AWS secret key with no name of its own, on its key id's line
    said = redact(
        "key AKIAIOSFODNN7EXAMPLE with secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY, commit " + "3bb8701c" * 5
    )
    assert "wJalrXUtnFEMI" not in said and "3bb8701c" * 5 in said


# the end-to-end review: a micro pass whose exchange ends on a drawn table had kept the table's last row
# as its fallback line
def test_a_drawn_tables_row_is_no_micro_fallback_line():
    said = "Done.\n\n│ tela-time.png │ Rep cards │\n│ tela-saude.png │ 16% sem conta │\n\n✻ Baked for 6m 13s"
    summary = code_summarizer().merge(
        "## Goal\nFix it.", [{"role": "user", "content": "Fix the kanban."}, {"role": "assistant", "content": said}]
    )
    assert "│" not in summary.text and "Baked" not in summary.text


# Hermes Agent after merging upstream into its fork (held out): `git diff --stat upstream/main main | tail`
# printed what the merge brought, a count git made, no line of a file; five corpus sessions run
# `git diff --stat` before a commit. A read's other lines stay file text
def test_what_git_diff_stat_counted_is_its_result():
    stat = " skills/a/SKILL.md |  242 ++\n temp-mempalace |    1 +\n 1933 files changed, 342383 insertions(+), 3145 deletions(-)"
    s = one_pass(
        [
            {"role": "user", "content": "What differs from upstream now?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [call("d1", "terminal", command="git diff --stat upstream/main main | tail -20")],
            },
            {"role": "tool", "tool_call_id": "d1", "content": json.dumps({"output": stat, "exit_code": 0})},
            {"role": "assistant", "content": "", "tool_calls": [call("c1", "terminal", command="cat README.md")]},
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": json.dumps({"output": "# Hermes\n3 files changed", "exit_code": 0}),
            },
        ]
    )
    outcomes = {c.cmd: c.outcome for c in s.ledger.commands}
    assert (
        outcomes.get("git diff --stat upstream/main main | tail -20")
        == "1933 files changed, 342383 insertions(+), 3145 deletions(-)"
    )
    assert not outcomes.get("cat README.md")
