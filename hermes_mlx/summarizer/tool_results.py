"""What a tool result says: what the tool printed, its exit status, whether it said it failed,
which of its links only point to help.

Agents wrap a command's output in their own ways: a JSON object of output fields (Hermes's
terminal), an `<output>` envelope (mini-swe-agent), a header of `Label: value` lines with the
exit status (Codex CLI, Gemini CLI), a terminal's trailer after it (OpenHands, SWE-agent). Every
reader of a result goes through `tool_output` and `exit_status`, so no rule reads a wrapper's
line as the command's.
"""

from __future__ import annotations

import json
import re

from .compaction_stubs import is_stub, stub_failure
from .extract import clip_line, uncut
from .vocabulary import EXIT_STATUS_KEYS, FAILED_FIELDS, FAILED_STATUS, HELP_POINTER, USER_REFUSED

_EXIT_TEXT = re.compile(
    r"(?:<returncode>(?=-?\d{1,3}</returncode>)|exit(?:ed)?(?: with)?(?: code| status)?[:= ]+|returned non-zero exit status |\[exit(?: code)? |exit_code[\"']?\s*[:=]\s*|returncode[\"']?\s*[:=]\s*)(-?\d{1,3})\b",
    re.I,
)

OUTPUT_KEYS = ("output", "stdout", "stderr", "error", "content", "result")  # what a JSON tool result printed


def json_result(result: str) -> dict | None:
    """A tool result that is a JSON object (Hermes's terminal tool answers {"output": ..., "exit_code": N}),
    else None. The one place such results are unwrapped, so the ledger and the model's view agree."""
    stripped = (result or "").strip()
    if not stripped.startswith("{"):
        return None
    try:
        data = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def output_parts(data: dict) -> list[str]:
    """The non-empty output fields of a JSON tool result, in OUTPUT_KEYS order, each stripped."""
    return [str(data[k]).strip() for k in OUTPUT_KEYS if data.get(k)]


def error_text(result: str, output: str) -> str:
    """Where a result's errors are read: its output, but for a JSON result with no output field
    that nests one or says it succeeded, only the output fields one level down (Hermes's `patch`:
    `{"success": true, "diff": …, "lint": {"output": …}}`): the rest is data (a diff's code).
    Other such JSON is read whole (`{"exit_code": 1, "message": "ModuleNotFoundError: …"}`)."""
    data = json_result(result)
    if not data or output_parts(data):
        return output
    nested = [p for v in data.values() if isinstance(v, dict) for p in output_parts(v)]
    return "\n".join(nested) if nested or said_succeeded(result) else output


def said_succeeded(result: str) -> bool:
    """A JSON result whose own field says the call worked (`"success": true`, FAILED_FIELDS):
    Hermes's `patch` answers so, with a diff and no word of it, and a file it changed fixes the
    failed edits of that file before it as Claude Code's "has been updated" does."""
    data = json_result(result)
    return bool(data) and any(data.get(k) is (not v) for k, v in FAILED_FIELDS.items())


# Cline's and Roo Code's (formatResponse.toolError): "The tool execution failed with the following
# error:" then the error in `<error>` tags
_TOOL_ERROR = re.compile(r"\A\s*The tool execution failed with the following error:\s*<error>(.*?)</error>", re.S)
# an agent's wrapper around what a command printed (mini-swe-agent: `<returncode>1</returncode>` then
# `<output>...</output>`): the status is read from it (exit_status), the output is what is inside
_ENVELOPE = re.compile(r"\A\s*<returncode>\s*-?\d+\s*</returncode>\s*<output>\n?(.*?)\n?</output>\s*\Z", re.S)

# Codex CLI's sandbox error around what a command printed (codex-rs `SandboxErr::Denied`: "failed in
# sandbox LinuxSeccomp with execution error: sandbox denied exec error, exit code: 2, stdout: …, stderr:
# …"; a held-out Codex session's every failed run, and other tools parse it the same way): the status
# is read from it (exit_status), the output is its stdout, then its stderr
_SANDBOX_DENIED = re.compile(
    r"\A\s*(?:failed in sandbox \w+ with execution error: )?sandbox denied exec error, exit code: -?\d+, stdout: "
)


def _sandboxed(result: str) -> str | None:
    """What a command printed inside Codex's sandbox error (_SANDBOX_DENIED), or None."""
    denied = _SANDBOX_DENIED.match(result[:200])
    if not denied:
        return None
    out, sep, err = result[denied.end() :].rpartition(", stderr: ")
    return "\n".join(x.strip("\n") for x in (out, err) if x.strip()) if sep else err


# a markdown export's quote of what a tool printed: aider's `.aider.chat.history.md` (the corpora's aider
# sessions' source files, and a held-out one kept as written) writes its console lines as `> Applied edit to
# x  `, `> Commit 8145bab fix: …  `, each ending in markdown's two-space line break
def _unquoted(text: str) -> str:
    """`text` less the quote marks when every line of it is quoted; else as it is."""
    lines = text.splitlines()
    said = [ln for ln in lines if ln.strip()]
    if len(said) < 2 or not all(ln.startswith(">") for ln in said):
        return text
    if 2 * sum(ln.endswith("  ") for ln in said) < len(said):  # markdown's line breaks: not a shell's `> ` echo
        return text
    return "\n".join(
        ln[2:].rstrip() if ln.startswith("> ") else ln[1:].rstrip() if ln.startswith(">") else ln for ln in lines
    )


def tool_output(result: str) -> str:
    """What a tool printed: a JSON result's output fields, one after another; the inside of an
    agent's `<output>` envelope or labelled header, without what its terminal adds after it; any
    other text as is. A CI log's lines are read less their time stamps (`unstamped`). A compaction stub
    (`[terminal] ran `npm test` -> exit 1, 81 lines output`) printed nothing it shows."""
    if (result or "").startswith("[") and is_stub(result[:2100]):
        return ""
    if (result or "").startswith(">"):
        result = _unquoted(result)
    data = json_result(result)
    if data:  # `{"output": "", "metadata": {"exit_code": 1}}` printed nothing (Codex CLI's grep with no match)
        return unstamped("\n".join(output_parts(data))) or ("" if any(k in data for k in OUTPUT_KEYS) else result)
    if (sandboxed := _sandboxed(result or "")) is not None:
        return unstamped(sandboxed)
    wrapped = _ENVELOPE.match(result or "") or _TOOL_ERROR.match((result or "")[:20_000])
    return unstamped(wrapped.group(1).strip("\n") if wrapped else untrailed(_unlabelled(result or "")))


# a CI log's line lead: GitHub's `gh run view --log` puts the job and the step before each line's UTC
# time stamp (`Integration Tests<TAB>Run integration tests<TAB>2026-01-10T07:42:17.2845225Z …`), a
# runner's raw log (`docker logs -t`, `kubectl logs --timestamps`) the time stamp alone, first on the
# line; `##[error]` is the runner's own mark on a line. A stamp later in a line is the line's own
# (`git log --format='%h %cI %s'`)
_STAMP = re.compile(
    r"^(?:[^\t\n]{1,200}\t[^\t\n]{1,200}\t)?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z(?: (?:##\[(?:error|warning)\])?|$)",
    re.M,
)


def unstamped(output: str) -> str:
    """A log whose lines mostly open with a time stamp (a CI run's, read back with `gh run view
    --log-failed`), less each line's lead up to its stamp: `:: error: nothing matches provider filter`
    and `error[E0432]: unresolved import` are then lines an error reader knows. Other output as is."""
    if "Z " not in output:
        return output
    stamped = sum(1 for _ in _STAMP.finditer(output))
    return _STAMP.sub("", output) if stamped * 2 > output.count("\n") + 1 else output


# what an agent's terminal adds after a command's output: OpenHands' `[Python Interpreter: /x/python]`
# (glued to the last line) and `[Command finished with exit code 1]`, the shell's prompt it left
# (`root@openhands-workspace:/workspace/x # `, `bash-$`), SWE-agent's `(Open file: x)` and
# `(Current directory: /x)`. The exit status is read from the whole result (exit_status) before this
_TRAILER = re.compile(
    r"^\s*(?:\[Command finished with exit code -?\d+\]|\(Open file: [^)\n]*\)|\(Current directory: [^)\n]*\)"
    r"|[\w.-]+@[\w.-]+:[^\n]{0,300}?[#$%]|bash-[\d.]*\$)\s*$"
)
_INTERPRETER = re.compile(r"\[Python Interpreter: [^\]\n]{0,300}\]\s*$")


def untrailed(output: str) -> str:
    """`output` without what an agent's terminal adds after it (_TRAILER), as is when nothing."""
    cut = max(0, len(output) - 2000)  # a trailer is a few short lines: the end is all that is read
    head, lines = output[:cut], output[cut:].split("\n")
    end = len(lines)
    while end > 1 and (not lines[end - 1].strip() or _TRAILER.match(lines[end - 1])):
        end -= 1
    last = _INTERPRETER.sub("", lines[end - 1])
    if last == lines[end - 1] and not any(_TRAILER.match(ln) for ln in lines[end:]):
        return output  # no trailer: the text as it is
    return head + "\n".join([*lines[: end - 1], last])


# an agent's report around what a command printed, in `Label: value` lines with an exit status among
# them: Codex CLI's `Chunk ID: …`, `Wall time: …`, `Process exited with code 1`, then `Output:`;
# Gemini CLI's `Command: …`, `Directory: …`, `Output: …`, then `Error: (none)`, `Exit Code: 127`, …
_LABEL_LINE = re.compile(r"^[A-Z][\w ()/.-]{0,30}:(?: .*)?$")
_OUTPUT_LABEL = re.compile(r"^(?:Output|Stdout):[ \t]?(.*)$")  # Gemini CLI's older shell tool: Stdout:, Stderr:
_STDERR_LABEL = re.compile(r"^Stderr:[ \t]?(.*)$")
_NO_ERROR = re.compile(r"^Error: \((?:none|empty)\)\s*$", re.I)
_NO_OUTPUT = re.compile(r"^\s*\((?:empty|none)\)\s*$", re.I)
_SCRIPT_LINES = 2000  # a script's lines read for the `Output:` label that ends its command


def _header(lines: list[str]) -> bool:
    """Label lines (or an exit status) only; a `Command:` label's value may run over several lines,
    as Gemini CLI prints a script it ran (`Command: mkdir -p a` / `mkdir -p b` / `` / `Directory: …`)."""
    in_command = False
    for ln in lines:
        if in_command and not ln.startswith("Directory:"):
            continue  # the script's own lines, `Tech Stack:` in a here-document too, up to its `Directory:`
        if (len(ln) <= 120 or ln.startswith("Command:")) and (_LABEL_LINE.match(ln) or _EXIT_TEXT.search(ln)):
            in_command = ln.startswith("Command:")
        else:
            return False
    return bool(lines) and bool(_LABEL_LINE.match(lines[0]))


# Gemini CLI's and Qwen Code's note before an output they cut and saved to a file ("Tool output was too large
# and has been truncated.", where it was saved, how to read it, then "Truncated part of the output:"): the
# labelled output follows it
_SAVED_NOTE = re.compile(
    r"\A\s*(?:Tool output|[\w ]{1,30}) was too large and has been truncated\.\n(?s:.{0,1500}?)^Truncated part of the output:\n",
    re.M,
)


def _unlabelled(result: str) -> str:
    """`result` without an agent's labelled header and trailer, and without a note that it was cut
    (_SAVED_NOTE); as is when it has none."""
    result = _SAVED_NOTE.sub("", result, count=1) if result.lstrip().startswith(("Tool", "Shell", "Output")) else result
    lines = result.split("\n")
    # the header's labels come first; a `Command:` label's script (a here-document) may run long before them
    script = lines[0].startswith("Command:")
    reach = _SCRIPT_LINES if script else 12
    # a script's own `Output:` line is no label: the labels follow its `Directory:` line where it has one (only
    # in that wrapper: Codex's `Output:` may print a `Directory:` of its own)
    after = next((i for i, ln in enumerate(lines[:reach]) if ln.startswith("Directory:")), 0) if script else 0
    head = next((i for i, ln in enumerate(lines[:reach]) if i >= after and _OUTPUT_LABEL.match(ln)), None)
    if not head or not _header(lines[:head]):
        return result
    first = _OUTPUT_LABEL.match(lines[head]).group(1)
    body = ([first] if first.strip() and not _NO_OUTPUT.match(first) else []) + lines[head + 1 :]
    end = len(body)  # the trailer: the last run of label lines, from its `Error:` or exit status line on
    while end and (not body[end - 1].strip() or _LABEL_LINE.match(body[end - 1]) and len(body[end - 1]) <= 200):
        end -= 1
    start = next((k for k in range(end, len(body)) if body[k].startswith("Error:") or _EXIT_TEXT.search(body[k])), None)
    trailer = body[start:] if start is not None else []
    if not any(_EXIT_TEXT.search(ln) for ln in lines[:head] + trailer):
        return result  # no status reported: a file that happens to start with `Key: value` lines
    said = [ln for ln in trailer if ln.startswith("Error:") and not _NO_ERROR.match(ln)]
    body = [_STDERR_LABEL.sub(r"\1", ln) for ln in (body[:start] if start is not None else body)]
    return "\n".join([ln for ln in body if not _NO_OUTPUT.match(ln)] + said).strip("\n")


def exit_status(result: str) -> int | None:
    """Exit status reported in a tool result, JSON or text; None when it says nothing."""
    stripped = (result or "").strip()
    if not stripped.startswith("{"):
        stripped = uncut(stripped, "line")
    data = json_result(stripped)
    if data is not None:
        for key in EXIT_STATUS_KEYS:
            if isinstance(data.get(key), int) and not isinstance(data.get(key), bool):
                return data[key]
    m = _EXIT_TEXT.search(stripped[-4000:]) or _EXIT_TEXT.search(stripped[:4000])
    return int(m.group(1)) if m else None


# a harness saying the call failed, around the tool's own words (Claude Code's
# `<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>`);
# a call cancelled because another in its batch failed tells nothing of its own
_ERROR_ENVELOPE = "<tool_use_error>"
_NOT_ITS_OWN = re.compile(r"^Sibling tool call errored\b", re.I)


def failed_field(result: str) -> str:
    """The error a tool result reports when it says it failed, first line: a JSON result's `error`
    when it says so (FAILED_FIELDS), the words in a harness's error envelope (_ERROR_ENVELOPE,
    _TOOL_ERROR), the reason Hermes's compaction stub gives (`FAILED: File not found: a.py`), or a
    harness's word that the user turned the call down (USER_REFUSED)."""
    stripped = (result or "").lstrip()
    if stripped.startswith("[") and (reason := stub_failure(stripped[:2100])):
        return clip_line(reason, 300)
    if refused := USER_REFUSED.search(stripped[:2100]):
        return clip_line(refused.group("said").strip(), 300)
    if said := _TOOL_ERROR.match(stripped[:20_000]):
        first = next((ln.strip() for ln in said.group(1).splitlines() if ln.strip()), "")
        return clip_line(first, 300) if first else ""
    if stripped.startswith(_ERROR_ENVELOPE):
        said = stripped[len(_ERROR_ENVELOPE) :].lstrip()
        first = said.split("\n", 1)[0].removesuffix("</tool_use_error>").strip()
        return "" if not first or _NOT_ITS_OWN.match(first) else clip_line(first, 300)
    data = json_result(result)
    if not data or not isinstance(data.get("error"), str) or not data["error"].strip():
        return ""
    said_failed = any(data.get(k) is v for k, v in FAILED_FIELDS.items())
    if said_failed or str(data.get("status", "")).lower() in FAILED_STATUS:
        return clip_line(data["error"].strip().splitlines()[0], 300)
    return ""


def help_link(url: str, output: str) -> bool:
    """A link a program printed to point its reader to help (vocabulary.HELP_POINTER on its line):
    credo's issue tracker, pip's and pytest's docs pages, Gradle's help site."""
    at = output.find(url)
    line = output[output.rfind("\n", 0, at) + 1 : at] if at >= 0 else ""
    return bool(HELP_POINTER.search(line[-200:]))
