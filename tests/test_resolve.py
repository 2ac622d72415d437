"""engine.generate.resolve: the lock covers the lookup only, and a vanished folder is resolved afresh."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

from hermes_mlx.engine import generate, models


def test_a_slow_fetch_does_not_block_other_lookups(monkeypatch, tiny_model):
    generate.resolve(tiny_model)  # remembered
    started, release = threading.Event(), threading.Event()

    def slow_fetch(name=None, **kwargs):
        started.set()
        release.wait(10)
        return tiny_model

    monkeypatch.setattr(models, "resolve_model", slow_fetch)
    fetching = threading.Thread(target=generate.resolve, args=("some-manifest-name",))
    fetching.start()
    try:
        assert started.wait(10)
        done = threading.Event()
        threading.Thread(target=lambda: (generate.resolve(tiny_model), done.set())).start()
        assert done.wait(5), "a lookup waited for another model's fetch"
    finally:
        release.set()
        fetching.join(10)
    generate._resolved.pop("some-manifest-name", None)


def test_a_vanished_folder_is_resolved_again(monkeypatch, tmp_path, tiny_model):
    copy = tmp_path / "model"
    shutil.copytree(tiny_model, copy)
    calls = []

    def fetch(name=None, **kwargs):
        calls.append(name)
        return tiny_model

    monkeypatch.setattr(models, "resolve_model", fetch)
    monkeypatch.setitem(generate._resolved, "named", copy)
    assert generate.resolve("named") == ("named", copy)
    assert calls == []
    shutil.rmtree(copy)
    key, path = generate.resolve("named")
    assert calls == ["named"] and path == Path(tiny_model)
    generate._resolved.pop("named", None)
