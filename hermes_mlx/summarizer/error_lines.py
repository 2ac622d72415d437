"""Error lines in tool output, from every common toolchain.

One general rule does most of the work: a line that labels itself an error or failure
(`error:`, `error[E0308]:`, `error TS2345`, `ValueError:`, `FAILED ...`, `[ERROR]`). A few shapes
carry no such label and are listed on their own (ruff's `file:l:c: F401`, Go's `main.go:12:2:
undefined: foo`, Kotlin's `e: file:///a/B.kt:3:5 …`, `--- FAIL:`, `panic:`, jest's `●`, cargo's
`... FAILED`, curl's `curl: (7)`, HTTP statuses, the shell's `command not found`). Reports spread
over several lines (a rustc `-->` line, a Python traceback's innermost frame, a Node or Java `at`
frame, an eslint file header, Gradle's `* What went wrong:`) carry their location into the one
line kept. A result with many errors keeps the most specific few (a code and a location first)
and says how many it left out, so one noisy build cannot flood the ledger.

Everything here works on text already freed of cut markers (see `extract.uncut`), one line at a
time, each line clipped before any regex runs: a 200,000-character minified line costs no more
than its first `MAX_LINE` characters, and no pattern here backtracks more than linearly.
"""

from __future__ import annotations

import re

from .harness import SHELL_PROMPT
from .powershell import powershell_records
from .vocabulary import GENERIC_FAILURE, PROGRAM_FAILED, PYTEST_ERROR_MARK

MAX_LINE = 2000  # a candidate line is cut to this before any regex sees it
MAX_LINES = 20_000  # lines of one result scanned at most (head); the tail is scanned too

ERROR_LINE = re.compile(
    # the general rule: a line that labels itself an error or failure
    r"(?:^|(?<=[\s:>(\]]))(?i:fatal error|error|fatal|panic)(?: ?\[[\w\-]+\])?:"  # error: / error[E0308]: / Node's Error [ERR_X]:
    r"|\berror\s+[A-Z]{1,4}\d{2,5}\b"  # tsc, MSVC: error TS2345 / error C2065
    r"|^\s*\d+:\d+\s+error\s"  # eslint (stylish), under a file header
    r"|\b[A-Z][\w.]*(?:Error|Exception|Failure|Exit)\b(?: \[[\w\-]+\])?:(?!:)"  # ValueError: msg / TypeError [ERR_X]: (not a test id's ::)
    r"|:\d+:\s+[A-Z]\w*(?:Error|Exception)$|^[a-z][\w.]*\.[A-Z]\w*(?:Error|Exception)$|^[A-Z]\w*(?:Error|Exception)$"
    r"|^\s*(?:FAILED|ERROR|FAIL|FAILURE)(?::|\s+\S|$)"  # pytest, jest, go test, Gradle
    r"|^\[(?:ERROR|FATAL)\]\s*\S"  # Maven
    r"|^(?:\[\w+\]\s*|\*\*\s*)?BUILD FAIL(?:URE|ED)\b"  # Maven, Gradle, Xcode
    # shapes that carry no such label
    r"|^[\w./\\\-]+\.\w+:\d+:\d+:\s+[A-Z]{1,4}\d{2,5}\b"  # ruff, flake8, pylint: file:l:c: F401
    r"|^(?:\.{1,2}/)?[\w./\-]*\w\.go:\d+(?::\d+)?:\s"  # go build, vet, test
    r"|^--- FAIL:|^panic:|^WARNING: DATA RACE"  # go
    r"|^\s*●\s.*›|^\s*● Test suite failed"  # jest
    r"|^test \S+ \.\.\. FAILED|\bpanicked at\b"  # cargo test, rust panics
    r"|^Exception in thread\b"  # java
    r"|^\* What went wrong:"  # Gradle
    r"|^e: (?:file://)?\S{1,300}?\.kts?(?::\d+:\d+|: \(\d+, \d+\):)\s"  # Kotlin: e: file:///a/B.kt:207:21 Conflicting …
    r"|^curl: \(\d+\)"
    # an OS error's number (`[Errno 30] Read-only file system: '/add'`), a failure named by what it was doing
    # (aider's `Error creating file /add: …`, Gemini CLI's `Error executing tool x: …`), aider's edit that did not apply
    r"|\[Errno -?\d+\] \S|^\s*Error (?:creat|read|writ|runn|execut|load|pars|open|connect|fetch|sav|delet|call|send|compil|install|build|start"
    r"|import|updat|resolv|renam|mov|copy|apply|access)ing\b[^:\n]{0,100}: \S"
    r"|^(?:## )?SearchReplaceNoExactMatch: |^# \d+ SEARCH/REPLACE blocks? failed to match!"
    r"|^\s*! \[(?:remote )?rejected\]\s"  # git push: ` ! [remote rejected] main -> main (reason)`, `[rejected] … (fetch first)`
    r"|\bHTTP(?:/[\d.]+)?\s+[45]\d\d\b|\bstatus(?: code)?[:= ]+[45]\d\d\b|\b[45]\d\d (?:Client|Server) Error\b"
    r"|^\s*E[A-Z]{2,9}: [a-z]"  # Node / libuv errno: EISDIR: illegal operation on a directory
    r"|^\s*\*\* \([A-Z]\w*(?:\.\w+)*\)"  # Elixir: ** (BadMapError) expected a map
    r"|^[\w./\-]+\.exs?:\d+(?::\d+)?:[a-z_]+\b"  # Dialyzer (short format): lib/a.ex:94:7:pattern_match_cov
    r"|^\s*✘ \[ERROR\]"  # esbuild
    r"|^\s*┃\s*\[[A-Z]\]\s"  # Credo issue: ┃ [D] ↘ Nested modules could be aliased ...
    r"|npm ERR!|^npm error |command not found|: not found$|No such file or directory|Permission denied|Segmentation fault|core dumped"
    r"|is not recognized as (?:the name of a cmdlet|an internal or external command)"  # PowerShell's, cmd.exe's
    r"|^File \S.{0,300} not found$"  # SWE-agent's `open`: File src/x.java not found
    # a program's own, with its reason (`Failed to get status: …`), not a notice that it carries on
    r"|^(?:Failed|Unable) to [a-z][\w\-]*(?: [^\s:]{1,40}){0,6}: (?!.{0,80}\b(?:retrying|will retry|falling back|using defaults?)\b)\S"
    r"|^\s*(?:- )?\[[\w .-]{1,30} Error\] "  # Cline's and Roo Code's diagnostics: - [Pylint Error] Line 40: …
    r"|\*\*\* \[[^\]\n]{0,200}\] Error \d+"  # make
    r"|(?i:" + PROGRAM_FAILED.pattern + ")"  # rm: cannot remove 'x': Device or resource busy
)
# a log line's own level, below error, among its first few fields (a timestamp, a logger name)
_LOWER_LEVEL = re.compile(
    r"^\s*(?:\S+\s+){0,3}?(\[(?:WARN(?:ING)?|INFO|DEBUG|TRACE|NOTICE)\]|(?:WARN(?:ING)?|INFO|DEBUG|TRACE|NOTICE)(?=[:\s])"
    r"|level=(?:warn(?:ing)?|info|debug|trace)\b)",
    re.I,
)
# verdicts printed at a lower level: Go's race detector, Maven's `[INFO] BUILD FAILURE`
_LEVEL_VERDICT = re.compile(r"^WARNING: DATA RACE|^\[\w+\]\s*BUILD FAIL")
_MAVEN_NOISE = re.compile(r"^\[ERROR\]\s*(?:$|->|Re-run Maven|To see the full|For more information|\[Help)")
_CODE = re.compile(
    r"\b[A-Z]{1,4}\d{2,5}\b|\[[A-Za-z][\w\-]*\]\s*$|\berror\[\w+\]|^curl: \(\d+\)|\s{2}@?[a-z][\w\-]*(?:/[\w\-]+)?\s*$"
    r"|\b[45]\d\d (?:Client|Server) Error|HTTP(?:/[\d.]+)?\s+[45]\d\d|status(?: code)?[:= ]+[45]\d\d"
)
_LOCATION = re.compile(
    r"(?<![\w.\\/@\-])[\w.\\/@\-]{0,300}\w\.[A-Za-z]\w{0,9}(?::\d+|\(\d+(?:,\d+)?\)|:\[\d+,\d+\])"  # f.ts:4 f.ts(4,7) F.java:[4,7]
    r"|\bline \d+|\.py::\w|^\s*\d+:\d+\s"
)
_CODE_HEAD = re.compile(r"^[A-Z]{1,3}\d{3,4}\b(?: \[\*\])? \S")  # ruff's full format: `F401 [*] ...`, then `--> f:l:c`
_PY_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*[A-Za-z]\w*(?::\s|$)")  # `pkg.mod.Name: message`, or the name alone
_PY_FRAME = re.compile(r'^\s*File "([^"]{1,300})", line (\d+)(?:, in (\S{1,120}))?')
_ARROW = re.compile(r"^\s*-->\s*(\S{1,300})")  # rustc, ruff
_AT_FRAME = re.compile(r"^\s+at\s+(\S.{0,200})$")  # Node, Java
# a place in a library's or the runtime's code, not the project's: an error raised there says less
# than one at a line of the project (unittest's `ImportError: Failed to import test module` at
# `lib/python3.9/unittest/loader.py:34` wraps `ModuleNotFoundError: …` at `tests/test_forms.py:26`)
_LIBRARY = re.compile(
    r"[/\\](?:site-packages|dist-packages|node_modules|lib(?:64)?[/\\]python\d[\d.]*|\.cargo[/\\]registry|"
    r"go[/\\]pkg[/\\]mod)[/\\]|(?:^|[\s(])(?:<frozen |node:|java\.base/|"
    r"internal/(?:modules|process|main|bootstrap|timers|streams|fs|util)/)",  # older Node's own frames
    re.I,
)
_FILE_HEADER = re.compile(r"^(?:[A-Za-z]:\\|/|\.{0,2}/)?[\w.@\\/\-]{0,300}\.\w{1,10}$")  # eslint's per-file header


# a tool that prints one error as a block, every line under the same prefix (npm 10's `npm error`,
# older npm's `npm ERR!`): the block's first line that says something is its error
_BLOCK_LINE = re.compile(r"^npm (?:ERR!|error)(?:\s+(.*))?$")
_BLOCK_FIELD = re.compile(r"^(?:code|errno|syscall|path|signal|command|cwd)\b\s*\S*$|^$")


# the shell's own complaints: `bash: line 3: x: command not found`, `zsh: command not found: x`,
# `/bin/sh: 1: x: not found`, and an agent's wrapper script's (`--: line 20: cannot create temp file`)
_SHELL_SAID = re.compile(r"^(?:--?|-?(?:/(?:usr/)?bin/)?(?:ba|z|da|k|fi)?sh): (?:line )?(\d+): (.*)$")
_NOT_FOUND = re.compile(r"(?:^|: )(?:command not found: ([^\s:]+)|([^\s:]+): (?:command )?not found)\s*$")
# a script file's own complaint (`./build.sh: line 3: foo: command not found`, a CI run's
# `/home/runner/work/_temp/x.sh: line 1: charmcraft: command not found` in the log `gh run view` prints):
# the script's, which the command ran or printed, unless the file is a shell's start-up file (`.bashrc`)
_SCRIPT_SAID = re.compile(r"^(\S*/\S+): line \d+: ")
_START_UP = re.compile(  # a shell's start-up file, or the shell itself (`/usr/bin/bash: line 1: …`)
    r"(?:^|/)(?:\.(?:bashrc|bash_profile|bash_login|profile|zshrc|zprofile|zshenv|zlogin)|profile|(?:ba|z|da|k|fi)?sh)$"
    r"|^/etc/"
)


def echoed_lines(output: str, command: str) -> str:
    """`output` without the lines that only echo `command` (a terminal's prompt and the command typed at it,
    `me@host app % bun run x`, or an export's record of the call, Copilot's `Ran terminal command: cargo test`)
    and a bare prompt line (`me@host app %`): they had been the command's result, or hid the one line it printed."""
    said = " ".join(command.split())
    if len(said) < 3 or "\n" in command.strip():
        return output
    kept = [ln for ln in output.split("\n") if not _echoes(" ".join(ln.split()), said)]
    return "\n".join(kept) if len(kept) < output.count("\n") + 1 else output


def _echoes(line: str, said: str) -> bool:
    return line.endswith(said) and len(line) - len(said) <= ECHO_LEAD or bool(SHELL_PROMPT.fullmatch(line))


ECHO_LEAD = 80  # a prompt or a record's words before the command: `me@host ~/app %`, `Ran terminal command:`


def foreign_lines(output: str, command: str) -> str:
    """`output` without what the shell said about code that is not `command`'s: the shell's own
    complaint at a line past the command's last (an agent's wrapper script), or a program not
    found that the command never names (a login shell's `.bashrc`, Cursor's `dump_bash_state`).
    Left, they were the command's result and its error, over what it printed. A program the
    command runs is its own at any line: SWE-agent's long-lived shell numbers its lines on
    (`/bin/bash: line 192: javac: command not found` after `javac …`)."""
    if "line " not in output and "not found" not in output:
        return output
    last = command.count("\n") + 1
    words = set(re.findall(r"[\w./+-]+", command))

    def foreign(line: str) -> bool:
        line = line.strip()
        missing = _NOT_FOUND.search(line)
        script = _SCRIPT_SAID.match(line)
        if missing and script and not _START_UP.search(script.group(1)):
            return False  # a script's own: the command ran it, or printed its log
        if missing:  # a program not found is the command's when the command runs it, at any line
            return (missing.group(1) or missing.group(2)) not in words  # (SWE-agent's shell counts on)
        said = _SHELL_SAID.match(line)
        return bool(said) and int(said.group(1)) > last

    return "\n".join(ln for ln in output.split("\n") if not foreign(ln))


def at_any_line(error: str) -> str:
    """An error line with its line and column numbers blanked (`Config.kt:147:12` -> `Config.kt:#:#`):
    one error reported at several places reads the same."""
    return _AT_FILE_LINE.sub(
        lambda m: (m.group(1) or m.group(3) or "") + re.sub(r"\d+", "#", m.group(2) or m.group(4)), error
    )


# a line and column after a file's name (`Config.kt:147:12`, `Tests.cs(11,23)`, `F.java:[4,7]`) or leading a linter's
# line (eslint's `  12:4  error …`); a port or an address (`127.0.0.1:5432`, `localhost:6379`) is what failed, not where
_AT_FILE_LINE = re.compile(r"(\w\.[A-Za-z]\w{0,9})((?::\d+){1,2}|\(\d+(?:,\d+)?\)|:\[\d+,\d+\])|^(\s*)(\d+:\d+)(?=\s)")


def error_shape(error: str) -> str:
    """An error line less where it points (`models.py:143:21:`, `line 12`, `(11,23)`) and long hex ids
    (a request's `0217682301377579936a5f6e…`): the same error at another line of one file, or said again
    by a retry, is one error, the first (where to look first). A test's parameters stay (`test_r[0.125]`)."""
    return _HEX_ID.sub("#", at_any_line(_LINE_WORD.sub("line #", error)))


def error_numbers_shape(error: str) -> str:
    """`error_shape` less every number it states too (`assert 500 == 200` then `assert 404 == 200`,
    `Input length 173754 exceeds …` then `141649`): one error whose latest numbers say where it stands."""
    return _STATED_NUMBER.sub("#", error_shape(error))


_HEX_ID = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{12,}\b")
_LINE_WORD = re.compile(r"\bline \d+\b")
_STATED_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)*(?!\w)")


def at_source_line(error: str) -> str:
    """The file and line an error line points at (`RegistrationTests.cs:11`), "" if none: a fix that
    cleared a syntax error's cascade at one line (CS1519, then CS8124 and CS1026 at `(11,23)` and
    `(11,34)`; Gradle saying `widget_date.xml:41:1` three ways) says so once (`Ledger.resolve`)."""
    m = _LOCATION.search(error[:MAX_LINE])
    at = re.match(r"(.*?)[:(\[]+(\d+)", m.group(0)) if m and m.group(0)[:1] not in " l." else None
    name = _BASENAME.split(at.group(1))[-1] if at else ""
    return f"{name}:{at.group(2)}" if "." in name else ""  # eslint's bare `12:4` names no file


_BASENAME = re.compile(r"[\\/]")


def is_error_line(line: str) -> bool:
    """True when one line of tool output reports an error or failure; an `error:` key of an
    object a program logged (`{ id: 't2', status: 'refused', error: 'unsupported_task' }`) is none,
    nor a log line of a level below error that mentions one (`12:00:01 [auth] [WARN] hook threw
    an error: x`, `WARNING:root:retrying after error: timeout`)."""
    line = (line or "")[:MAX_LINE]
    hits = [m.start() for m in ERROR_LINE.finditer(line) if not _in_object(line, m.start())]
    level = _LOWER_LEVEL.match(line)
    if level and not _LEVEL_VERDICT.match(line):
        hits = [at for at in hits if at < level.start(1)]  # an error label before the level still counts
    return bool(hits) and not _noise(line)


def _in_object(line: str, at: int) -> bool:
    """Position `at` is inside a `{ ... }` that a line of other words logs (`received: { ... }`);
    an object that is the whole answer (`{"error": "Unauthorized"}`) says what went wrong."""
    before = line[:at]
    return before.count("{") > before.count("}") and "}" in line[at:] and not line.lstrip().startswith("{")


# a shell tool's field saying there was no error (Gemini CLI's and Qwen Code's `Error: (none)`, inside an
# output when one tool's report is printed in another's)
_NO_ERROR = re.compile(r"^\s*(?:Error|Stderr): \((?:none|empty)\)\s*$", re.I)


def _noise(line: str) -> bool:
    return bool(_MAVEN_NOISE.match(line) or _NO_ERROR.match(line))


def _fold(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _lines(text: str) -> list[str]:
    lines = text.splitlines()
    if len(lines) > 2 * MAX_LINES:  # errors cluster at the end of a build; keep both ends
        lines = lines[:MAX_LINES] + [""] + lines[-MAX_LINES:]
    return [ln[:MAX_LINE] for ln in lines]


def _follow(lines: list[str], i: int) -> tuple[str, str]:
    """What the next line adds to an error: (the rest of its message, its location)."""
    nxt = next((ln for ln in lines[i + 1 : i + 4] if ln.strip()), "")
    if lines[i].rstrip().endswith("What went wrong:"):
        return _gradle_reason(lines, i), ""
    if re.search(r"\bpanicked at \S+:$", lines[i].rstrip()):
        return nxt.strip(), ""  # Rust >= 1.73: the message is on the next line
    if _MATCHER.search(lines[i]) or _MATCHER.search(nxt):  # Bun's `error: expect(received).toBe(expected)`,
        # Jest's `● suite › test` above it: the values below say what failed
        said = [ln.strip() for ln in lines[i + 1 : i + 10] if _EXPECTED.match(ln)]
        if said:
            return _fold("; ".join(said[:2]), 200), ""
    m = _ARROW.match(nxt) or _AT_FRAME.match(nxt)  # rustc/ruff `--> f:l:c`, Node/Java `at f (x.js:3:9)`
    if m:
        return "", m.group(1).strip()
    head, said = lines[i].strip(), nxt.strip()
    if head.endswith(":") and not head[:1].isdigit() and 0 < len(said) <= 160 and not is_error_line(said):
        return said, ""  # the message goes on below: Elixir's `** (BadMapError) expected a map, got:`
    return "", ""


_MATCHER = re.compile(r"\bexpect\(received\)\.(?:not\.)?\w+\(")
_EXPECTED = re.compile(r"^\s*(?:Expected|Received)(?: [\w ]{0,20})?:\s+\S")


def _gradle_reason(lines: list[str], i: int) -> str:
    """Gradle's `* What went wrong:` block: the message on the next line, then its deepest
    `> ` cause ("Execution failed for task ':app:x'." says where; "> SDK location not found."
    says why), the message shortened so the cause is never the part cut."""
    block = []
    for ln in lines[i + 1 : i + 40]:
        if not ln.strip() or ln.startswith("* "):
            break
        block.append(ln.strip())
    if not block:
        return ""
    causes = [ln for ln in block[1:] if ln.startswith(">")]
    if not causes:
        return block[0]
    return _fold(block[0], 80) + " " + _fold(causes[-1], 135)  # with the header, inside the 240 kept


# the place an error line is noted at (` [at main.py:5, in main]`), after the line's own words
PLACE_NOTE = " [at "
_PLACE = re.compile(r" \[at .*\]$")


def without_place(line: str) -> str:
    """An error line `scan_errors` read, less the place it noted: the source's own words."""
    return _PLACE.sub("", line)


def scan_errors(text: str, limit: int = 6) -> tuple[list[str], int]:
    """Error lines of one tool result, verbatim (whitespace folded) with any location the lines
    below them give, most specific first: (the `limit` kept, how many distinct others were left)."""
    lines = _lines(text or "")
    found: dict[str, tuple[int, int]] = {}  # line -> (specificity, order)
    frame = header = ""
    in_block = False  # inside one error a tool prints with a prefix on every line (npm's)
    records, record_lines = powershell_records(lines, is_error_line) if "+ CategoryInfo" in text else ({}, set())
    for i, raw in enumerate(lines):
        stripped = raw.strip()
        if i in record_lines:
            continue
        if i in records:
            found.setdefault(_fold(records[i], 240), (0, len(found)))
            continue
        if not stripped:
            header = ""
            continue
        block = _BLOCK_LINE.match(stripped)
        if block and (in_block or _BLOCK_FIELD.match(block.group(1) or "")):
            continue  # `npm error code ERESOLVE` and the lines after the one that says what went wrong
        in_block = bool(block)
        m = _PY_FRAME.match(raw)
        if m:  # Python: the innermost frame so far; the exception line comes after the last one
            frame = f"{m.group(1)}:{m.group(2)}" + (f", in {m.group(3)}" if m.group(3) else "")
            continue
        if stripped.startswith("Traceback (most recent call last)"):
            frame = ""
            continue
        if not raw[:1].isspace() and _FILE_HEADER.match(stripped) and ("/" in stripped or "\\" in stripped):
            header = stripped
            continue
        line = stripped
        if line.startswith("E ") and not line.startswith("E   ") and ":" not in line:
            continue
        line = PYTEST_ERROR_MARK.sub("", line)  # pytest's assertion lines
        ruff = _CODE_HEAD.match(line) and _ARROW.match(next((ln for ln in lines[i + 1 : i + 3] if ln.strip()), ""))
        # the unindented line that ends a traceback names the exception, whatever its name ends in
        # (Django's `django.core.exceptions.ImproperlyConfigured: ...`, `KeyboardInterrupt`)
        raised = bool(frame) and not raw[:1].isspace() and bool(_PY_EXCEPTION.match(line))
        if len(line) < 6 or not (ruff or raised or is_error_line(line)):
            if not raw[:1].isspace():
                frame = ""  # an unindented line that is no exception ends a traceback
            continue
        more, loc = _follow(lines, i)
        if frame and re.match(r"^[\w.]+(?::|$)", line):
            loc, frame = frame, ""
        elif header and re.match(r"^\s*\d+:\d+\s", raw):
            loc = header + ":" + raw.split()[0]
        text_ = _fold(line + (" " + more if more else ""), 240) + (f"{PLACE_NOTE}{_fold(loc, 160)}]" if loc else "")
        if text_ in found:
            continue
        # placed at a line of the project (1), in a library or the runtime (0.5: below the project's,
        # above an unplaced log line: a crash inside requests still outranks six "retrying" lines)
        placed = 0.5 if loc and _LIBRARY.search(loc) else float(bool(loc or _LOCATION.search(line)))
        specific = bool(_CODE.search(raw) or _CODE.search(more)) + placed
        found[text_] = (specific, len(found))
    ranked = sorted(found, key=lambda k: (-found[k][0], found[k][1]))
    said = [k for k in ranked if not GENERIC_FAILURE.match(k)]
    ranked = said or ranked  # `BUILD FAILED in 3s` says only what the lines beside it say better
    return ranked[:limit], max(0, len(ranked) - limit)
