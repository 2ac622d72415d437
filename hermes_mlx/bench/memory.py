"""Peak memory while one stretch of the bench runs (a scenario, a phase of many sessions).

The process's own high-water mark (`ru_maxrss`) only grows, so a scenario run after a heavier one
could never show less; a thread samples resident memory (and MLX's allocator, once MLX is loaded)
while the stretch runs instead, and the high-water mark is kept beside it for macOS, which has
no /proc to sample.
"""

from __future__ import annotations

import os
import resource
import sys
import threading
from pathlib import Path


def rss_mb() -> float | None:
    """Resident memory now; None where /proc/self/statm does not exist (macOS)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def maxrss_mb() -> float:
    """The process's resident high-water mark since it started (kB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1e6 if sys.platform == "darwin" else peak / 1e3


def mlx_active_mb() -> float | None:
    """MLX's allocated memory now; None before anything imported MLX (the bench never loads it
    just to read a counter)."""
    mx = sys.modules.get("mlx.core")
    if mx is None:
        return None
    try:
        return mx.get_active_memory() / 1e6
    except Exception:
        return None


class MemoryWatch:
    """`with MemoryWatch() as watch: ...`, then `watch.result()`: the peaks seen meanwhile."""

    def __init__(self, every_s: float = 0.1) -> None:
        self.every_s = every_s
        self.peak_rss: float | None = None
        self.peak_mlx: float | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def sample(self) -> None:
        for attr, value in (("peak_rss", rss_mb()), ("peak_mlx", mlx_active_mb())):
            if value is not None:
                setattr(self, attr, max(value, getattr(self, attr) or 0.0))

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            self.sample()

    def __enter__(self) -> MemoryWatch:
        self.sample()
        self._thread = threading.Thread(target=self._loop, name="bench-memory", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.sample()

    def result(self, passes: list | None = None) -> dict:
        """Peaks in MB; `passes` (harness.Pass) add the engine's own per-request MLX peaks, which
        catch what falls between two samples."""
        engine = [p.peak_mlx_mb for p in passes or [] if getattr(p, "peak_mlx_mb", None)]
        mlx = max([v for v in [self.peak_mlx, *engine] if v is not None], default=None)
        return {
            "peak_rss_mb": None if self.peak_rss is None else round(self.peak_rss, 1),
            "maxrss_mb": round(maxrss_mb(), 1),
            "peak_mlx_mb": None if mlx is None else round(mlx, 1),
        }
