"""One batch pass brings the transcript under its threshold (issue 19 item 3, issue 20 item 5).

Before, user turns were kept verbatim in one merged row; with many of them (machine-written
envelopes, or short turns over a long session) that row alone outgrew the threshold and every
later turn ran another batch pass that saved ~2%. Now the row's view is clipped to fit, the
originals ride along whole, and a pass that cannot converge says so once and holds.
"""

import logging

from fakes import ScriptedSummarizer, assistant, tool, tool_pairs_valid, user

from hermes_mlx.compactor import markers
from hermes_mlx.compactor.batch import SUMMARY_CAP_RATIO, BatchCompactor
from hermes_mlx.compactor.replay import replay
from hermes_mlx.compactor.store import SessionStore
from hermes_mlx.compactor.transcript import transcript_tokens
from hermes_mlx.compactor.users import fit_users, machine_written

COUNT = ScriptedSummarizer().count_tokens


def notification(n: int) -> str:
    return (
        f"<task-notification>\n<task-id>b{n:06x}</task-id>\n<output-file>/tmp/claude-1000/-home-USER-projects-app/"
        f'tasks/b{n:06x}.output</output-file>\n<status>completed</status>\n<summary>Background command "Run test'
        f' shard {n}" completed (exit code 0)</summary>\n</task-notification>\nRead the output file to retrieve the result.'
    )


def machine_session(turns: int) -> list[dict]:
    messages = [
        {"role": "system", "content": "You are a coding agent."},
        user("Run every test shard and fix what fails."),
    ]
    messages.append(assistant("Starting the shards."))
    for n in range(turns):
        messages += [
            user(notification(n)),
            assistant(f"Shard {n} passed; checking its log.", calls=[(f"c{n}", "read_file")]),
            tool(f"c{n}", f"shard {n}: 40 tests, 0 failures\n" + "ok\n" * 20),
            assistant(f"Shard {n}: 40 tests, 0 failures."),
        ]
    return messages


def short_session(turns: int) -> list[dict]:
    messages = [{"role": "system", "content": "You are a coding agent."}]
    for n in range(turns):
        messages += [user(f"next {n}"), assistant(f"done {n}")]
    return messages


def test_machine_written_user_turns_converge_in_one_pass_and_no_pass_runs_per_turn():
    messages = machine_session(150)
    result = replay(messages, ScriptedSummarizer(), mode="batch", context_limit=8192)
    batch = [r for r in result.records if r.mode == "batch"]
    threshold = int(8192 * 0.8)
    assert batch and len(batch) <= 15, [r.turn for r in batch]  # was: one a turn once over the threshold
    assert all(r.tokens_after <= threshold * 0.75 for r in batch if r.outcome == "compacted")
    assert transcript_tokens(result.messages, COUNT) <= threshold
    # nothing lost: every original user message is in the transcript whole, in order
    assert markers.user_messages(result.messages) == markers.user_messages(result.original)
    assert tool_pairs_valid(result.messages)
    row = next(m for m in result.messages if m.get(markers.MERGED_FROM_KEY))
    envelopes = [m for m in row[markers.MERGED_FROM_KEY] if m["content"].startswith("<task-notification>")]
    assert envelopes and "<task-id>" not in row["content"]  # each envelope down to what it says
    assert 'Background command "Run test shard 0" completed (exit code 0)' in row["content"]


def test_the_newest_human_turn_stays_whole_while_envelopes_are_clipped():
    originals = [user("Fix the login bug; keep the public API unchanged.")]
    originals += [user(notification(n)) for n in range(30)]
    originals += [user("Also run the full suite before you push.")]
    row, stats = fit_users(originals, 700, COUNT)
    assert stats["clipped"] == 30 and stats["left_out"] == 0
    assert row["content"].startswith("Fix the login bug; keep the public API unchanged.")
    assert row["content"].endswith("Also run the full suite before you push.")
    assert row[markers.MERGED_FROM_KEY] == originals  # the originals, whole
    assert COUNT(row["content"]) <= 700


def test_turns_that_fit_stay_verbatim():
    originals = [user("one"), user("two")]
    row, stats = fit_users(originals, 1000, COUNT)
    assert row["content"] == "one\n\ntwo" and stats == {"clipped": 0, "left_out": 0}
    single, _ = fit_users([user("only")], 1000, COUNT)
    assert single == user("only")


def test_the_oldest_turns_leave_the_view_first_with_a_note():
    originals = [user(f"human turn {n} " + "words " * 40) for n in range(50)]
    row, stats = fit_users(originals, 300, COUNT)
    assert stats["left_out"] > 0 and row["content"].startswith(f"[{stats['left_out']} earlier user messages left out")
    assert "human turn 49" in row["content"] and "human turn 0 " not in row["content"]
    assert row[markers.MERGED_FROM_KEY] == originals


def test_machine_written_turns_are_told_from_human_ones():
    for text in (
        notification(1),
        "[Request interrupted by user]",
        "Command running in background with ID: b12345. Output is being written to /tmp/x",
        "<system-reminder>\nThe todo list is empty.\n</system-reminder>",
        "<local-command-stdout>Compacted</local-command-stdout>",
    ):
        assert machine_written(text), text
    for text in ("Fix the login bug.", "Please read <task-notification> docs", "continue implementation"):
        assert not machine_written(text), text


def test_a_pass_that_cannot_converge_says_so_once_and_holds_until_the_transcript_grows(caplog):
    """A protected head that alone is over the threshold: no clipping of user turns can help."""
    caplog.set_level(logging.INFO)
    compactor = BatchCompactor(ScriptedSummarizer(), threshold_tokens=400, tail_tokens=100)
    messages = [{"role": "system", "content": "You are a coding agent. " + "Follow the house rules. " * 100}]
    messages += short_session(30)[1:]
    first = compactor.compact(messages)
    assert first.outcome == "over_threshold" and first.changed
    assert first.telemetry["outcome"] == "over_threshold"
    assert compactor.compact(first.messages, force=True).changed  # a forced pass is never held
    live, outcomes = first.messages, []
    for n in range(10):  # short turns: until they add 10% of the threshold, no pass
        live = live + [user(f"more {n}"), assistant(f"ok {n}")]
        result = compactor.compact(live)
        outcomes.append(result.outcome)
        live = result.messages
    assert outcomes[:3] == ["held"] * 3 and "over_threshold" in outcomes  # once grown, it tries again
    warnings = [r for r in caplog.records if "cannot bring the transcript under" in r.getMessage()]
    assert len(warnings) == 1 + outcomes.count("over_threshold") <= 3


def test_a_huge_tool_output_that_leaves_the_tail_is_pruned_at_the_next_turn():
    """Held only while what a pass must keep stays as big: one turn moves the output out of the tail."""
    compactor = BatchCompactor(ScriptedSummarizer(), threshold_tokens=400, tail_tokens=300)
    messages = short_session(6) + [user("go"), assistant(None, calls=[("p", "sh")]), tool("p", "p" * 24000)]
    messages.append(assistant("done"))
    first = compactor.compact(messages)
    assert first.outcome == "over_threshold"
    second = compactor.compact(first.messages + [user("next"), assistant("ok")])
    assert second.outcome == "pruned" and second.changed


def test_short_turns_for_a_long_session_stay_under_the_threshold_and_the_store_stays_small():
    messages = short_session(400)
    with SessionStore(":memory:") as store:
        result = replay(messages, ScriptedSummarizer(), mode="micro", context_limit=4096, store=store, session_id="s")
        rows = store.history("s")
        assert store.search("s", "next 3")  # an early user turn, left out of the view, is still found
    threshold = int(4096 * 0.8)
    assert transcript_tokens(result.messages, COUNT) <= threshold
    assert markers.user_messages(result.messages) == markers.user_messages(result.original)
    batch = [r for r in result.records if r.mode == "batch"]
    assert len(batch) <= 10, len(batch)
    summaries = [r for r in rows if markers.is_marker(r.message)]
    assert len(summaries) <= len(batch) + 2  # not one archived a pass
    assert len(rows) <= 3 * len(messages)


def test_an_iterative_summary_is_capped_so_a_small_window_can_converge():
    """The budget used to carry the previous summary whole, so it only grew: at 4,096 the
    rolling summary alone came to hold most of the threshold."""
    fake = ScriptedSummarizer()
    big = "## Progress\n" + "\n".join(f"- Did step {n}." for n in range(600))  # ~2,600 tokens
    messages = short_session(3) + [markers.build(big, micro=True)] + short_session(200)[1:]
    result = BatchCompactor(fake, context_limit=4096).compact(messages)
    assert result.changed
    (_, args) = fake.calls[-1]
    assert args["summary"] == big and args["budget_tokens"] <= int(4096 * 0.8 * SUMMARY_CAP_RATIO) < 2000
