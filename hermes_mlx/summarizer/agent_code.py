"""The code the agent shows in its prose and writes in its edits: the lines likely to be needed
verbatim later (a setting, a dependency, a name it declared), never a phrase in backticks, a
placeholder, or a line whose secret was cut out. `absorb` lists them among the Identifiers."""

from __future__ import annotations

import re

from .extract import URL, uncut
from .secret_words import REDACTED, looks_random
from .vocabulary import CODE_SNIPPET, EDIT_NEW_KEYS, EDIT_OLD_KEYS, FILE_KEYS

# a fenced block this short is a line or two the agent shows (`export CUDA_HOME=...`, the dep to add),
# not a file or a patch: each of its code lines is a name worth carrying
SHOWN_BLOCK_LINES = 4


CODE_LINE_CHARS = 120  # a line of code an identifier may be: `const recognizer = await pipeline('image-to-text', …)`


def code_names(text: str, exclude: set = frozenset(), limit: int = 12) -> list[str]:
    """Code the assistant singled out, in the order it wrote it, so likely to be needed verbatim
    later: short inline-code spans (`ROUND_HALF_UP`, `retry_async`, `httpx>=0.23,<0.28`), a span
    with spaces that is a line of code or a setting (`autoSkip: false`, `or getattr(opts, NAME)`:
    CODE_SNIPPET), and the code lines of a fenced block of at most SHOWN_BLOCK_LINES. Never a
    phrase in backticks (`the config file`) or a placeholder (`{:ok, ...}`)."""
    text = uncut(text or "")
    found: list[tuple[int, str]] = []
    for block in re.finditer(r"```[^\n]*\n(.*?)```", text, flags=re.S):
        lines = [ln.strip().lstrip(">").strip() for ln in block.group(1).splitlines()]
        lines = [ln for ln in lines if ln]
        if len(lines) <= SHOWN_BLOCK_LINES:
            found += [(block.start(), ln) for ln in lines if len(ln) <= CODE_LINE_CHARS and _snippet(ln)]
    prose = re.sub(r"```.*?(?:```|$)", lambda m: " " * len(m.group(0)), text, flags=re.S)
    for m in re.finditer(r"(?<!`)`([^`\n]{3,120})`(?!`)", prose):
        name = m.group(1).strip()
        if re.search(r"\s", name):
            if _snippet(name):
                found.append((m.start(), name))
        elif re.search(r"[_.:/=<>~\d\[\]()-]|[a-z][A-Z]|^[A-Z]{2,}$", name):  # not a plain word (`taxes`)
            found.append((m.start(), name))
    out: list[str] = []
    for _, name in sorted(found, key=lambda f: f[0]):
        if name not in exclude and name not in out and re.search(r"[A-Za-z]", name) and not URL.match(name):
            out.append(name)
    return out[:limit]


ADDED_LINES = 2  # an edit that adds this many lines or fewer: each is code the agent wrote


def added_code(args: dict, action: str = "") -> list[str]:
    """The lines of code a short edit adds (its new text's lines its old text lacks), when it adds
    at most ADDED_LINES: the dependency a one-line edit puts in `mix.exs` is code the agent wrote,
    as a short block it shows is (`code_names`). A longer edit's lines are the file's but for the
    names it declares (`_declares`, DECLARED_LINES at most), and a line whose secret was cut out
    says nothing. The new and old text are an edit's own fields (EDIT_NEW_KEYS), else what a patch
    or diff argument adds and takes away (`_patch_sides`: Codex's apply_patch, Cline's and Roo Code's
    SEARCH/REPLACE, a unified diff), else a new file's text (`action` "created": WRITE_KEYS)."""
    new = next((args[k] for k in EDIT_NEW_KEYS if isinstance(args.get(k), str)), None)
    old = next((args[k] for k in EDIT_OLD_KEYS if isinstance(args.get(k), str)), "")
    if new is None:
        new, old = _patch_sides(args)
    if new is None and action == "created":
        new = next((args[k] for k in WRITE_KEYS if isinstance(args.get(k), str)), None)
    if new is None:
        return []
    added = [ln.strip() for ln in _new_lines(new, old).splitlines() if ln.strip()]
    longer = len(added) > ADDED_LINES
    kept = [
        ln
        for ln in added
        if len(ln) <= CODE_LINE_CHARS
        and REDACTED not in ln
        and (_snippet(ln) or _declares(ln))  # `class CactusAdapter:` names what it makes
        and (_whole_line(ln) or _declares(ln) and _whole_line(ln[:-1]) and ln.endswith("{"))  # `interface X {`
        and (not longer or _declares(ln))
    ]
    return kept[:DECLARED_LINES] if longer else kept


WRITE_KEYS = ("content", "file_text", "contents", "code")  # a write tool's whole new text
_SEARCH_REPLACE = re.compile(r"^<{5,9} SEARCH[^\n]*\n(.*?)^={5,9}[ \t]*\n(.*?)^>{5,9} REPLACE", re.S | re.M)
_DIFF_LINE = re.compile(r"^([+-])(?![+-]{2} )(.*)$", re.M)  # `+line`, `-line`, not `+++ b/x` / `--- a/x`


def _patch_sides(args: dict) -> tuple[str | None, str]:
    """(what a patch or diff argument adds, what it takes away); (None, "") when no argument is one."""
    for value in args.values():
        if not isinstance(value, str) or "\n" not in value:
            continue
        blocks = _SEARCH_REPLACE.findall(value)
        if blocks:
            return "\n".join(b[1] for b in blocks), "\n".join(b[0] for b in blocks)
        lines = _DIFF_LINE.findall(value)
        if lines and (
            "\n@@" in value or value.lstrip().startswith(("@@", "*** Begin Patch", "--- ", "diff --git", "```diff"))
        ):
            return "\n".join(t for s, t in lines if s == "+"), "\n".join(t for s, t in lines if s == "-")
    return None, ""


# where a patch's part for one file starts: Codex's apply_patch header, a unified diff's new side
_FILE_PART = re.compile(r"^(?:\*\*\* (?:Add|Update) File: |\+\+\+ (?:b/)?)(.+?)[ \t]*$", re.M)


def added_by_file(args: dict, action: str = "") -> list[tuple[str, str]]:
    """(file, the text an edit adds to it) for each file an editing call writes: an edit's new text
    less the lines its old text had (`_new_lines`), a new file's whole text (`action` "created"), or
    each file's added lines in a patch that names them (`*** Update File: docs/spec.md`, `+++ b/README.md`)."""
    path = next((args[k] for k in FILE_KEYS if isinstance(args.get(k), str)), "")
    new = next((args[k] for k in EDIT_NEW_KEYS if isinstance(args.get(k), str)), None)
    old = next((args[k] for k in EDIT_OLD_KEYS if isinstance(args.get(k), str)), "")
    if new is None and action == "created":
        new = next((args[k] for k in WRITE_KEYS if isinstance(args.get(k), str)), None)
    if path and new is not None:
        return [(path, _new_lines(new, old))]
    for value in args.values():
        parts = list(_FILE_PART.finditer(value)) if isinstance(value, str) and "\n" in value else []
        if parts:
            ends = [p.start() for p in parts[1:]] + [len(value)]
            return [(p.group(1), _added(value[p.end() : end])) for p, end in zip(parts, ends)]
    new, old = _patch_sides(args) if path else (None, "")  # Cline's SEARCH/REPLACE: less the lines it searched for
    return [(path, _new_lines(new, old))] if new is not None else []


def _new_lines(new: str, old: str) -> str:
    """The lines of `new` that `old` did not have (compared stripped), and its blank lines: they part
    its paragraphs."""
    had = {ln.strip() for ln in old.splitlines()}
    return "\n".join(ln for ln in new.splitlines() if not ln.strip() or ln.strip() not in had)


def _added(patch: str) -> str:
    """The lines a patch's part adds."""
    return "\n".join(t for s, t in _DIFF_LINE.findall(patch) if s == "+")


def _declares(line: str) -> bool:
    """A line of code that names what it makes (_DECLARED), no sentence of prose (a markdown edit's
    "type checking runs in CI (see `ci.yml`).") and no string that looks like a key: a longer edit's
    lines were never shown before, and a key with no cue beside it is one redaction cannot tell."""
    return (
        bool(_DECLARED.match(line))
        and not line.endswith(".")
        and bool(re.search(r"[=({]|:$", line))
        and not any(looks_random(q) for q in re.findall(r"[\"'`]([^\"'`\s]{16,})[\"'`]", line))
    )


# a line of a longer edit that names something it makes (`const logFile = join(logDir, …);`, `float yMax =
# (peakPop > 0) ? …;`, `def load(path: str) -> Config:`): the names the agent wrote, DECLARED_LINES an edit
DECLARED_LINES = 3
_DECLARED = re.compile(
    r"(?:export\s+)?(?:(?:const|let|var|val|final|static|public|private|protected|internal|readonly|async|pub|"
    r"float|int|double|bool|char|long|auto|string|String|def|fn|func|function|class|struct|interface|type|enum)\s+)+"
    r"[A-Za-z_$][\w$]*\s*(?:[=(:<{]|\w)"
)


def _whole_line(line: str) -> bool:
    """A line that stands alone: it opens with a name, a keyword or a bracket (not the `=== '/') {`
    an edit's new text cut from mid-line), and closes what it opens."""
    if not re.match(r"[A-Za-z_@$<{(\[]", line):
        return False
    pairs = {")": "(", "]": "[", "}": "{"}
    stack: list[str] = []
    for ch in re.sub(r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'", "", line):
        if ch in "([{":
            stack.append(ch)
        elif ch in pairs and (not stack or stack.pop() != pairs[ch]):
            return False
    return not stack


def _snippet(line: str) -> bool:
    """A line of code with spaces, not a comment, a placeholder, or prose in backticks (six words
    or more and at most two marks: `imports in generated files; the template adds them.`)."""
    if not CODE_SNIPPET.search(line) or re.match(r"(?:#|//|--|/\*)", line) or re.search(r"\.\.\.|…", line):
        return False
    return len(re.findall(r"[A-Za-z]{2,}", line)) < 6 or len(re.findall(r"[^\w\s]", line)) > 2
