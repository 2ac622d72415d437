"""One CompactorSettings feeds both compactors: defaults are derived in one place, and an option
reaches both through replay without anyone filtering keyword arguments."""

from dataclasses import dataclass, replace

import pytest
from fakes import ScriptedSummarizer, session

from hermes_mlx.compactor import replay as replay_module
from hermes_mlx.compactor.batch import BatchCompactor
from hermes_mlx.compactor.micro import MicroCompactor
from hermes_mlx.compactor.replay import replay
from hermes_mlx.compactor.settings import CompactorSettings


def test_threshold_and_tail_are_derived_from_the_context_and_follow_replace():
    s = CompactorSettings(context_limit=1000)
    assert (s.threshold, s.tail) == (800, 160)
    assert (replace(s, context_limit=2000).threshold, replace(s, context_limit=2000).tail) == (1600, 320)
    assert CompactorSettings(context_limit=1000, threshold_tokens=500).tail == 100
    assert CompactorSettings(tail_tokens=0).tail == 0  # an explicit zero tail is kept, not derived


@pytest.mark.parametrize("cls", [MicroCompactor, BatchCompactor])
def test_keyword_options_build_the_settings(cls):
    c = cls(ScriptedSummarizer(), context_limit=1000, tail_tokens=50, summary_budget_tokens=9, every_n_turns=0)
    assert c.settings == CompactorSettings(context_limit=1000, tail_tokens=50, summary_budget_tokens=9, every_n_turns=1)
    base = CompactorSettings(context_limit=4000, session_id="a")
    c = cls(ScriptedSummarizer(), base, session_id="b")
    assert (c.settings.context_limit, c.settings.session_id, base.session_id) == (4000, "b", "a")


@pytest.mark.parametrize("build", [MicroCompactor, BatchCompactor, lambda s, **o: replay(session(4), s, **o)])
def test_an_unknown_option_is_refused_by_name(build):
    with pytest.raises(TypeError, match="unknown compactor option: tail_tokns"):
        build(ScriptedSummarizer(), tail_tokns=300)


def test_every_option_reaches_both_compactors_through_replay(monkeypatch):
    """A new option needs no change to replay: a settings subclass with an extra field reaches both."""

    @dataclass(frozen=True)
    class WithNewOption(CompactorSettings):
        new_option: int = 0

    seen = []

    class SpyMicro(MicroCompactor):
        def __init__(self, summarizer, settings=None, **options):
            super().__init__(summarizer, settings, **options)
            seen.append(("micro", self.settings))

    class SpyBatch(BatchCompactor):
        def __init__(self, summarizer, settings=None, **options):
            super().__init__(summarizer, settings, **options)
            seen.append(("batch", self.settings))

    monkeypatch.setattr(replay_module, "MicroCompactor", SpyMicro)
    monkeypatch.setattr(replay_module, "BatchCompactor", SpyBatch)
    settings = WithNewOption(context_limit=2000, tail_tokens=300, new_option=7)
    replay(session(6), ScriptedSummarizer(), settings=settings, summary_budget_tokens=777, defrag_threshold_tokens=99)
    assert sorted(kind for kind, _ in seen) == ["batch", "micro"]
    for _, got in seen:
        assert got.new_option == 7 and got.summary_budget_tokens == 777 and got.defrag_threshold_tokens == 99
        assert got.context_limit == 2000 and got.tail == 300


def test_batch_only_and_micro_only_options_take_effect_in_one_micro_replay():
    """In micro mode the batch pass still stands behind micro passes; each reads its own option
    from the one settings object (replay used to filter them per compactor by hand)."""
    fake = ScriptedSummarizer()
    result = replay(
        session(30, size=1200), fake, context_limit=2000, tail_tokens=300, summary_budget_tokens=777, every_n_turns=5
    )
    modes = {r.mode for r in result.records}
    assert modes == {"micro", "batch"}, modes
    assert {args["budget_tokens"] for method, args in fake.calls if method == "update"} == {777}
    assert {r.turn % 5 for r in result.records if r.mode == "micro"} == {0}
