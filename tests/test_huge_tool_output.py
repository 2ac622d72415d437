"""One huge tool output must not make compaction tokenize it whole (issue 20 item 4: 49 MB cost
12.8 GB and 262 s). The tokenizer is spied on: no call may be handed more than a bound, whatever
the size of the input. No timing here; benchmarks/bench_huge_tool_output.py measures that."""

import importlib.util
import json
from pathlib import Path

import pytest
from fakes import tool_pairs_valid
from summarizer_fakes import FakeModel, count

from hermes_mlx.compactor import markers
from hermes_mlx.compactor.replay import replay
from hermes_mlx.compactor.store import SessionStore
from hermes_mlx.compactor.transcript import make_counter
from hermes_mlx.summarizer import MLXSummarizer
from hermes_mlx.summarizer.budget import EXACT_COUNT_CHARS, bounded_count, hermes_tokens

MB = 1_000_000
BOUND = 2 * EXACT_COUNT_CHARS  # one count may see a chat template or a prompt around its text
BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_huge_tool_output.py"


def bench():
    """benchmarks/bench_huge_tool_output.py, whose session (one huge build log, then later turns)
    this test compacts too: the benchmark times it, the test spies on the tokenizer."""
    spec = importlib.util.spec_from_file_location("bench_huge_tool_output", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
    messages = bench().session(5)
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
