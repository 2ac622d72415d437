"""What an agent's turn and a tool's output come to, as an eighth round's held-out sessions showed
them and a second source confirms (named per test): what a model wrote for a turn it had not seen
(Cline's "[Response interrupted by a tool use result …]"), Claude Code's pointer after a plan the user
accepted, a change the agent announced (said when a summary has room to spare), the names a longer
edit declares, and what a `git pull` and `uv pip install` brought. Checks go through normalize and
whole passes of the summarizer, as a user's runs do.
"""

from summarizer_fakes import call, code_summarizer, one_pass

from hermes_mlx.summarizer.agent_code import added_code
from hermes_mlx.summarizer.harness import without_run_ahead
from hermes_mlx.summarizer.outcomes import outcome_of
from hermes_mlx.summarizer.spare_lines import announced_changes
from hermes_mlx.summarizer.summary import parse
from hermes_mlx.summarizer.text import normalize

_NOTE = "[Response interrupted by a tool use result. Only one tool may be used at a time and should be placed at the end of the message.]"


# Cline with Claude 3.5 Sonnet (held out): after its `read_file` call the model went on to write the
# result it expected, in Cline's own label, and Cline cut it off with its note; a Cline fork's export
# (public, "bob_sessions") shows the note after code the model went on typing
def test_what_a_model_wrote_for_a_turn_it_had_not_seen_is_not_its_statement():
    said = (
        "I need the dependencies of the React project, so I will read package.json.\n\n"
        'User: [read_file for \'package.json\'] Result:{\n  "name": "react-app",\n  "version": "0.1.0"\n}\n\n' + _NOTE
    )
    assert without_run_ahead(said) == "I need the dependencies of the React project, so I will read package.json."
    typed_on = "The rule needs a fix function.\n```js\nconst fix = (f) =>\n\n" + _NOTE
    assert without_run_ahead(typed_on) == "The rule needs a fix function.\n```js\nconst fix = (f) =>"
    labelled = (
        "The entry point is src/index.js.\n\nUser: [read_file for 'src/index.js'] Result:import React from 'react';"
    )
    assert without_run_ahead(labelled) == "The entry point is src/index.js."
    plain = "User: the tests pass now, said the log. Next I fix the linter."
    assert without_run_ahead(plain) == plain  # no note, no label: the agent's own words
    # the end-to-end review's replies that show the label or the note they work on are kept whole
    shown = (
        "Each result comes back as:\n\n```\nUser: [read_file for 'a.json'] Result:\n{}\n```\n\nI fixed `parseLabel()`."
    )
    assert without_run_ahead(shown) == shown
    spanned = "Cline appends `" + _NOTE + "` in `index.ts`; I check `didAlreadyUseTool` first."
    assert without_run_ahead(spanned) == spanned


def test_a_pass_lists_no_line_of_an_imagined_result():
    s = one_pass(
        [
            {"role": "user", "content": "Add an ESLint rule that marks unused files."},
            {
                "role": "assistant",
                "content": "The project has no `.eslintrc.js`, so the plugin needs its own config.\n\n"
                'User: [read_file for \'package.json\'] Result:{\n  "name": "react-app", "version": "0.1.0",\n'
                '  "dependencies": { "axios": "^1.3.4", "chart.js": "^4.2.1" }\n}\n\n' + _NOTE,
            },
        ]
    )
    text = "\n".join(s.progress)
    assert "react-app" not in text and "axios" not in text
    assert [t.text for t in normalize([{"role": "user", "content": "User: [x for 'y'] Result: z"}])] == [
        "User: [x for 'y'] Result: z"
    ]  # a user's turn is read as it is


# Hermes Agent's `git pull` after a stash: what it brought is git's diffstat sum; a commit's own line
# above its stat still wins (Codex's and Claude Code's `git commit` in the corpora)
def test_what_a_pull_brought_is_its_result_and_a_commit_line_still_wins():
    pulled = "Updating a1b2c3d..e4f5a6b\nFast-forward\n cli.py | 2 +-\n 492 files changed, 61608 insertions(+), 8694 deletions(-)"
    assert outcome_of(pulled, 0) == ("git", "492 files changed, 61608 insertions(+), 8694 deletions(-)")
    committed = "[main 3bb8701] feat: add the monitor\n 3 files changed, 10 insertions(+), 2 deletions(-)"
    assert outcome_of(committed, 0) == ("git", "[main 3bb8701] feat: add the monitor")
    conflict = "Auto-merging a.py\nCONFLICT (content): Merge conflict in a.py\n 1 file changed, 2 insertions(+)"
    assert outcome_of(conflict, 1)[1] != "1 file changed, 2 insertions(+)"  # the end-to-end review's failed merge
    failed = "error: cannot pull with rebase: You have unstaged changes.\n 2 files changed, 1 insertion(+)"
    assert outcome_of(failed, 1)[1].startswith("error: cannot pull")


# Claude Code accepting a plan with a cleared context seeds "Implement the following plan:" then its pointer
# to the old transcript (held-out Claude Code session; ten public transcripts carry the same words)
def test_claude_codes_pointer_after_an_accepted_plan_is_not_the_users_words():
    plan = "Implement the following plan:\n\n# Plan: Fix log streaming\n\n## Verification\n1. `npx tsc --noEmit`"
    pointer = (
        "\n\n\nIf you need specific details from before exiting plan mode (like exact code snippets, error "
        "messages, or content you generated), read the full transcript at: /Users/me/.claude/projects/x/1.jsonl"
    )
    [turn] = normalize([{"role": "user", "content": plan + pointer + "\n\nUser feedback on this plan: keep it small"}])
    assert "exiting plan mode" not in turn.text and "1.jsonl" not in turn.text
    assert (
        turn.text.startswith("Implement the following plan:")
        and "User feedback on this plan: keep it small" in turn.text
    )


# uv's install names what it installed one package a line (held-out Hermes Agent's `uv pip install -e .`;
# Cursor's `uv pip install flash-attn` in the corpora), as pip's "Successfully installed" does
def test_what_uv_installed_is_its_result():
    out = "Resolved 120 packages in 1.2s\nInstalled 1 package in 2ms\n - hermes-agent==0.8.0 (from file:///x)\n + hermes-agent==0.9.0 (from file:///x)"
    assert outcome_of(out, 0) == ("install", "+ hermes-agent==0.9.0 (from file:///x)")
    many = "Installed 5 packages in 9ms\n + a==1\n + b==2\n + c==3\n + d==4\n + e==5"
    assert outcome_of(many, 0) == ("install", "+ a==1; + b==2; + c==3 (+2 more)")


# held-out Claude Code ("Now remove the now-unused `parseTaskFile` method:"), Cursor ("Let me fix this by
# storing the actual IFileSystem instance in ThreadLocal, not the factory:") and Cline: summaries with room
# to spare had left out what was done next; the corpora's five agents hold such facts too (6 of 281)
def test_a_change_announced_is_said_when_the_summary_has_room_to_spare():
    turns = normalize(
        [
            {"role": "user", "content": "Give each sandbox run its own log file."},
            {"role": "assistant", "content": "Now remove the now-unused `parseTaskFile` method:"},
            {"role": "assistant", "content": "Let me implement all the changes."},
            {"role": "assistant", "content": "Let me check `src/index.ts` first."},
        ]
    )
    assert [f.text for f in announced_changes(turns)] == ["Now remove the now-unused `parseTaskFile` method:"]
    messages = [
        {"role": "user", "content": "Give each sandbox run its own log file."},
        {"role": "assistant", "content": "The queue files carry no `id` yet, so each run needs one assigned."},
        {"role": "assistant", "content": "Now remove the now-unused `parseTaskFile` method:"},
    ]
    summarizer = code_summarizer()
    s = parse(summarizer.update(None, messages, budget_tokens=2000).text)
    assert "Now remove the now-unused `parseTaskFile` method:" in s.progress
    assert s.progress[0].startswith("The queue files")  # in the session's order


def test_a_change_announced_goes_before_a_finding_when_room_is_short():
    from hermes_mlx.summarizer.budget import fit_summary, hermes_tokens
    from hermes_mlx.summarizer.summary import Summary, render

    s = Summary(goal="Fix the log streaming.")
    s.progress = [
        "Now remove the now-unused `parseTaskFile` method:",
        "The `parseTaskFile` helper returned null for 3 of 7 files.",
        "Tests: 14 passed.",
    ]
    fit_summary(s, hermes_tokens(render(s)) - 5)
    assert "Now remove the now-unused `parseTaskFile` method:" not in s.progress
    assert "The `parseTaskFile` helper returned null for 3 of 7 files." in s.progress


# held-out Claude Code (`const logFile = join(logDir, …);` in a 40-line Edit) and Gemini CLI (`float yMax =
# (peakPop > 0) ? …;` in a C `replace`): a longer edit's lines are the file's, but those that name what they
# make are names the agent wrote
def test_a_longer_edit_carries_the_names_it_declares():
    new = "\n".join(
        [
            "  const logDir = join(this.logsDir, `AGI-${task.id}`);",
            "  await mkdir(logDir, { recursive: true });",
            "  const logFile = join(logDir, `agent-${sandboxIndex}.log`);",
            "  await appendFile(logFile, header);",
            "  // write the footer in finally",
            "  float yMax = (peakPop > 0) ? (float)peakPop * 1.1f : 10.0f;",
            "  def load(path: str) -> Config:",
        ]
    )
    got = added_code({"old_string": "", "new_string": new})
    assert got == [
        "const logDir = join(this.logsDir, `AGI-${task.id}`);",
        "const logFile = join(logDir, `agent-${sandboxIndex}.log`);",
        "float yMax = (peakPop > 0) ? (float)peakPop * 1.1f : 10.0f;",
    ]  # DECLARED_LINES at most, never a call or a comment
    calls = "\n".join(f"  await step{i}(logFile);" for i in range(5))
    assert added_code({"old_string": "", "new_string": calls}) == []  # a longer edit naming nothing it makes


def test_the_second_reviews_cases():
    # a `git log --stat` after a pull: what the pull brought is the first stat
    pulled = "Fast-forward\n 2 files changed, 6 insertions(+), 6 deletions(-)\ncommit abc\n\n 492 files changed, 61608 insertions(+)"
    assert outcome_of(pulled, 0) == ("git", "2 files changed, 6 insertions(+), 6 deletions(-)")
    # a key with no cue in a longer edit's declaration, and a sentence of a markdown edit, are no names
    edit = "\n".join(
        [
            'const client = new Client("u8gJau3QYCbpLiwH5pZ8y3qfbiB8kEXH");',
            "type checking runs in CI (see `ci.yml`).",
            "const retries = Number(process.env.RETRIES ?? 3);",
            *[f"await step{i}();" for i in range(4)],
        ]
    )
    assert added_code({"old_string": "", "new_string": edit}) == ["const retries = Number(process.env.RETRIES ?? 3);"]
    # the report a tool carried stays when the model ran ahead before it
    msg = {
        "role": "assistant",
        "content": "Checking.\nUser: [read_file for 'a.ts'] Result:\nfake",
        "tool_calls": [call("c1", "attempt_completion", result="Fixed the null check in `a.ts`.")],
    }
    [turn] = normalize([msg])
    assert "Fixed the null check in `a.ts`." in turn.text and "fake" not in turn.text
