"""One merge pass with the embedded default model (SmolLM2-135M-Instruct): facts carried by
code, a short generated delta, nothing invented. Slow; fetched once into the cache."""

import pytest
from summarizer_fakes import failing_exchange, fixing_exchange

from hermes_mlx.summarizer import MLXSummarizer
from hermes_mlx.summarizer.ledger import find_paths
from hermes_mlx.summarizer.summary import parse

pytestmark = pytest.mark.real_model


def test_real_model_merge_pass():
    s = MLXSummarizer(timeout=600)
    first = s.merge(None, failing_exchange())
    assert first.ok, first.error
    second = s.merge(first.text, fixing_exchange())
    assert second.ok, second.error
    assert second.generation_tokens <= 56 and second.prompt_tokens > 0
    assert second.cached_tokens > 0  # instructions reused from the first pass
    back = parse(second.text)
    assert back.ledger.files["ledgerly/export/csv_export.py"] == "edited"
    assert [c.statuses for c in back.ledger.commands] == [[1, 0]]
    assert any("test_rounding" in x for x in back.ledger.resolved)
    assert back.progress  # model delta or the assistant's own sentence
    sources = str(failing_exchange()) + str(fixing_exchange())
    assert all(p in sources for p in find_paths(second.text))
