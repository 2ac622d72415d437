"""Put a real BLAS under MLX on Linux CPUs, before MLX makes its first matmul.

The mlx-cpu wheel links a reference netlib BLAS (~5 GFLOPS here); OpenBLAS from the
`ngsolve-openblas` wheel (a DYNAMIC_ARCH build: kernels chosen for the CPU at run time) runs the
same sgemm at ~120 GFLOPS on 2 Zen cores. MLX resolves `cblas_sgemm` lazily
through the global symbol scope, so loading OpenBLAS with RTLD_GLOBAL before the first matmul
makes MLX use it. That OpenBLAS needs `libgfortran.so.5`, which a bare machine may lack; the
mlx-cpu wheel ships one under a hashed soname, so we keep a copy whose soname says
`libgfortran.so.5` in our cache folder and load it first. Nothing here imports MLX.

macOS is left alone (MLX uses Metal and Accelerate). `HERMES_MLX_BLAS=off` turns this off;
`HERMES_MLX_BLAS=/path/libopenblas.so` names another BLAS. An OpenBLAS built for one CPU only
(its build string names no DYNAMIC_ARCH) whose kernels need AVX-512 is never loaded on a CPU
without it: the first matmul would kill the process with SIGILL.

`fit_threads` gives OpenBLAS, per request, only the cores other processes leave free.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import hashlib
import logging
import os
import re
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

GFORTRAN_SONAME = b"libgfortran.so.5"


@dataclass
class BlasInfo:
    name: str  # "openblas", "bundled reference BLAS", "Accelerate"
    path: str | None
    reason: str  # why this one


_info: BlasInfo | None = None
_openblas: ctypes.CDLL | None = None
_threads: int | None = None


def _site_dirs() -> list[str]:
    dirs = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    dirs += [p for p in sys.path if p.endswith("site-packages")]
    return list(dict.fromkeys(dirs))


def _find(pattern: str) -> str | None:
    for site in _site_dirs():
        hits = sorted(glob.glob(os.path.join(site, pattern)))
        if hits:
            return hits[0]
    return None


def _gfortran_copy(source: str, cache_dir: Path) -> Path:
    """A copy of the wheel's libgfortran whose soname reads `libgfortran.so.5`.

    Only the soname string changes, in place and padded with NULs, so offsets stay valid.
    """
    data = Path(source).read_bytes()
    old = os.path.basename(source).encode() + b"\0"
    if data.count(old) != 1:
        raise OSError(f"soname of {source} not found exactly once")
    digest = hashlib.sha256(data).hexdigest()[:12]
    target = cache_dir / f"gfortran-{digest}" / "libgfortran.so.5"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        patched = data.replace(old, (GFORTRAN_SONAME + b"\0").ljust(len(old), b"\0"))
        tmp = target.with_suffix(f".tmp{os.getpid()}")
        tmp.write_bytes(patched)
        os.replace(tmp, target)
    return target


_WHEEL_OPENBLAS = ("ngsolve_openblas/libopenblas*.so*", "cmeel.prefix/lib/libopenblas.so.0")
_PROBE = """
import ctypes, sys
for dep in sys.argv[2:]:
    ctypes.CDLL(dep, mode=ctypes.RTLD_GLOBAL)
lib = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
n = 64
a = (ctypes.c_float * (n * n))(*([1.0] * (n * n)))
c = (ctypes.c_float * (n * n))()
lib.cblas_sgemm(101, 111, 111, n, n, n, ctypes.c_float(1.0), a, n, a, n, ctypes.c_float(0.0), c, n)
sys.exit(0 if abs(c[0] - n) < 1e-3 else 3)
"""


def unsupported_cpu(openblas: str, deps: tuple[str, ...] = ()) -> str | None:
    """Why this OpenBLAS cannot run here, or None. A DYNAMIC_ARCH build picks its kernels at run
    time; any other is tried once in a child process (an AVX-512 build dies there with SIGILL on
    a CPU without AVX-512, not in ours), and the verdict is kept per file and CPU."""
    try:
        data = Path(openblas).read_bytes()
    except OSError as exc:
        return f"cannot read {openblas}: {exc}"
    build = re.search(rb"OpenBLAS \d+\.\d+\.\d+[^\0]{0,80}", data)
    if build and b"DYNAMIC_ARCH" in build.group(0):
        return None
    from hermes_mlx.engine.paths import home

    cpu = hashlib.sha256(Path("/proc/cpuinfo").read_bytes() if Path("/proc/cpuinfo").exists() else b"").hexdigest()
    key = hashlib.sha256(data[: 1 << 20] + str(len(data)).encode() + cpu.encode()).hexdigest()[:16]
    verdict = home() / "blas" / f"probe-{key}.txt"
    if not verdict.exists():
        try:
            done = subprocess.run([sys.executable, "-c", _PROBE, openblas, *deps], capture_output=True, timeout=60)
            why = (
                ""
                if done.returncode == 0
                else (
                    f"{openblas} does not run on this CPU (its test matmul ended with "
                    f"{'signal ' + str(-done.returncode) if done.returncode < 0 else 'exit ' + str(done.returncode)})"
                )
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return f"cannot test {openblas}: {exc}"
        verdict.parent.mkdir(parents=True, exist_ok=True)
        verdict.write_text(why)
    return verdict.read_text() or None


def _gfortran() -> list[str]:
    """The libraries to load before OpenBLAS when the system has no libgfortran.so.5."""
    if ctypes.util.find_library("gfortran"):
        return []
    source = _find("mlx_cpu.libs/libgfortran-*.so*") or _find("numpy.libs/libgfortran-*.so*")
    if source is None:
        raise OSError("no libgfortran.so.5 on this system or in the mlx-cpu wheel")
    from hermes_mlx.engine.paths import home

    quadmath = sorted(glob.glob(os.path.join(os.path.dirname(source), "libquadmath-*.so*")))
    return quadmath + [str(_gfortran_copy(source, home() / "blas"))]


def _load_openblas(openblas: str, deps: list[str]) -> None:
    global _openblas
    for lib in deps:
        ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
    _openblas = ctypes.CDLL(openblas, mode=ctypes.RTLD_GLOBAL)


def ensure_fast_blas() -> BlasInfo:
    """Load the fastest BLAS we can find into the global scope; safe to call many times."""
    global _info
    if _info is not None:
        return _info
    setting = os.environ.get("HERMES_MLX_BLAS", "auto")
    if sys.platform == "darwin":
        _info = BlasInfo("Accelerate", None, "macOS: MLX's own")
    elif setting.lower() in ("off", "0", "no", "bundled"):
        _info = BlasInfo("bundled reference BLAS", None, "HERMES_MLX_BLAS=off")
    else:
        found = [setting] if setting != "auto" else [f for f in map(_find, _WHEEL_OPENBLAS) if f]
        if not found:
            _info = BlasInfo("bundled reference BLAS", None, "ngsolve-openblas is not installed")
        elif "mlx.core" in sys.modules:
            # MLX binds its BLAS symbols when it loads; too late to swap them now.
            _info = BlasInfo("bundled reference BLAS", None, "mlx was imported before hermes_mlx")
        else:
            _info = _first_usable(found)
    return _info


def _first_usable(found: list[str]) -> BlasInfo:
    reasons = []
    try:
        deps = _gfortran()
        for openblas in found:
            why = unsupported_cpu(openblas, tuple(deps))
            if why is None:
                _load_openblas(openblas, deps)
                return BlasInfo("openblas", openblas, "loaded before MLX's first matmul")
            reasons.append(why)
    except OSError as exc:
        reasons.append(f"OpenBLAS failed to load: {exc}")
    log.warning("hermes-mlx: OpenBLAS not loaded, MLX will be slow on CPU: %s", "; ".join(reasons))
    return BlasInfo("bundled reference BLAS", None, "; ".join(reasons))


def blas_info() -> BlasInfo:
    return ensure_fast_blas()


def runnable_elsewhere() -> int | None:
    """Threads of other processes runnable right now (Linux), None where that is unknown.

    /proc/loadavg's fourth field counts runnable threads this instant, ours included; the
    1-minute load average lags by a minute, too late for one pass.
    """
    try:
        runnable = int(Path("/proc/loadavg").read_text().split()[3].split("/")[0])
        own = 0
        for stat in Path("/proc/self/task").glob("*/stat"):
            try:
                own += stat.read_text().rsplit(")", 1)[1].split()[0] == "R"
            except (OSError, IndexError):
                pass
    except (OSError, ValueError, IndexError):
        return None
    return max(runnable - own, 0)


def _env_count(*names: str) -> int | None:
    for name in names:
        value = os.environ.get(name, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    return None


def usable_cores() -> int:
    """Cores this process may use: its CPU affinity, a cgroup v2 CPU quota, and the thread
    count a user already set for OpenBLAS or OpenMP, whichever is least."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, int(quota) // int(period)))
    except (OSError, ValueError):
        pass
    user = _env_count("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")
    return min(cores, user) if user else cores


def fit_threads() -> int | None:
    """Give OpenBLAS only the cores that other processes leave free; call before each request,
    with no MLX work in flight (the worker synchronizes first).

    Measured on 2 cores with 2 busy loops (2,163-token prompt, 48 tokens out): with 2 OpenBLAS
    threads the prompt read 4.4x and decode ran 7.5x slower than on the idle machine, because
    a thread whose partner is descheduled spin-waits for it; with 1 thread, 1.8x and 2.0x
    (one thread's fair share of 2 cores shared by 3). On the idle machine 2 threads read ~10%
    and decode ~30% faster than 1. Runnable threads are counted machine-wide (/proc/loadavg),
    so free cores are the machine's cores less those, capped by `usable_cores`.
    `HERMES_MLX_BLAS_THREADS=N` pins the count. Returns the count OpenBLAS reports.
    """
    global _threads
    if _openblas is None:
        return None
    pinned = _env_count("HERMES_MLX_BLAS_THREADS")
    if pinned:
        want = pinned
    else:
        busy = runnable_elsewhere()
        for _ in range(2):  # a thread that just happened to run should not halve the next request
            if not busy:
                break
            time.sleep(0.002)
            busy = min(busy, runnable_elsewhere() or 0)
        want = max(1, min(usable_cores(), (os.cpu_count() or 1) - (busy or 0)))
    if want != _threads:
        _openblas.openblas_set_num_threads(ctypes.c_int(want))
        _threads = want
    return int(_openblas.openblas_get_num_threads())
