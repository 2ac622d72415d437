"""The engine wires what is warm (engine.residency) on every load and unload, and puts its limit
back after mlx-lm's BatchGenerator changed it; the Metal calls themselves are faked."""

from __future__ import annotations

from hermes_mlx.engine import generate, residency


def test_load_wires_the_weights_and_unload_releases(monkeypatch, tiny_model):
    calls = []
    monkeypatch.setattr(residency, "wire", lambda model, cache, budget: calls.append((model, cache, budget)) or 0)
    generate.unload(tiny_model)
    calls.clear()
    generate.generate("hello", model=tiny_model, max_tokens=2)
    assert calls and calls[-1][0] > 0 and calls[-1][1] > 0  # weights and the prompt caches' budget
    generate.unload(tiny_model)
    others = sum(m.nbytes for m in generate.engine_state()[0].models.values())  # other tests' warm models
    assert calls[-1][0] == others and (calls[-1][1] == 0) == (others == 0)  # nothing warm: released


def test_a_batch_generator_gets_our_limit_back(monkeypatch, tiny_model):
    reasserted = []
    monkeypatch.setattr(residency, "reassert", lambda: reasserted.append(1) or 0)
    generate.unload(tiny_model)  # a fresh model: a fresh generator
    generate.generate("hello", model=tiny_model, max_tokens=2)
    assert reasserted, "BatchGenerator wires the whole working set; ours must be put back"
    n = len(reasserted)
    generate.unload(tiny_model)  # its generator closes (restoring what it found): ours again
    assert len(reasserted) > n
