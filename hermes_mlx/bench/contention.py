"""Contention processes: started before the measured passes, verified running, always stopped.

Each process runs in its own session (process group), so stopping kills anything it spawned too.
Stopping is registered with atexit and on SIGTERM, and callers use `with Contention(...)`, so an
exception or Ctrl-C never leaves a process behind.
"""

from __future__ import annotations

import atexit
import os
import platform
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field

CPU_LOOP = "while True: pass"
# copies of a 256 MiB array stream through memory far beyond the caches
MEMBW_LOOP = "import numpy as np\na = np.ones(32 * 1024 * 1024)\nb = np.empty_like(a)\nwhile True: np.copyto(b, a)"
MAIN_MODEL_LOOP = (
    "import sys, hermes_mlx\n"
    "from hermes_mlx.engine.generate import generate\n"
    "model = sys.argv[1] or None\n"
    "while True: generate('Write a long story about a lighthouse keeper.', model=model, max_tokens=128)"
)
# a GPU-bound MLX load: large matmuls on the default (Metal) device
GPU_LOOP = "import hermes_mlx, mlx.core as mx\na = mx.random.normal((4096, 4096))\nwhile True: mx.eval(a @ a)"

MAX_BUSY = 64  # cpuN: more busy loops than this measure nothing new, only the fork rate
SCENARIOS = ("none", "cpu2", "membw", "main-model", "gpu")
KNOWN = f"{', '.join(SCENARIOS)} (cpuN: N busy loops), sessions-N and alternating-N (N sessions at once, taking turns)"
_LIVE: list[Contention] = []


def has_metal() -> bool:
    """Metal exists only on macOS on Apple Silicon; elsewhere the gpu scenario is skipped."""
    return sys.platform == "darwin" and platform.machine() == "arm64"


def commands(scenario: str, model: str | None) -> list[list[str]]:
    py = sys.executable
    if scenario == "none":
        return []
    if scenario.startswith("cpu"):
        n = int(scenario[3:] or 2)
        return [[py, "-c", CPU_LOOP] for _ in range(n)]
    if scenario == "membw":
        return [[py, "-c", MEMBW_LOOP]]
    if scenario == "main-model":
        return [[py, "-c", MAIN_MODEL_LOOP, model or ""]]
    if scenario == "gpu":
        return [[py, "-c", GPU_LOOP]]
    raise ValueError(f"unknown scenario {scenario!r}; known: {KNOWN}")


def check_scenario(scenario: str) -> None:
    """Raise ValueError for a name that is not a scenario, before anything starts."""
    if scenario.startswith("cpu") and scenario[3:].isdigit() and int(scenario[3:]) > 0:
        if int(scenario[3:]) > MAX_BUSY:  # each loop is a process: cpu100000 would fork-bomb the machine
            raise ValueError(f"{scenario}: at most {MAX_BUSY} busy loops (cpu{MAX_BUSY})")
        return
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; known: {KNOWN}")


def busy_threads(scenario: str) -> int | None:
    """CPU threads a scenario keeps busy, where that is a fixed number: cpuN's loops, membw's one
    copy loop. None for the ones whose CPU use is not a count (another model, a GPU load)."""
    if scenario.startswith("cpu") and scenario[3:].isdigit():
        return int(scenario[3:])
    return 1 if scenario == "membw" else None


def fair_share_bound(busy: int, ours: int, cores: int) -> float:
    """The slowdown a perfectly scheduled CPU-bound job of `ours` threads would see beside `busy`
    busy threads on `cores` cores: every thread gets cores / (busy + ours) of a core once there
    are more threads than cores, and nothing is lost while there are not."""
    return max(1.0, (busy + ours) / max(1, cores))


@dataclass
class Contention:
    scenario: str
    model: str | None = None
    settle_s: float = 1.0
    procs: list[subprocess.Popen] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def start(self) -> Contention:
        _install_handlers()
        _LIVE.append(self)
        for cmd in commands(self.scenario, self.model):
            self.procs.append(
                subprocess.Popen(
                    cmd,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    start_new_session=True,
                )
            )
        if self.procs:
            time.sleep(self.settle_s)
            dead = self.dead()
            if dead:
                self.stop()
                raise RuntimeError(f"contention {self.scenario!r} did not start: {'; '.join(dead)}")
        return self

    def dead(self) -> list[str]:
        """Processes that exited, with their status and last stderr line (for the results notes)."""
        out = []
        for p in self.procs:
            if p.poll() is not None:
                err = (p.stderr.read() if p.stderr else b"").decode(errors="replace").strip().splitlines()
                out.append(f"pid {p.pid} exited with {p.returncode}" + (f": {err[-1]}" if err else ""))
        return out

    def check(self) -> None:
        """Record (once) any contention process that died mid-run; the run goes on."""
        for line in self.dead():
            if line not in self.notes:
                self.notes.append(line)

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    p.kill()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            if p.stderr:
                p.stderr.close()
        if self in _LIVE:
            _LIVE.remove(self)

    def alive(self) -> int:
        return sum(p.poll() is None for p in self.procs)

    def __enter__(self) -> Contention:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def stop_all() -> None:
    for c in list(_LIVE):
        c.stop()


_installed = False


def _install_handlers() -> None:
    """atexit plus SIGTERM/SIGHUP -> stop everything, then exit as the signal would."""
    global _installed
    if _installed:
        return
    _installed = True
    atexit.register(stop_all)

    def handler(signum, frame):
        stop_all()
        raise SystemExit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            if signal.getsignal(sig) in (signal.SIG_DFL, None):
                signal.signal(sig, handler)
        except ValueError:  # not the main thread
            pass
