"""What a span's turns put into the ledger: files, commands with their exit status and result
line, errors and what fixed them, URLs, identifiers, the user's words and directives.

The ledger (ledger.py) holds the facts and merges them; this module reads them off each call, its
result and each message's text, in order, so a later run of a command resolves an earlier error.
"""

from __future__ import annotations

import json
import re

from .agent_code import added_code, code_names
from .digest import human_words, machine_written
from .directives import user_constraints
from .error_lines import echoed_lines, foreign_lines
from .extract import (
    error_report,
    find_ids,
    find_paths,
    find_urls,
    has_cut,
    is_error_line,
    quoted_paths,
    strip_injections,
    tool_label,
    uncut,
    whole_head,
    whole_path,
)
from .harness import HUMAN_WRAPPER, confirmed, tagged_words
from .ledger import Ledger, shown_command, user_message
from .outcomes import (
    MADE,
    all_passed,
    counted_by_read,
    is_placeholder,
    is_run_verdict,
    may_hide,
    outcome_of,
    placeholder_lines,
    pruned_lines,
    says_passed,
)
from .questions import asked_and_chosen
from .redact import redact
from .shell_words import (
    EDIT_NOT_APPLIED,
    EDITOR_COMMAND,
    OPEN_FILE_EDIT,
    OPEN_FILE_SHOWN,
    fetches_web,
    patch_file_actions,
    prints_own_text,
    read_only,
    shell_file_action,
)
from .text import ToolCall, Turn, clip, command_of
from .tidy import path_shaped
from .tool_results import error_text, exit_status, failed_field, help_link, said_succeeded, tool_output
from .vocabulary import (
    ASKS_USER_TOOL,
    DELEGATE_TOOL,
    FILE_KEYS,
    FOUND_URLS_TOOL,
    NUMBERED_ECHO,
    NUMBERED_LINE,
    READ_ANSWER_CHARS,
    READ_FAILED_WHY,
    REPORT_TOOL,
    RUN_LOG,
    SLASH_COMMAND,
    USER_REFUSED,
    reads_contents,
    tool_action,
)

MANY_URLS = 2  # an agent's text naming more is a list of sources, not links it used


def absorb(led: Ledger, turns: list[Turn]) -> None:
    """Extract the facts of these turns, in order, so later passes resolve earlier errors."""
    calls = {}
    pending = []
    marked: dict[str, dict] = {}  # per call, the files whose action it raised, and their action before
    for t in turns:
        if t.role == "tool":
            call = calls.get(t.tool_call_id) if t.tool_call_id else None
            if call is None and pending:
                call = pending.pop(0)
            elif call in pending:
                pending.remove(call)
            went_wrong = _read_result(led, call, t.text)
            for p, prior in marked.get(call.id, {}).items() if call is not None else ():
                if went_wrong:  # a read, write or edit that failed did nothing to the file
                    led.files[p] = prior or "mentioned"
                elif led.files.get(p) == "created" and OVERWRITTEN.search(t.text[:300]):
                    led.files[p] = "edited"  # a write over a file that was there
            continue
        for call in t.tool_calls:
            calls[call.id] = call
            pending.append(call)
            before = dict(led.files)
            _read_call(led, call)
            marked[call.id] = {p: before.get(p) for p, a in led.files.items() if a != before.get(p)}
            for p, prior in marked[call.id].items():  # a file the session read or changed was there:
                if led.files[p] == "created" and prior in ("read", "edited"):  # a write over it edits it
                    led.files[p] = "edited"
        _read_text(led, t)
    for call in pending:  # calls whose result never came
        if call.text and _is_command(call):
            led.add_command(whole_head(call.text), None)


def _read_call(led: Ledger, call) -> None:
    action = tool_action(call.name, call.arguments)
    for key in FILE_KEYS:
        value = call.arguments.get(key)
        if isinstance(value, str) and value.strip() and "\n" not in value.strip() and not has_cut(value):
            led.add_file(value, action)
    paths = call.arguments.get("paths")  # a list arrives one path a line: each line is a whole path
    for line in paths.splitlines() if isinstance(paths, str) else ():
        for p in [whole] if (whole := whole_path(line)) else find_paths(line):
            led.add_file(p, action)
    if action != "read" or "apply_patch" in call.text:  # a patch's headers say what it did to each file
        for value in call.arguments.values():
            for verb, p in patch_file_actions(value) if isinstance(value, str) else ():
                led.add_file(p, verb)
    for key in ("url", "uri", "href", "urls"):  # a page the agent fetched is one it read, as a file
        value = call.arguments.get(key)
        said = value if isinstance(value, str) else " ".join(map(str, value)) if isinstance(value, list) else ""
        for url in find_urls(said):
            led.add_list("urls", [url])
            led.add_list("fetched", [url])
    led.add_list("urls", find_urls(str(call.arguments.get("query") or "")))
    said = call.text if _is_command(call) else " ".join(clip(str(v), 120) for v in call.arguments.values())
    led.add_list("urls", find_urls(said))  # arguments clipped with a mark: no URL cut open
    led.add_list("ids", find_ids(call.text) if _is_command(call) else added_code(call.arguments, action))
    if _is_command(call):  # a shell-only agent reads and edits files with commands
        head = whole_head(call.text).split("\n", 1)[0]
        verb = shell_file_action(head)
        if verb:
            whole = quoted_paths(head)  # `cat 'LM Studio configuration.md'`, not `configuration.md`
            for p in whole + [p for p in find_paths(head) if not any(w.endswith(p) for w in whole)][:4]:
                if path_shaped(p) and not re.match(r"^\d*s/", p):  # not sed's `956s/except/...`
                    led.add_file(p, verb)
    for value in call.arguments.values():  # names of tests the agent wrote
        if isinstance(value, str):
            led.add_list("ids", re.findall(r"\bdef (test_\w+)", value)[:5])


def _read_result(led: Ledger, call, text: str) -> bool:
    """Read one tool result into the ledger; True when it says the call went wrong."""
    if call is not None and ASKS_USER_TOOL.search(call.name.lower()):  # the user's own answers
        said = asked_and_chosen(call.arguments, text)  # with their questions, unless said in prose
        text = HUMAN_WRAPPER.sub("", text).strip()  # Cline's `<answer>…</answer>`
        led.add_list("asks", [user_message(x) for x in said] or ([user_message(text)] if text.strip() else []))
        return False
    if call is not None and REPORT_TOOL.search(call.name):  # the user's reply to the agent's report
        for words in tagged_words(text):
            _read_user_words(led, words)
    status = exit_status(text)
    output = strip_injections(tool_output(text))
    cmd = whole_head(call.text) if call is not None and _is_command(call) else ""
    # a file's contents are no errors (`raise ValueError(...)` in code read back): reading
    # tools and read-only commands report errors only in a short answer (EISDIR, not found)
    reads = call is not None and reads_contents(call.name, cmd, call.arguments)
    if not reads:  # a harness's log the agent read back (`cat aider.log`) confirmed nothing now
        _read_confirmed(led, text)
    if is_placeholder(text):  # output a compactor pruned: the lines it kept are all there is; its
        # first line when an editor shows its file, or when it says the call failed (not a read's line)
        output = placeholder_lines(text, lambda line: OPEN_FILE_SHOWN.match(line) or is_error_line(line) and not reads)
    output = echoed_lines(foreign_lines(output, call.text), call.text) if cmd else output
    slash = call is not None and bool(SLASH_COMMAND.match(call.text or ""))
    if call is not None and not cmd:
        # a commit or a PR made by any tool (aider's own report) is an outcome; a command the
        # user typed to the agent itself (`/add x`, `/undo`) is no work unless it reports one
        family, outcome = outcome_of(output, status)
        if family in MADE:
            led.add_command(whole_head(call.text) if slash else call.name, status, outcome)
        if slash:
            return False
    failed = failed_field(text)
    # {"success": false, "error": "Failed to read file: ..."} from any tool; a command the user turned down
    # ran nothing, and its errors stay what its last run printed (_DID_NOT_RUN)
    if failed and not (cmd and USER_REFUSED.match(failed)):
        led.add_error(failed, cmd or tool_label(call))
    passed = False
    edit_label = ""
    family = outcome = ""
    if cmd:
        family, outcome = outcome_of(output, status)
        # a run whose result line says all passed failed nothing, whatever it logged, unless
        # a step before it could fail unseen (`a; b`, `a || b`; `a && b` ran b only after a)
        passed = status in (0, None) and all_passed(family, outcome, cmd)
        # what a read printed is what it read, not a result (`sed -n 1,80p x.js` -> a line of x.js),
        # unless the read failed or it read a log of a run
        # (a pruned output's placeholder says how many lines the read printed)
        lines = pruned_lines(text) or output.count("\n") + 1
        # a read that failed says why in its line: its program first (`ls: specs: No such file or directory`,
        # `Get-Content : Cannot find path …`), or in words where it printed a line or two (`The system cannot
        # find the file specified.`: READ_FAILED_WHY); one whose status alone failed over lines it read (`env
        # | grep …; cat x` whose last `cat` found no file) has no result in them: its first line (`PWD=/Users/…`,
        # `#!/usr/bin/env bash`, `version: '3.8'`, an `echo`'s `listener check exit: 1`) is what it read or printed
        named = re.match(r"([\w.+-]{1,40}) ?: ", outcome)
        said_why = (
            bool(named and re.search(rf"(?<![\w.-]){re.escape(named.group(1))}(?![\w.-])", cmd))
            or lines <= 2
            and bool(READ_FAILED_WHY.search(outcome))
            or is_error_line(outcome)
            or outcome_of(outcome)[0] == "failure"
        )
        read_failed = family == "failure" and (status not in (0, None) or lines < 4) and said_why
        if read_only(cmd) and not read_failed and not RUN_LOG.search(cmd) and not counted_by_read(cmd, outcome):
            outcome = ""
        if prints_own_text(call.text or ""):  # `cat << 'EOF'` and a checklist: the agent's words, no result
            outcome = ""
        led.add_command(cmd, status, outcome)
        shown = OPEN_FILE_SHOWN.search(output) if OPEN_FILE_EDIT.match(cmd) else None
        if shown and not EDIT_NOT_APPLIED.search(output):  # SWE-agent's `edit 12:14`: the file it has open
            led.add_file(shown.group(1), "edited")  # and the edits of that file turned down before are fixed
            edited = shown_command(f"edit {shown.group(1)}")
            led.resolve_file(
                cmd, lambda e: e.cmd == edited or e.cmd.startswith("edit ") and led.same_path(e.cmd[5:], shown.group(1))
            )
        elif shown:  # turned down: its errors are that file's
            edit_label = f"edit {shown.group(1)}"
    changes = call is not None and not cmd and tool_action(call.name, call.arguments) in ("edited", "created")
    # a failed edit names its file: a later write of it fixes it
    label = edit_label or (tool_label(call) if changes or call is not None and not cmd else cmd)  # which call failed
    said = error_text(text, output)
    errors, omitted = error_report(said) if not reads or len(said) <= READ_ANSWER_CHARS else ([], 0)
    # a line of a file as a tool prints it, numbered (a read's; an edit's snippet of the file it changed,
    # Claude Code's `  4→// error: connection refused is expected …`): the file's text, never an error
    errors = [e for e in errors if not NUMBERED_LINE.match(e) or not reads and not NUMBERED_ECHO.match(e)]
    # it says it did, in words or in its JSON's own field
    changed = changes and not failed and not errors and bool(CHANGE_DONE.search(said) or said_succeeded(text))
    if changes:  # code an edit echoes back (Claude Code's "All occurrences of '…' were replaced") is no error
        wrote = " ".join(" ".join(v.split()) for v in call.arguments.values() if isinstance(v, str))
        errors = [e for e in errors if not _echoed(e, wrote)]
    if changes and not failed and not changed and said_succeeded(text):  # Hermes's `patch` changed the file, and
        led.resolve_file(label)  # its earlier failed edits are fixed, whatever its lint says (listed after)
    piped = status == 0 and bool(re.search(r"(?<!\|)\|(?!\|)", cmd))  # `cmd | tail` reports tail's status
    went_wrong = status not in (0, None) or bool(errors) and (status is None or piped) and not passed
    if cmd and (went_wrong or status is None):  # passed unseen only if the rule below says so now
        led.passed_unseen.discard(shown_command(cmd))
    if went_wrong:
        for line in errors:
            led.add_error(line, label)
        if omitted:
            led.add_error(f"… and {omitted} more error lines", label)
    elif cmd and (
        status == 0 and not errors or passed or status is None and _passed_unseen(cmd, text, output, outcome)
    ):
        led.resolve(cmd, output)
        if status is None and not passed:
            led.passed_unseen.add(shown_command(cmd))
            if not outcome:  # a rerun that passed unseen, saying nothing of the failure before
                led.clear_failed_result(cmd)
    elif changed:
        led.resolve_file(label)
    # paths and URLs in tool output: only where they name a problem or a change
    for line in uncut(output, "line").splitlines()[:4000]:
        if is_error_line(line) or re.search(
            r"^\s*(?:modified|new file|deleted|renamed|created|wrote|saved|writing)\b", line, re.I
        ):
            for p in find_paths(line)[:4]:
                led.add_file(p, "mentioned")
    # URLs the work used, not a document's: a search's hits, a page fetched (by a tool or by curl), a file
    # read back (a comment's link in mix.exs), another agent's list of sources, a program's help link
    urls = [u for u in find_urls(output) if not re.search(r"pythonhosted|pypi\.org/simple|registry\.npmjs", u)]
    urls = [u for u in urls if not help_link(u, output)]
    name = call.name.lower() if call is not None else ""
    document = (
        bool(FOUND_URLS_TOOL.search(name))
        or (reads and len(output) > READ_ANSWER_CHARS)
        or (bool(DELEGATE_TOOL.search(name)) and len(urls) > MANY_URLS)
        or fetches_web(cmd)
    )
    if not document:
        led.add_list("urls", urls[:3])
    led.add_list("ids", find_ids(output, strict=True)[:3])
    # a call that failed did nothing to its file, when it says so: an error field or envelope, a
    # status, a short answer that leads with an error (OpenCode's `Error: Could not find
    # oldString`), a rejected edit; never an error-looking line of code or of a lint report in what
    # a change shows back, nor a test a chain runs after its edit
    first = next((ln for ln in said.splitlines() if ln.strip()), "") if len(said) <= READ_ANSWER_CHARS else ""
    said_first = is_error_line(first) and not NUMBERED_LINE.match(first) or bool(EDIT_NOT_APPLIED.search(output))
    if not cmd:
        saved = changes and bool(CHANGE_DONE.search(said) or said_succeeded(text))
        return bool(failed) or status not in (0, None) or said_first and not saved
    return (status not in (0, None) or said_first) and (read_only(cmd) or bool(EDITOR_COMMAND.match(cmd)))


# a library named in prose by its brand (Next.js, Chart.js, Tesseract.js): no file of the work
_BRAND = re.compile(r"^[A-Z][A-Za-z0-9]*\.js$")


def _read_text(led: Ledger, t: Turn) -> None:
    text = t.text
    if not text.strip():
        return
    for p in find_paths(text):
        if not _BRAND.match(p):
            led.add_file(p, "mentioned")
    urls = find_urls(text)
    if t.role != "assistant" or len(urls) <= MANY_URLS:  # a list of many is a search's sources, not what was used
        led.add_list("urls", urls)
    led.add_list("ids", find_ids(text))
    if t.role == "assistant":
        for line in uncut(text, "line").splitlines():
            m = re.match(r"^\s*\$ (\S.*)$", line)
            if m:
                led.add_command(m.group(1).strip(), None)
    if t.role == "user":  # directives only from what a human typed, never an envelope
        machine = machine_written(text)
        _read_user_words(led, human_words(text), machine)
        if machine:  # a user quoting aider's log in a request of theirs confirmed nothing
            _read_confirmed(led, text)
        if done := BACKGROUND_DONE.match(text):  # what a background run printed is that command's result
            cmd, status, output = done.group("cmd").strip(), int(done.group("status")), done.group("output")
            call = ToolCall("background", "terminal", {"command": cmd}, cmd)
            _read_result(led, call, json.dumps({"output": output.strip(), "exit_code": status}))
    if t.role == "assistant":
        led.add_list("ids", code_names(text, exclude=set(led.files) | {c.cmd for c in led.commands}))


# Hermes's notice of a background process that ended (tools/process_registry, sent in the user's role):
# its command, exit code and output; a held-out session's `git push` was rejected there
BACKGROUND_DONE = re.compile(
    r"\A\s*\[IMPORTANT: Background process \S+ completed[^(\n]*\(exit[ _]code[=:]?\s*(?P<status>-?\d+)\)\.?[ \t]*\n"
    r"Command: (?P<cmd>[^\n]+)\nOutput:[ \t]*\n?(?P<output>.*?)\]?\s*\Z",
    re.S,
)


def _read_confirmed(led: Ledger, text: str) -> None:
    """What a harness's questions the user answered yes confirmed (aider's "Add file to the chat?",
    "Run shell command?"): the files added to the chat are read, a new file created, the commands
    run (their output is the harness's to show; none is in its log)."""
    for action, subject in confirmed(text):
        if action == "command":
            led.add_command(subject, None)
        elif path_shaped(subject):
            led.add_file(subject, action)


def _read_user_words(led: Ledger, words: str, machine: bool = False) -> None:
    """What a human typed, wherever it arrived (a user turn, a reply inside a tool's output): a
    request in User Messages and its directives in Constraints. A slash command (`/undo`) is a
    command to the agent, not a request; an envelope's lines are no directives."""
    if words.strip() and not SLASH_COMMAND.match(words):
        led.add_list("constraints", [redact(c) for c in user_constraints(words)] if not machine else [])
        led.add_list("asks", [user_message(words)])


# a write tool saying the file it wrote was there before (Claude Code's Write: "The file /x/app.tsx has
# been updated.", "… has been overwritten successfully."): the file was edited, not created
OVERWRITTEN = re.compile(r"\bhas been (?:updated|overwritten|modified)\b", re.I)
# an edit or write tool saying it changed the file ("Wrote file successfully.", "Edit applied
# successfully.", "The file x has been updated.", `{"bytes_written": 12}`): only then is it a fix
CHANGE_DONE = re.compile(r"\b(?:success(?:fully)?|updated|applied|wrote|written|saved)\b|bytes_written", re.I)


def _echoed(error: str, wrote: str) -> bool:
    """An error line that is the edit's own text said back: whole, or after the quote that opens it
    (`All occurrences of '    assert status == 404`), never a failure that quotes a few words of it."""
    folded = " ".join(error.rstrip("…").split())
    quoted = " ".join(folded.rsplit("'", 1)[-1].split()) if "'" in folded else ""
    return folded in wrote or (len(quoted.split()) >= 3 and quoted in wrote)


# a harness's notice that a command did not run to its end, or that its output was cut: backgrounded,
# refused by the user, interrupted, timed out (Claude Code's shapes); no pass, whatever error it lacks
_DID_NOT_RUN = re.compile(
    r"Command running in background with ID|doesn['’]t want to proceed|tool use was rejected|"
    r"\[Request interrupted by user|\btimed out after\b|\boutput (?:was )?truncated\b|\bchars omitted\b",
    re.I,
)


def _passed_unseen(cmd: str, text: str, output: str, outcome: str) -> bool:
    """A run with no exit status and no error line passed, where a harness reports a status only
    on a failure (Claude Code's `Exit code 1`): unless it printed nothing, its result line is a
    failing verdict (`Tests: 1 failed`), a harness says it did not run to its end, the output is a
    compactor's placeholder (its status is not kept), or a step may hide a failure (`may_hide`)."""
    failing = bool(outcome) and (
        is_run_verdict(outcome) and not says_passed(outcome, cmd) or outcome_of(outcome)[0] == "failure"
    )
    return (
        bool(output.strip())
        and not failing
        and not _DID_NOT_RUN.search(text[:2000])
        and not is_placeholder(text)
        and not text.startswith("[duplicate tool output")
        and not may_hide(cmd)
    )


def _is_command(call) -> bool:
    return bool(command_of(call.name, call.arguments)) and not SLASH_COMMAND.match(call.text or "")
