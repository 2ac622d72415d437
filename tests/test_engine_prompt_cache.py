"""The engine's prefix caches on a tiny model: sessions that alternate keep their reuse, a budget
that holds one entry evicts (and counts it) rather than grows, and the counters move."""

import pytest

import hermes_mlx  # noqa: F401  (puts the BLAS in place before MLX loads)
from hermes_mlx.engine.generate import engine_state, generate, prompt_cache_stats
from hermes_mlx.engine.prompt_cache import PromptCache, budget_bytes
from hermes_mlx.engine.score import score

# Raw prompts (no chat template) that differ from their first token: nothing shared by accident.
SESSION_A = "The quick brown fox jumps over the lazy dog. " * 5
SESSION_B = "0123456789 failed with AssertionError at line 42; " * 5


@pytest.fixture
def prompts(monkeypatch):
    """A fresh, empty prefix cache for one test (the engine's is shared by the whole run)."""
    models, _ = engine_state()
    fresh = PromptCache(models.prompts.max_bytes)
    monkeypatch.setattr(models, "prompts", fresh)
    return fresh


def test_two_alternating_sessions_both_keep_their_reuse(tiny_model, prompts):
    a1 = generate(SESSION_A, model=tiny_model, max_tokens=4)
    b1 = generate(SESSION_B, model=tiny_model, max_tokens=4)
    assert a1.cached_tokens == 0 and b1.cached_tokens == 0
    a2 = generate(SESSION_A + "What next?", model=tiny_model, max_tokens=4)
    b2 = generate(SESSION_B, model=tiny_model, max_tokens=4)
    # A single "last prompt" cache would have lost A's prefix to B and B's to A.
    assert a2.cached_tokens >= a1.prompt_tokens - 2  # the boundary token may merge differently
    assert b2.cached_tokens == b2.prompt_tokens - 1  # all but the last, which must run
    stats = prompt_cache_stats()
    assert (stats.hits, stats.misses, stats.evictions) == (2, 2, 0)
    assert stats.entries >= 2 and 0 < stats.bytes <= stats.budget_bytes


def test_reuse_changes_no_greedy_result(tiny_model, prompts):
    cold = generate(SESSION_A, model=tiny_model, max_tokens=12)
    generate(SESSION_B, model=tiny_model, max_tokens=12)
    warm = generate(SESSION_A, model=tiny_model, max_tokens=12)
    assert warm.cached_tokens > 0 and warm.text == cold.text


def test_a_budget_for_one_entry_evicts_and_does_not_grow(tiny_model, prompts):
    generate(SESSION_A, model=tiny_model, max_tokens=2)
    a = prompts.nbytes
    generate(SESSION_B, model=tiny_model, max_tokens=2)
    b = prompts.nbytes - a
    assert a > 0 and b > 0 and prompt_cache_stats().entries == 2
    prompts.max_bytes = int(max(a, b) * 1.5)  # room for one session's entry, not two
    assert prompts.max_bytes < a + b
    for i in range(4):
        generate(f"{i} " + SESSION_B, model=tiny_model, max_tokens=2)
        assert prompts.nbytes <= prompts.max_bytes
        assert prompt_cache_stats().entries == 1
    assert prompt_cache_stats().evictions == 5  # A and B, then each new prompt's predecessor
    again = generate(SESSION_A, model=tiny_model, max_tokens=2)
    assert again.cached_tokens == 0  # A was evicted
    stats = prompt_cache_stats()
    assert stats.evictions == 6 and stats.entries == 1 and stats.misses == 7 and stats.bytes <= prompts.max_bytes


def test_a_budget_smaller_than_one_entry_keeps_nothing(tiny_model, prompts):
    prompts.max_bytes = 1
    generate(SESSION_A, model=tiny_model, max_tokens=2)
    again = generate(SESSION_A, model=tiny_model, max_tokens=2)
    assert again.cached_tokens == 0 and prompts.nbytes == 0 and prompt_cache_stats().evictions == 2


def test_score_and_generate_share_the_cache_and_unload_drops_it(tiny_model, prompts):
    from hermes_mlx.engine.generate import unload

    first = score(["1", "2"], SESSION_A, model=tiny_model)
    after = generate(SESSION_A, model=tiny_model, max_tokens=2)
    assert first.cached_tokens == 0 and after.cached_tokens == after.prompt_tokens - 1
    again = score(["1", "2"], SESSION_A, model=tiny_model)
    assert again.cached_tokens == again.prompt_tokens - 1 and again.scores == pytest.approx(first.scores, abs=1e-4)
    assert prompt_cache_stats().hits == 2
    unload(tiny_model)
    stats = prompt_cache_stats()
    assert stats.entries == 0 and stats.bytes == 0 and stats.hits == 2  # counters outlive the model


def test_budget_comes_from_the_env_or_a_share_of_the_memory_budget(monkeypatch):
    monkeypatch.delenv("HERMES_MLX_PROMPT_CACHE_MB", raising=False)
    assert budget_bytes(8192) == 1024 * 1_000_000
    assert budget_bytes(8192, weights_bytes=540_000_000) == 270 * 1_000_000  # at most half the warm weights
    assert budget_bytes(8192, weights_bytes=1_000_000) == 64 * 1_000_000  # and at least 64 MB
    monkeypatch.setenv("HERMES_MLX_PROMPT_CACHE_MB", "64")
    assert budget_bytes(8192) == 64 * 1_000_000
    assert budget_bytes(8192, weights_bytes=540_000_000) == 64 * 1_000_000  # the env wins


def test_the_budget_follows_the_warm_weights(monkeypatch, tiny_model):
    monkeypatch.delenv("HERMES_MLX_PROMPT_CACHE_MB", raising=False)
    generate("a b c", model=tiny_model, max_tokens=1)
    models = engine_state()[0]
    warm = sum(m.nbytes for m in models.models.values())
    budget = prompt_cache_stats().budget_bytes
    assert budget == budget_bytes(models.memory_budget_mb, warm) < budget_bytes(models.memory_budget_mb)


def test_a_malformed_budget_in_the_env_falls_back_to_the_default(monkeypatch, caplog):
    """ModelCache is built when the engine is imported: a typo there must not break the import."""
    from hermes_mlx.engine.cache import DEFAULT_IDLE_UNLOAD_S, DEFAULT_MEMORY_BUDGET_MB, ModelCache

    monkeypatch.setenv("HERMES_MLX_PROMPT_CACHE_MB", "512MB")
    assert budget_bytes(8192) == 1024 * 1_000_000
    monkeypatch.setenv("HERMES_MLX_MEMORY_BUDGET_MB", "8GB")
    monkeypatch.setenv("HERMES_MLX_IDLE_UNLOAD_S", "nan")
    models = ModelCache()
    assert models.memory_budget_mb == DEFAULT_MEMORY_BUDGET_MB and models.idle_unload_s == DEFAULT_IDLE_UNLOAD_S
    assert models.prompts.max_bytes == int(DEFAULT_MEMORY_BUDGET_MB / 8 * 1e6)
    for name in ("HERMES_MLX_PROMPT_CACHE_MB", "HERMES_MLX_MEMORY_BUDGET_MB", "HERMES_MLX_IDLE_UNLOAD_S"):
        assert name in caplog.text
