"""One merge pass with the embedded default model (SmolLM2-135M-Instruct): facts carried by
code, the narrative chosen among the assistant's own sentences (no decode), nothing invented.
Slow; fetched once into the cache."""

import pytest
from summarizer_fakes import failing_exchange, fixing_exchange

from hermes_mlx.summarizer import MLXSummarizer
from hermes_mlx.summarizer.extract import find_paths
from hermes_mlx.summarizer.summary import parse

pytestmark = pytest.mark.real_model


def test_real_model_merge_pass():
    s = MLXSummarizer(timeout=600, ranking="model")
    first = s.merge(None, failing_exchange())
    assert first.ok, first.error
    assert first.prompt_tokens > 0 and first.details["picks"]  # two sentences: the model chose
    fixing = fixing_exchange()
    fixing[-1] = {**fixing[-1], "content": "Patched the export to round the total. " + fixing[-1]["content"]}
    second = s.merge(first.text, fixing)
    assert second.ok, second.error
    assert second.prompt_tokens > 0
    assert second.cached_tokens > 0  # instructions reused from the first pass
    back = parse(second.text)
    assert back.ledger.files["ledgerly/export/csv_export.py"] == "edited"
    assert [c.statuses for c in back.ledger.commands] == [[1, 0]]
    assert any("test_rounding" in x for x in back.ledger.resolved)
    sources = str(failing_exchange()) + str(fixing)
    assert len(back.progress) == 2 and all(p in sources for p in back.progress)  # verbatim
    assert all(p in sources for p in find_paths(second.text))
