import copy

import pytest
from fakes import assistant, session, tool, tool_pairs_valid, user

from hermes_mlx.compactor import markers
from hermes_mlx.compactor.transcript import (
    CALLS_REMOVED_TEXT,
    TranscriptError,
    clip_for_summary,
    content_text,
    find_exchange,
    head_end,
    make_counter,
    message_tokens,
    repair,
    split_turns,
    tail_start,
    transcript_tokens,
)


def test_valid_transcript_comes_back_identical():
    messages = session(3)
    out, repairs = repair(messages)
    assert out is messages and repairs == []


@pytest.mark.parametrize(
    "bad, words",
    [
        ({"role": "robot", "content": "hi"}, "role is 'robot'"),
        ({"content": "no role"}, "role is missing"),
        ("just a string", "expected a JSON object"),
        ({"role": "user", "content": 42}, "content must be a string, null or a list of parts"),
        ({"role": "user", "content": ["loose"]}, "content part 0 is not an object"),
        ({"role": "assistant", "content": None, "tool_calls": [{"id": "x"}]}, "tool call 0 has no function name"),
        ({"role": "user", "content": "x", "tool_calls": []}, "cannot carry tool_calls"),
    ],
)
def test_uninterpretable_message_is_a_clear_error_naming_the_index(bad, words):
    messages = [user("a"), assistant("b"), bad, user("c")]
    with pytest.raises(TranscriptError) as info:
        repair(messages)
    assert info.value.index == 2
    assert str(info.value).startswith("message 2: ")
    assert words in str(info.value)


def test_tool_result_without_call_gets_a_synthesized_call_and_is_kept():
    orphan = tool("call_x", "orphan output", name="grep")
    messages = [user("a"), assistant("b"), orphan, user("c")]
    before = copy.deepcopy(messages)
    out, repairs = repair(messages)
    assert messages == before  # input untouched
    assert [r.kind for r in repairs] == ["synthesized_call"]
    assert orphan in out and len(out) == 5
    call = out[out.index(orphan) - 1]
    assert call["role"] == "assistant" and call["tool_calls"][0]["id"] == "call_x"
    assert call["tool_calls"][0]["function"]["name"] == "grep"
    assert tool_pairs_valid(out)


def test_stray_result_inside_a_run_joins_the_runs_assistant():
    messages = [
        user("a"),
        assistant(None, calls=[("c1", "ls")]),
        tool("zz", "stray", name="grep"),
        tool("c1", "listing"),
        assistant("done"),
    ]
    out, repairs = repair(messages)
    assert [r.kind for r in repairs] == ["synthesized_call"]
    assert [c["id"] for c in out[1]["tool_calls"]] == ["c1", "zz"]
    assert out[2:] == messages[2:] and tool_pairs_valid(out)


def test_call_without_result_is_removed_as_hermes_removes_it():
    messages = [user("a"), assistant(None, calls=[("c1", "ls"), ("c2", "cat")]), tool("c1", "out"), user("b")]
    out, repairs = repair(messages)
    assert [r.kind for r in repairs] == ["removed_calls"] and "cat x1" in repairs[0].detail
    assert [c["id"] for c in out[1]["tool_calls"]] == ["c1"] and out[1]["_repaired"]
    assert out[2:] == messages[2:] and len(out) == len(messages)
    assert tool_pairs_valid(out)


def test_a_turn_left_with_no_call_and_no_text_says_so():
    messages = [user("a"), assistant(None, calls=[("c1", "ls")]), user("b"), assistant("ok")]
    out, _ = repair(messages)
    assert "tool_calls" not in out[1] and out[1]["content"] == CALLS_REMOVED_TEXT
    assert tool_pairs_valid(out)


def test_trailing_calls_without_results_are_in_flight_and_stay():
    messages = [user("a"), assistant(None, calls=[("c1", "ls"), ("c2", "cat")]), tool("c1", "out")]
    out, repairs = repair(messages)
    assert out is messages and not repairs


def test_missing_ids_are_assigned():
    call = {"type": "function", "function": {"name": "ls", "arguments": "{}"}}
    messages = [
        user("a"),
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "content": "listing"},
        assistant("done"),
    ]
    out, repairs = repair(messages)
    assert {r.kind for r in repairs} == {"assigned_call_id", "assigned_result_id"}
    assert out[1]["tool_calls"][0]["id"] == out[2]["tool_call_id"]
    assert len(out) == 4 and tool_pairs_valid(out)


def test_result_with_unknown_id_and_no_pending_call_keeps_its_content():
    messages = [user("a"), {"role": "tool", "content": "stray"}, assistant("b")]
    out, _ = repair(messages)
    assert [m.get("content") for m in out if m["role"] == "tool"] == ["stray"]
    assert tool_pairs_valid(out)


def test_content_none_and_parts_are_read_not_rewritten():
    parts = [{"type": "text", "text": "look at"}, {"type": "image_url", "image_url": {"url": "x"}}]
    messages = [user(parts), assistant(None, calls=[("c", "ls")]), tool("c", None), assistant("ok")]
    out, repairs = repair(messages)
    assert out is messages and not repairs
    assert content_text(messages[0]) == "look at\n[image_url]"
    assert content_text(messages[1]) == "" and message_tokens(messages[1]) > 0
    assert content_text(messages[2]) == ""


def test_five_megabyte_message_is_accepted_and_clipped_only_for_the_summarizer():
    big = "line of log output\n" * (5 * 1024 * 1024 // 19)
    messages = [user("run it"), assistant(None, calls=[("c", "sh")]), tool("c", big), assistant("done")]
    assert repair(messages)[0] is messages
    clipped = clip_for_summary(messages, 24_000)
    assert len(clipped[2]["content"]) < 25_000 and "lines cut ...]" in clipped[2]["content"]
    assert messages[2]["content"] is big  # the transcript keeps it


def test_split_turns_cuts_before_each_new_user_message():
    messages = session(3)
    turns = split_turns(messages)
    assert len(turns) == 3
    assert turns[0][0]["role"] == "system" and turns[1][0] == user("question 1")
    assert sum(turns, []) == messages


def test_exchange_starts_at_assistant_and_stops_before_next_user():
    messages = session(3)
    assert find_exchange(messages, 1, len(messages), markers.is_marker) == (2, 5)
    # A turn cut by the limit is not an exchange yet.
    assert find_exchange(messages, 5, 7, markers.is_marker) is None


def test_exchange_never_starts_at_a_marker():
    messages = [user("a"), markers.build("s", micro=True), user("b"), assistant("c"), user("d")]
    assert find_exchange(messages, 0, 5, markers.is_marker) == (3, 4)


def test_head_and_tail_never_split_a_call_from_its_result():
    messages = session(3)
    assert head_end(messages, 3) == 4  # index 3 is a tool result: the head takes it along
    start = tail_start(messages, 0, budget_tokens=120, min_messages=1)
    assert messages[start]["role"] != "tool"


def test_without_a_tokenizer_the_compactor_counts_as_hermes_does():
    """No counter, or one that fails: Hermes's estimate, so CJK text is one token a character
    (chars/4 would make it a quarter of that) and accented text counts its UTF-8 bytes."""

    def broken(text):
        raise RuntimeError("no tokenizer")

    cjk = "修复导出测试中的舍入错误" * 10  # 120 CJK characters
    for count in (make_counter(None), make_counter(broken)):
        assert count(cjk) == 120
        assert count("é" * 8) == 4  # 16 bytes
        assert count("abcdefgh") == 2
    assert transcript_tokens([user(cjk)]) == 120 + 4  # the default counter, plus the message overhead
    assert make_counter(lambda text: 7)(cjk) == 7  # a tokenizer, when there is one, decides
