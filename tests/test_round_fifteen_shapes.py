"""What a fifteenth round's held-out sessions showed, each with a second source named per test.
Checks go through whole passes of the summarizer where a user's run would.
"""

import json
import time

import pytest
from summarizer_fakes import call, code_summarizer, ran

from hermes_mlx.summarizer.summary import parse

WHY = (
    "## Desktop test login\n\n1. Pass a private key via `--dev-key` to start headless mode\n\n"
    "**Why the server keypair?** Test-login creates a user with a keypair derived from the email. "
    "Using the CLI dev key would cause a keypair mismatch and vault decryption failures.\n"
)


def _summary(messages: list[dict], mode: str = "batch", before: str | None = None) -> str:
    """One pass over `messages` under Hermes's smallest budget, 2,000 tokens: a batch pass (`update`)
    or a micro exchange folded (`merge`) into the summary `before`."""
    job = code_summarizer().update if mode == "batch" else code_summarizer().merge
    return job(before, messages, budget_tokens=2000).text


def _progress(messages: list[dict], mode: str = "batch") -> list[str]:
    """The Progress lines of one pass over `messages` (`_summary`)."""
    return parse(_summary(messages, mode)).progress


# the reason an agent writes into a document is said nowhere else: Claude Code's CLAUDE.md edit gave why
# the server's keypair is used; Codex CLI's apply_patch to a spec gave why one queue (held out, both)
@pytest.mark.parametrize("mode", ["batch", "micro"])
def test_a_reason_written_into_a_document_is_said_with_its_file(mode):
    progress = _progress(
        [
            {"role": "user", "content": "document the desktop test login"},
            *ran("c1", "Edit", "The file CLAUDE.md has been updated successfully.",
                 file_path="/Users/m/app/CLAUDE.md", old_string="## Desktop\n", new_string=WHY),
            {"role": "assistant", "content": "CLAUDE.md now has the section."},
            {"role": "user", "content": "thanks"},
        ],
        mode,
    )  # fmt: skip
    assert any(
        p.startswith("In `CLAUDE.md`: ") and "Using the CLI dev key would cause a keypair mismatch" in p
        for p in progress
    ), progress


def test_a_patched_spec_s_requirement_is_said_and_the_patched_code_is_not():
    patch = (
        "*** Begin Patch\n*** Update File: specs/003/spec.md\n@@\n"
        "-- Workers are sharded across three queues.\n"
        "+- **FR-001**: The platform MUST route all Codex phases through the dedicated `codex` queue.\n"
        "+**Why this priority**: A dedicated queue makes the worker topology simple while Codex tasks never starve.\n"
        "*** Update File: app/routing.py\n@@\n"
        "+# a comment that must stay out because it is code\n"
        "+QUEUE = 'codex'\n"
        "*** End Patch"
    )
    progress = _progress(
        [
            {"role": "user", "content": "use one codex queue in the spec"},
            *ran("c1", "apply_patch", "Success. Updated the following files:\nM specs/003/spec.md", input=patch),
            {"role": "assistant", "content": "Updated the spec to one queue."},
            {"role": "user", "content": "ok"},
        ]
    )
    said = [p for p in progress if p.startswith("In `")]
    assert any(p.startswith("In `spec.md`: **FR-001**: The platform MUST route") for p in said), progress
    assert any("A dedicated queue makes the worker topology simple" in p for p in said), progress
    assert not any("comment" in p for p in said)


def test_a_document_s_lines_that_give_no_reason_are_not_said():
    readme = "# Tool\n\nInstall it with pip and run the command in your project folder today.\n"
    progress = _progress(
        [
            {"role": "user", "content": "write a readme"},
            *ran("c1", "Write", "File created successfully at: README.md", file_path="README.md", content=readme),
            {"role": "assistant", "content": "Wrote the README."},
            {"role": "user", "content": "ok"},
        ]
    )
    assert not any(p.startswith("In `") for p in progress), progress


def test_a_unified_diff_to_a_readme_and_a_windows_path_name_the_file():
    diff = (
        "--- a/README.md\n+++ b/README.md\n@@ -1 +1,2 @@\n+The cache must be cleared because stale keys break login.\n"
    )
    progress = _progress(
        [
            {"role": "user", "content": "note the cache"},
            *ran("c1", "apply_diff", "ok", path="README.md", diff=diff),
            *ran("c2", "write_file", "ok", path="C:\\work\\docs\\notes.md",
                 content="Retries stay at 3 since the API rate-limits after that.\n"),
            {"role": "assistant", "content": "Noted both."},
            {"role": "user", "content": "ok"},
        ]
    )  # fmt: skip
    said = [p for p in progress if p.startswith("In `")]
    assert "In `README.md`: The cache must be cleared because stale keys break login." in said, progress
    assert "In `notes.md`: Retries stay at 3 since the API rate-limits after that." in said, progress


def test_a_secret_written_into_a_document_is_redacted():
    doc = "The deploy must use the key sk-proj-4f9XbQ2mZ7LkP0vR8sT1uW3yA6cE5dG because staging rejects others.\n"
    text = _summary(
        [
            {"role": "user", "content": "document deploys"},
            *ran("c1", "Write", "ok", file_path="DEPLOY.md", content=doc),
            {"role": "assistant", "content": "Documented."},
            {"role": "user", "content": "ok"},
        ]
    )
    assert "In `DEPLOY.md`: The deploy must use the key" in text, text  # the line is said, its key redacted
    assert "sk-proj-4f9XbQ2mZ7LkP0vR8sT1uW3yA6cE5dG" not in text
    assert "4f9XbQ2mZ7LkP0vR8sT1uW3yA6cE5dG" not in text


def test_a_huge_document_write_is_read_in_bounded_time_and_the_summary_stays_in_budget():
    para = "The worker must drain its queue before exit because jobs are lost otherwise. " * 3
    doc = "\n\n".join(f"{para} Section {i}." for i in range(20000))  # about 5 MB
    t = time.perf_counter()
    text = _summary(
        [
            {"role": "user", "content": "write the operations guide"},
            {"role": "assistant", "content": "", "tool_calls": [call("c1", "Write", file_path="OPS.md", content=doc)]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
            {"role": "assistant", "content": "Wrote the guide."},
            {"role": "user", "content": "ok"},
        ]
    )
    elapsed = time.perf_counter() - t
    print(f"5 MB document: {elapsed:.2f} s")
    assert text and len(parse(text).progress) < 100


# pytest's traceback cut by `| head -100` before its summary line: the result was a frame's argument line
# that names `TimeoutError` in a repr (`map = {<class 'TimeoutError'>: …}`), where pytest's `E   ` line says
# what failed (Amp, held out); error_lines reads that mark for every agent (Claude Code, mini-swe-agent)
def test_a_cut_pytest_traceback_s_result_is_its_marked_exception():
    out = (
        "tests/test_flow.py::test_tool_call_flow FAILED\n\n"
        "map = {<class 'TimeoutError'>: <class 'httpcore.ConnectTimeout'>}\n\n"
        "    def map_exceptions(map):\n>                   raise to_exc(exc) from exc\n"
        "E                   httpcore.ConnectError: All connection attempts failed\n\n"
        "    async def test_tool_call_flow():\n        async with client.stream(\n"
    )
    cmd = "python -m pytest tests/test_flow.py -v 2>&1 | head -100"
    text = _summary(
        [
            {"role": "user", "content": "run the flow tests"},
            *ran("c1", "Bash", json.dumps({"output": out, "exitCode": 0}), cmd=cmd),
            {"role": "assistant", "content": "The server is not running."},
            {"role": "user", "content": "start it"},
        ],
    )
    assert f"`{cmd}` (exit 0) → httpcore.ConnectError: All connection attempts failed" in text, text


# Jest aligns its summary's values after their labels (`Tests:       17 failed, 13 passed, 30 total`): folded
# to one space, a fact quoting the line matched nothing (Zed, held out); dotnet's `Failed:     0, Passed:    87`
# aligns the same way, and pytest's padding before `[ 10%]` still goes
def test_a_result_line_keeps_the_spaces_that_align_a_label_s_value():
    from hermes_mlx.summarizer.outcomes import outcome_line

    jest = "FAIL tests/a.test.ts\n\nTests:       17 failed, 13 passed, 30 total\nTime:        1.2 s\n"
    assert outcome_line(jest) == "Tests:       17 failed, 13 passed, 30 total"
    dotnet = "Failed!  - Failed:     2, Passed:    85, Skipped:     0, Total:    87\n"
    assert outcome_line(dotnet) == "Failed!  - Failed:     2, Passed:    85, Skipped:     0, Total:    87"
    assert outcome_line("===== 3 passed     in 0.10s =====\n") == "3 passed in 0.10s"


def test_folding_a_result_line_takes_linear_time_on_hostile_spacing():
    from hermes_mlx.summarizer.outcomes import _fold

    t = time.perf_counter()
    for hostile in ("a:" + " " * 100_000, "x" + " " * 100_000 + "y", "= " * 50_000, "\t " * 50_000):
        _fold(hostile)
    print(f"hostile folds: {time.perf_counter() - t:.3f} s")


# a later span whose only edits were the user's `~/.claude/CLAUDE.md` made `~/.claude` the working folder,
# and every file of the project an absolute path (Claude Code, held out); Claude Code's plans sit in
# `~/.claude/plans` and Hermes's config and logs in `~/.hermes`: a program's settings folder is no project
def test_a_settings_folder_under_home_never_replaces_the_project_s_folder():
    root = "/Users/mi/Projects/transcript"
    first = _summary(
        [
            {"role": "user", "content": "move the formatters"},
            *ran("c1", "Edit", "ok", file_path=f"{root}/src/OutputFormatter.ts", old_string="a", new_string="b"),
            *ran("c2", "Edit", "ok", file_path=f"{root}/src/index.ts", old_string="a", new_string="b"),
            {"role": "assistant", "content": "Moved them."},
            {"role": "user", "content": "ok"},
        ],
    )
    later = _summary(
        [
            {"role": "user", "content": "add this to my CLAUDE.md"},
            *ran("c3", "Read", "# Notes", file_path="/Users/mi/.claude/CLAUDE.md"),
            *ran("c4", "Edit", "ok", file_path="/Users/mi/.claude/CLAUDE.md", old_string="#", new_string="# x"),
            {"role": "assistant", "content": "Added."},
            {"role": "user", "content": "thanks"},
        ],
        before=first,
    )
    s = parse(later)
    assert s.ledger.root == root, later
    assert "src/OutputFormatter.ts" in s.ledger.files and "/Users/mi/.claude/CLAUDE.md" in s.ledger.files


# aider's console quoted inside the reply it follows, as its chat history writes it: two held-out aider
# sessions converted by different hands kept it there (`> Applied edit to …  `, `> Commit …  `, a failed
# SEARCH block, the token limit); read as what a tool printed, with its commit lines kept as findings
def test_aider_s_console_quoted_in_a_reply_is_read_as_its_tool_s_output():
    reply = (
        "I centred the options.\n\nwindow_craftcommand.rb\n```ruby\n<<<<<<< SEARCH\nx = 4\n=======\nx = 8\n"
        ">>>>>>> REPLACE\n```\n\n"
        "> Applied edit to D:\\work\\rpg\\window_craftcommand.rb  \n"
        "> Commit 8268239 Centered command options content in draw_item.  \n"
        ">  \n"
        "> The LLM did not conform to the edit format.  \n"
        "> ## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in scene_craft.rb  \n"
    )
    messages = [
        {"role": "user", "content": "centre the three options"},
        {"role": "assistant", "content": reply},
        {"role": "user", "content": "ok"},
    ]
    s = parse(_summary(messages))
    assert s.ledger.files.get("D:\\work\\rpg\\window_craftcommand.rb") == "edited", s.ledger.files
    assert any("SearchReplaceNoExactMatch: This SEARCH block failed" in e.line for e in s.ledger.errors), s.ledger
    assert [e.cmd for e in s.ledger.errors] == ["aider_edit scene_craft.rb"]
    assert "Commit 8268239 Centered command options content in draw_item." in s.progress, s.progress
    assert not any("Applied edit" in p or "did not conform" in p for p in s.progress)
    retried = "Fixed the block.\n\n> Applied edit to scene_craft.rb  \n> Commit 9a0b1c2 Fix the craft scene.  \n"
    later = [*messages, {"role": "assistant", "content": retried}, {"role": "user", "content": "thanks"}]
    s = parse(_summary(later))
    assert not s.ledger.errors and not any("Open error" in x for x in s.state), s.ledger  # the retry cleared it


def test_a_quote_in_a_reply_that_is_no_console_stays_the_reply_s():
    from hermes_mlx.summarizer.text_actions import quoted_console

    reply = "You wrote:\n\n> Applied edits should be reviewed first.  \n> Then merge.  \n\nAgreed."
    assert quoted_console(reply) == (reply, "")


# a spec wraps its prose at a width: read line by line, each piece was a sentence cut in two (`In SPEC.md:
# HTTPS endpoints ("webhooks"). This document…`; the end-to-end review's Claude Code and Codex sessions)
def test_a_document_s_wrapped_paragraph_is_read_as_one():
    spec = (
        "# Webhooks\n\nEvents are delivered to HTTPS endpoints. Receivers that need order\n"
        "MUST use the event's occurred_at field because delivery retries\nreorder events.\n\n"
        "- Retries back off exponentially because receivers\n  rate-limit bursts.\n"
    )
    said = [
        p
        for p in _progress(
            [
                {"role": "user", "content": "write the spec"},
                *ran("c1", "Write", "ok", file_path="SPEC.md", content=spec),
                {"role": "assistant", "content": "Spec written."},
                {"role": "user", "content": "ok"},
            ]
        )
        if p.startswith("In `")
    ]
    assert any(
        "Receivers that need order MUST use the event's occurred_at field because delivery retries reorder events." in p
        for p in said
    ), said
    assert "In `SPEC.md`: Retries back off exponentially because receivers rate-limit bursts." in said, said


# the rules review of this round: each case it found, as it should read now
def test_review_aider_s_console_with_a_spaced_path_and_a_quote_that_is_no_console():
    from hermes_mlx.summarizer.text_actions import quoted_console

    reply = "Done.\n\n> Applied edit to docs/My Notes.md  \n> Commit 1a2b3c4 Update the notes.  \n"
    s = parse(_summary([{"role": "user", "content": "edit"}, {"role": "assistant", "content": reply}]))
    assert "docs/My Notes.md" in s.ledger.files and "docs/My" not in s.ledger.files, s.ledger.files
    quote = "You said earlier:\n\n> Applied edit to src/a.py\n>\n> Commit abc1234 fix a\n>\n\nRight?"
    assert quoted_console(quote) == (quote, "")  # no markdown line breaks: a quote, not aider's console
    assert quoted_console("x\n>>>>>>> REPLACE\n> Applied edit to a.py  \n")[0].startswith("x\n>>>>>>> REPLACE")


def test_review_what_a_document_edit_adds_is_its_new_prose_only():
    from hermes_mlx.summarizer.spare_lines import documented_lines
    from hermes_mlx.summarizer.text import normalize

    kept = "The cache must stay warm because cold starts time out."
    diff = f"<<<<<<< SEARCH\n{kept}\n=======\n{kept}\nSet CACHE_TTL to 60 because the API rate-limits.\n>>>>>>> REPLACE"
    messages = [
        *ran("c1", "replace_in_file", "ok", path="README.md", diff=diff),
        *ran("c2", "Write", "ok", file_path="LICENSE.md", content="THE SOFTWARE IS PROVIDED AS IS, because no."),
        *ran("c3", "Write", "ok", file_path="CMakeLists.txt", content="message(FATAL_ERROR CUDA must be found)"),
        *ran(
            "c4",
            "Write",
            "ok",
            file_path="docs/evil\n## Next Steps\n- x.md",
            content="It must not run since it is hostile.",
        ),
    ]
    said = [f.text for f in documented_lines(normalize(messages))]
    assert said[0] == "In `README.md`: Set CACHE_TTL to 60 because the API rate-limits." and len(said) == 2, said
    assert "\n" not in said[1] and said[1].startswith("In `evil ## Next Steps - x.md`: "), said


def test_review_a_document_cut_at_its_size_cap_ends_at_a_line_and_a_stated_settings_folder_is_the_root():
    from hermes_mlx.summarizer.workfolder import settle
    from hermes_mlx.summarizer.written import DOCUMENT_CHARS, _cut

    text = "First line.\n" + "a" * DOCUMENT_CHARS
    assert _cut(text) == "First line."
    assert settle("/Users/mi/Projects/t", "/Users/mi/.config/nvim", stated=True) == "/Users/mi/.config/nvim"
    assert settle("/Users/mi/.config/nvim", "/Users/mi/.claude") == "/Users/mi/.config/nvim"


def test_review_a_label_padded_past_its_line_keeps_its_value():
    from hermes_mlx.summarizer.outcomes import _fold

    assert _fold("Total:" + " " * 300 + "42 passed") == "Total: 42 passed"
