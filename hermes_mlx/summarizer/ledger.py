"""The fact ledger: exact strings that must survive compaction, extracted and merged by code.

A 135M model paraphrases paths, drops exit codes and invents test names; so files, commands with
their exit status, error lines, URLs, identifiers and the user's own constraints never pass
through it. They are pulled from the full (untrimmed, redacted) text (absorb.py reads them off each turn),
de-duplicated here, and an error moves to `resolved` once a later run of the same command or test
passes. Text that someone cut (Hermes, our own clipping, the tool) yields no fact from the
fragment beside the cut.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from .error_lines import at_any_line, at_source_line, error_numbers_shape, error_shape
from .extract import TEST_ID, pasted_problems
from .fixes import cleared_by
from .harness import CD_PREFIX
from .outcomes import MADE, is_run_verdict, outcome_of
from .redact import redact
from .text import clip
from .tidy import ACTION_RANK, tidy_commands, tidy_files
from .vocabulary import GENERIC_FAILURE, tool_action
from .workfolder import absolute, relative

_NOISE_PATH = (
    "site-packages/",
    "dist-packages/",
    "node_modules/",
    ".venv/",
    "/lib/python",
    "<frozen",
)
# a system's own folders, where a path starts (`/home/dev/app/a.py` is a user's, named dev)
_SYSTEM_DIRS = ("/usr/lib/", "/proc/", "/dev/")
COMMAND_CHARS = 140  # a command's first line is kept up to this
_CD_SHOWN = 40  # a longer `cd` folder of a long command is shown by its last names within this
_CD_READ = 400  # a command's `cd` is looked for in its first characters only (CD_PREFIX's lazy folder)


def _folder_tail(folder: str) -> str:
    """`folder`'s last names that fit in _CD_SHOWN (its last name whatever its length), each with the
    separator before it: two projects' `services/api` differ by the names above (`…/backend/services/api`)."""
    names = re.split(r"(?=[/\\])", folder)
    tail = names.pop()
    while names and len(names[-1]) + len(tail) <= _CD_SHOWN:
        tail = names.pop() + tail
    return tail


FIXED_BY = " — fixed by "  # an error a later success cleared, then that command (Errors and Fixes)
OUTCOME_SEP = " ⇒ "  # an earlier result, then the latest: `11 failures ⇒ 0 failures`
MADE_RUNS = 12  # the results a command that makes something keeps, one per run, latest last
WORKING_FOLDER = "Working folder:"  # Files' first line: the folder its relative paths are in
MORE_ERRORS = re.compile(r"^… and (\d+) more error lines?$")  # how many error lines a result had beyond those kept


def shown_command(cmd: str) -> str:
    """A command as Commands, an error's `after` and `fixed by` all say it (one key in all three):
    its first line up to COMMAND_CHARS (a long commit message's outcome says the rest), a script to 200.
    A long line's `cd /a/long/path && ` says its folder by its last names (`cd …/platform/app && npx
    convex init`): cut at the width, the folder alone left no trace of what ran, and every command run
    there was one key (Cursor's eight `cd /Users/…/Dropbox/…/app && …` were one line of 8 runs)."""
    cmd = (cmd or "").strip()
    first = cmd.split("\n", 1)[0]
    if len(first) > COMMAND_CHARS:
        cd = CD_PREFIX.match(first[:_CD_READ])
        folder = cd.group(2).rstrip("/\\") if cd else ""
        if len(folder) > _CD_SHOWN:
            first = f"{first[: cd.start(2)]}…{_folder_tail(folder)}{first[cd.end(2) :]}"
        return clip(first, COMMAND_CHARS)
    return cmd[:199].rstrip() + "…" if len(cmd) > 200 else cmd


# ---------------------------------------------------------------- the ledger


# a run's time (`Duration: 81 ms`, `BUILD FAILED in 2s`, `(0.52s)`): a result differs by it every run
_DURATION = re.compile(
    r"\b\d+(?:[.,]\d+)?(?:\s?(?:ms|secs?|seconds?|mins?|minutes?)|s)\b|\b\d+[hm](?= ?\d+(?:\.\d+)?[ms]\b)"
)


def _failed(result: str) -> bool:
    return outcome_of(result)[0] == "failure"


def timeless(result: str) -> str:
    """A result less its durations (seconds, `81 ms`, `1m 30s`, minutes spelled out): `BUILD FAILED in
    2s` then `in 10s` is one result again, not a history (`dotnet test`'s `Duration: 81 ms`, three runs)."""
    return _DURATION.sub("#", result)


@dataclass
class Command:
    cmd: str
    statuses: list = field(default_factory=list)  # int or None (unknown), oldest first, last 3 kept
    outcome: str = ""  # the latest run's result line, verbatim (outcomes.outcome_line)
    runs: int = 1  # how many times it ran: an agent stuck running one command 45 times shows it
    # (`(45 runs, exit 1 → 1 → 1)`; two runs whose statuses are both known say it by them)

    def latest_outcome(self) -> str:
        """The latest run's result line (`outcome` keeps earlier ones before it: `A ⇒ B`)."""
        return self.outcome.rsplit(OUTCOME_SEP, 1)[-1]

    def status_text(self) -> str:
        """`(exit 1) → result line`: what is known of the latest runs; never a bare `exit ?`."""
        known = [s for s in self.statuses if s is not None]
        said = (
            [f"{self.runs} runs"] if self.runs > len(known) and self.runs >= 2 else []
        )  # else the statuses count them
        said += ["exit " + " → ".join(str(s) for s in known)] if known else []
        parts = [f"({', '.join(said)})"] if said else []
        if self.outcome:
            parts.append("→ " + self.outcome)
        return " ".join(parts)


@dataclass
class ErrorItem:
    line: str
    cmd: str = ""
    test: str = ""


@dataclass
class Ledger:
    files: dict = field(default_factory=dict)  # path -> action
    commands: list = field(default_factory=list)  # [Command]
    errors: list = field(default_factory=list)  # [ErrorItem]
    resolved: list = field(default_factory=list)  # [str]: error lines a later success cleared
    fixes: dict = field(default_factory=dict)  # resolved error line -> the command whose success cleared it
    urls: list = field(default_factory=list)
    fetched: list = field(default_factory=list)  # the urls the agent itself fetched: pages it read
    ids: list = field(default_factory=list)
    constraints: list = field(default_factory=list)
    asks: list = field(default_factory=list)  # the user's own messages, whitespace folded (batch spans)
    root: str = ""  # the working folder relative paths in `files` are relative to (stated once)
    # commands whose latest run passed with no status (absorb._passed_unseen): work past an error
    # (state._moot); this pass's runs only, as a summary read back shows no status for them
    passed_unseen: set = field(default_factory=set)

    # ---- adding

    def add_file(self, path: str, action: str = "mentioned") -> None:
        path = path.strip().strip("`'\"")
        if not path or len(path) > 300 or any(n in path for n in _NOISE_PATH) or path.startswith(_SYSTEM_DIRS):
            return
        old = self.files.get(path)
        rank, was = ACTION_RANK.get(action, 0), ACTION_RANK.get(old, 0)
        # created then removed (a reproduction script) is gone, removed then made again is there: the later says
        if old is None or rank > was or rank == was == ACTION_RANK["deleted"]:
            self.files[path] = action

    def add_command(self, cmd: str, status: int | None, outcome: str = "") -> None:
        cmd = shown_command(cmd)
        if not cmd:
            return
        for c in self.commands:
            if c.cmd == cmd:
                self.commands.remove(c)  # move to the end: most recent last
                c.statuses = (c.statuses + [status])[-3:]
                c.runs += 1
                before = c.outcome.split(OUTCOME_SEP)
                if outcome and timeless(outcome) == timeless(before[-1]):
                    c.outcome = OUTCOME_SEP.join(before[:-1] + [outcome])  # the same result, later: no news
                elif outcome and outcome != before[-1]:
                    # the result before the latest says what changed; but each run of a command that
                    # makes something (aider's `/undo`, a commit) made something else: all are news
                    before = before[-(MADE_RUNS - 1) :] if outcome_of(outcome)[0] in MADE else before[-1:]
                    c.outcome = OUTCOME_SEP.join([clip(x, 80) for x in before if x] + [outcome])
                elif not outcome and status == 0 and _failed(before[-1]):
                    # exit 1, then 0 with no result line: the `KeyError` before is no result of this run
                    # (Errors and Fixes keeps it, fixed by this command); a result a failed rerun left
                    # unsaid (`Accuracy: 0.941`, then exit 137) is still the latest one said
                    c.outcome = ""
                self.commands.append(c)
                return
        self.commands.append(Command(cmd, [status], outcome))

    def clear_failed_result(self, cmd: str) -> None:
        """A command that passed with no result line keeps no failure of a run before as its result
        (`add_command`'s rule, for a run an export gives no status: Claude Code's rerun of `python -c
        'import stripe; …'` that printed `8.11.0` had kept its `ModuleNotFoundError`)."""
        c = next((c for c in self.commands if c.cmd == shown_command(cmd)), None)
        if c is not None and c.runs > 1 and _failed(c.latest_outcome()):
            c.outcome = ""

    def add_error(self, line: str, cmd: str = "", test: str = "") -> None:
        cmd = shown_command(cmd)  # as Commands says it: the same command is one key in both
        if MORE_ERRORS.match(line):  # the latest count for this command replaces an older one
            self.errors = [e for e in self.errors if not (e.cmd == cmd and MORE_ERRORS.match(e.line))]
            self.errors.append(ErrorItem(line, cmd))
            return
        if not test:
            m = TEST_ID.search(line)
            test = m.group(1) if m else ""
        for e in self.errors:
            if e.line == line:
                e.cmd, e.test = cmd or e.cmd, test or e.test
                return
        # the same error again, of the same command and test: at another line of one file, or a retry's
        # other request id, the first says it (where to look first), moved last as the Open error reads it;
        # with other numbers (`assert 404 == 200` after `500`, a retry's `Input length 141649` after
        # `173754`) the first and the latest say it, how it began and where it stands
        shape, numbers = error_shape(line), error_numbers_shape(line)
        same = [e for e in self.errors if e.cmd == cmd and e.test == test and error_numbers_shape(e.line) == numbers]
        if alike := next((e for e in same if error_shape(e.line) == shape), None):
            self.errors.remove(alike)
            self.errors.append(alike)
            return
        if len(same) > 1:
            self.errors.remove(same[-1])  # the latest so far is no longer the latest
        if line in self.resolved:
            self.resolved.remove(line)  # it came back
            self.fixes.pop(line, None)
        self.errors.append(ErrorItem(line, cmd, test))

    def add_list(self, name: str, items) -> None:
        """Append new items in order; facts are never capped here (per-source caps apply)."""
        target = getattr(self, name)
        for item in items:
            if item and item not in target:
                target.append(item)

    def resolve(self, cmd: str, output: str = "") -> None:
        """A command passed: errors it (or a broader run of it) covered move to `resolved`, those
        that say what went wrong (a run's verdict, `BUILD FAILED in 3s` or go's `FAIL pkg 0.2s`,
        goes when its error lines are there to say why), one of each shape (the same error at
        other line numbers is one) and one of each line (a syntax error's cascade there)."""
        cmd = shown_command(cmd)
        covered = cleared_by(cmd, output, self.errors)
        self.errors = [e for e in self.errors if e not in covered]
        lines = [e.line for e in covered if not MORE_ERRORS.match(e.line) and e.line not in self.resolved]
        shapes: set[str] = set()  # one error at lines 147, 152, 159, or three at line 11: its first line
        for line in [x for x in lines if not (is_run_verdict(x) or GENERIC_FAILURE.match(x))] or lines:
            keys = {at_any_line(line), at_source_line(line)} - {""}
            if not keys & shapes:
                shapes |= keys
                self.resolved.append(line)
                self.fixes[line] = cmd
        # an earlier run's bare verdict goes too once a later run's lines say why (one fix, one story)
        fixed_here = [r for r in self.resolved if self.fixes.get(r) == cmd]
        verdicts = [r for r in fixed_here if is_run_verdict(r) or GENERIC_FAILURE.match(r)]
        if len(verdicts) < len(fixed_here):
            self.resolved = [r for r in self.resolved if r not in verdicts]
            for r in verdicts:
                self.fixes.pop(r, None)

    def same_path(self, a: str, b: str) -> bool:
        """Two paths of one file: the same, or the same under the working folder (an error's label read
        back from a summary names its file relative: `workfolder.relative_label`)."""
        return a == b or bool(self.root) and relative(a, self.root) == relative(b, self.root)

    def resolve_file(self, label: str, failed_here=None) -> None:
        """A tool changed a file (`label`: `write src/a.ts`): errors of an edit or write tool that
        failed on that file (`edit src/a.ts`: "Could not find oldString"), or those `failed_here`
        picks (the failed edits of the file an editor has open), move to `resolved`, fixed by it;
        a command's errors wait for that command to pass (`resolve`)."""
        path = label.split(" ", 1)[1] if " " in label else ""

        def failed_change(e) -> bool:  # an edit tool's error on that file, not `python app.py`'s
            tool, _, on = e.cmd.partition(" ")
            return bool(path) and self.same_path(on, path) and tool_action(tool, {}) in ("edited", "created")

        done = [e for e in self.errors if (failed_here or failed_change)(e)]
        self.errors = [e for e in self.errors if e not in done]
        for e in done:
            if not MORE_ERRORS.match(e.line) and e.line not in self.resolved:
                self.resolved.append(e.line)
                self.fixes[e.line] = label

    def compact(self, resolved_keep: int = 30) -> int:
        """Shrink without losing a string: drop ids, mentioned files and error lines that other
        entries already spell out, read-only commands that succeeded, and the oldest resolved
        errors beyond `resolved_keep`. Returns how many entries went."""
        before = len(self.items()) + len(self.resolved)
        trivial = re.compile(
            r"^(?:git (?:status|diff|log|show|branch)|ls|pwd|cat|head|tail|echo|which|wc|tree|find)\b(?!.*[|>;&])"
        )
        self.commands = [c for c in self.commands if not (trivial.match(c.cmd) and c.statuses and c.statuses[-1] == 0)]
        del self.resolved[: max(0, len(self.resolved) - resolved_keep)]
        # an error line another line of the same command spells out whole (pytest's `E   KeyError: 'X'`
        # inside its `FAILED t.py::test - KeyError: 'X'`) says it twice
        self.errors = [
            e for e in self.errors if not any(e.line in o.line != e.line and o.cmd == e.cmd for o in self.errors)
        ]
        inside = [r for r in self.resolved if any(r in o != r for o in self.resolved)]
        self.resolved = [r for r in self.resolved if r not in inside]
        for r in inside:
            self.fixes.pop(r, None)
        spelled = "\n".join(
            [c.cmd for c in self.commands]
            + [e.line for e in self.errors]
            + self.resolved
            + self.urls
            + self.constraints
        )
        self.files = {p: a for p, a in self.files.items() if a != "mentioned" or p not in spelled}
        spelled += "\n" + "\n".join(self.files)
        self.ids = [i for i in self.ids if i not in spelled]
        return before - len(self.items()) - len(self.resolved)

    def tidy(self, root: str = "", keep_commands: int | None = 24, keep_files: int | None = 30) -> None:
        """What a reader can use (tidy.py): files relative to the working folder `root` and once
        each, commands that tell something. Paths an earlier pass made relative to another
        folder are that folder's: they are made whole again before the new one is applied, but for
        a bare name only mentioned (`updater.ts` in prose), which says nothing of where it lies."""
        if root and self.root and root != self.root:
            bare = {p: a == "mentioned" and "/" not in p.replace("\\", "/") for p, a in self.files.items()}
            self.files = {p if bare[p] else absolute(p, self.root): a for p, a in self.files.items()}
        self.root = root or self.root
        self.files, self.commands = (
            tidy_files(self.files, self.root, keep_files),
            tidy_commands(self.commands, keep_commands),
        )

    # ---- views

    def items(self) -> list[str]:
        """The exact strings a summary must contain for this ledger to count as carried."""
        return (
            list(self.files)
            + [c.cmd.splitlines()[0] for c in self.commands]
            + [e.line for e in self.errors]
            + list(self.urls)
            + list(self.ids)
            + list(self.constraints)
            + list(self.asks)
        )


USER_MESSAGE_CHARS = 600
# a long message clipped keeps its start, the error lines of what the user pasted (PASTED_ERRORS at
# most, each clipped at PASTED_ERROR_CHARS) and its end, where the ask usually is ("… Bitte analysiere
# die Fehlermeldung Zeile für Zeile."): a compiler's `gui.c:563:13: error: duplicate case value` sat
# past the first 600 characters of a pasted build log (Gemini CLI), as tracebacks do in an issue
PASTED_ERRORS, PASTED_ERROR_CHARS = 3, 160
MESSAGE_END_CHARS = USER_MESSAGE_CHARS // 4
PASTED_SCAN_CHARS = 50_000


# a line's shape: itself less its numbers and quoted strings (`[Log] Set node for author – "643020" –
# (script.js, line 164)`); a shape a pasted log repeats this often is the output of a loop
_QUOTED_OR_NUMBER = re.compile(r'"[^"\n]*"|\'[^\'\n]*\'|\d+')
REPEATED_LINE = 3
# a line a person writes as one of a list (`- In parser.py, change line 12 …`, `2) …`): never taken for a
# log's repeated line
_WRITTEN_LINE = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s")


def without_repeats(text: str) -> str:
    """`text` less the lines whose shape it repeats REPEATED_LINE times or more (no list item a person
    wrote), each run of them one `…`: a pasted browser console or request log (Cursor users pasting 20,000 characters of
    `[Log] …` lines, `GET https://… 400` ones) shows what its run found in the lines it says once."""
    lines = text.split("\n")
    if len(lines) < 2 * REPEATED_LINE:
        return text
    shapes = [_QUOTED_OR_NUMBER.sub("0", ln).strip() for ln in lines]  # `"display:" "block"` has one too
    counts = Counter(shapes)
    out: list[str] = []
    for ln, shape in zip(lines, shapes, strict=True):
        if shape and counts[shape] >= REPEATED_LINE and not _WRITTEN_LINE.match(ln):
            if not out or out[-1] != "…":
                out.append("…")
        elif ln.strip() or not out or out[-1] != "…":  # a blank line inside a run leaves it one
            out.append(ln)
    return "\n".join(out) if any(ln.strip() not in ("", "…") for ln in out) else text  # all one shape: as is


def user_message(text: str) -> str:
    """A user's message as the summary carries it: verbatim, on one line, clipped when long (its
    start, the error lines it pasted, its end: `_clipped`), a long one less the lines a pasted log
    repeats (`without_repeats`). User messages are never summarized; a batch pass that folds them
    away keeps their words."""
    one = redact(" ".join(text.split()))  # after folding: `token:` and its value on the next line meet here
    if len(one) <= USER_MESSAGE_CHARS:
        return one
    # a huge paste is read at its ends (its errors too, its own redaction in context): the words after it stay
    ends = text if len(text) <= 2 * PASTED_SCAN_CHARS else f"{text[:PASTED_SCAN_CHARS]}\n…\n{text[-PASTED_SCAN_CHARS:]}"
    one = redact(" ".join(without_repeats(ends).split()))
    if len(one) <= USER_MESSAGE_CHARS:
        return one
    return redact(_clipped(redact(ends), one))


def _clipped(text: str, one: str) -> str:
    """`one` (the message folded and redacted) cut to its start and end at spaces, with the error lines and
    diagnostics it pasted that neither shows whole between them (`extract.pasted_problems`), each
    verbatim and the cuts marked."""
    head = one[: USER_MESSAGE_CHARS - MESSAGE_END_CHARS - 1].rstrip()
    tail = one[-MESSAGE_END_CHARS:]
    tail = tail.split(" ", 1)[1] if " " in tail[1:] and not one[-MESSAGE_END_CHARS - 1].isspace() else tail.lstrip()
    shown = [clip(x, PASTED_ERROR_CHARS) for x in pasted_problems(text, PASTED_ERRORS, skip=f"{head}\n{tail}")]
    return " … ".join([head, *shown, tail])
