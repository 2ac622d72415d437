"""What of a ledger a reader can use: files relative to the working folder and each named once,
nothing that is not a file, and the commands that tell something.

A batch span of a real session reads dozens of files through absolute paths, mentions
library names and URL routes in prose, and runs `ls`, `cat` and `bd show` between the commands
that matter; listed as they come, they bury the few entries an agent needs to carry on.
"""

from __future__ import annotations

import re

from .shell_words import EDITOR_COMMAND, HEREDOC_START, PACKAGE_INSTALL, read_only, without_heredocs
from .vocabulary import SCRIPT_COMMENT, SPECIAL_FILES
from .workfolder import relative, scratch

COMMENT_CHARS = 120  # a script's comment shown beside its first line, at most

ACTION_RANK = {"mentioned": 0, "read": 1, "edited": 2, "created": 3, "deleted": 3}
_CHANGES = re.compile(
    PACKAGE_INSTALL.pattern
    + r"|\bgit (?:add|commit|push|checkout|merge|rebase|apply|reset|stash)\b|\bsed -i\b|\bpatch\b|\b(?:mv|cp|rm) "
)
_RECEIVER = re.compile(r"^(?:self|this|cls|super)\.[a-z_]")
_FS_ROOTS = ("/home/", "/Users/", "/tmp/", "/etc/", "/var/", "/opt/", "/usr/", "/srv/", "/root/", "/mnt/", "/testbed/")


def path_shaped(p: str) -> bool:
    """A path named only in prose must look like one: a file name with an extension or a
    known special name, or a rooted path; `Update/create`, `compile/test` are words. A rooted
    name without an extension is a folder only under a filesystem root we know
    (`/api/hooks/commit-event` is a route)."""
    last = p.rstrip("/").rsplit("/", 1)[-1]
    if _RECEIVER.match(p):
        return False  # `self.env`, `this.state`: an attribute, not a file
    if re.search(r"\.[A-Za-z][\w]{0,9}$", last) or last in SPECIAL_FILES:
        return True
    return p.startswith(("~/", "./", "../")) and p.count("/") >= 2 or p.startswith(_FS_ROOTS)


_DOT_STEPS = re.compile(r"^(?:\.\.?/)+")
# a user's mention of a file (Cursor's and Claude Code's `@src/a.cs`): that file, when it is listed too
_MENTIONED = re.compile(r"^@(?=[\w.\-]+/)")


def _names_same_file(q: str, p: str, bare: dict[str, str]) -> bool:
    """`q` names the file `p` names, better: a longer path ending in it (`assets/js/app.js` for
    `js/app.js`, `src\\refresh\\refresh.ts` for `refresh.ts`), or the same one without `../` steps
    (`lib/a.ex` for `../lib/a.ex`). `bare` holds each path with `/` for Windows's `\\` and without
    its leading `./` and `../` steps (made once, not per pair)."""
    bq, bp = bare[q], bare[p]
    return bq.endswith("/" + bp) or bq == bp and q.replace("\\", "/") == bq


def tidy_files(files: dict, root: str = "", keep: int | None = 30) -> dict:
    """Paths relative to `root`, each file once (a bare name or tail of a listed path is that
    path, with the stronger of their actions: `_each_file_once`), no folders listed or scratch
    files read; past `keep`, every changed file and the latest of the others."""
    out: dict = {}
    for p, a in files.items():
        p = relative(p, root)
        p = p[2:] if p.startswith("./") and len(p) > 2 else p
        if a == "mentioned" and not path_shaped(p) or p.strip("./") == "" or p.rstrip("/\\") == root:
            continue
        if a in ("read", "mentioned") and (scratch(p) or not path_shaped(p) and "." not in p.rsplit("/", 1)[-1]):
            continue  # a folder listed, a scratch file read: not a file of the work
        old = out.get(p)
        if old is None or ACTION_RANK.get(a, 0) > ACTION_RANK.get(old, 0):
            out[p] = a
    changed = [p for p, a in out.items() if a in ("edited", "created", "deleted")]
    others = [p for p in out if p not in changed]
    room = len(others) if keep is None else max(0, keep - len(changed))
    kept = set(changed) | set(others[max(0, len(others) - room) :] if room else [])
    return _each_file_once({p: a for p, a in out.items() if p in kept})


def _each_file_once(out: dict) -> dict:
    """`out` (path -> action, oldest first) with each bare name or tail of a listed path folded
    into that path at the later place, with the stronger action: an edit tool given `refresh.ts`
    edited the `src\\refresh\\refresh.ts` another tool read, and the path had stayed "read" while
    the edit went with the bare name. The same path spelled two ways (`../lib/a.ex`, `lib\\a.ex`,
    a user's `@lib/a.ex`) is one; a name two paths end in (`x.py` for `a/x.py` and `b/x.py`) goes
    unless it says more than they do (edited where they were read), and then stays as it is."""
    bare = {p: _DOT_STEPS.sub("", p.replace("\\", "/")) for p in out}
    listed = set(bare.values())
    for p in out:  # a mention of a path listed as it is: that path (not an npm scope's own path)
        if _MENTIONED.match(bare[p]) and bare[p][1:] in listed:
            bare[p] = bare[p][1:]
    spelled: dict[str, str] = {}  # one spelling per path: the one without `../` steps, else the first
    for p in out:
        if bare[p] not in spelled or p.replace("\\", "/") == bare[p] != spelled[bare[p]].replace("\\", "/"):
            spelled[bare[p]] = p
    by_name: dict[str, list[str]] = {}
    for b in spelled:
        by_name.setdefault(b.rsplit("/", 1)[-1], []).append(b)

    def wholes(b: str) -> list[str]:  # the longest paths `b` is a tail of
        longer = [a for a in by_name[b.rsplit("/", 1)[-1]] if a.endswith("/" + b)]
        return [a for a in longer if not any(c.endswith("/" + a) for c in longer)]

    folded: dict = {}
    for p, a in out.items():
        tops = wholes(bare[p])
        if len(tops) > 1 and all(ACTION_RANK.get(a, 0) <= ACTION_RANK.get(out[spelled[t]], 0) for t in tops):
            continue  # `x.py` of `a/x.py` and `b/x.py`, saying no more than they do: both are listed
        to = spelled[tops[0]] if len(tops) == 1 else spelled[bare[p]]
        was = folded.pop(to, a)
        folded[to] = a if ACTION_RANK.get(a, 0) > ACTION_RANK.get(was, 0) else was
    return folded


def _tells(c) -> int:
    """What a command tells: a result or a failure (2), a change to the environment (1: installs,
    commits, edits), or nothing more than that it ran (0)."""
    if c.outcome or any(s not in (0, None) for s in c.statuses):
        return 2
    return 1 if _CHANGES.search(c.cmd) else 0


def one_line(text: str) -> str:
    """A multi-line command as the summary shows it: its first line, the script's first comment
    (what it is for: `# Reproduce the exact code path ...`) when the first line is none, and
    how many lines the rest holds."""
    if "\n" not in text:
        return text
    first, *rest = text.splitlines()
    said = (
        next((m.group(1) for m in map(SCRIPT_COMMENT.match, rest) if m), "") if not SCRIPT_COMMENT.match(first) else ""
    )
    note = f" … # {said[:COMMENT_CHARS]}" if said else ""
    # what runs once a here-document is written (`cat > t.sql <<'EOF'` … `EOF`, then `sqlfluff fix t.sql`)
    ran = without_heredocs(text).splitlines()[1:] if HEREDOC_START.search(first) else []
    then = next((x.strip() for x in ran if re.search(r"[A-Za-z]{2}", x)), "")
    then = f" … {then[:COMMENT_CHARS]}" if then else ""
    return f"{first}{note}{then} (+{len(rest)} more lines)"


def _one_per_line(commands: list) -> list:
    """Commands that read the same in the summary (nine `python3 - <<'PY' (+6 more lines)`) are one
    line: the latest, unless an earlier one tells more."""
    best: dict[str, int] = {}
    for i, c in enumerate(commands):
        shown = one_line(c.cmd)
        j = best.get(shown)
        if j is None or _tells(c) >= _tells(commands[j]):
            best[shown] = i
    return [c for i, c in enumerate(commands) if best[one_line(c.cmd)] == i]


def tidy_commands(commands: list, keep: int | None = 24) -> list:
    """Read-only and editor commands with nothing to tell go (Files shows what an edit changed);
    past `keep`, those that tell most, the latest first within each kind, in their order."""
    useful = [c for c in commands if _tells(c) == 2 or not (read_only(c.cmd) or EDITOR_COMMAND.match(c.cmd))]
    useful = _one_per_line(useful)
    if keep is None or len(useful) <= keep:
        return useful
    ranked = sorted(range(len(useful)), key=lambda i: (_tells(useful[i]), i), reverse=True)
    kept = set(ranked[:keep])
    return [c for i, c in enumerate(useful) if i in kept]
