"""The shell's words: what a command does to the files it names, read off the command alone.

Whether a command only reads (its output is what it read, so it has no result line unless it
failed), which file its first line edits, creates or deletes, what a patch's headers say it does,
whether a chain runs a step blind, and where a here-document's lines are. The one vocabulary's
shell half (`vocabulary` holds the rest and reads `read_only` from here), each written once.
"""

from __future__ import annotations

import re

# the programs that only read: it changes nothing, its output is what it read (no result unless it failed)
_READERS = (  # not a branch or remote made, moved or deleted (`git branch -D x`, `git remote add o u`)
    r"git (?:status|diff|log|show|ls-files|blame|reflog)|git branch(?!\s+(?:-[dDmMcCfu]\b|--(?:delete|move|copy|force|"
    r"set-upstream|unset-upstream)|[^-\s\d>&|;]))|git remote(?!\s+(?:add|remove|rm|rename|set-url|set-head|prune)\b)|"
    r"ls|pwd|cat|head|tail|echo|which|wc|tree|find|grep|rg|ag|fd|sed -n|awk|nl|bd (?:show|ready|list|update)|"
    r"gh (?:issue|pr) view|tail -\d+|less|more|file|stat|du|df|env|printenv|type|Get-Content|Select-String|"
    r"diff|cmp|lsof|ps|whoami|hostname|realpath|readlink|git rev-parse|strings|"
    # SWE-agent's interface: it opens, pages through and searches files with commands of its own
    r"open|goto|scroll_(?:up|down)|search_(?:dir|file)|find_file|filemap|str_replace_editor view"
)
# one read, or one after `cd X &&`, and not chained to anything that is not
READ_ONLY = re.compile(r"^(?!.*(?:&&.*&&|;|\|\||(?<![\d&])>\s*[\w./~$]))(?:cd \S+ && )?(?!.*&&)(?:" + _READERS + r")\b")
# a step of a chain that reads: a reader, a program asked for its help or version, a no-op
_READ_STEP = re.compile(r"^(?:(?:" + _READERS + r")\b|\S+(?: \S+)*? --?(?:help|version|h|V)$|(?:true|:|cd \S+)$)")
_WRITES = re.compile(
    r"(?<![\d&])>\s*[\w./~$]|\btee\b|\s-(?:delete|exec\w*)\b|\bsed -i\b"
    r"|\|\s*(?:sh|bash|zsh|sudo)\b|(?<![&>|])&(?![&>])"  # piped into a shell; a step sent to the background
)
_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")  # a quoted argument: what it holds is no shell syntax
# what a shell-only agent's command does to the file its first line names: edits it (the `patch` program, not
# git's `--patch`), or reads it. Unlike `_WRITES` (any write at all, so no read), an append (`>> log`) names no
# file it edits, and only the readers that print a file count (not `ls`, `find`, `git log`)
SHELL_EDIT = re.compile(
    r"\bsed -i\b|(?<![<>&2])>\s*[\w./]|\btee\b|(?<![\w-])patch\b|\bgit (?:checkout|apply|restore)\b|\b(?:mv|cp|touch)\s"
)
_PLACEHOLDER = re.compile(r"(?<=/)<[A-Z][A-Z0-9_]{0,30}>(?=/|$|\s)")  # anonymised `/home/<USER>/x`: no redirect
SHELL_READ = re.compile(
    r"^(?:cd \S+ && )?(?:cat|head|tail|sed -n|nl|less|more|grep|rg|wc|(?:str_replace_editor )?view|open|search_file)\b"
)
# what a shell command does to the files its first line names, first match wins: SWE-agent's
# `create x.py` and `str_replace_editor create|str_replace|insert /x`, a removal, then any edit or read
SHELL_FILE_ACTIONS = (
    ("created", re.compile(r"^(?:cd \S+ && )?(?:create|str_replace_editor create)\s")),
    ("deleted", re.compile(r"^(?:cd \S+ && )?(?:git )?rm\s[^;&|]*$")),  # a removal alone, not `rm x && cp x.bak x`
    ("edited", re.compile(r"^str_replace_editor (?:str_replace|insert|undo_edit)\s")),
    ("edited", SHELL_EDIT),
    ("read", SHELL_READ),
)


# what a patch does to each file, from its own headers, the path whole (spaces and all): Codex's
# apply_patch grammar (`*** Update File: x`) and its export's rendering (`**Delete: `x`**`), and a
# unified diff's side that is /dev/null (a file it creates or deletes)
PATCH_FILE_HEADERS = (
    ("created", re.compile(r"^\*\*\* Add File: (.+?)[ \t]*$|^\*\*Add: `([^`\n]+)`\*\*[ \t]*$", re.M)),
    ("deleted", re.compile(r"^\*\*\* Delete File: (.+?)[ \t]*$|^\*\*Delete: `([^`\n]+)`\*\*[ \t]*$", re.M)),
    (
        "edited",
        re.compile(
            r"^\*\*\* (?:Update File|Move to): (.+?)[ \t]*$|^\*\*(?:Update|Move to): `([^`\n]+)`\*\*[ \t]*$", re.M
        ),
    ),
    ("created", re.compile(r"^--- /dev/null[ \t]*\n\+\+\+ (?:b/)?(.+?)[ \t]*$", re.M)),
    ("deleted", re.compile(r"^--- (?:a/)?(.+?)[ \t]*\n\+\+\+ /dev/null[ \t]*$", re.M)),
)


def patch_file_actions(text: str) -> list[tuple[str, str]]:
    """(action, path) for each file a patch's headers name (PATCH_FILE_HEADERS), in its order."""
    found = [
        (m.start(), action, next(g for g in m.groups() if g))
        for action, pattern in PATCH_FILE_HEADERS
        for m in pattern.finditer(text or "")
    ]
    return [(action, path) for _, action, path in sorted(found)]


def shell_file_action(head: str) -> str:
    """What a shell command's first line does to the files it names (SHELL_FILE_ACTIONS), or ""."""
    head = _PLACEHOLDER.sub("_", head)
    return next((action for action, pattern in SHELL_FILE_ACTIONS if pattern.search(head)), "")


# SWE-agent's windowed editor: `edit 12:14`, `insert 5` and `append` change the file it has open,
# named only in what it prints back (`[File: /repo/x.py (33 lines total)]`), unless its linter
# turned the edit down ("Your changes have NOT been applied")
OPEN_FILE_EDIT = re.compile(r"^(?:edit \d+:\d+|insert \d+|append)\b")
OPEN_FILE_SHOWN = re.compile(r"^\[File: (\S[^\n]*?) \(\d+ lines total\)\]", re.M)
EDIT_NOT_APPLIED = re.compile(r"changes have NOT been applied|edit has introduced new syntax error", re.I)
# an editor's command run in the shell (SWE-agent's `create x.py`, `edit 12:14`, `str_replace_editor
# str_replace /x`): a change Files shows, not a run Commands needs unless it tells something
EDITOR_COMMAND = re.compile(r"^(?:create|str_replace_editor)\s|" + OPEN_FILE_EDIT.pattern)
# a step that runs whatever the one before it did (`a; b`, `a || b`, a script's next line, and `a |
# tail -5 && b`: the pipe's status is tail's): what b printed says nothing of a (`a && b` ran b only
# once a succeeded)
BLIND_STEP = re.compile(r";|\|\||\n|(?<!\|)\|(?!\|)[^;&|\n]*&&")
# a here-document's start (`python3 - <<'PY'`, `cat <<-EOF > x`, PowerShell's `$x = @'` here-string,
# which a line opening `'@` ends): its lines up to the delimiter are input
HEREDOC_START = re.compile(r"<<-?[ \t]*(['\"]?)(\w+)\1|@(['\"])[ \t]*$")
# a command that only prints its own here-document, nothing redirected or piped (`cat << 'EOF'` then a
# checklist or a summary: Claude Code's "IMPLEMENTATION COMPLETE", OpenCode's "=== COMPLETE … SYSTEM ===",
# a held-out OpenCode session's "✓ Created file: …"): what it printed is the command's own text, no result
_PRINTS_HEREDOC = re.compile(r"\A\s*cat[ \t]+<<-?[ \t]*(['\"]?)\w+\1[ \t]*(?:\n|\Z)")


def prints_own_text(cmd: str) -> bool:
    """A command that only prints the here-document it carries (_PRINTS_HEREDOC)."""
    return bool(_PRINTS_HEREDOC.match(cmd or ""))


def without_heredocs(cmd: str) -> str:
    """`cmd` less its here-documents' lines (one pass over the lines: no pattern backtracks over a
    script of thousands of `<<x` lines)."""
    out, end = [], None
    for line in cmd.split("\n"):
        if end is not None:
            done = line.strip() == end if end[-1] != "@" else line.lstrip().startswith(end)
            end = None if done else end
            continue
        out.append(line)
        if m := HEREDOC_START.search(line):
            end = m.group(2) or m.group(3) + "@"
    return "\n".join(out)


def blind_step(cmd: str) -> bool:
    """A chain with a step that runs whatever the one before it did (BLIND_STEP), a here-document's
    lines aside (`a && python3 - <<'PY'` … `PY` ran the script only once a passed), and a quoted
    argument's (`python -c 'import stripe; print(stripe.VERSION)'` is one step)."""
    return bool(BLIND_STEP.search(unquoted(cmd)))


def unquoted(cmd: str) -> str:
    """`cmd` as the shell parses it into steps: less its here-documents' lines and what its quotes hold."""
    return _QUOTED.sub("''", _INNER_SHELL.sub(r"\1 \3", without_heredocs(cmd)))


# the command string a shell, `su` or `ssh` runs (`docker compose exec api sh -c "npm test | tail -4"`, `ssh host
# 'cd app && make'`): its `|` and `;` are steps, not data
_INNER_SHELL = re.compile(
    r"(\b(?:(?:ba|z|da|k)?sh|su)(?:\s+-[\w-]+)*?\s+-\w*c|\bssh(?:\s+-\S+)*\s+[\w.@-]+)\s+(['\"])([^\n]*?)\2"
)


def read_only(cmd: str) -> bool:
    """A command that only reads: one reader (READ_ONLY), or a chain (`&&`, `||`, `;`) whose every
    step's first program reads (`which jb && jb --help`, `ls -la ~/.dotnet/tools || true`), with
    nothing written to a file; a script of several lines whose every line reads, once the lines that
    only set the shell up are left aside (`set -e`, `BIN=/x/codex`, then `file "$BIN"` and `strings
    "$BIN" | grep …`: a binary's strings had been read as errors). A here-document's is not."""
    cmd = _PLACEHOLDER.sub("_", (cmd or "").strip())
    if "\n" in cmd and HEREDOC_START.search(cmd):
        return False
    if not cmd or _WRITES.search(_QUOTED.sub("''", cmd)):  # `grep '&amp;' x`: a quote's `&` is no syntax
        return False
    cmd = re.sub(r"\\\n\s*", " ", cmd)  # a line continued is one line
    if "\n" in cmd:  # a script: each line a step, less the lines that only set the shell up
        lines = [ln.strip() for ln in cmd.splitlines()]
        cmd = "; ".join(ln for ln in lines if ln and not ln.startswith("#") and not _SHELL_SETUP.match(ln))
        if not cmd:
            return False
    elif READ_ONLY.match(cmd) and _xargs_read(cmd):
        return True
    steps = [p.strip() for p in re.split(r"&&|\|\||;", cmd)]
    return all(step and _READ_STEP.match(step.split("|")[0].strip()) and _xargs_read(step) for step in steps)


_XARGS_VALUED = frozenset({"-n", "-I", "-P", "-L", "-d", "-E", "-s", "-a"})  # xargs's options that take a value


def _xargs_read(step: str) -> bool:
    """A step whose `| xargs` runs a reader (`find … | xargs wc -l`), or no xargs at all (`| xargs rm`
    removes what the read found)."""
    for stage in step.split("|")[1:]:
        words = stage.split()
        if not words or words[0] != "xargs":
            continue
        i = 1
        while i < len(words) and words[i].startswith("-"):
            i += 2 if words[i] in _XARGS_VALUED else 1
        if i < len(words) and not _READ_STEP.match(" ".join(words[i:])):
            return False
    return True


# a script's line that only sets the shell up: `set -euo pipefail`, a plain assignment (`BIN=/x/codex`;
# not one that runs something, `TMP=$(mktemp -d)`)
_SHELL_SETUP = re.compile(r"^(?:set [-+][a-zA-Z]+(?: [-+]?[a-zA-Z]+)*|(?:export )?[A-Za-z_]\w*=[^\s$`;&|]*)$")


# an HTTP client (curl, wget, PowerShell's) as a step's program: what it prints is what a server sent
_HTTP_CLIENT = re.compile(r"^(?:sudo )?(?:curl|wget|Invoke-WebRequest|Invoke-RestMethod|iwr|irm)\b")


def fetches_web(cmd: str) -> bool:
    """A command whose every step (a `cd` and a pipe's filters aside) is an HTTP client: the links in its
    output are the page's (an HTML page's RDF namespaces, a response's CSP hosts), never ones the work
    used; its own URL is the command's. Another step prints its own (`npx wrangler deploy && curl …/health`:
    the deployed URL is the work's), and a script's lines are no steps."""
    steps = [s.strip() for s in re.split(r"&&|\|\||;|\n", without_heredocs(cmd or "")) if s.strip()]
    steps = [s for s in steps if not s.startswith("cd ")]
    return bool(steps) and all(_HTTP_CLIENT.match(s) and not _SENDS.search(s) for s in steps)


# a request that sends (`curl -X POST …/pulls -d '{…}'`, `-F`, `-T`, PowerShell's `-Method Post`): what it answers
# is what the work made (a PR's `html_url`, a deploy's `url`), never a page read
_SENDS = re.compile(
    r"\s(?:-X\s*|--request\s+|-Method\s+)(?:POST|PUT|PATCH|DELETE)\b|\s(?:-d|--data(?:-\w+)?|-F|--form|-T|--upload-file|-Body)(?:\s|=)",
    re.I,
)


# a package manager installing by name (`pip install asgiref -q`, `npm i zod`, `brew install jq`)
PACKAGE_INSTALL = re.compile(
    r"\b(?:pip3?|uv(?: pip)?|npm|pnpm|yarn|bun|cargo|go|gem|mix|apt(?:-get)?|brew|poetry|conda) (?:install|add|get|deps\.get|i)\b"
)
# an error that says what is missing by name (`No module named 'asgiref'`, `jq: command not found`, node's
# `Cannot find module 'zod'`): an install naming it is its fix
MISSING_NAME = re.compile(
    r"No module named '?(?P<module>[\w-]{1,100})|(?<![\w.+-])(?P<program>[\w.+-]{1,100}): command not found"
    r"|command not found: (?P<cmd>[\w.+-]{1,100})|Cannot find (?:module|package) '(?P<package>[@\w/.-]{1,200})'"
)


_INSTALL_LEAD = re.compile(r"^(?:(?:sudo|[A-Z_]+=\S*|python3?(?:\.\d+)? -m|uv run)\s+)*")


def installs_missing(passing: str, error: str) -> bool:
    """A command whose install step (PACKAGE_INSTALL) names, among its own arguments, what an `error` said
    was missing (MISSING_NAME): `pip install asgiref -q` fixed `No module named 'asgiref'` (mini-swe-agent's
    django, astroid and marshmallow sessions); `cd backend && pip install -r requirements.txt` installs no
    module `backend`."""
    if not PACKAGE_INSTALL.search(passing):
        return False
    missing = MISSING_NAME.search(error)
    if not missing:
        return False
    name = next(x for x in missing.groups() if x)
    for step in re.split(r"&&|\|\||;|\||\n", without_heredocs(passing)):
        # the step's own program (a Dockerfile's `RUN pip install` written by `cat <<EOF`, a `grep "npm install x"`
        # install nothing)
        step = _INSTALL_LEAD.sub("", step.strip())
        install = PACKAGE_INSTALL.match(step)
        if install and re.search(rf"(?<![\w@/.-]){re.escape(name)}(?![\w/-])", step[install.end() :]):
            return True
    return False
