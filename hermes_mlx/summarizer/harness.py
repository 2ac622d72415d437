"""What a harness puts around the words of a session: the folder it says the agent works in, the
context blocks it appends to a user's turn or a tool's output, and the tags it wraps the user's own
words in. The vocabulary of the words themselves (announcements, causes, shell tools) is
vocabulary.py's, and read-only commands are shell_words.py's; these shapes say where the words are,
not what they mean, and each is written once here (text.py, absorb.py and workfolder.py read them).
"""

from __future__ import annotations

import re
from bisect import bisect_left

# tool-call argument keys that name the folder a command runs in (Codex's and Hermes's shell tools)
CWD_KEYS = ("cwd", "workdir", "working_directory", "working_dir")
# a session stating its folder: Claude Code's `Working directory: /x` (its <env> block), Cursor's
# `Workspace Path: /x`, Codex's `<cwd>/x</cwd>` envelope, a `cwd: /x` line of a harness, SWE-agent's
# `(Current directory: /x)`
CWD_STATED = re.compile(
    r"(?im)^[ \t]*\(?(?:(?:current |primary )?working (?:directory|folder|dir)|current directory|"
    r"workspace (?:path|folder|root)|cwd)[ \t]*[:=][ \t]*[`\"']?((?:/|~/|[A-Za-z]:[\\/])[^\s`\"'<>)]*)[`\"']?\)?[ \t]*$"
    r"|<cwd>\s*((?:/|~/|[A-Za-z]:[\\/])[^<\s]*)\s*</cwd>"
    r"|^#[ \t]*current (?:workspace|working) directory[ \t]*\(((?:/|~/|[A-Za-z]:[\\/])[^()\n]*?)\)"  # Cline's, Roo Code's
)
# a harness's context block in a user turn or a tool's output, no one's words and no work: Cline's,
# Roo Code's and Kilo Code's `<environment_details>` (open tabs, the time, the workspace's file
# listing), Claude Code's `<system-reminder>`, Codex's `<environment_context>` and
# `<user_instructions>`, Cursor's `<user_info>` and `<additional_data>`, OpenHands'
# `<RUNTIME_INFORMATION>`, and Codex's `<turn_aborted>` notice that the user interrupted a turn (its
# "The user interrupted the previous turn on purpose. …" had led a user's message). Only the
# folder it states is read (CWD_STATED).
CONTEXT_BLOCK = re.compile(
    r"<(environment_details|system-reminder|environment_context|user_instructions|user_info|additional_data|"
    r"runtime_information|repository_info|turn_aborted)>.*?</\1>",
    re.S | re.I,
)
# the trailer Claude Code puts at the end of a sub-agent's report (`agentId: a3a6980 (for resuming to
# continue this agent's work if needed)`, then `<usage>total_tokens: …</usage>`: four sessions, three of
# them in the corpora): no one's words. Only a report's last characters are searched
REPORT_TRAILER = re.compile(
    r"\n[ \t]*agentId: \w+ \(for resuming[^)\n]*\)[ \t]*(?:\n[ \t]*<usage>[^<]{0,400}</usage>)?\s*\Z"
    r"|\n[ \t]*<usage>[^<]{0,400}</usage>\s*\Z"
)


def without_report_trailer(report: str) -> str:
    """A sub-agent's report less its harness's trailer (REPORT_TRAILER)."""
    tail = max(0, len(report) - 700)
    m = REPORT_TRAILER.search(report, tail)
    return report[: m.start()] if m else report


# a worked example a harness shows the agent in a user turn, after the lines that introduce it:
# SWE-agent's "Here is a demonstration …" then `--- DEMONSTRATION ---` … `--- END OF DEMONSTRATION ---`,
# OpenHands' "Here's a running example …" then `--- START OF EXAMPLE ---` … `--- END OF EXAMPLE ---`.
# Its task, files and folder are another session's (a demo on marshmallow had been the Goal of a
# pydicom fix and filled Files with marshmallow's), so nothing in it is read. A block with no such
# introduction, or no end, is the user's own
_EXAMPLE_INTRO = re.compile(
    r"^[ \t]*(?:Here is a demonstration of how to correctly accomplish this task\.|Here's a running example of how to)"
    r"[^\n]*\n(?:[^\n]*\n){0,3}?[ \t]*-{3,}[ \t]*(?:START OF )?(DEMONSTRATION|EXAMPLE)[ \t]*-{3,}[ \t]*$",
    re.M | re.I,
)
_EXAMPLE_END = {
    "DEMONSTRATION": re.compile(r"^[ \t]*-{3,}[ \t]*END OF DEMONSTRATION[ \t]*-{3,}[ \t]*$\n?", re.M | re.I),
    "EXAMPLE": re.compile(r"^[ \t]*-{3,}[ \t]*END OF EXAMPLE[ \t]*-{3,}[ \t]*$\n?", re.M | re.I),
}


def without_examples(text: str) -> str:
    """`text` less each worked example a harness introduced (_EXAMPLE_INTRO … its END line)."""
    while (start := _EXAMPLE_INTRO.search(text)) and (
        end := _EXAMPLE_END[start.group(1).upper()].search(text, start.end())
    ):
        text = text[: start.start()] + text[end.end() :]
    return text


# a custom slash command the user ran (Claude Code's `<command-message>gsd:debug</command-message>
# <command-name>/gsd:debug</command-name><command-args>…</command-args>`): the user turn right after
# it is the command's prompt file, expanded by the harness (`<objective> Debug issues using
# scientific method …`), no words the user typed (their arguments are in the command's turn)
SLASH_INVOKED = re.compile(r"\A\s*<command-(?:message|name)>")
# the tags a harness wraps around the user's own words (Cline's `<task>`, `<feedback>` and
# `<answer>`, Cline's and Roo Code's `<user_message>` after "New instructions for task continuation:",
# Cursor's `<user_query>`, Windsurf's `<USER_REQUEST>`): the words are the user's
_HUMAN_TAGS = "task|feedback|answer|user_message|user_query|user_request"
HUMAN_WRAPPER = re.compile(rf"</?(?:{_HUMAN_TAGS})>", re.I)
# the user's own words inside a tool's output: Cline's and Roo Code's `attempt_completion` result
# carries the user's reply to the report as `<feedback>…</feedback>`
_HUMAN_OPEN = re.compile(rf"<({_HUMAN_TAGS})>", re.I)


def tagged_words(text: str) -> list[str]:
    """The words inside each pair of HUMAN_WRAPPER tags, in order: a scan, linear however many
    tags are left open (a lazy pattern had rescanned the text from each unclosed `<task>`)."""
    out, unclosed, at, lowered = [], set(), 0, text.lower()
    while m := _HUMAN_OPEN.search(text, at):
        tag = m.group(1).lower()
        end = -1 if tag in unclosed else lowered.find(f"</{tag}>", m.end())
        if end == -1:
            unclosed.add(tag)
            at = m.end()
            continue
        out.append(text[m.end() : end].strip())
        at = end + len(tag) + 3
    return out


# what Cline, Roo Code and Kilo Code send as the user when a reply called no tool (`formatResponse.noToolsUsed`:
# "[ERROR] You did not use a tool in your previous response! …" on a line of its own, its reminder of the call
# format, up to its "(This is an automated message, so do not respond to it conversationally.)"; a user
# quoting its first words is no note) and what Cline's focus chain adds to a user
# turn or a tool's result (`# TODO LIST RECOMMENDED`, `# TODO LIST NEEDED`: how to keep a todo list, up to its
# "… ensures nothing is missed." or the turn's context block; words after it are the user's): a Cline
# session's Goal had been the first, its Constraints the call format's rules
AUTOMATED_NOTE = re.compile(
    r"^\[ERROR\] You did not use a tool in your previous response!(?s:.{0,4000}?)"
    r"\(This is an automated message, so do not respond to it conversationally\.\)"
    r"|^# TODO LIST (?:RECOMMENDED|NEEDED)\b(?s:.{0,4000}?)(?:ensures nothing is missed\.|(?=^<environment_details>))",
    re.S | re.M,
)


def _review_prompt_at(text: str) -> int:
    """Where a line of `text` opens Hermes's review prompt (REVIEW_PROMPT_LEAD), -1 if none does."""
    at = 0 if text.lstrip().startswith(REVIEW_PROMPT_LEAD) else text.find("\n" + REVIEW_PROMPT_LEAD)
    return at if at <= 0 else at + 1


# Hermes's background review (agent/background_review.py, `_MEMORY_REVIEW_PROMPT`, `_SKILL_REVIEW_PROMPT`,
# `_COMBINED_REVIEW_PROMPT`), sent as the user after a turn: "Review the conversation above and …", its
# rules for memory and skills, ending on when to say 'Nothing to save.'. A held-out Hermes session's
# Constraints had been its rules ("Not a long flat list of narrow one-session-one-skill entries.")
REVIEW_PROMPT_LEAD, REVIEW_PROMPT_MARK = "Review the conversation above and ", "'Nothing to save.'"


def without_automated(text: str) -> str:
    """`text` less a harness's automated notes to the agent (AUTOMATED_NOTE) and Hermes's review prompt
    (a message of its own, or joined to the user's turn before it: from its first line to the line that
    ends it with REVIEW_PROMPT_MARK); as is when it has none."""
    mark = text.rfind(REVIEW_PROMPT_MARK)
    if mark > 0 and 0 <= (at := _review_prompt_at(text)) < mark:  # (one scan for a text without it)
        end = text.find("\n", mark)
        text = (text[:at] + (text[end:] if end != -1 else "")).strip()
    if "You did not use a tool" not in text and "# TODO LIST" not in text:
        return text
    return AUTOMATED_NOTE.sub("", text).strip()


# what Cline writes when a task is resumed, before the user's words: its "[TASK RESUMPTION] This task
# was interrupted …" paragraph and notes, the last input before the interruption, and the line before
# the new words ("New instructions for task continuation:", or in plan mode "New message to respond
# to with plan_mode_respond tool …:"); a resumed Roo Code task's Goal had been that line
_RESUMPTION_NOTES = (
    "[TASK RESUMPTION]",
    "Note: If you previously attempted a tool use",
    "IMPORTANT: If the last tool use was",
    "Last recorded user input before interruption:",
)
_RESUMPTION_LEADS = ("New instructions for task continuation:", "New message to respond to with plan_mode_respond tool")


def without_resumption(text: str) -> str:
    """`text` less Cline's resumption notes (paragraphs that start as they do, and the previous
    message they quote) and the line it puts before the user's new words; as is when it has none."""
    if "[TASK RESUMPTION]" not in text:
        return text
    start = text.find("<previous_message>")
    end = text.find("</previous_message>", start) if start != -1 else -1
    if end != -1:
        text = text[:start] + text[end + len("</previous_message>") :]
    kept = []
    for para in re.split(r"\n[ \t]*\n", text):
        lead = para.lstrip()
        if lead.startswith(_RESUMPTION_NOTES):
            continue
        if lead.startswith(_RESUMPTION_LEADS):
            para = lead.split("\n", 1)[1] if "\n" in lead else ""
        kept.append(para)
    return "\n\n".join(p for p in kept if p.strip())


# the label Cline and Roo Code put before a tool's result in the turn that carries it back:
# `[execute_command for 'npm test'] Result:`, `[update_todo_list] Result:`, `[new_task completed] Result:`
TOOL_RESULT_LABEL = re.compile(
    r"\A\s*\[[a-z]+(?:_[a-z0-9]+)+(?: completed)?(?: for '(?s:.{0,2000}?)')?\] Result:[ \t]*\n?"
)
# Claude Code's pointer after a plan the user accepted with a cleared context ("Implement the following
# plan:\n\n<plan>" then this, then any "User feedback on this plan: …"): the harness's words, not the user's
# (ten public transcripts carry it); a clipped request had ended on it instead of the plan's own end
PLAN_POINTER = re.compile(
    r"If you need specific details from before exiting plan mode \(like exact code snippets, error messages, or "
    r"content you generated\), read the full transcript at: [^\n]*"
)


def without_plan_pointer(text: str) -> str:
    """A user turn less Claude Code's PLAN_POINTER (and the blank lines it leaves at the end)."""
    return PLAN_POINTER.sub("", text).rstrip() if "before exiting plan mode" in text else text


# a terminal harness's status lines in a transcript it exported or a screen captured: Claude Code's turn
# timer (`✻ Worked for 1m 49s`, `✻ Baked for 6m 13s`) and its collapsed groups (`Thought for 18s (ctrl+o
# to expand)`, `Read 2 files, ran 1 shell command (ctrl+o to expand)`), seen in public exports and tmux
# captures; they had been Progress lines
_STATUS_LINE = re.compile(
    r"^[ \t]*(?:✻ \w+ for (?:\d+h )?(?:\d+m )?\d+s\b[^\n]{0,80}|[^\n]{0,200}\(ctrl\+[a-z] to expand\))[ \t]*$\n?", re.M
)


def without_status_lines(text: str) -> str:
    """An assistant turn less a terminal harness's status lines (_STATUS_LINE)."""
    return _STATUS_LINE.sub("", text) if "✻" in text or "to expand)" in text else text


# Cline's note when a model wrote on past its one tool call (`if (this.didAlreadyUseTool) assistantMessage
# += "[Response interrupted by a tool use result. …]"`, kept by its forks): what it wrote after the call it
# wrote for a turn it had not seen ("User: [read_file for 'package.json'] Result:{ …", a file it imagined).
# Such a turn, in the harness's own label, starts it with or without the note
RAN_AHEAD = re.compile(r"^[ \t]*\[Response interrupted by a tool use result\.[^\]\n]{0,200}\][ \t]*$", re.M)
_TOOL_LABEL = r"\[[a-z]+(?:_[a-z0-9]+)+(?: for '[^'\n]{0,2000}')?\] Result:"
_OTHER_SIDE = re.compile(rf"^(?:User|Human):[ \t]|^{_TOOL_LABEL}", re.M)
_OTHER_SIDE_LABELLED = re.compile(rf"^(?:User|Human):[ \t]*{_TOOL_LABEL}", re.M)


def without_run_ahead(text: str) -> str:
    """An assistant turn less what its model wrote for the other side: from the first line that speaks
    as the user or as a tool's result up to the harness's RAN_AHEAD note (on a line of its own), or to
    the end from a line that speaks as the user in the harness's tool-result label; never a line inside
    a fenced block (a reply may show the label it parses). A Cline session's Progress had listed lines
    of a `package.json` its model imagined reading."""
    if "] Result:" not in text and "Response interrupted" not in text:
        return text  # neither shape: most turns are read no further
    note = RAN_AHEAD.search(text)
    if note:
        before = text[: note.start()]
        other = _unfenced(_OTHER_SIDE, before)
        text = (before[:other] if other >= 0 else before).rstrip() + text[note.end() :]
    labelled = _unfenced(_OTHER_SIDE_LABELLED, text)
    return text[:labelled].rstrip() if labelled >= 0 else text


_FENCE = re.compile(r"^[ \t]*```", re.M)


def _unfenced(pattern: re.Pattern, text: str) -> int:
    """Where `pattern` first matches `text` outside a fenced code block; -1 when nowhere."""
    fences = [m.start() for m in _FENCE.finditer(text)]
    for m in pattern.finditer(text):
        if bisect_left(fences, m.start()) % 2 == 0:
            return m.start()
    return -1


# `cd DIR && …` / `cd "DIR"; …`: the folder a shell command runs in
CD_PREFIX = re.compile(r"^\s*cd\s+([\"']?)((?:/|~/|[A-Za-z]:[\\/])[^\"';&|\n]*?)\1\s*(?:&&|;)")
# a user's home folder, in the spellings agents' paths use (`/c:/Users/x` is VS Code's)
HOME_DIR = re.compile(r"^(?:/home/[^/]+|/Users/[^/]+|/root|~|/[A-Za-z]:/Users/[^/]+)(?=/)", re.I)
# a system's folders for temporary files (in posix form: `/C:/Users/x/AppData/Local/Temp/`): where a
# harness leaves scratch output (Claude Code's background tasks' `…/Temp/claude/…/tasks/x.output`,
# `/tmp/claude/…`), never the folder of the work
TEMP_DIR = re.compile(
    r"^(?:/tmp/|/var/tmp/|/(?:private/)?var/folders/|/dev/shm/|/[A-Za-z]:/Users/[^/]+/AppData/Local/Temp/)", re.I
)
# where a harness saves a command's output too long to show, for the agent to read back (Claude Code's
# `~/.claude/projects/<project>/<session>/tool-results/<id>.txt`, Cursor's `~/.cursor/projects/<project>/
# agent-tools/<id>.txt`): the output of a run, never a file of the work
HARNESS_STORE = re.compile(r"/\.(?:claude|cursor)/projects/[^\n]*?/(?:tool-results|agent-tools)/")
# the folders a project keeps its code in: a project's root is the folder above them
SOURCE_DIRS = frozenset(
    "src lib test tests spec app assets config priv docs scripts cmd pkg internal support fixtures".split()
)

# a terminal harness's question the user answered, on one line: aider's `Add file to the chat?
# (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: a`, `Run shell command? … [Yes]: y`. Aider's
# chat logs hold them in its output and, split at what the user typed, in user turns: a turn that
# starts with one is the harness's, its "all" no request of the user's
ANSWERED_PROMPT = re.compile(
    r"^[ \t]*(?P<ask>[^\n]*?\?)[ \t]+\(Y\)es/\(N\)o\b[^\n]*?\[(?P<default>Yes|No)\]:[ \t]*(?P<answer>[^\n]*?)[ \t]*$",
    re.M,
)
# what a question answered yes confirms, rules as data: the path on the line before it added to the
# chat (a file the agent reads) or created; the commands on the `Running …` lines after it run, each
# one the harness showed before asking (what a command then printed may start "Running" too)
_CONFIRMS = (
    (re.compile(r"^Add file to the chat\?$"), "read"),
    (re.compile(r"^Create new file\?$"), "created"),
    (re.compile(r"^Run shell commands?\?$"), "command"),
)
_RUNNING = re.compile(r"^Running (\S.*)$")
PROMPT_CHARS = 300  # a question's line is short: a longer line is never read as one (linear on any text)
_ALL = frozenset({"a", "all"})  # "(A)ll": the files after this one too, asked or not


def confirmed(text: str) -> list[tuple[str, str]]:
    """(action, subject) for each thing `text`'s answered questions confirmed (_CONFIRMS): ("read",
    path), ("created", path), ("command", cmd). A "no", "skip" or "don't ask" confirms nothing."""
    lines = text.splitlines()
    asked = [ANSWERED_PROMPT.match(ln) if len(ln) <= PROMPT_CHARS else None for ln in lines]
    out: list[tuple[str, str]] = []
    shown_from = 0  # where the lines the harness showed before this question start
    for i, m in enumerate(asked):
        if m is None:
            continue
        answer = (m.group("answer") or m.group("default")).lower()
        action = next((a for ask, a in _CONFIRMS if ask.match(m.group("ask").strip())), "")
        shown, shown_from = {ln.strip() for ln in lines[shown_from:i]}, i + 1
        if not action or answer not in ("y", "yes", *_ALL):
            continue
        if action == "command":
            j = i + 1
            while j < len(lines) and (run := _RUNNING.match(lines[j].strip())) and run.group(1).strip() in shown:
                out.append((action, run.group(1).strip()))
                j += 1
            continue
        near = [lines[i - 1]] if i and asked[i - 1] is None else []
        # "(A)ll": the path after it too, unless a question of its own follows it (that answer tells)
        if answer in _ALL and i + 1 < len(lines) and asked[i + 1] is None and (i + 2 >= len(lines) or not asked[i + 2]):
            near.append(lines[i + 1])
        out += [(action, p.strip()) for p in near if p.strip()]
    return out


# a shell's prompt: zsh's and bash's `me@host app %`, PowerShell's `PS E:\Dev\app>` and cmd.exe's
# `C:\Users\me>` (Cursor's Windows terminal ends each command's output with one; a user pastes a
# terminal session from one), its mark then a space or the line's end (`repo.git#v2`, `Node >= 18` are none)
SHELL_PROMPT = re.compile(
    r"[\w.-]+@[\w.-]+(?::| )[^\s%$#]{0,200} ?[%$#](?=\s|$)|PS (?:[A-Za-z]:\\|/|~)[^<>|\n]{0,200}(?<![-=])>(?![=>])"
    r"|[A-Za-z]:\\[^<>|\n]{0,200}(?<![-=])>(?![=>])"
)
