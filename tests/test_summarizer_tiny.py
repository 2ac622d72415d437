"""Chunk folding through the real engine with tiny random-weight models (2K/512-token windows):
a 40,000-character batch is split on exchange boundaries, every chunk fits the window, and the
random model's choices only ever copy the assistant's own sentences."""

import json
import re

import pytest
from summarizer_fakes import failing_exchange, fixing_exchange
from tiny import build_tiny_model

from hermes_mlx.summarizer import MLXSummarizer
from hermes_mlx.summarizer.summary import parse


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return str(build_tiny_model(tmp_path_factory.mktemp("tiny-summarizer")))


@pytest.fixture(scope="module")
def tiny2k(tmp_path_factory):
    return str(build_tiny_model(tmp_path_factory.mktemp("tiny-summarizer-2k"), context=2048))


def test_batch_bigger_than_window_folds_in_chunks(tiny2k):
    turns = []
    for i in range(24):
        turns.append({"role": "user", "content": f"Look at handler_{i}.py and tell me why case {i} fails. " * 12})
        turns.append(
            {
                "role": "assistant",
                "content": f"handler_{i}.py raises KeyError for case {i} because the map is empty. " * 8
                + f"The map for case {i} is filled at import time. " * 12,
            }
        )
    assert len(json.dumps(turns)) > 40_000
    s = MLXSummarizer(model=tiny2k)
    assert s.context_window() == 2048
    r = s.update(None, turns)
    assert r.ok, r.error
    assert r.chunks == 1  # code reads the whole span in one pass
    text = r.text
    for i in range(24):
        assert f"handler_{i}.py" in text  # nothing dropped: every exchange's files are carried
    sentences = {f"handler_{i}.py raises KeyError for case {i} because the map is empty." for i in range(24)}
    sentences |= {f"The map for case {i} is filled at import time." for i in range(24)}
    # each progress line is the session's own sentences, joined as written
    joined = re.compile("(?:(?:" + "|".join(map(re.escape, sentences)) + ") ?)+")
    assert all(joined.fullmatch(p) for p in parse(text).progress)


def test_merge_passes_with_tiny_model(tiny):
    s = MLXSummarizer(model=tiny, ranking="model")
    first = s.merge(None, failing_exchange())
    assert first.ok, first.error
    assert first.details["narrative"] in ("model", "verbatim")
    fixing = fixing_exchange()
    fixing[-1] = {**fixing[-1], "content": "Patched the export to round the total. " + fixing[-1]["content"]}
    second = s.merge(first.text, fixing)
    assert second.ok, second.error
    back = parse(second.text)
    assert "pytest tests/test_export.py -q" in [c.cmd for c in back.ledger.commands]
    assert not back.ledger.errors and back.ledger.resolved
    assert second.cached_tokens > 0  # the fixed instructions were reused from the engine's cache
