import copy
import logging

import pytest
from fakes import ScriptedSummarizer, assistant, session, telemetry_lines, tool, tool_pairs_valid, turn, user

from hermes_mlx.compactor import markers, telemetry
from hermes_mlx.compactor.micro import MicroCompactor


def compactor(summarizer=None, **options):
    options.setdefault("tail_tokens", 300)
    return MicroCompactor(summarizer or ScriptedSummarizer(), **options)


def micro_markers(messages):
    return [m for m in messages if markers.is_marker(m)]


def run_passes(mc, messages, n):
    results = []
    for _ in range(n):
        result = mc.compact(messages)
        results.append(result)
        messages = result.messages
    return messages, results


def test_first_pass_absorbs_the_oldest_exchange_after_the_head():
    fake = ScriptedSummarizer()
    messages = session(8)
    before = copy.deepcopy(messages)
    result = compactor(fake).compact(messages)
    assert result.outcome == "absorbed" and result.changed
    assert messages == before  # the input list is never modified
    # The head (system, first ask, its call and result) is untouched; the exchange starts at an assistant.
    ((method, args),) = fake.calls
    assert method == "merge" and args["summary"] is None
    assert [m["role"] for m in args["exchange"]] == ["assistant"]
    assert args["exchange"][0]["content"] == "answer 0"
    out = result.messages
    assert out[:4] == messages[:4] and all(a is b for a, b in zip(out[:4], messages[:4]))
    assert markers.is_micro_marker(out[4]) and out[4]["role"] == "assistant"
    assert out[5] is messages[5]  # the next user message follows the marker


def test_user_messages_are_never_summarized_and_survive_byte_for_byte():
    fake = ScriptedSummarizer()
    messages = session(10)
    out, results = run_passes(compactor(fake), messages, 6)
    assert {r.outcome for r in results} == {"absorbed"}
    for _, args in fake.calls:
        assert all(m["role"] in ("assistant", "tool") for m in args["exchange"])
    assert markers.user_messages(out) == markers.user_messages(messages)
    assert all(a is b for a, b in zip(markers.user_messages(out), markers.user_messages(messages)))


def test_one_marker_replaces_the_old_and_merged_user_turns_keep_originals():
    messages = session(10)
    out, _ = run_passes(compactor(), messages, 5)
    assert len(micro_markers(out)) == 1
    merged = [m for m in out if m.get(markers.MERGED_FROM_KEY)]
    assert len(merged) == 1
    row = merged[0]
    assert row["display_metadata"] == {"model_only": True}
    assert row["content"] == "\n\n".join(m["content"] for m in row[markers.MERGED_FROM_KEY])
    # No two user messages are adjacent in the model view.
    roles = [m["role"] for m in out]
    assert not any(a == b == "user" for a, b in zip(roles, roles[1:]))
    assert tool_pairs_valid(out)
    # The display view shows each typed message once.
    assert [m["content"] for m in markers.display_view(out) if m["role"] == "user"] == [
        f"question {n}" for n in range(10)
    ]


def test_tail_is_never_touched_and_transcript_shrinks():
    messages = session(10)
    mc = compactor()
    out, _ = run_passes(mc, messages, 8)
    tail = messages[-8:]  # the last two turns are inside the 300-token tail
    assert out[-8:] == tail and all(a is b for a, b in zip(out[-8:], tail))
    assert len(out) < len(messages)
    from hermes_mlx.compactor.transcript import transcript_tokens

    assert transcript_tokens(out) < transcript_tokens(messages)


def test_cursor_is_recovered_from_the_last_marker_and_resuming_never_resummarizes():
    messages = session(10)
    out, _ = run_passes(compactor(), messages, 3)
    summary = markers.parse(micro_markers(out)[0]["content"])
    # A new process: no in-memory cursor or summary, and the transcript flags are gone (as after
    # a store round trip that drops `_` keys).
    stripped = [{k: v for k, v in m.items() if not k.startswith("_")} for m in out]
    fake = ScriptedSummarizer()
    resumed = compactor(fake).compact(stripped)
    assert resumed.outcome == "absorbed"
    ((_, args),) = fake.calls
    assert args["summary"] == summary  # merges into the recovered summary, does not restart
    absorbed_before = {"answer 0", "answer 1", "answer 2", "let me look 1", "let me look 2"}
    assert not absorbed_before & {m.get("content") for m in args["exchange"]}
    assert len(micro_markers(resumed.messages)) == 1


def test_out_of_range_cursor_is_recovered():
    messages = session(10)
    mc = compactor()
    out, _ = run_passes(mc, messages, 2)
    mc.cursor = 10_000
    fake = mc.summarizer
    fake.calls.clear()
    result = mc.compact(out)
    assert result.outcome == "absorbed"
    assert fake.calls[0][1]["exchange"][0]["content"] == "let me look 2"


def test_defrag_rewrites_the_marker_in_place_when_the_summary_passes_the_threshold():
    fake = ScriptedSummarizer(["x" * 400])  # first merge makes a ~100-token summary
    mc = compactor(fake, defrag_threshold_tokens=50)
    messages = session(10)
    first = mc.compact(messages)
    assert first.outcome == "absorbed"
    cursor = mc.cursor
    second = mc.compact(first.messages)
    assert second.outcome == "defrag" and fake.methods() == ["merge", "defrag"]
    assert [m["role"] for m in second.messages] == [m["role"] for m in first.messages]
    assert mc.cursor == cursor
    assert markers.parse(micro_markers(second.messages)[0]["content"]) == "- defragged summary"
    assert markers.user_messages(second.messages) == markers.user_messages(messages)


def test_default_defrag_threshold_is_2000_tokens():
    assert MicroCompactor(ScriptedSummarizer()).settings.defrag_threshold_tokens == 2000


def test_failed_pass_leaves_the_transcript_unchanged_and_counts():
    fake = ScriptedSummarizer([False, RuntimeError("model unreachable")])
    mc = compactor(fake)
    messages = session(8)
    before = copy.deepcopy(messages)
    first = mc.compact(messages)
    assert first.outcome == "summarize_failed" and first.messages is messages and not first.changed
    assert messages == before and mc.failures == 1
    second = mc.compact(messages)  # an exception from the summarizer counts the same way
    assert second.outcome == "summarize_failed" and mc.failures == 2
    assert "model unreachable" in second.error


def test_three_consecutive_failures_skip_the_exchange():
    fake = ScriptedSummarizer([False, False, False])
    mc = compactor(fake)
    messages = session(8)
    outcomes = [mc.compact(messages).outcome for _ in range(3)]
    assert outcomes == ["summarize_failed", "summarize_failed", "exchange_skipped"]
    result = mc.compact(messages)
    assert result.outcome == "absorbed"
    exchanges = [args["exchange"][0]["content"] for _, args in fake.calls]
    assert exchanges[:3] == ["answer 0"] * 3 and exchanges[3] == "let me look 1"
    # The skipped exchange is still in the transcript, for batch compaction to pick up.
    assert any(m.get("content") == "answer 0" for m in result.messages)


def test_cadence_every_n_turns_counts_every_turn_even_idle_ones():
    fake = ScriptedSummarizer()
    mc = compactor(fake, every_n_turns=2)
    short = session(1)
    assert mc.compact(short).outcome == "waiting"
    assert mc.compact(short).outcome == "idle"  # a pass ran, found nothing: the counter still advanced
    messages = session(8)
    assert mc.compact(messages).outcome == "waiting"
    assert mc.compact(messages).outcome == "absorbed"
    assert fake.methods() == ["merge"]


@pytest.mark.parametrize("value", [0, -3, None, "x"])
def test_cadence_below_one_clamps_to_every_turn(value):
    mc = compactor(every_n_turns=value)
    assert mc.settings.every_n_turns == 1
    assert mc.compact(session(8)).outcome == "absorbed"


def test_no_exception_escapes_a_pass():
    mc = compactor()
    result = mc.compact(None)  # nonsense input
    assert result.outcome in ("error", "invalid_transcript")
    assert result.messages is None and result.error

    def broken_store(_messages):
        raise OSError("disk full")

    mc = compactor(on_compacted=broken_store)
    assert mc.compact(session(8)).outcome == "absorbed"


def test_invalid_transcript_is_reported_with_the_index_and_left_alone():
    messages = session(8)
    messages[6] = {"role": "wizard", "content": "?"}
    result = compactor().compact(messages)
    assert result.outcome == "invalid_transcript" and result.messages is messages
    assert result.error.startswith("message 6:")


def test_on_compacted_receives_each_new_transcript():
    seen = []
    mc = compactor(on_compacted=seen.append)
    out, _ = run_passes(mc, session(8), 2)
    assert len(seen) == 2 and seen[-1] is out


def test_huge_tool_result_is_clipped_for_the_summarizer_only():
    fake = ScriptedSummarizer()
    big = "x" * (5 * 1024 * 1024)
    messages = session(1) + [user("run"), assistant(None, calls=[("c9", "sh")]), tool("c9", big), assistant("ran")]
    messages += sum((turn(n) for n in range(10, 13)), [])
    mc = compactor(fake, protect_first_n=1)
    out, _ = run_passes(mc, messages, 3)
    sent = [m for _, args in fake.calls for m in args["exchange"] if m["role"] == "tool"]
    assert sent and max(len(m["content"] or "") for m in sent) < 30_000
    assert markers.user_messages(out) == markers.user_messages(messages)


def test_batch_marker_is_rehydrated_and_superseded():
    batch_marker = markers.build("## Goal\nearlier work", micro=False)
    messages = [{"role": "system", "content": "sys"}, user("q"), assistant("a"), user("merged"), batch_marker]
    messages += sum((turn(n) for n in range(1, 8)), [])
    fake = ScriptedSummarizer()
    result = compactor(fake).compact(messages)
    assert result.outcome == "absorbed"
    assert fake.calls[0][1]["summary"] == "## Goal\nearlier work"
    assert len(micro_markers(result.messages)) == 1


def test_a_batch_summary_at_the_defrag_threshold_is_merged_not_defragged():
    # Hermes's batch floor (2,000 tokens) is its default defrag threshold: a batch summary filled to
    # it is fitted by the merge that absorbs the next exchange, not defragged in a pass of its own
    batch_marker = markers.build("## Goal\n" + "earlier work " * 40, micro=False)
    messages = [{"role": "system", "content": "sys"}, user("q"), assistant("a"), user("merged"), batch_marker]
    messages += sum((turn(n) for n in range(1, 8)), [])
    fake = ScriptedSummarizer()
    result = compactor(fake, defrag_threshold_tokens=50).compact(messages)
    assert result.outcome == "absorbed" and fake.calls[0][0] == "merge"
    assert fake.calls[0][1]["summary"].startswith("## Goal\nearlier work")


def test_telemetry_line_has_exactly_hermes_fields_and_no_content(caplog):
    mc = compactor(session_id="s1", main_model="main")
    with caplog.at_level(logging.INFO, logger="agent.context_compressor"):
        result = mc.compact(session(8))
    ((raw, payload),) = telemetry_lines(caplog, telemetry.MICRO_PREFIX)
    assert set(payload) == set(telemetry.MICRO_FIELDS)
    assert payload["event"] == "micro_compaction" and payload["outcome"] == "absorbed"
    assert payload["session_id"] == "s1" and payload["main_model"] == "main"
    assert payload["aux_model"] == "fake-summarizer"
    assert payload["passes_total"] == 1 and payload["tokens_saved_total"] == -payload["tokens_delta"]
    assert payload["messages_after"] == len(result.messages)
    assert payload["exchange_tokens"] > 0 and payload["cursor"] == 5
    assert payload["occupancy_pct"] == round(payload["tokens_after"] / payload["threshold_tokens"] * 100, 1)
    for word in ("question", "answer", "file contents", "absorbed:"):
        assert word not in raw.replace('"absorbed"', "")
    assert telemetry.parse_line("2026-01-01 INFO agent.context_compressor: " + telemetry.MICRO_PREFIX + raw) == payload


def test_failed_defrag_changes_nothing_and_stops_blocking_after_three():
    fake = ScriptedSummarizer(["x" * 400, False, False, False])
    mc = compactor(fake, defrag_threshold_tokens=50)
    first = mc.compact(session(12)).messages
    outcomes = []
    messages = first
    for _ in range(4):
        result = mc.compact(messages)
        outcomes.append(result.outcome)
        if result.outcome == "defrag_failed":
            assert result.messages is messages and not result.changed
        messages = result.messages
    assert outcomes == ["defrag_failed"] * 3 + ["absorbed"]
    assert fake.methods() == ["merge", "defrag", "defrag", "defrag", "merge"]


def test_defrag_that_cannot_get_under_the_threshold_does_not_block_absorbing():
    # The ledger never drops a fact, so a defrag may stay over the threshold: absorb again until
    # the summary has grown by another quarter, instead of defragging every turn.
    fake = ScriptedSummarizer(["x" * 400, "y" * 300])  # merge ~100 tokens, defrag to ~75 (> 50)
    mc = compactor(fake, defrag_threshold_tokens=50)
    messages = mc.compact(session(12)).messages
    outcomes = []
    for _ in range(3):
        result = mc.compact(messages)
        outcomes.append(result.outcome)
        messages = result.messages
    assert outcomes[0] == "defrag"
    assert outcomes[1] == "absorbed"
