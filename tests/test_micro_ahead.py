"""Micro passes computed ahead (CompactorSettings.ahead): the same passes, the summarizer's calls
moved into the think time, and a guess whose inputs changed is discarded, never used."""

from __future__ import annotations

import copy
import logging
import threading

import pytest
from fakes import ScriptedSummarizer, telemetry_lines, turn

from hermes_mlx.compactor import ahead, markers, telemetry
from hermes_mlx.compactor.micro import MicroCompactor


@pytest.fixture(autouse=True)
def fresh():
    ahead.CACHE.clear()
    yield
    ahead.CACHE.clear()


def compactor(summarizer, **options):
    options.setdefault("tail_tokens", 300)
    return MicroCompactor(summarizer, **options)


def settle(mc: MicroCompactor) -> None:
    """The user's think time: the guess for the next pass finishes before the next turn."""
    entry = ahead.CACHE._entries.get(mc._ahead_session)
    if entry is not None:
        entry.future.exception(timeout=30)


def drive(mc: MicroCompactor, turns: int, wait: bool = True, edit=None) -> tuple[list, list]:
    """A live session: one turn at a time, a pass after each; (transcript after each pass, results)."""
    live, transcripts, results = [{"role": "system", "content": "You are a coding agent."}], [], []
    for n in range(turns):
        live = live + turn(n)
        if edit is not None:
            live = edit(n, live)
        result = mc.compact(live)
        results.append(result)
        live = result.messages
        transcripts.append(copy.deepcopy(live))
        if wait:
            settle(mc)
    return transcripts, results


class Slow(ScriptedSummarizer):
    """Every merge notes its thread. Once `hold` is set, a guess (a merge on the ahead thread) sets
    `started` and runs on only when the test sets `release`: the test, not the scheduler, decides
    whether a pass finds its guess running or finished."""

    def __init__(self):
        super().__init__()
        self.hold, self.started, self.release = threading.Event(), threading.Event(), threading.Event()
        self.threads: list[str] = []

    def merge(self, summary, exchange, budget_tokens=None, kept=None):
        self.threads.append(threading.current_thread().name)
        if self.hold.is_set() and threading.current_thread().name.startswith("hermes-mlx-ahead"):
            self.started.set()
            if not self.release.wait(30):  # a bound, so that a test that never releases fails
                raise TimeoutError("the test never released this guess")
        return super().merge(summary, exchange, budget_tokens)


def drive_to_a_running_guess(mc: MicroCompactor, fake: Slow, turns: int) -> tuple[list, ahead._Entry]:
    """`turns` passes, every guess finished before the next turn (a pass never finds one queued
    or running) but the last pass's: that guess is left running, held by `fake` until the test
    releases it. (transcripts, that guess's entry)."""
    transcripts, results = drive(mc, turns - 1)
    fake.hold.set()
    result = mc.compact(transcripts[-1] + turn(turns - 1))
    assert result.outcome == "absorbed" and all(r.telemetry["ahead"] == "hit" for r in results if r.telemetry)
    assert fake.started.wait(30), "the last pass scheduled no guess"
    return transcripts + [copy.deepcopy(result.messages)], ahead.CACHE._entries[mc._ahead_session]


def calls_by_pass(fake: ScriptedSummarizer) -> list:
    """Each call's inputs but `kept`, the messages beside it: a guess saw fewer (see below)."""
    return [(method, copy.deepcopy({k: v for k, v in args.items() if k != "kept"})) for method, args in fake.calls]


def test_passes_computed_ahead_give_the_same_transcripts_summaries_and_calls():
    plain, early = ScriptedSummarizer(), ScriptedSummarizer()
    off, on = compactor(plain, defrag_threshold_tokens=60), compactor(early, defrag_threshold_tokens=60, ahead=True)
    off_transcripts, off_results = drive(off, 16)
    on_transcripts, on_results = drive(on, 16)
    assert [r.outcome for r in on_results] == [r.outcome for r in off_results]
    assert {"absorbed", "defrag"} <= {r.outcome for r in off_results}  # both kinds of call were guessed
    assert on_transcripts == off_transcripts
    assert on.rolling_summary == off.rolling_summary and on.cursor == off.cursor
    # The same calls with the same inputs, plus the guess for a pass that has not come yet.
    assert calls_by_pass(early)[: len(plain.calls)] == calls_by_pass(plain)
    assert len(early.calls) == len(plain.calls) + 1
    # what a guess was told stays verbatim is still there when its pass comes: it was guessed
    # before the turn that came since, so it saw those messages less that turn's, no others
    for (_, guess), (_, real) in zip(early.calls, plain.calls):
        assert guess["kept"] and all(m in real["kept"] for m in guess["kept"])
    used = [r.telemetry["ahead"] for r in on_results if r.telemetry]
    assert set(used) == {"hit"}  # the first one too: guessed while the passes were still idle
    assert ahead.CACHE.stats.hits == len(used) and ahead.CACHE.stats.misses == 0
    assert all("ahead" not in (r.telemetry or {}) for r in off_results)


def test_the_logged_line_keeps_hermes_fields_and_duration_is_the_wait(caplog):
    mc = compactor(ScriptedSummarizer(), ahead=True, session_id="s1")
    with caplog.at_level(logging.INFO, logger="agent.context_compressor"):
        _, results = drive(mc, 9)
    lines = telemetry_lines(caplog, telemetry.MICRO_PREFIX)
    assert lines and all(set(payload) == set(telemetry.MICRO_FIELDS) for _, payload in lines)
    hit = next(r.telemetry for r in results if r.telemetry and r.telemetry["ahead"] == "hit")
    logged = next(p for _, p in lines if p["passes_total"] == hit["passes_total"])
    assert logged["duration_ms"] == hit["duration_ms"] and hit["ahead_ms"] >= 0


def test_an_edited_exchange_discards_the_guess_and_calls_the_summarizer():
    fake = ScriptedSummarizer()
    mc = compactor(fake, ahead=True)
    transcripts, results = drive(mc, 6)
    guessed = fake.calls[-1][1]["exchange"][0]["content"]  # the guess made after the last pass
    live = transcripts[-1]
    at = next(i for i, m in enumerate(live) if m.get("role") == "assistant" and m.get("content") == guessed)
    live = live[:at] + [{**live[at], "content": "EDITED answer"}] + live[at + 1 :] + turn(6)
    calls = len(fake.calls)
    result = mc.compact(live)
    assert result.outcome == "absorbed" and result.telemetry["ahead"] == "miss"
    method, args = fake.calls[calls]  # called again, on the edited exchange
    assert method == "merge" and args["exchange"][0]["content"] == "EDITED answer"
    assert mc.rolling_summary.endswith("- absorbed: EDITED answer")

    # The same transcript without computing ahead gives the same summary.
    plain = compactor(ScriptedSummarizer())
    drive(plain, 6)
    assert plain.compact(live).messages == result.messages and plain.rolling_summary == mc.rolling_summary


def test_a_reset_discards_a_running_guess_and_the_next_pass_calls_the_summarizer():
    fake = Slow()
    mc = compactor(fake, ahead=True)
    transcripts, entry = drive_to_a_running_guess(mc, fake, 5)
    assert not entry.future.done()
    mc.reset()  # a batch pass rewrote the transcript
    assert mc._ahead_session not in ahead.CACHE.held() and entry.cancel.is_set()
    fake.release.set()
    entry.future.exception(timeout=30)
    before = len(fake.threads)
    result = mc.compact(transcripts[-1] + turn(5))
    assert result.outcome == "absorbed" and result.telemetry["ahead"] == "miss"
    assert threading.current_thread().name in fake.threads[before:]  # the pass called the summarizer itself
    assert markers.parse(markers.build(mc.rolling_summary, micro=True)["content"]) == mc.rolling_summary


def test_a_failed_guess_is_not_used_the_pass_calls_again():
    fake = ScriptedSummarizer([True, False])  # the second guess fails; every later call succeeds
    mc = compactor(fake, ahead=True)
    _, results = drive(mc, 6)
    assert [r.telemetry["ahead"] for r in results if r.telemetry][:3] == ["hit", "miss", "hit"]
    assert all(r.outcome in ("absorbed", "idle") for r in results)
    plain = compactor(ScriptedSummarizer())
    drive(plain, 6)
    assert plain.rolling_summary == mc.rolling_summary


def test_a_pass_waits_for_its_running_guess_instead_of_calling_again():
    fake = Slow()
    mc = compactor(fake, ahead=True)
    transcripts, entry = drive_to_a_running_guess(mc, fake, 5)
    promote = entry.priority.promote

    def promote_and_release():  # the pass found its guess running and waits for it: only now may it end
        promote()
        fake.release.set()

    entry.priority.promote = promote_and_release
    before, hits = len(fake.threads), ahead.CACHE.stats.hits
    result = mc.compact(transcripts[-1] + turn(5))
    assert result.outcome == "absorbed" and result.telemetry["ahead"] == "waited"
    assert threading.current_thread().name not in fake.threads[before:]  # the pass did not call itself
    assert ahead.CACHE.stats.waited == 1 and ahead.CACHE.stats.hits == hits + 1


def test_a_guess_is_never_taken_by_a_compactor_with_another_summarizer(monkeypatch):
    """Two summarizers answer the same inputs differently. Once the first one's guess is done,
    nothing else holds that summarizer, so its id() may go to a new one (another model); the
    patched id() below gives every summarizer the same one, as such a reuse would."""
    import builtins

    from hermes_mlx.compactor import micro

    def same_id(obj):
        return 7 if isinstance(obj, ScriptedSummarizer) else builtins.id(obj)

    monkeypatch.setattr(micro, "id", same_id, raising=False)
    first = compactor(ScriptedSummarizer(["by the first summarizer"] * 9), ahead=True)
    transcripts, _ = drive(first, 2)  # passes still idle; the first pass's call is guessed and done
    assert len(first.summarizer.calls) == 1 and ahead.CACHE.held()
    other = ScriptedSummarizer()
    second = compactor(other, ahead=True)
    result = second.compact(transcripts[-1] + turn(2) + turn(3))  # the same first pass, the same inputs
    assert result.outcome == "absorbed" and result.telemetry["ahead"] == "miss"
    assert second.rolling_summary == "- absorbed: answer 0" and len(other.calls) >= 1


class DegradedFirst(ScriptedSummarizer):
    """Its first call reaches the deadline (as a guess can, queued at background priority): code
    picks a chunk's sentence, and the result is still ok."""

    def _next(self, method, default_text, **args):
        result = super()._next(method, default_text, **args)
        if len(self.calls) == 1:
            result.text, result.details = "code-picked", {"model_calls_skipped": 1}
        return result


def test_a_guess_that_skipped_model_calls_is_not_used():
    fake = DegradedFirst()
    mc = compactor(fake, ahead=True)
    _, results = drive(mc, 6)
    used = [r.telemetry["ahead"] for r in results if r.telemetry]
    assert used[0] == "miss" and "code-picked" not in mc.rolling_summary
    plain = compactor(ScriptedSummarizer())
    drive(plain, 6)
    assert plain.rolling_summary == mc.rolling_summary
