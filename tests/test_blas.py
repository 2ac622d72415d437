"""OpenBLAS under MLX on Linux CPUs, and its thread count fitted to the cores left free."""

import platform
import subprocess
import sys
import time
from pathlib import Path

import pytest

import hermes_mlx  # noqa: F401  (puts the BLAS in place before MLX loads)
from hermes_mlx.engine import blas
from hermes_mlx.engine.generate import generate

linux_x86 = pytest.mark.skipif(
    not (sys.platform == "linux" and platform.machine() == "x86_64"),
    reason="ngsolve-openblas is installed on Linux x86_64 only",
)


class FakeOpenBlas:
    def __init__(self):
        self.calls = []

    def openblas_set_num_threads(self, n):
        self.calls.append(n.value)

    def openblas_get_num_threads(self):
        return self.calls[-1]


@pytest.fixture()
def fake_blas(monkeypatch):
    fake = FakeOpenBlas()
    monkeypatch.setattr(blas, "_openblas", fake)
    monkeypatch.setattr(blas, "_threads", None)
    monkeypatch.setattr(blas.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.setattr(blas.os, "cpu_count", lambda: 4)
    monkeypatch.setattr(blas, "Path", NoCgroupPath)
    for name in ("HERMES_MLX_BLAS_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    return fake


class NoCgroupPath(type(Path())):
    def read_text(self, *args, **kwargs):
        if str(self) == "/sys/fs/cgroup/cpu.max":
            raise FileNotFoundError(str(self))
        return super().read_text(*args, **kwargs)


def test_threads_follow_the_free_cores(fake_blas, monkeypatch):
    busy = iter([0, 2, 2, 2, 9, 9, 9])
    monkeypatch.setattr(blas, "runnable_elsewhere", lambda: next(busy))
    assert blas.fit_threads() == 4
    assert blas.fit_threads() == 2
    assert blas.fit_threads() == 1  # never fewer than one
    assert fake_blas.calls == [4, 2, 1]


def test_a_passing_blip_does_not_cut_threads(fake_blas, monkeypatch):
    busy = iter([3, 0])
    monkeypatch.setattr(blas, "runnable_elsewhere", lambda: next(busy))
    assert blas.fit_threads() == 4


def test_unknown_load_keeps_all_cores_and_setting_pins(fake_blas, monkeypatch):
    monkeypatch.setattr(blas, "runnable_elsewhere", lambda: None)
    assert blas.fit_threads() == 4
    monkeypatch.setenv("HERMES_MLX_BLAS_THREADS", "1")
    assert blas.fit_threads() == 1
    assert fake_blas.calls == [4, 1]


def test_a_user_thread_setting_caps_the_count(fake_blas, monkeypatch):
    monkeypatch.setattr(blas, "runnable_elsewhere", lambda: 0)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    assert blas.fit_threads() == 1


def test_machine_wide_load_is_measured_against_the_machine_s_cores(fake_blas, monkeypatch):
    """In a 2-core slice of an 8-core host, 4 threads busy elsewhere leave room for both."""
    monkeypatch.setattr(blas.os, "cpu_count", lambda: 8)
    monkeypatch.setattr(blas.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(blas, "runnable_elsewhere", lambda: 4)
    assert blas.fit_threads() == 2


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_busy_processes_are_seen():
    assert blas.runnable_elsewhere() is not None
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        deadline, seen = time.monotonic() + 5, 0
        while time.monotonic() < deadline and seen < 1:
            seen = blas.runnable_elsewhere()
            time.sleep(0.05)
        assert seen >= 1
    finally:
        for p in loops:
            p.kill()
            p.wait()


@linux_x86
def test_openblas_is_loaded_and_requests_report_threads(tiny_model):
    assert blas.blas_info().name == "openblas"
    result = generate("hello", model=tiny_model, max_tokens=2)
    assert result.blas_threads is not None and result.blas_threads >= 1


@linux_x86
def test_an_openblas_that_dies_on_this_cpu_is_never_loaded(tmp_path, monkeypatch):
    """A single-CPU build whose test matmul kills its child process (SIGILL on a CPU without
    AVX-512) is reported and skipped; a DYNAMIC_ARCH build is taken without a child process."""
    monkeypatch.setenv("HERMES_MLX_HOME", str(tmp_path / "home"))
    fake = tmp_path / "libopenblas.so.0"
    fake.write_bytes(b"\x7fELF...OpenBLAS 0.3.31 NO_AFFINITY SKYLAKEX\0")
    runs = []

    def killed(cmd, **kwargs):
        runs.append(cmd)
        return subprocess.CompletedProcess(cmd, -4)

    monkeypatch.setattr(blas.subprocess, "run", killed)
    why = blas.unsupported_cpu(str(fake))
    assert "does not run on this CPU" in why and "signal 4" in why
    assert blas.unsupported_cpu(str(fake)) == why and len(runs) == 1  # the verdict is kept
    dynamic = tmp_path / "libdyn.so"
    dynamic.write_bytes(b"OpenBLAS 0.3.33 DYNAMIC_ARCH NO_AFFINITY Zen\0")
    assert blas.unsupported_cpu(str(dynamic)) is None and len(runs) == 1
