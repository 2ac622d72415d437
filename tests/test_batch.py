import copy
import json
import logging

from fakes import ScriptedSummarizer, assistant, session, telemetry_lines, tool, tool_pairs_valid, turn, user

from hermes_mlx.compactor import markers, telemetry
from hermes_mlx.compactor.batch import DUPLICATE_TAG, PRUNED_TAG, BatchCompactor, prune_tool_results
from hermes_mlx.compactor.micro import MicroCompactor
from hermes_mlx.compactor.transcript import transcript_tokens


def compactor(summarizer=None, **options):
    options.setdefault("tail_tokens", 300)
    options.setdefault("threshold_tokens", 600)
    return BatchCompactor(summarizer or ScriptedSummarizer(), **options)


def test_below_threshold_nothing_happens():
    fake = ScriptedSummarizer()
    messages = session(10)
    result = compactor(fake, threshold_tokens=100_000).compact(messages)
    assert result.outcome == "below_threshold" and result.messages is messages
    assert result.telemetry is None and fake.calls == []


def test_pruning_alone_can_suffice_without_a_model_call():
    fake = ScriptedSummarizer()
    messages = session(10)
    result = compactor(fake, threshold_tokens=1300).compact(messages)
    assert result.outcome == "pruned" and fake.calls == []
    assert len(result.messages) == len(messages)  # nothing dropped
    pruned = [m for m in result.messages if m["role"] == "tool" and m["content"].startswith(PRUNED_TAG)]
    assert pruned and "read_file" in pruned[0]["content"] and "lines" in pruned[0]["content"]
    assert result.messages[-8:] == messages[-8:]  # the tail keeps its tool output
    assert markers.user_messages(result.messages) == markers.user_messages(messages)


def test_prune_replaces_duplicates_and_leaves_small_results():
    middle = [
        assistant(None, calls=[("a", "cat"), ("b", "cat"), ("c", "ls")]),
        tool("a", "same output " * 50),
        tool("b", "same output " * 50),
        tool("c", "tiny"),
    ]
    out, pruned, dups = prune_tool_results(middle)
    assert dups == 1 and out[1]["content"].startswith(DUPLICATE_TAG)
    assert pruned == 1 and out[2]["content"].startswith(PRUNED_TAG)
    assert out[3]["content"] == "tiny"
    assert [m.get("tool_call_id") for m in out] == [None, "a", "b", "c"]


def test_a_pruned_json_result_keeps_its_head_not_a_lone_brace():
    # Hermes's cronjob tool and most MCP tools answer in indented JSON: a first line of "{" told
    # a later reader nothing; its head on one line names what the tool did
    job = {"success": True, "job": {"job_id": "281aef5d2be7", "deliver": "discord", "schedule": "0 7 * * *"}}
    middle = [assistant(None, calls=[("a", "cronjob")]), tool("a", json.dumps(job, indent=2) + " " * 900)]
    (out, pruned, _) = prune_tool_results(middle)
    assert pruned == 1
    assert 'first line: { "success": true, "job": { "job_id": "281aef5d2be7"' in out[1]["content"]


def test_summarizes_the_middle_and_reassembles_a_valid_list():
    fake = ScriptedSummarizer()
    messages = session(10)
    before = copy.deepcopy(messages)
    result = compactor(fake).compact(messages)
    assert result.outcome == "compacted" and messages == before
    ((method, args),) = fake.calls
    assert method == "update" and args["summary"] is None and args["focus"] is None
    assert args["budget_tokens"] >= 512
    # Old tool output reached the summarizer whole (its ledger reads every error line); user
    # turns came along as context.
    sent_tools = [m["content"] for m in args["turns"] if m["role"] == "tool"]
    assert sent_tools and not any(c.startswith(PRUNED_TAG) for c in sent_tools)
    assert all(c in [m["content"] for m in messages] for c in sent_tools)
    out = result.messages
    assert out[:4] == messages[:4]
    found = [m for m in out if markers.is_marker(m)]
    assert len(found) == 1 and not markers.is_micro_marker(found[0])
    assert markers.parse(found[0]["content"]) == f"## Goal\nbatch summary of {len(args['turns'])} turns"
    assert tool_pairs_valid(out)
    assert markers.user_messages(out) == markers.user_messages(messages)
    assert transcript_tokens(out) < transcript_tokens(messages)
    # Tail verbatim, and the cut never separates a call from its result.
    tail = out[out.index(found[0]) + 1 :]
    assert tail == messages[-len(tail) :] and tail[0]["role"] != "tool"


def test_boundary_never_splits_a_call_from_its_results():
    messages = session(3)
    messages += [
        user("go"),
        assistant(None, calls=[("p", "sh"), ("q", "sh")]),
        tool("p", "p" * 800),
        tool("q", "q" * 800),
        assistant("done"),
    ]
    # A tail budget that would cut between the two results moves back to the call.
    result = compactor(tail_tokens=250, threshold_tokens=300).compact(messages)
    assert result.outcome == "over_threshold" and result.changed  # the kept tail alone is over 300
    out = result.messages
    idx = next(i for i, m in enumerate(out) if m.get("tool_calls") and m["tool_calls"][0]["id"] == "p")
    assert [m.get("tool_call_id") for m in out[idx + 1 : idx + 3]] == ["p", "q"]
    assert tool_pairs_valid(out)


def test_second_pass_is_iterative_and_focus_is_passed():
    fake = ScriptedSummarizer()
    bc = compactor(fake)
    first = bc.compact(session(10)).messages
    grown = first + sum((turn(n) for n in range(10, 16)), [])
    result = bc.compact(grown, focus="auth.py")
    # the tail and summary alone come near a 600-token threshold: the pass may say it stays over
    assert result.outcome in ("compacted", "over_threshold") and result.details["iterative"]
    _, args = fake.calls[-1]
    assert args["summary"].startswith("## Goal\nbatch summary")
    assert args["focus"] == "auth.py"
    assert not any(markers.is_marker(m) for m in args["turns"])
    assert len([m for m in result.messages if markers.is_marker(m)]) == 1
    assert markers.user_messages(result.messages) == markers.user_messages(grown)


def test_failure_leaves_the_transcript_unchanged():
    for step in (False, RuntimeError("boom"), ""):
        messages = session(10)
        result = compactor(ScriptedSummarizer([step])).compact(messages)
        assert result.outcome == "summarize_failed" and result.messages is messages
        assert not result.changed and result.error


def test_no_exception_escapes():
    result = compactor().compact([user("a"), 7])
    assert result.outcome == "invalid_transcript" and result.error.startswith("message 1:")
    result = compactor().compact(None)
    assert result.outcome in ("error", "invalid_transcript")


def test_orphans_are_repaired_and_nothing_is_dropped():
    messages = session(8)
    messages.insert(10, tool("ghost", "orphaned output " * 40))  # a result without a call
    messages += [user("last"), assistant(None, calls=[("z", "ls")])]  # a call in flight (no result yet)
    result = compactor().compact(messages)
    assert result.outcome in ("compacted", "over_threshold") and result.changed
    assert tool_pairs_valid(result.messages)
    assert result.messages[-1] == messages[-1]  # kept for its result to come, as Hermes keeps it
    assert markers.user_messages(result.messages) == markers.user_messages(messages)


def test_micro_resumes_from_a_batch_marker():
    out = compactor().compact(session(10)).messages
    grown = out + sum((turn(n) for n in range(10, 16)), [])
    fake = ScriptedSummarizer()
    result = MicroCompactor(fake, tail_tokens=300).compact(grown)
    assert result.outcome == "absorbed"
    assert fake.calls[0][1]["summary"].startswith("## Goal")
    assert len([m for m in result.messages if markers.is_marker(m)]) == 1
    assert markers.user_messages(result.messages) == markers.user_messages(grown)


def test_batch_telemetry_line(caplog):
    with caplog.at_level(logging.INFO, logger="agent.context_compressor"):
        result = compactor(session_id="s2").compact(session(10))
    ((raw, payload),) = telemetry_lines(caplog, telemetry.BATCH_PREFIX)
    # the micro pass's fields (the summarized span counts as the exchange) plus pruning counts
    assert set(payload) == {*telemetry.MICRO_FIELDS, "duplicates_removed", "pruned_tool_results"}
    assert payload["event"] == "batch_compaction" and payload["outcome"] == "compacted"
    assert payload["messages_after"] == len(result.messages) and payload["pruned_tool_results"] > 0
    assert "question" not in raw and "answer" not in raw


def test_error_lines_in_long_tool_output_reach_the_batch_summary():
    """Pruning shortens old tool output to its first line; the summary's ledger still reads the
    whole (redacted) result, so an error deep in a long one is kept."""
    from summarizer_fakes import FakeModel, count

    from hermes_mlx.summarizer import MLXSummarizer

    error = (
        "src/render.ts(41,7): error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'."
    )
    output = "\n".join(f"compiling module {i} of 80" for i in range(80)) + "\n" + error + "\nFound 1 error."
    messages = session(6)
    messages[5:5] = [
        assistant("Type-checking the renderer.", calls=[("tsc", "terminal")]),
        tool("tsc", json.dumps({"output": output, "exit_code": 2}), name="terminal"),
    ]
    fake = FakeModel(*["type"] * 20)
    summarizer = MLXSummarizer(score=fake.score, count_tokens=count, context_window=8192)
    result = compactor(summarizer).compact(messages, force=True)
    assert result.outcome == "compacted", result.error
    summary = markers.parse(next(m for m in result.messages if markers.is_marker(m))["content"])
    assert "error TS2345" in summary and "src/render.ts" in summary
    assert all(error not in m.get("content", "") for m in result.messages if m["role"] == "tool")  # absorbed


def test_an_iterative_pass_budgets_the_previous_summary_whole():
    fake = ScriptedSummarizer()
    first = compactor(fake).compact(session(10), force=True)
    assert first.outcome == "compacted"
    previous = fake.calls[0][1]
    messages = first.messages + session(6, system=False)
    second = compactor(fake).compact(messages, force=True)
    assert second.outcome == "compacted"
    (_, args) = fake.calls[-1]
    assert args["summary"] and args["budget_tokens"] >= max(512, len(args["summary"]) // 4)
    assert previous["budget_tokens"] >= 512
