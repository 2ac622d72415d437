"""One huge tool output must not make compaction tokenize it whole (issue 20 item 4: 49 MB cost
12.8 GB and 262 s). The tokenizer is spied on: no call may be handed more than a bound, whatever
the size of the input. No timing here; benchmarks/bench_huge_tool_output.py measures that."""

import json

import pytest
from summarizer_fakes import FakeModel, count

from hermes_mlx.compactor import markers
from hermes_mlx.compactor.replay import replay
from hermes_mlx.compactor.store import SessionStore
from hermes_mlx.compactor.transcript import make_counter, tool_pairs_valid
from hermes_mlx.summarizer import MLXSummarizer
from hermes_mlx.summarizer.budget import EXACT_COUNT_CHARS, bounded_count, hermes_tokens

MB = 1_000_000
BOUND = 2 * EXACT_COUNT_CHARS  # one count may see a chat template or a prompt around its text


def big_session(size: int) -> list[dict]:
    def call(cid, command):
        return {
            "id": cid,
            "type": "function",
            "function": {"name": "terminal", "arguments": json.dumps({"command": command})},
        }

    log = "".join(f"compiling module_{i}.c ok\n" for i in range(size // 24))
    log += "src/parser.c:88: error: expected ';' before 'return'\n"
    out = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Set up the project."},  # the protected head: the huge output is after it
        {"role": "assistant", "content": "Checked out; ready to build."},
        {"role": "user", "content": "Build the project and tell me what fails."},
        {"role": "assistant", "content": "Running the build.", "tool_calls": [call("c1", "make all")]},
        {"role": "tool", "tool_call_id": "c1", "content": log},
        {"role": "assistant", "content": "The build fails in src/parser.c line 88."},
    ]
    for k in range(2, 7):
        out += [
            {"role": "user", "content": f"Step {k}: read the next file."},
            {"role": "assistant", "content": f"Reading file {k}.", "tool_calls": [call(f"c{k}", f"cat f{k}.c")]},
            {"role": "tool", "tool_call_id": f"c{k}", "content": f"int f{k}(void) {{ return {k}; }}\n" * 10},
            {"role": "assistant", "content": f"File {k} defines f{k}."},
        ]
    return out


class Spy:
    def __init__(self):
        self.sizes = []

    def __call__(self, text, model=None):
        self.sizes.append(len(text if isinstance(text, str) else json.dumps(text)))
        return count(text)


@pytest.mark.parametrize("mode", ["micro", "batch"])
def test_a_5mb_tool_output_never_reaches_the_tokenizer_whole(mode):
    spy = Spy()
    summarizer = MLXSummarizer(score=FakeModel(*["build fails"] * 50).score, count_tokens=spy, context_window=8192)
    messages = big_session(5 * MB)
    with SessionStore(":memory:") as store:
        result = replay(messages, summarizer, mode=mode, context_limit=8192, store=store, session_id="huge")
        assert store.search("huge", "src/parser.c:88: error")  # the original is kept whole, searchable
    assert any(r.outcome in ("compacted", "absorbed", "pruned") for r in result.records)
    assert spy.sizes and max(spy.sizes) <= BOUND, max(spy.sizes)
    assert tool_pairs_valid(result.messages)
    assert markers.user_messages(result.messages) == markers.user_messages(messages)


def test_bounded_count_is_exact_up_to_the_bound_and_never_under_hermes_estimate_past_it():
    text = "word " * (EXACT_COUNT_CHARS // 5)
    assert bounded_count(count, text) == count(text)
    huge = "x = compute(a, b)  # fine\n" * 200_000
    seen = []
    n = bounded_count(lambda t: seen.append(len(t)) or len(t) // 3, huge)
    assert sum(seen) <= EXACT_COUNT_CHARS
    assert n >= hermes_tokens(huge) and abs(n - len(huge) // 3) <= len(huge) // 300


def test_the_compactors_counter_is_bounded_and_still_counts_short_text_exactly():
    spy = Spy()
    counter = make_counter(spy)
    assert counter("hello world") == count("hello world")
    assert counter("y" * (3 * MB)) >= hermes_tokens("y" * (3 * MB))
    assert max(spy.sizes) <= EXACT_COUNT_CHARS
