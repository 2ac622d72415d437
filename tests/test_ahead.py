"""Passes computed ahead: the cache (hit, miss, wait, eviction), the provider answering from it,
and the Hermes hook that fills it (with a fake summarizer; the real loop is in test_hermes_session)."""

from __future__ import annotations

import logging
import re
import threading
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from fakes import ScriptedSummarizer
from test_adapter import EXCHANGE, hermes_serialize

from hermes_mlx.compactor import ahead
from hermes_mlx.engine import errors
from hermes_mlx.engine.generate import check_scope, job_bounds
from hermes_mlx.integrations import adapter, hermes_prompts, plugin, provider

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    ahead.CACHE.clear()
    monkeypatch.setattr(provider, "_micro_shape", dict(provider._FIRST_GUESS))  # as before any request
    monkeypatch.delenv(ahead.ENV_SWITCH, raising=False)
    yield
    ahead.CACHE.clear()


def wait_done(cache: ahead.AheadCache, session: str) -> None:
    cache._entries[session].future.exception(timeout=10)


def hold_guess(cache: ahead.AheadCache, then: Callable[[], object], seen: list | None = None) -> threading.Event:
    """Schedule s1's guess for "prompt A" and return once it is running, so a test can act while it runs.

    The guess appends the priority its engine calls get to seen, holds until the returned event is set,
    then returns then()."""
    started, release = threading.Event(), threading.Event()

    def work():
        if seen is not None:
            seen.append(job_bounds(None, None)[2])
        started.set()
        release.wait(10)
        return then()

    cache.schedule("s1", "prompt A", None, work)
    assert started.wait(10)
    return release


def test_hit_returns_the_finished_answer_once():
    cache = ahead.AheadCache()
    calls = []
    assert cache.schedule("s1", "prompt A", ("m", 1500), lambda: calls.append(1) or "answer A")
    wait_done(cache, "s1")
    assert cache.take("prompt A", ("m", 1500)) == "answer A"
    assert cache.take("prompt A", ("m", 1500)) is None  # used up: a retry runs the normal path
    assert calls == [1]
    assert (cache.stats.hits, cache.stats.waited, cache.stats.misses) == (1, 0, 1)


def test_other_text_or_other_fields_miss():
    cache = ahead.AheadCache()
    cache.schedule("s1", "prompt A", ("m", 1500), lambda: "answer A")
    wait_done(cache, "s1")
    assert cache.take("prompt B", ("m", 1500)) is None
    assert cache.take("prompt A", ("m", 800)) is None  # another max_tokens: another answer
    assert cache.stats.misses == 2 and cache.stats.hits == 0
    assert cache.take("prompt A", ("m", 1500)) == "answer A"


def release_once_waited_for(cache: ahead.AheadCache, session: str, release: threading.Event) -> None:
    """Set `release` when a caller finds the session's guess running and waits for it (take()
    promotes it first): the guess ends only then, whatever the scheduler does."""
    priority = cache._entries[session].priority
    promote = priority.promote

    def promote_and_release():
        promote()
        release.set()

    priority.promote = promote_and_release


def test_a_running_guess_is_waited_for():
    cache = ahead.AheadCache()
    release = hold_guess(cache, lambda: "late answer")
    release_once_waited_for(cache, "s1", release)
    assert cache.take("prompt A", None, timeout=10) == "late answer"
    assert (cache.stats.hits, cache.stats.waited) == (1, 1)


def test_a_queued_guess_is_a_miss_and_never_runs():
    cache = ahead.AheadCache()
    ran = []
    release = hold_guess(cache, lambda: "A")
    cache.schedule("s2", "prompt B", None, lambda: ran.append("B") or "B")
    assert cache.take("prompt B", None) is None  # queued behind s1: the caller's own run is sooner
    release.set()
    assert cache.take("prompt A", None, timeout=10) == "A"
    assert ran == [] and cache.stats.discarded == 1


def test_the_same_guess_is_not_computed_twice_and_a_new_one_replaces_it():
    cache = ahead.AheadCache()
    calls = []
    cache.schedule("s1", "prompt A", None, lambda: calls.append("A") or "A")
    assert not cache.schedule("s1", "prompt A", None, lambda: calls.append("A again") or "A")
    wait_done(cache, "s1")
    cache.schedule("s1", "prompt B", None, lambda: calls.append("B") or "B")
    wait_done(cache, "s1")
    assert calls == ["A", "B"] and cache.held() == {"s1": "prompt B"}
    assert cache.take("prompt A", None) is None and cache.take("prompt B", None) == "B"
    assert (cache.stats.scheduled, cache.stats.kept, cache.stats.discarded) == (2, 1, 1)


def test_oldest_session_is_evicted():
    cache = ahead.AheadCache(max_sessions=2)
    for n in (1, 2, 3):
        cache.schedule(f"s{n}", f"prompt {n}", None, lambda n=n: f"answer {n}")
        wait_done(cache, f"s{n}")
    assert cache.held() == {"s2": "prompt 2", "s3": "prompt 3"}
    assert cache.take("prompt 1", None) is None and cache.take("prompt 3", None) == "answer 3"
    assert cache.stats.discarded == 1


def test_guesses_run_at_background_priority_and_stop_when_discarded():
    cache = ahead.AheadCache()
    seen = []  # the priority every engine call here gets
    release = hold_guess(cache, check_scope, seen)  # check_scope: the next engine step after the guess was replaced
    old = cache._entries["s1"].future
    cache.schedule("s1", "prompt B", None, lambda: "B")
    release.set()
    with pytest.raises(errors.Cancelled):
        old.result(timeout=10)
    assert seen == ["background"]
    assert cache.stats.errors == 0  # a discarded guess that stopped is no error


def test_a_caller_waiting_on_a_running_guess_promotes_its_remaining_calls():
    cache = ahead.AheadCache()
    seen = []  # an engine call made before anyone waits, then one made after a caller started waiting
    release = hold_guess(cache, lambda: seen.append(job_bounds(None, None)[2]) or "A", seen)
    release_once_waited_for(cache, "s1", release)
    assert cache.take("prompt A", None, timeout=10) == "A"
    assert seen == ["background", "foreground"]


def test_a_failed_guess_is_a_miss():
    cache = ahead.AheadCache()
    release = hold_guess(cache, lambda: 1 / 0)
    counted = threading.Event()  # done callbacks run in order: the cache's (counting the error), then this one
    cache._entries["s1"].future.add_done_callback(lambda done: counted.set())
    release.set()
    assert counted.wait(10)
    assert cache.take("prompt A", None) is None
    assert cache.stats.errors == 1 and cache.stats.misses == 1
    cache.schedule("s1", "prompt B", None, lambda: "bad")
    wait_done(cache, "s1")
    assert cache.take("prompt B", None, accept=lambda value: value != "bad") is None


# ------------------------------------------------------------------ through the provider


def micro_messages(exchange_text: str = None) -> list[dict]:
    return hermes_prompts.micro_prompt("## Goal\nShip the export", exchange_text or hermes_serialize(EXCHANGE))


def create(client, messages, **kwargs):
    return client.chat.completions.create(
        model="hermes-mlx-default", messages=messages, max_tokens=1500, temperature=0.1, **kwargs
    )


@pytest.fixture
def fake(monkeypatch):
    summarizer = ScriptedSummarizer()
    monkeypatch.setattr(adapter, "make_summarizer", lambda model, timeout: summarizer)
    return summarizer


def schedule(messages, session="s1"):
    provider.schedule_ahead(session, messages)
    ahead.CACHE._entries[session].future.result(timeout=10)


def test_the_provider_answers_a_micro_request_from_ahead_with_the_same_text(fake, monkeypatch):
    client = provider.MLXClient()
    messages = micro_messages()
    monkeypatch.setenv(ahead.ENV_SWITCH, "0")
    normal = create(client, messages).choices[0].message.content
    monkeypatch.delenv(ahead.ENV_SWITCH)
    schedule(messages)
    assert len(fake.calls) == 2
    answered = create(client, messages)
    assert len(fake.calls) == 2  # no summarizer call for the real request
    assert answered.choices[0].message.content == normal and normal.startswith("## Goal")
    assert ahead.CACHE.stats.hits == 1
    other = micro_messages(hermes_serialize(EXCHANGE[:1]))
    create(client, other)
    assert len(fake.calls) == 3 and ahead.CACHE.stats.misses == 1


def test_the_defrag_hermes_sends_in_place_of_a_merge_is_answered_from_ahead(fake):
    """Over the defrag threshold Hermes's next micro request shortens the rolling summary instead
    (plugin.next_micro_request guesses that too); the guess must be the answer, not wasted work."""
    client = provider.MLXClient()
    messages = hermes_prompts.micro_prompt(None, "## Goal\nShip the export\n\n## Progress\n- found the bug")
    assert hermes_prompts.recognise(messages).kind == "micro_defrag"
    schedule(messages)
    assert fake.methods() == ["defrag"]
    create(client, messages)
    assert fake.methods() == ["defrag"] and ahead.CACHE.stats.hits == 1


def test_a_streamed_micro_request_is_answered_from_ahead(fake):
    client = provider.MLXClient()
    messages = micro_messages()
    schedule(messages)
    chunks = list(create(client, messages, stream=True))
    text = "".join(c.choices[0].delta.get("content") or "" for c in chunks)
    assert text.startswith("## Goal") and len(fake.calls) == 1 and ahead.CACHE.stats.hits == 1


def test_a_guess_that_skipped_model_calls_is_not_used(monkeypatch):
    """Past the deadline code picks a chunk's sentence and the answer is still ok; a guess waited
    on at background priority can get there, so the real request answers itself instead."""
    degraded = ScriptedSummarizer()
    plain = degraded.merge

    def merge(summary, exchange, budget_tokens=None, kept=None):
        result = plain(summary, exchange, budget_tokens)
        if len(degraded.calls) == 1:
            result.text, result.details = "## Goal\ncode-picked", {"model_calls_skipped": 1}
        return result

    degraded.merge = merge
    monkeypatch.setattr(adapter, "make_summarizer", lambda model, timeout: degraded)
    messages = micro_messages()
    schedule(messages)
    answered = create(provider.MLXClient(), messages).choices[0].message.content
    assert len(degraded.calls) == 2 and "code-picked" not in answered
    assert ahead.CACHE.stats.hits == 0 and ahead.CACHE.stats.misses == 1


def test_passthrough_requests_never_look(fake, tiny_model):
    client = provider.MLXClient(model=tiny_model)
    client.chat.completions.create(messages=[{"role": "user", "content": "hi"}], max_tokens=2)
    assert ahead.CACHE.stats.misses == 0 and ahead.CACHE.stats.hits == 0


def test_the_switch_turns_lookups_and_hooks_off(fake, monkeypatch):
    messages = micro_messages()
    schedule(messages)
    monkeypatch.setenv(ahead.ENV_SWITCH, "0")
    create(provider.MLXClient(), messages)
    assert len(fake.calls) == 2 and ahead.CACHE.stats.hits == 0
    monkeypatch.setattr(plugin, "_ours_and_micro", lambda: True)
    monkeypatch.setattr(plugin, "next_micro_request", lambda *a: pytest.fail("the hook ran while switched off"))
    assert plugin.compute_ahead(session_id="s1", conversation_history=[{"role": "user", "content": "x"}]) is None


# ------------------------------------------------------------------ the Hermes hook


def test_the_hook_schedules_the_guess_and_returns_none(fake, monkeypatch):
    messages = micro_messages()
    monkeypatch.setattr(plugin, "_ours_and_micro", lambda: True)
    monkeypatch.setattr(plugin, "next_micro_request", lambda history, threshold: messages)
    history = [{"role": "user", "content": "x"}]
    assert plugin.compute_ahead(session_id="abc", conversation_history=history, turn_id="t", model="m") is None
    assert ahead.CACHE.held() == {"abc": messages[-1]["content"]}
    ahead.CACHE._entries["abc"].future.result(timeout=10)
    create(provider.MLXClient(), messages)
    assert len(fake.calls) == 1 and ahead.CACHE.stats.hits == 1


def test_a_hook_error_is_logged_never_raised(monkeypatch, caplog):
    monkeypatch.setattr(plugin, "_ours_and_micro", lambda: True)

    def broken(history, threshold):
        raise KeyError("content")

    monkeypatch.setattr(plugin, "next_micro_request", broken)
    with caplog.at_level(logging.WARNING, logger="hermes_mlx.integrations"):
        assert plugin.compute_ahead(session_id="s", conversation_history=[{"role": "user"}]) is None
    assert ahead.CACHE.stats.errors == 1 and ahead.CACHE.held() == {}
    assert any("compute the next micro pass ahead" in r.getMessage() for r in caplog.records)
    # without Hermes at all (no hermes_cli to read the config from), still nothing raised
    monkeypatch.undo()
    assert plugin.compute_ahead(session_id="s", conversation_history=[{"role": "user"}]) is None


class Ctx:
    def __init__(self):
        self.hooks = []

    def register_hook(self, name, fn):
        self.hooks.append(name)


def test_register_adds_the_hooks_only_where_hermes_has_micro_passes(monkeypatch):
    ctx = Ctx()
    plugin.register(ctx)  # no Hermes here (or 0.19): the provider only
    assert ctx.hooks == []
    monkeypatch.setattr(plugin, "_hermes_has_micro_compaction", lambda: True)
    plugin.register(ctx)
    assert ctx.hooks == ["post_llm_call", "pre_llm_call"]
    plugin.register(None)  # the provider scan's call shape: harmless


def test_the_entry_point_is_the_thin_module_hermes_classifies_as_a_plugin():
    """Hermes scans an entry point's first 8,192 characters: naming the provider base class there
    (beside the registration call) makes it a model provider whose register(ctx) never runs."""
    entry = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["hermes_agent.plugins"]
    assert entry == {"hermes-mlx": "hermes_mlx.integrations.plugin"}
    source = Path(plugin.__file__).read_text()
    assert "ProviderProfile" not in source[:8192] and re.search(r"^def register\(ctx", source, re.M)


# ------------------------------------------------------------------ clearing, and the process exiting


def test_clear_cancels_queued_guesses_and_stops_the_running_one():
    cache = ahead.AheadCache()
    ran = []
    release = hold_guess(cache, check_scope)  # check_scope: its next engine step
    first = cache._entries["s1"].future
    queued = []
    for n in (2, 3):
        cache.schedule(f"s{n}", f"prompt {n}", None, lambda n=n: ran.append(n))
        queued.append(cache._entries[f"s{n}"].future)
    cache.clear()
    release.set()
    with pytest.raises(errors.Cancelled):
        first.result(timeout=10)
    assert all(f.cancelled() for f in queued) and ran == [] and cache.held() == {}
    cache.schedule("s4", "prompt 4", None, lambda: "4")  # the cache still works after clearing
    wait_done(cache, "s4")
    assert cache.take("prompt 4", None) == "4"


EXIT_SCRIPT = """
import sys, threading, time
from hermes_mlx.compactor import ahead
from hermes_mlx.engine.generate import check_scope

started = threading.Event()

def running():
    started.set()
    for _ in range(1000):  # about 10 s unless cancelled
        check_scope()
        time.sleep(0.01)
    print("running guess finished", flush=True)

ahead.CACHE.schedule("s1", "A", None, running)
started.wait(10)
for n in (2, 3):
    ahead.CACHE.schedule(f"s{n}", str(n), None, lambda n=n: print(f"queued guess {n} ran", flush=True))
print("exiting", flush=True)
"""


def test_exit_cancels_the_guesses_before_the_pool_joins_its_thread():
    """concurrent.futures joins its threads (running everything queued) before atexit handlers
    run; the cache is cleared first, so the process exits without computing unused guesses."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", EXIT_SCRIPT], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["exiting"]


class WatchedLock:
    """The cache's lock, noting whether it is held, for stats that check every change."""

    def __init__(self):
        self.inner, self.depth, self.owner = threading.RLock(), 0, None

    def __enter__(self):
        self.inner.acquire()
        self.depth, self.owner = self.depth + 1, threading.get_ident()

    def __exit__(self, *exc):
        self.depth -= 1
        if self.depth == 0:
            self.owner = None
        self.inner.release()

    def held_here(self) -> bool:
        return self.owner == threading.get_ident()


def test_every_stats_change_is_made_under_the_lock(monkeypatch):
    """Callers, the pool's thread and Hermes's hooks count at once, and clear() replaces the stats:
    an increment outside the lock can be lost."""
    cache = ahead.CACHE
    lock, unlocked = WatchedLock(), []

    class Watched(ahead.AheadStats):
        def __setattr__(self, name, value):
            if not lock.held_here():
                unlocked.append(name)
            super().__setattr__(name, value)

    monkeypatch.setattr(cache, "_lock", lock)
    monkeypatch.setattr(cache, "stats", Watched())
    unlocked.clear()  # its fields set as it was made
    cache.schedule("s1", "prompt A", None, lambda: "A")
    wait_done(cache, "s1")
    assert cache.take("prompt A", None) == "A"  # hits, waited
    assert cache.take("prompt A", None) is None  # misses
    cache.schedule("s1", "prompt B", None, lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        cache._entries["s1"].future.result(timeout=10)
    monkeypatch.setattr(plugin, "_ours_and_micro", lambda: True)
    monkeypatch.setattr(plugin, "next_micro_request", lambda *a: 1 / 0)
    plugin.compute_ahead(session_id="s", conversation_history=[{"role": "user", "content": "x"}])
    for _ in range(1000):  # the failed guess's done callback runs on the pool's thread
        if cache.stats.errors == 2:
            break
        threading.Event().wait(0.01)
    assert (cache.stats.hits, cache.stats.misses, cache.stats.errors) == (1, 1, 2)
    assert unlocked == []
