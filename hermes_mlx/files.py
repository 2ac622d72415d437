"""Replacing a user's file (a transcript, Hermes's config.yaml) without ever replacing something else.

Why: an atomic write renames a temporary file over the path, and a rename replaces whatever the
path names. Given a symlink it would turn the link into a file and leave its target (the real
config) untouched; given /dev/null or a FIFO it would replace the device node itself (as root).
So a write first follows symlinks to the file they name, refuses anything that is neither a
regular file nor absent, and only then renames, in the target's own folder. Lives at the package
root because every layer writes files and this imports nothing of ours but errors.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

from hermes_mlx.errors import UsageError

_KINDS = {
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a directory",
}


class NotAFileTarget(UsageError, OSError):
    """The path names something that is not a regular file (a device, a FIFO, a folder) or
    cannot be looked at. An OSError too, so callers that report write failures still catch it;
    a UsageError because it is found before any work (exit 2)."""


def write_target(path: str | Path, what: str = "") -> Path:
    """The file a write to `path` would change: symlinks followed to their final target, which
    must be a regular file or absent (a dangling link is fine: the write creates its target).
    NotAFileTarget otherwise, naming the path and what it is."""
    label = f"{what} {path}" if what else str(path)
    real = Path(os.path.realpath(path))
    try:
        info = os.stat(real)
    except FileNotFoundError:
        return real
    except OSError as exc:  # a symlink loop, a component that is not a folder, no permission
        raise NotAFileTarget(f"{label}: cannot be written: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        kind = _KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file")
        via = f" (through a link to {real})" if real != Path(os.path.abspath(path)) else ""
        raise NotAFileTarget(f"{label} is {kind}{via}; only a regular file (or a new one) can be written")
    return real


def atomic_write(
    path: str | Path,
    fill: Callable[[IO[str]], None],
    *,
    new_mode: int | None = None,
    what: str = "",
) -> Path:
    """Write `path` through `fill(fh)` (a text file, UTF-8) so that it is either the old file or
    the whole new one: a temporary file beside the real target, fsynced, renamed over it. A
    symlink stays a link and its target gets the content; an existing file keeps its mode; a
    new one gets `new_mode` (default: what the umask allows). Nothing is left behind on failure.
    Returns the file written."""
    real = write_target(path, what)
    try:
        mode = os.stat(real).st_mode & 0o7777
    except FileNotFoundError:
        mode = new_mode if new_mode is not None else 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            os.fchmod(fh.fileno(), mode)
            fill(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, real)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_folder(real.parent)
    return real


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable; some file systems cannot open a folder, which is fine."""
    try:
        dir_fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
