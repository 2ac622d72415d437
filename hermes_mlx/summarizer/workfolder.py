"""The folder an agent works in, found from what its session shows, so that Files can state it
once and list each path relative to it (`/home/marco/projects/spotter/mix.exs` beside `mix.lock`
reads as two projects).

Agents show it differently: Claude Code's prompt says `Working directory: /x`, Codex wraps
`<cwd>/x</cwd>` in a user turn, Codex's and Hermes's shell tools take a `workdir`/`cwd`
argument, many agents prefix commands with `cd /x &&`, and Cursor, Gemini CLI and Copilot
show it only through the absolute paths their file tools are given. Each is read here, strongest
first; shapes live in harness.py.
"""

from __future__ import annotations

import re
from collections import Counter

from .harness import CD_PREFIX, CWD_KEYS, CWD_STATED, HARNESS_STORE, HOME_DIR, SOURCE_DIRS, TEMP_DIR
from .shell_words import read_only
from .text import Turn
from .vocabulary import FILE_KEYS, tool_action

_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


def _posix(p: str) -> str:
    """`C:\\a\\b` as `/C:/a/b` (VS Code's own spelling), so one rule reads every path."""
    return "/" + p.replace("\\", "/") if _DRIVE.match(p) else p


def _native(folder: str, like: str) -> str:
    """`folder` (posix form) spelled as the session spells `like` (`C:\\a` for Windows paths)."""
    return folder[1:].replace("/", "\\") if _DRIVE.match(like) and "\\" in like else folder


def scratch(p: str) -> bool:
    """A path in a system's folder for temporary files (TEMP_DIR), in any spelling, or in a harness's
    store of the outputs it saved (HARNESS_STORE): a harness's or a script's scratch output, no file
    of the work and no sign of where the work is."""
    posix = _posix(p).replace("\\", "/")
    return bool(TEMP_DIR.match(posix) or HARNESS_STORE.search(posix))


def rooted(p: str) -> bool:
    """An absolute path, in any spelling: `/x`, `~/x`, `C:\\x`."""
    return p.startswith(("/", "~/")) or bool(_DRIVE.match(p))


def _deep_enough(folder: str) -> bool:
    """A root is at least two folders deep (`/testbed` only by a `cd`), or below a home folder."""
    return folder.count("/") >= 2 or folder.startswith("~/")


def _project_root(folder: str) -> str:
    """The folder above the first source folder (`lib`, `src`, `test` …) on the way down, past
    the home folder and one folder more: `/home/u/p/lib/a` is `/home/u/p`, `/home/u/src/p` stays."""
    home = HOME_DIR.match(folder)
    start = home.end() if home else 0
    parts = folder[start:].split("/")  # "", then the folders below the home (or the filesystem root)
    for k in range(2, len(parts)):
        if parts[k] in SOURCE_DIRS:
            return folder[:start] + "/".join(parts[:k])
    return folder


def _below_home(folder: str) -> bool:
    """A folder inside a home folder and no hidden one on the way (`~/.claude/plans` holds no project)."""
    home = HOME_DIR.match(folder)
    rest = folder[home.end() :].strip("/").split("/") if home else []
    return bool(home) and bool(rest[0]) and not any(x.startswith(".") for x in rest)


def _settings_folder(folder: str) -> bool:
    """A hidden folder right under a home folder, or inside one: a program's settings and notes
    (`~/.claude` with the user's CLAUDE.md, `~/.hermes` with its config and logs), no project."""
    posix = _posix(folder)
    home = HOME_DIR.match(posix)
    return bool(home) and posix[home.end() :].lstrip("/").startswith(".")


def working_folder(turns: list[Turn], known: str = "", stated: str | None = None) -> str:
    """The folder the agent works in ("" when unclear), strongest evidence first: a stated one
    (a system or user turn's `Working directory: /x`, `<cwd>/x</cwd>`); the folder most used by
    `cd DIR &&` prefixes and `cwd`/`workdir` arguments, unless the files it works on lie
    elsewhere; the deepest folder that holds at least 60% of the absolute paths its file tools
    were given (those in a temporary folder only when no other: `scratch`), taken up to the
    project's root. One path alone tells it only when no folder is `known` (an earlier pass stated
    one) and it lies below a home folder. `stated`: `stated_folder(turns)`, when the caller has it."""
    stated = stated_folder(turns) if stated is None else stated
    ran, paths = Counter(), []
    for t in turns:
        for call in t.tool_calls:
            m = CD_PREFIX.match(call.text or "")
            if m:
                ran[m.group(2).rstrip("/\\")] += 1
            for key in CWD_KEYS:
                v = call.arguments.get(key)
                if isinstance(v, str) and rooted(v.strip()):
                    ran[v.strip().rstrip("/\\")] += 1
            for key in FILE_KEYS:
                v = call.arguments.get(key)
                if isinstance(v, str) and rooted(v) and "\n" not in v:
                    paths.append(v)
    if stated:
        return stated.rstrip("/\\")
    paths = [p for p in paths if not scratch(p)] or paths  # a harness's scratch output, beside the work
    posix = [_posix(p) for p in paths]
    best = _covering(posix)
    if not best and len(posix) == 1 and not known and not ran:
        folder = posix[0].rsplit("/", 1)[0]
        best = _project_root(folder) if _below_home(folder) else ""
    if ran:  # `cd DIR &&`, unless the files it works on lie elsewhere
        folder, n = ran.most_common(1)[0]
        covered = sum(p.startswith(_posix(folder) + "/") for p in posix)
        if n >= 2 and covered >= 0.6 * len(posix) or not best:
            return _as_paths_spell(folder, paths)
    return _native(best, paths[0]) if best else ""


def stated_folder(turns: list[Turn]) -> str:
    """The working folder a system or user turn, or a tool's context block, states last (`Working
    directory: /x`, `<cwd>/x</cwd>`); "" when none does."""
    stated = ""
    for t in turns:
        said = f"{t.text or ''}\n{t.context}" if t.role in ("system", "user") else t.context  # a tool's: its blocks
        for m in CWD_STATED.finditer(said):
            stated = (m.group(1) or m.group(2) or m.group(3)).strip()
    return stated


def _as_paths_spell(folder: str, paths: list[str]) -> str:
    """A drive folder a shell `cd` named (`cd "c:\\a"`, `cd C:/a`) spelled as the file tools spell
    paths under it (VS Code's `/c:/a/b.ts`, `C:\\a\\b.ts`), so they are made relative to it; any
    other folder as it was named."""
    if not _DRIVE.match(folder):
        return folder
    posix = _posix(folder).rstrip("/")
    for p in paths:
        if _posix(p).lower().startswith(posix.lower() + "/"):  # `/c:/a` and `C:\a` alike, in either case
            return p[: len(posix)] if p.startswith("/") else p[: len(posix) - 1]
    return folder


def _covering(paths: list[str]) -> str:
    """The deepest folder holding at least 60% of `paths` (two or more), taken up to the
    project's root: a root holds its lib/, src/, test/ (one path alone would make its own
    folder the root)."""
    counts: Counter = Counter()
    for p in paths:
        parts = p.split("/")[:-1]
        for k in range(2, len(parts) + 1):
            counts["/".join(parts[:k])] += 1
    covering = [f for f, n in counts.items() if len(paths) >= 2 and n >= 0.6 * len(paths) and _deep_enough(f)]
    held = [f for f in covering if f.rsplit("/", 1)[-1] not in SOURCE_DIRS and _holds_source(f, paths)]
    best = max(held or covering, key=len, default="")
    while best.rsplit("/", 1)[-1] in SOURCE_DIRS:  # reading only tests/ does not make it the root
        best = best.rsplit("/", 1)[0]
    return _project_root(best) if best else ""


def above_given(folder: str, given: list[str]) -> str:
    """`folder`, or the folder above it that relative paths the agent was given start from: a path that
    begins with two of `folder`'s own folders was written from above them. A Cursor session's one read of
    `/p/references/tech/lessons/2.5_Exercises.txt` had made that folder the root, while its edits of
    `references/tech/course_log.md` (relative, as the agent gave them) show the agent works in `/p`.
    `relative` reads a monorepo's git paths by the same rule, from the root's last folders only; a path
    that starts in a source folder (`src/pkg/x.py`) may be a src layout's own, and moves nothing."""
    if not folder:
        return folder
    posix = _posix(folder).rstrip("/") + "/"
    for p in given:
        parts = p.replace("\\", "/").split("/")[:-1]
        if len(parts) < 2 or rooted(p) or parts[0] in SOURCE_DIRS:  # `src/pkg/x.py` is a src layout's own
            continue
        at = posix.rfind("/" + "/".join(parts[:2]) + "/")  # the nearest: the least move
        if at > 0 and _deep_enough(posix[:at]):
            posix = posix[:at] + "/"
    return folder if posix == _posix(folder).rstrip("/") + "/" else _native(posix.rstrip("/"), folder)


def _holds_source(folder: str, paths: list[str]) -> bool:
    return any(p.startswith(folder + "/") and p[len(folder) + 1 :].split("/", 1)[0] in SOURCE_DIRS for p in paths)


def settle(known: str, found: str, stated: bool = False) -> str:
    """The working folder after a pass: the one an earlier pass stated stays unless this span
    shows one outside it (a folder inside the project is no new root), and not for a temporary
    folder (a span that only read a background task's output there) nor, unless the span states
    it (`stated`), a program's settings folder (a span whose one edit was the user's
    `~/.claude/CLAUDE.md` had made every file of the project an absolute path)."""
    if not known or not found:
        return known or found
    inside = _posix(found).startswith(_posix(known).rstrip("/") + "/") or found == known
    aside = scratch(found + "/") and not scratch(known + "/") or _settings_folder(found) and not stated
    return known if inside or aside else found


def relative(path: str, root: str) -> str:
    """`path` relative to `root` when it lies inside it (either separator; a `~/` root spelled out
    under a home folder too), else as it was. A
    relative path that starts with the root's last two folders or more was written from a folder
    above it (git's paths in a monorepo, `projects/app/src/a.ts` for `/u/repo/projects/app`):
    it is the same file, `src/a.ts`."""
    if not root:
        return path
    sep = "\\" if "\\" in root else "/"
    prefix = root.rstrip(sep) + sep
    if path.startswith(prefix) and len(path) > len(prefix):
        return path[len(prefix) :]
    # a drive's path in another spelling (`c:/a/b` under `/c:/a`)
    drive, posix = _posix(root).rstrip("/") + "/", _posix(path)
    if posix.lower().startswith(drive.lower()) and _DRIVE.match(drive[1:]) and len(posix) > len(drive):
        rest = posix[len(drive) :]
        return rest.replace("/", "\\") if "\\" in path else rest
    home = HOME_DIR.match(path) if root.startswith("~/") else None
    if home and home.group(0) != "~":  # `~/x` spelled out (Hermes's file tools: `/home/teknium/x/TODO.md`)
        prefix = home.group(0) + prefix[1:]
        if path.startswith(prefix) and len(path) > len(prefix):
            return path[len(prefix) :]
    if not rooted(path):
        folders = root.rstrip(sep).split(sep)
        for k in range(len(folders) - 1, 1, -1):  # the longest tail first, down to two folders
            tail = sep.join(folders[-k:]) + sep
            if folders[-k] not in SOURCE_DIRS and path.startswith(tail) and len(path) > len(tail):
                return path[len(tail) :]  # (`src/pkg/a.py` under `~/src/pkg` is the src layout's own)
    return path


def absolute(path: str, root: str) -> str:
    """A relative `path` as the absolute path under `root` it stands for."""
    if not root or rooted(path):
        return path
    sep = "\\" if "\\" in root else "/"
    return root.rstrip(sep) + sep + (path.replace("/", "\\") if sep == "\\" else path)


def relative_label(label: str, root: str) -> str:
    """A file tool's call as Errors names it (`patch /home/u/app/src/c.py`: extract.tool_label) with its
    path as Files says it, relative to the working folder; a shell command stays as it ran (`cat /x/a.log`)."""
    name, _, path = label.partition(" ")
    if not root or not path or " " in path or not rooted(path) or read_only(label):
        return label
    if tool_action(name, {}) not in ("edited", "created", "deleted", "read"):
        return label
    return f"{name} {relative(path, root)}"
