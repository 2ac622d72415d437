"""What a span of a real agent session established, read by code: who wrote each user turn,
the task in progress, the plan's open items, and which identifiers matter (the agent's findings
are findings.py's, the working folder workfolder.py's).

Trackers driven from the shell (`bd update X --status in_progress`, `bd show EPIC` listing its
children) and todo tools say what is in progress and what is left, better than any sentence.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from .harness import ANSWERED_PROMPT, PROMPT_CHARS
from .text import Turn, clip, command_of
from .tool_results import failed_field, json_result, untrailed
from .vocabulary import reads_contents
from .workfolder import working_folder  # noqa: F401  (its own module now; callers still import it here)

# ---------------------------------------------------------------- who wrote a user turn

_MACHINE_USER = re.compile(
    r"^\s*(?:<(?:task-notification|system-reminder|local-command-stdout|local-command-stderr|command-name|"
    r"command-message|bash-input|bash-stdout|bash-stderr|user-prompt-submit-hook)\b"
    r"|\[Request interrupted by user|Command running in background with ID|Caveat: The messages below"
    r"|This session is being continued from a previous conversation|\[CONTEXT COMPACTION"
    r"|<pr_description>"
    # Hermes's notices sent in the user's role (a background process that finished, a delegation's report,
    # the todo list carried over a compression, its merged prior context): a held-out session's Goal had
    # been a `git push`'s rejection reported by `[IMPORTANT: Background process proc_… completed (exit code 1).`
    r"|\[IMPORTANT: (?:Background process \S+|\d+ background processes)\b|\[ASYNC DELEGATION\b"
    r"|\[Your active task list was preserved across context compression\]|\[PRIOR CONTEXT\b"
    # aider's prompts sent as the user (coders/base_prompts.py, editblock's reflection): the files it added, its
    # repository map, a SEARCH/REPLACE block that did not apply
    r"|(?-i:I have \*added these files to the chat\*|Here are summaries of some files present in my git repository\."
    r"|Here are some READ ONLY files|I switched to a new code base\.|# \d+ SEARCH/REPLACE blocks? failed to match!)"
    # Claude Code's record of a Stop hook that sent the agent back to work (its `isMeta` turns)
    r"|(?:Subagent)?Stop hook feedback:"
    # VS Code Copilot's buttons, sent in the user's name (`@agent Continue: "Continue to iterate?"` after its
    # request limit, `@agent Enable: "Enable **Gemini 3 Pro (Preview)** for all clients"`, `@agent Try Again`):
    # a held-out session's Goal had been the model's enablement; exported chats of many repositories show them
    r"|(?-i:@agent (?:Continue: \"Continue to iterate\?\"|Enable: \"[^\"\n]{1,300}\"|Try Again)\s*$)"
    # Gemini CLI's first turn, its environment in the user's name (the folder, the date, a listing of the
    # files): a held-out session opens with it, and a hand-made one whose user said "hi" first had it as Goal
    r"|This is the Gemini CLI\. We are setting up the context for our chat\."
    # a harness turning down a reply it could not parse, in its template's words: mini-swe-agent's
    # format error, SWE-agent's (a person's "your output was not formatted correctly: …" is theirs)
    r"|(?-i:Please always provide EXACTLY ONE action in triple backticks\b"
    r"|Your output was not formatted correctly\. (?:You must|Please make sure|Your commands)))",
    re.I,
)
_HUMAN_PART = re.compile(r"<command-args>(.*?)</command-args>", re.S)


def machine_written(text: str) -> bool:
    """A user turn no human typed: a harness's envelope, a notification, an interruption note,
    a hook's feedback, a compaction summary handed back, a harness's notice that it could not parse
    a reply, a terminal harness's question the user answered (aider's "Add file to the chat? …
    [Yes]: all"). Its lines are no directives and it is no goal.
    (An SWE-bench task statement in `<pr_description>` is the goal, read by `task_text`.)"""
    text = (text or "").lstrip()
    return bool(_MACHINE_USER.match(text) or _answers_only(text)) and not text.startswith("<pr_description>")


def _answers_only(text: str) -> bool:
    """Only a terminal harness's questions the user answered, and the paths it asked them of (a word
    with a folder or an extension: a user's "refactor" or "stop" after a question is theirs)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    asked = [len(ln) <= PROMPT_CHARS and bool(ANSWERED_PROMPT.match(ln)) for ln in lines]
    return any(asked) and all(a or _PATH_WORD.fullmatch(ln) for a, ln in zip(asked, lines))


_PATH_WORD = re.compile(r"\S*[/\\]\S*|\S+\.[A-Za-z]\w{0,9}")


def human_words(text: str) -> str:
    """What a human typed in a user turn: the whole text (less the prompt a harness's terminal
    left after it: SWE-agent's `(Open file: …)`, `bash-$`), or a slash command's arguments; "" for
    an envelope with none."""
    if not machine_written(text):
        return untrailed(text)
    args = " ".join(" ".join(m.split()) for m in _HUMAN_PART.findall(text or "") if m.strip())
    return args


# ---------------------------------------------------------------- tracker state and plan

_TASK_ID = r"[A-Za-z][\w\-]*-[\w]+(?:\.\d+)*|#\d+"
_IN_PROGRESS = re.compile(
    r"\b(?:bd|beads|tk|task|issue)\s+(?:update|start)\s+("
    + _TASK_ID
    + r")\b[^\n]*?(?:--status[= ]in[_-]?progress|\bstart\b)"
)
_CLOSED = re.compile(r"\b(?:bd|beads|tk|task)\s+(?:close|done|complete)\s+(" + _TASK_ID + r")\b")
_LISTED = re.compile(r"^\s*(?:[↳←→↑•*\-]\s*)*([○◐●✓✔☐☑□■x ]?)\s*(" + _TASK_ID + r"):\s+(.+?)(?:\s+●\s*P\d)?\s*$")
_OPEN_MARKS = {"○", "◐", "☐", "□", ""}


@dataclass
class PlanState:
    in_progress: str = ""  # "ID: title" of the task last set in progress and not closed since
    next_steps: list = field(default_factory=list)  # the open items of the latest plan, verbatim
    closed: set = field(default_factory=set)  # tasks closed in these turns
    listed: bool = False  # these turns list a plan (a todo list all done has no open items left)


TODO_STATUSES = frozenset({"pending", "in_progress", "completed", "cancelled", "done", "todo"})
# a todo tool's answer that lists the whole plan as it stands: Hermes Agent's `todo` returns
# {"todos": [...]} on every call, Cursor's todo_write {"finalTodos": [...]} (its call may carry
# only `{"merge": true}`, or the few items a merge changed)
_LISTED_TODOS = ("todos", "finalTodos")


# a checklist line (Roo Code's `update_todo_list` takes "[x] done\n[-] doing\n[ ] next", Cline's
# `task_progress` "- [x] done"): its mark, then the item
_CHECK_MARK = r"^[ \t]*(?:[-*][ \t]+)?\[([ xX✓✔~/⚡-])\]"
_CHECKLIST_ITEM = re.compile(_CHECK_MARK + r"[ \t]+(\S[^\n]*)", re.M)  # its text: `.split()`
_CHECK_STATUS = (
    dict.fromkeys(" ", "pending") | dict.fromkeys("xX✓✔", "completed") | dict.fromkeys("-~/⚡", "in_progress")
)


# where a todo tool's call holds its list: Claude Code's and Copilot's `todos`, OpenHands' `task_list`,
# `items`, Cline's checklist `task_progress`
_TODO_KEYS = ("todos", "task_list", "items", "task_progress")


def _todo_list(arguments: dict, more: tuple[str, ...] = ()):
    """The first of a todo tool's list arguments (_TODO_KEYS, then `more`) that holds anything."""
    return next((arguments[k] for k in (*_TODO_KEYS, *more) if arguments.get(k)), None)


def _todo_items(arguments: dict) -> list[tuple[str, str]]:
    """(status, content) of a todo tool's call (Claude Code's TodoWrite, OpenHands' task_tracker,
    Codex's update_plan `{"plan": [{"step", "status"}]}`), or of a checklist one is given as text
    (Roo Code's `update_todo_list`, Cline's `task_progress`, the Codex export's `- [⚡] doing`)."""
    todos = _todo_list(arguments, ("plan",))  # Codex's update_plan
    if isinstance(todos, str):
        try:
            todos = json.loads(todos)
        except (ValueError, RecursionError):
            return [(_CHECK_STATUS[m.group(1)], " ".join(m.group(2).split())) for m in _CHECKLIST_ITEM.finditer(todos)]
    return [_todo_item(item, "pending") for item in todos if isinstance(item, dict)] if isinstance(todos, list) else []


# a checklist item's note, on the line under it: VS Code Copilot's `manage_todo_list` (its export's
# "- [x] Identify version mismatch\n  > Version mismatch found: package.json shows 1.17.1 …")
_CHECKLIST_NOTE = re.compile(_CHECK_MARK + r"[^\n]*\n[ \t]+>[ \t]*(\S[^\n]*)", re.M)
_JSON_LIST = re.compile(r"\s*\[\s*[{\]]")  # a list of records as JSON text, compact or pretty-printed
_NOTE_KEYS = ("notes", "note", "result", "outcome")  # OpenHands' task_tracker keeps `notes` on an item


def done_notes(arguments: dict) -> list[str]:
    """What a todo tool's call notes under the items it marks completed: the agent's own record of
    what each step found or did ("Identified: semver.clean('V2.17.3') returns null", "ROOT CAUSE
    FOUND: …"). An open item's note says what is to be done (the plan), a cancelled one's why it
    was dropped: no finding."""
    todos = _todo_list(arguments)
    if isinstance(todos, str):
        try:
            todos = json.loads(todos) if _JSON_LIST.match(todos) else todos
        except (ValueError, RecursionError):
            return []
    if isinstance(todos, str):  # a checklist given as text (Copilot's, Roo Code's `[x] done`)
        return [m.group(2).strip() for m in _CHECKLIST_NOTE.finditer(todos) if _CHECK_STATUS[m.group(1)] == "completed"]
    items = [x for x in todos if isinstance(x, dict)] if isinstance(todos, list) else []
    notes = [next((x[k] for k in _NOTE_KEYS if isinstance(x.get(k), str) and x[k].strip()), "") for x in items]
    return [n.strip() for x, n in zip(items, notes) if n and str(x.get("status", "")).lower() in ("completed", "done")]


def _todo_item(item: dict, default_status: str = "") -> tuple[str, str]:
    """(status, content) of one todo item, its text on one line, under any of the names tools use (Gemini
    CLI's `write_todos` calls it `description`)."""
    text = (
        item.get("content")
        or item.get("title")
        or item.get("task")
        or item.get("step")
        or item.get("description")
        or ""
    )
    return str(item.get("status") or default_status).lower(), " ".join(str(text).split())


def _listed_todos(result: str) -> list[tuple[str, str]]:
    """(status, content) of the whole plan a todo tool's result lists; [] for any other result.
    Every item must say what it is and have a todo's status, so another tool's JSON list
    (search hits, issues) is never read as a plan. Only a result that opens with the list is
    parsed: the tools answer so, and a long output of another tool is never parsed for it."""
    if not re.match(r'\s*\{\s*"(?:' + "|".join(_LISTED_TODOS) + ')"', result or ""):
        return []
    data = json_result(result)
    todos = next((data[k] for k in _LISTED_TODOS if isinstance(data.get(k), list)), None) if data else None
    if not todos or not all(isinstance(x, dict) for x in todos):
        return []
    items = [_todo_item(x) for x in todos]
    return items if all(status in TODO_STATUSES and text for status, text in items) else []


_DONE = ("completed", "done", "cancelled", "deleted")
# Claude Code's task tools (2.1.16 on) keep the plan one task a call: TaskCreate's answer names the task it
# made ("Task #3 created successfully: Track B1: Extract shared post-auth helper in Rust"), TaskUpdate sets
# a task's status by its id (`{"taskId": "3", "status": "in_progress"}`). The plan says each as `Task #3:
# <subject>`, so a later pass's updates find the tasks an earlier one listed (and no two share a key)
_TASK_CREATED = re.compile(r"\ATask #(\d+) created successfully: ([^\n]+)")
TASK_ITEM = re.compile(r"\ATask #(\d+): ")  # a task of Claude Code's, its own by its id
TASK_UPDATE_TOOL = "TaskUpdate"
_IN_PROGRESS_LEAD = "In progress: "


def _task_item(tid: str, subject: str) -> str:
    return f"Task #{tid}: {' '.join(subject.split())}"


def _task_changed(t: Turn, tasks: dict[str, list[str]]) -> bool:
    """Fold what `t` does with Claude Code's task tools into `tasks` (id -> [status, "Task #id: subject"]):
    a task its answer says was made, the status or subject its calls give one made before. True if any changed."""
    changed = False
    for call in t.tool_calls:
        tid = str(call.arguments.get("taskId"))
        task = tasks.get(tid) if call.name == TASK_UPDATE_TOOL else None
        if task is not None:
            task[0] = str(call.arguments.get("status") or task[0]).lower()
            subject = call.arguments.get("subject")
            task[1] = _task_item(tid, subject) if isinstance(subject, str) and subject.strip() else task[1]
            changed = True
    made = _TASK_CREATED.match(t.text.strip()) if t.role == "tool" and t.text else None
    if made:
        tasks[made.group(1)] = ["pending", _task_item(made.group(1), made.group(2))]
    return changed or made is not None


def _listed_tasks(lines: list[str]) -> dict[str, list[str]]:
    """The tasks an earlier pass's Current State and Next Steps list (`In progress: Task #2: …`, `Task #3: …`)."""
    tasks = {}
    for line in lines:
        item = line.removeprefix(_IN_PROGRESS_LEAD)
        m = TASK_ITEM.match(item)
        if m:
            tasks[m.group(1)] = ["in_progress" if item != line else "pending", item]
    return tasks


def _plan_of(items: list[tuple[str, str]], current: str, closed: set) -> tuple[list[str], str]:
    """A todo list's open items, and the task now in progress (`current` while none is, unless
    the list says it is done); the items it says are done join `closed`."""
    done = {c for s, c in items if s in _DONE}
    closed.update(c.split(":")[0] for c in done)
    doing = [c for s, c in items if s == "in_progress" and c]
    return [c for s, c in items if s not in _DONE and c], doing[0] if doing else "" if current in done else current


def plan_state(turns: list[Turn], *, max_items: int = 8, item_chars: int = 200, listed: list[str] = ()) -> PlanState:
    """The task in progress at the end of `turns` and the latest plan's open items.

    Titles come from any listing that names the task (`○ spotter-fum.3: Integrate ...`); the
    plan is the latest todo-tool list or tracker listing with open items, else the latest
    numbered list in the assistant's own text under a "next"/"remaining"/"todo" heading. `listed`: what
    the summary so far says is in progress and next, where tasks these turns update were made."""
    titles: dict[str, str] = {}
    status: dict[str, str] = {}
    current = ""
    closed: set = set()
    plan: list[str] | None = None  # the latest plan listed, None while none is
    tasks = _listed_tasks(listed)  # Claude Code's task tools' tasks, by id
    for t in turns:
        if _task_changed(t, tasks):
            plan, current = _plan_of(list(tasks.values()), current, closed)
        for call in t.tool_calls:
            cmd = call.text or ""
            for m in _IN_PROGRESS.finditer(cmd):
                current = m.group(1)
            for m in _CLOSED.finditer(cmd):
                status[m.group(1)] = "closed"
                closed.add(m.group(1))
                if current == m.group(1):
                    current = ""
            items = _todo_items(call.arguments)
            if items and all(c for _, c in items):  # a merge naming items by id alone: its result lists them
                plan, current = _plan_of(items, current, closed)
        if t.role == "tool" and t.text:
            listed_todos = _listed_todos(t.text)  # what the call changed, as the plan now stands
            if listed_todos:
                plan, current = _plan_of(listed_todos, current, closed)
            listed = []
            for line in t.text.splitlines()[:400]:
                m = _LISTED.match(line)
                if m:
                    mark, tid, title = m.group(1).strip(), m.group(2), " ".join(m.group(3).split())
                    titles.setdefault(tid, title)
                    if mark in ("✓", "✔", "☑", "x"):
                        status[tid] = "closed"
                    listed.append((mark, tid, title))
            listed = [x for x in listed if not x[2].startswith("(EPIC)")]  # the parent, not a step
            open_listed = [
                f"{tid}: {title}" for mark, tid, title in listed if mark in _OPEN_MARKS and status.get(tid) != "closed"
            ]
            if len(listed) >= 2 and open_listed and any(mark for mark, _, _ in listed):
                plan = open_listed
        if t.role == "assistant" and t.text:
            m = PLAN_HEADING.search(t.text)
            if m:
                items = re.findall(r"(?m)^\s*(?:\d+[.)]|[-*])\s+(.+)$", t.text[m.end() :])
                if items:
                    plan = [" ".join(x.split()) for x in items]
    state = PlanState(closed=closed, listed=plan is not None)
    plan = plan or []
    if current:
        title = titles.get(current, "")
        state.in_progress = f"{current}: {title}" if title and not current.startswith(title) else current
    clipped = [clip(x, item_chars) for x in plan]
    doing = state.in_progress
    state.next_steps = [
        x for x in clipped if not doing or not (x == clip(doing, item_chars) or x.startswith(doing.split(":")[0] + ":"))
    ][:max_items]
    return state


# a tool that presents the agent's plan for the user to approve: Claude Code's ExitPlanMode
# (`{"plan": "# Title\n\n## Context\n…"}`), Cursor's create_plan (`{"name", "overview", "plan", "todos"}`).
# A todo list (Codex's update_plan) is the plan's items, not this; Cline's plan_mode_respond is every
# reply it makes in plan mode, a question too
PLAN_TOOL = re.compile(r"^(?:exit_?plan_?mode|create_?plan|propose_?plan|present_?plan)$", re.I)
_PLAN_APPROVED = re.compile(r"\b(?:user|you)\s+(?:has\s+|have\s+)?(?:approved|accepted)\b", re.I)
_PLAN_REJECTED = re.compile(r"doesn['’]t want to proceed|\b(?:rejected|declined)\b(?!\W*\{\s*\})", re.I)
_PLAN_TITLE = re.compile(r"(?m)^#{1,3}[ \t]++(\S[^\n]*)")
PLAN_CHARS = 240


def agreed_plan(turns: list[Turn]) -> str:
    """The latest plan the agent put to the user in `turns` that the user did not turn down, as one
    line: "Plan (approved): <its title> — <what it does>", the title its name or first heading,
    what it does its overview or first paragraph; "" when there is none. A call that failed is no
    plan put. The plan a user approved is what the work after it carries out (its steps were
    nowhere in the summary)."""
    results = {t.tool_call_id: t.text for t in turns if t.role == "tool" and t.tool_call_id}
    line = ""
    for t in turns:
        for call in t.tool_calls:
            if not PLAN_TOOL.match(call.name or ""):
                continue
            said = _plan_line(call.arguments)
            result = results.get(call.id, "")
            if not said or _PLAN_REJECTED.search(result[:400]) or failed_field(result):
                continue
            line = ("Plan (approved): " if _PLAN_APPROVED.search(result[:400]) else "Plan: ") + said
    return line


def _plan_line(arguments: dict) -> str:
    plan = arguments.get("plan") or ""
    plan = plan[:20_000] if isinstance(plan, str) else ""
    heading = _PLAN_TITLE.search(plan)
    title = str(arguments.get("name") or (heading.group(1) if heading else ""))
    title = re.sub(r"^Plan:\s*", "", " ".join(title.split()))
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n[ \t]*\n", plan)]
    body = " ".join(str(arguments.get("overview") or "").split()) or next(
        (p for p in paragraphs if p and not p.startswith(("#", "-", "*", "|", "```")) and not re.match(r"\d+\.", p)), ""
    )
    said = " — ".join(x for x in (title, body) if x)
    return clip(said, PLAN_CHARS) if said else ""


# a heading over the agent's own list of what is left, in English and the common CJK spellings
# ("## Next steps", "**Remaining work:**", "## 下一步计划", "接下来：", "次のステップ")
PLAN_HEADING = re.compile(
    r"(?im)^\W*(?:next steps?|remaining(?: work| tasks)?|todo|to do|still to do"
    r"|下一步(?:计划|工作)?|接下来(?:的步骤|要做的)?|后续(?:步骤|工作)|待办(?:事项)?|次のステップ|今後の(?:作業|予定))\W*$"
)


# ---------------------------------------------------------------- identifiers


_VOLATILE = re.compile(
    r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$|^[0-9a-f]{7,40}$|^\d{4}-\d\d-\d\d"
    r"|^[A-Za-z]-[A-Za-z0-9]$|^[a-z]-[a-z0-9]-[a-z0-9]|\\[a-z]|^[A-Za-z0-9]-[A-Za-z0-9]$"
)


_VERSION_ID = re.compile(r"^(?:v|go)?\d+\.\d+\.\d+")
MAX_VERSIONS = 5


def rank_ids(ids: list[str], turns: list[Turn], limit: int = 40) -> list[str]:
    """The identifiers worth carrying, best first: named in an edit, an error line or a command,
    and repeated. UUIDs, hashes and timestamps only when a user or a command used them; versions
    (by the dozen in any listing) MAX_VERSIONS at most, the best evidenced, and never one only a
    file read back holds (`version: "0.1.0"` in a mix.exs read is the file's text, not a version
    the work used); regex fragments (`Z0-9`) never."""
    users = "\n".join(t.text for t in turns if t.role == "user")
    commands = "\n".join(c.text for t in turns for c in t.tool_calls if command_of(c.name, c.arguments))
    edits = "\n".join(
        str(v)
        for t in turns
        for c in t.tool_calls
        if not command_of(c.name, c.arguments)
        for v in c.arguments.values()
        if isinstance(v, str)
    )
    prose = "\n".join(t.text for t in turns if t.role == "assistant")
    outputs = "\n".join(t.text[:20000] for t in turns if t.role == "tool")
    calls = {c.id: c for t in turns for c in t.tool_calls}
    read = [calls.get(t.tool_call_id) for t in turns if t.role == "tool"]
    runs = "\n".join(
        t.text[:20000]
        for t, c in zip([t for t in turns if t.role == "tool"], read)
        if c is None or not reads_contents(c.name, command_of(c.name, c.arguments), c.arguments)
    )
    scored = []
    for i, x in enumerate(ids):
        if re.fullmatch(r"[A-Za-z]?\d?-?[A-Za-z]?\d?", x) or re.search(r"[a-z]-[a-z0-9]\b|\\[wdsb]", x) and len(x) < 8:
            continue  # a character class, not a name
        if len(x) < 3 or x.endswith(("/", "-", ".", "_")):
            continue  # a fragment (`assets/`, `agent-`), not a name
        in_cmd, in_user = x in commands, x in users
        if _VOLATILE.search(x) and not (in_cmd or in_user):
            continue
        if _VERSION_ID.match(x) and not (in_cmd or in_user or x in edits or x in prose or x in runs):
            continue  # a version only a file read back holds
        score = 3 * (x in edits) + 2 * in_cmd + 2 * in_user + min(3, prose.count(x)) + (x in outputs)
        scored.append((score, -i, x))
    ranked = [x for _, _, x in sorted(scored, reverse=True)]
    versions = [x for x in ranked if _VERSION_ID.match(x)][MAX_VERSIONS:]
    return [x for x in ranked if x not in versions][:limit]
