"""Wiring the warm model on Apple Silicon: the Metal calls are faked (nothing here runs Metal), and
the test checks what limit reaches mx.set_wired_limit, that it stays within the memory budget and
the device's recommended working set, and that unload releases it."""

import mlx.core as mx
import pytest

from hermes_mlx.engine import residency

GB = 10**9


@pytest.fixture(autouse=True)
def clean():
    residency._wired.clear()
    yield
    residency._wired.clear()


@pytest.fixture
def calls(monkeypatch):
    """mx.set_wired_limit, recorded (never the real one: this machine may have Metal)."""
    seen: list[int] = []

    def fake(limit: int) -> int:
        seen.append(limit)
        return 0

    monkeypatch.setattr(mx, "set_wired_limit", fake)
    return seen


@pytest.fixture
def metal(monkeypatch, calls):
    """A Mac with 20 GB recommended working set, as far as residency can tell."""
    monkeypatch.setattr(mx.metal, "is_available", lambda: True)
    monkeypatch.setattr(mx, "default_device", lambda: mx.Device(mx.gpu, 0))
    monkeypatch.setattr(mx, "device_info", lambda: {"max_recommended_working_set_size": 20 * GB})
    return calls


def test_cpu_wires_nothing(monkeypatch, calls):
    monkeypatch.setattr(mx.metal, "is_available", lambda: False)
    assert residency.wire(1 * GB, GB // 4, 8 * GB) == 0
    residency.release()
    assert calls == []
    assert residency.status() == {"device": "cpu", "wired_bytes": 0}
    assert residency.describe(residency.status()) == "n/a on CPU"


def test_metal_wires_weights_plus_caches_and_unload_releases(metal):
    assert residency.wire(GB, GB // 4, 8 * GB) == GB + GB // 4
    assert metal == [GB + GB // 4]
    found = residency.status()
    assert found["device"] == "metal" and found["wired_bytes"] == GB + GB // 4
    assert found["model_bytes"] == GB and found["max_recommended"] == 20 * GB
    assert residency.describe(found).startswith("1.25 GB (weights 1.00 GB + prompt caches 0.25 GB)")
    residency.release()
    assert metal == [GB + GB // 4, 0]
    assert residency.status()["wired_bytes"] == 0
    assert residency.describe(residency.status()).startswith("nothing (no model warm)")
    residency.release()  # nothing wired: no second call
    assert metal == [GB + GB // 4, 0]


def test_a_second_model_replaces_the_limit_and_nothing_warm_releases(metal):
    residency.wire(GB, GB // 4, 8 * GB)
    residency.wire(3 * GB, GB // 4, 8 * GB)  # both warm models' weights together
    assert metal == [GB + GB // 4, 3 * GB + GB // 4]
    assert residency.wire(0, GB // 4, 8 * GB) == 0  # the last model went
    assert metal[-1] == 0 and residency.status()["wired_bytes"] == 0


@pytest.mark.parametrize(
    "model, cache, budget, recommended, expected",
    [
        (6 * GB, 4 * GB, 8 * GB, 20 * GB, 8 * GB),  # the memory budget binds
        (6 * GB, 4 * GB, 32 * GB, 5 * GB, 5 * GB),  # the device's recommended working set binds
        (GB, 0, 8 * GB, None, GB),  # a device that recommends nothing: the budget alone
    ],
)
def test_the_limit_stays_within_budget_and_device(monkeypatch, metal, model, cache, budget, recommended, expected):
    info = {"max_recommended_working_set_size": recommended} if recommended else {}
    monkeypatch.setattr(mx, "device_info", lambda: info)
    assert residency.wire(model, cache, budget) == expected
    assert metal == [expected]


def test_older_mlx_reads_the_device_from_mx_metal(monkeypatch, metal):
    monkeypatch.delattr(mx, "device_info")
    monkeypatch.setattr(mx.metal, "device_info", lambda: {"max_recommended_working_set_size": 2 * GB})
    assert residency.wire(3 * GB, 0, 8 * GB) == 2 * GB


def test_an_os_refusal_runs_unwired_and_says_so(monkeypatch, metal):
    def refuse(limit):
        raise ValueError("[metal::set_wired_limit] Setting a wired limit larger than the maximum")

    monkeypatch.setattr(mx, "set_wired_limit", refuse)
    assert residency.wire(GB, 0, 8 * GB) == 0
    found = residency.status()
    assert found["wired_bytes"] == 0 and "larger than the maximum" in found["error"]
    assert residency.describe(found).startswith("nothing (the OS refused")
    residency.release()  # nothing was wired: nothing to undo, and no raise


def test_reassert_undoes_what_mlx_lms_batch_generators_leave(metal):
    """Two BatchGenerators each wire the recommended set at creation and restore what they found
    at close; closed out of order they would leave 20 GB wired with nothing warm."""
    residency.wire(GB, 0, 8 * GB)
    metal.append(20 * GB)  # generator A created (saw 1 GB)
    assert residency.reassert() == GB and metal[-1] == GB
    residency.release()
    metal.append(GB)  # generator A closed late, restoring what it saw
    assert residency.reassert() == 0 and metal[-1] == 0


def test_reassert_on_cpu_does_nothing(monkeypatch, calls):
    monkeypatch.setattr(mx.metal, "is_available", lambda: False)
    assert residency.reassert() == 0 and calls == []
