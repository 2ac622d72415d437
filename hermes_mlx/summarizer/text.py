"""Turning chat messages into plain, safe text: content normalisation, tool-output trimming,
serialisation for the prompt, and splitting a span of turns into exchanges.

Messages arrive in every shape Hermes and its providers produce (string, list of parts, None,
bytes), so everything downstream works on the `Turn` records built here and never touches raw
message dicts.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field

from .compaction_stubs import stubbed_calls
from .harness import (
    CONTEXT_BLOCK,
    HUMAN_WRAPPER,
    SLASH_INVOKED,
    TOOL_RESULT_LABEL,
    without_automated,
    without_examples,
    without_plan_pointer,
    without_resumption,
    without_run_ahead,
    without_status_lines,
)
from .redact import redact
from .text_actions import console_edits, quoted_console, text_actions
from .vocabulary import (
    BOX_DRAWING,
    CODE_TOOL,
    COMMAND_KEYS,
    FILE_KEYS,
    MCP_WRAPPER_TOOLS,
    REPORT_KEYS,
    REPORT_TOOL,
    SHELL_TOOLS,
    editor_subcommand,
    is_file_key,
    with_command_keys,
)

MAX_CONTENT_CHARS = 2_000_000  # beyond this a single message is cut before any regex runs
# ANSI/VT100 escapes: CSI (colours, cursor moves), OSC (titles, hyperlinks), and two-byte ones
ANSI_ESCAPE = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: dict  # parsed JSON arguments ({"_raw": text} when they did not parse)
    text: str  # one-line rendering: the command for shell tools, else name(args)


@dataclass
class Turn:
    """One message, normalised and redacted."""

    role: str
    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str = ""
    name: str = ""
    context: str = ""  # a harness's context blocks taken out of `text` (CONTEXT_BLOCK): only its folder is read


def to_text(content) -> str:
    """Any message content to a clean str: parts joined, bytes decoded, control chars dropped."""
    if content is None:
        return ""
    if isinstance(content, (bytes, bytearray, memoryview)):
        raw = bytes(content)
        text = raw.decode("utf-8", errors="replace")
        if _looks_binary(text):
            return f"[binary content, {len(raw)} bytes]"
    elif isinstance(content, str):
        text = content
    elif isinstance(content, (list, tuple)):
        parts = []
        for part in content:
            if isinstance(part, dict):
                if isinstance(part.get("text"), str):
                    parts.append(part["text"])
                elif part.get("type") in ("image_url", "image", "input_image"):
                    parts.append("[image]")
                elif "content" in part:
                    parts.append(to_text(part["content"]))
            else:
                parts.append(to_text(part))
        text = "\n".join(p for p in parts if p)
    elif isinstance(content, dict):
        text = content.get("text") if isinstance(content.get("text"), str) else json.dumps(content, default=str)
    else:
        text = str(content)
    if len(text) > MAX_CONTENT_CHARS:
        text = trim_middle(text, MAX_CONTENT_CHARS // 2, MAX_CONTENT_CHARS // 4)
    if _looks_binary(text):
        return f"[binary content, {len(text)} characters]"
    return _CONTROL.sub("", terminal_text(text))


def terminal_text(text: str) -> str:
    """Text as a terminal would show it: colour and cursor codes gone, and a line that `\r`
    rewrote (a progress bar) as its last state, so `\x1b[32mtest result: ok.` reads as the
    runner's result line. Done once here, before any rule reads the text."""
    if "\x1b" in text or "\x9b" in text:
        text = ANSI_ESCAPE.sub("", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        text = "\n".join(line.rstrip("\r").rsplit("\r", 1)[-1] for line in text.split("\n"))
    return text


def _looks_binary(text: str) -> bool:
    """A text that is mostly control bytes, not counting colour codes (coloured pytest output is
    one escape in nine characters, and had been taken for binary)."""
    sample = ANSI_ESCAPE.sub("", text[:4096])
    if not sample:
        return False
    bad = sum(1 for c in sample if c == "\ufffd" or (ord(c) < 32 and c not in "\n\r\t"))
    return bad / len(sample) > 0.1


def trim_middle(text: str, head: int, tail: int) -> str:
    """Keep head and tail of a long text, with a marker saying how much was cut."""
    if len(text) <= head + tail + 80:
        return text
    start = text[:head]
    end = text[len(text) - tail :]
    cut_at = start.rfind("\n")  # cut on line boundaries where that costs little
    if cut_at > head * 0.6:
        start = start[:cut_at]
    nl = end.find("\n")
    if 0 <= nl < tail * 0.4:
        end = end[nl + 1 :]
    cut = len(text) - len(start) - len(end)
    lines = text.count("\n", len(start), len(text) - len(end))
    return f"{start}\n[... {cut:,} characters, {lines:,} lines cut ...]\n{end}"


def clip(text: str, n: int) -> str:
    """At most `n` characters, cut at a space where one is near so no word is left half
    (a half name reads as an invented one), ending in "…" when anything was cut."""
    if len(text) <= n:
        return text
    cut = text[: n - 1]
    space = cut.rfind(" ")
    out = (cut[:space] if space > n // 2 else cut).rstrip() + "…"
    # a cut can leave what reads as a credential's value (`…/test-session': No such file` cut to
    # `test-session': No…`), which the verifier then finds as a secret and fails the pass: the
    # word goes too, while a shorter cut still says something
    if redact(out) != out and redact(text) == text:
        while redact(out) != out and (space := out.rfind(" ", 0, len(out) - 1)) > n // 4:
            out = out[:space].rstrip() + "…"
    return out


def _unwrapped_mcp(name: str, args: dict) -> tuple[str, dict]:
    """A call an agent makes through its MCP wrapper (Cline's, Roo Code's and IBM Bob's `use_mcp_tool`:
    `server_name`, `tool_name`, `arguments` as JSON) as Claude Code names and passes one directly
    (`mcp__github__get_file_contents`, its own arguments): what it reads or changes is read off the tool's name."""
    if name not in MCP_WRAPPER_TOOLS or not isinstance(args.get("tool_name"), str):
        return name, args
    inner = args.get("arguments")
    if isinstance(inner, str):
        try:
            inner = json.loads(inner)
        except (ValueError, RecursionError):
            inner = {"_raw": inner}
    server = re.split(r"[/\\]", str(args.get("server_name") or "mcp").rstrip("/\\"))[-1] or "mcp"
    return f"mcp__{server}__{args['tool_name']}", inner if isinstance(inner, dict) else {}


def _argument(value):
    """One tool-call argument as text (redacted); a list of records (a todo tool's items with
    their status) stays JSON, so who reads it can tell the open items from the done ones."""
    if isinstance(value, (int, float, bool)):
        return value
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return redact(json.dumps(value, ensure_ascii=False, default=str))
    return redact(to_text(value))


_SHELL_PROGRAM = re.compile(
    r"(?:^|/)(?:ba|z|da|k|fi)?sh(?:\.exe)?$|(?:^|[/\\])(?:cmd|powershell|pwsh)(?:\.exe)?$", re.I
)


def _argv_command(value):
    """A command given as its argv (Codex's `shell` takes `["bash", "-lc", "npm test"]`) as the
    line a person would type: the script a shell was handed, else the words joined (quoted where
    needed). Anything else is left as it is."""
    if not (isinstance(value, list) and value and all(isinstance(v, str) for v in value)):
        return value
    if (
        len(value) >= 3
        and _SHELL_PROGRAM.search(value[0])
        and value[1].lower() in ("-c", "-lc", "-ic", "/c", "-command")
    ):
        return " ".join(value[2:])
    return shlex.join(value)


def _nested_paths(value, depth: int = 0) -> list[str]:
    """The paths under a file key anywhere below the top of a tool's arguments: Roo Code's
    `read_file` takes `{"args": {"file": [{"path": "a.md"}, {"path": "b.md"}]}}`."""
    if depth > 6:
        return []
    if isinstance(value, list):
        return [p for v in value[:200] for p in _nested_paths(v, depth + 1)]
    if not isinstance(value, dict):
        return []
    here = [v.strip() for k, v in value.items() if depth and is_file_key(k) and isinstance(v, str) and v.strip()]
    return here + [p for v in value.values() if isinstance(v, (dict, list)) for p in _nested_paths(v, depth + 1)]


def _parse_call(call) -> ToolCall | None:
    if not isinstance(call, dict):
        return None
    fn = call.get("function") if isinstance(call.get("function"), dict) else call
    name = str(fn.get("name") or "tool")
    raw = fn.get("arguments", {})
    if isinstance(raw, str):
        try:
            args = json.loads(raw) if raw.strip() else {}
        except (ValueError, RecursionError):  # not JSON, or nested past what Python parses
            args = {"_raw": raw}
    elif isinstance(raw, dict):
        args = raw
    else:
        args = {"_raw": to_text(raw)}
    if not isinstance(args, dict):
        args = {"_raw": json.dumps(args, default=str)}
    name, args = _unwrapped_mcp(name, args)
    args = with_command_keys(args)
    nested = [] if any(k in args for k in (*FILE_KEYS, "paths")) else _nested_paths(args)
    args = {str(k): _argument(_argv_command(v) if k in COMMAND_KEYS else v) for k, v in args.items()}
    if nested:  # read as a list of paths, one a line
        args["paths"] = "\n".join(dict.fromkeys(nested))
    command = command_of(name, args)
    if command:
        text = command
    else:
        shown = ", ".join(f"{k}={str(v)[:120]}" for k, v in args.items())
        text = f"{name}({shown})"
    if not any(k in args for k in FILE_KEYS):  # a file under a key of the tool's own (`absolutePath`)
        own = next((k for k, v in args.items() if isinstance(v, str) and v.strip() and is_file_key(k)), "")
        if own:
            args["path"] = args[own]
    return ToolCall(id=str(call.get("id") or ""), name=name, arguments=args, text=text)


def command_of(name: str, args: dict) -> str:
    """The shell command of a tool call, or "" for tools that are not shells (an editor's
    `{"command": "view", "path": ...}` is no shell command); a code tool's code is the script it ran."""
    if editor_subcommand(name, args):
        return ""
    code = args.get("code")
    if CODE_TOOL.search(name) and isinstance(code, str) and code.strip():
        return code.strip()  # a script it ran (Hermes's `execute_code`)
    for key in COMMAND_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip() and (name.lower() in SHELL_TOOLS or key in ("command", "cmd")):
            return " ".join(value.strip().split()) if "\n" not in value.strip() else value.strip()
    return ""


def normalize(messages) -> list[Turn]:
    """Raw message dicts to redacted Turns; anything that is not a message is skipped."""
    turns: list[Turn] = []
    if not isinstance(messages, (list, tuple)):
        return turns
    for msg in messages:
        if not isinstance(msg, dict):
            continue
        role = str(msg.get("role") or "user")
        raw_calls = msg.get("tool_calls") if isinstance(msg.get("tool_calls"), list) else []
        calls = [c for c in map(_parse_call, raw_calls) if c is not None]
        text = to_text(msg.get("content"))
        if role == "assistant":
            text = without_status_lines(without_run_ahead(text))  # before the report a tool carried is joined to it
        if role == "assistant" and (told := told_user(calls)):
            text = f"{text}\n\n{told}".strip()[:MAX_CONTENT_CHARS]
        text, context = without_context(text, role) if role in ("user", "tool") else (text, "")
        turns.append(
            Turn(
                role=role,
                text=redact(text),
                tool_calls=calls,
                tool_call_id=str(msg.get("tool_call_id") or ""),
                name=str(msg.get("name") or ""),
                context=redact(context),
            )
        )
    for before, t in zip(turns, turns[1:], strict=False):  # a slash command's prompt, expanded by its harness
        if before.role == t.role == "user" and SLASH_INVOKED.match(before.text):
            t.text, t.context = "", f"{t.context}\n{t.text}".strip()
    for i, k, named in stubbed_calls(turns):  # a call its export kept no arguments of, named by Hermes's stub
        was = turns[i].tool_calls[k]
        turns[i].tool_calls[k] = _parse_call({"id": was.id, "function": {"name": was.name, "arguments": named}})
    for i, cmd in text_actions(turns):  # an action in a fenced block, its output a user message
        call = _parse_call({"id": f"text_action_{i}", "function": {"name": "bash", "arguments": {"command": cmd}}})
        turns[i].tool_calls = [call]
        turns[i + 1].role, turns[i + 1].tool_call_id, turns[i + 1].name = "tool", call.id, "bash"
    return _with_console_results(turns)


def _with_console_results(turns: list[Turn]) -> list[Turn]:
    """`turns`, each reply that quotes aider's console (`text_actions.quoted_console`) less it and
    followed by it as what tools printed: an `aider_edit` call for each file it says it edited
    (`Applied edit to x`) or failed to (a SEARCH block that matched nothing in it), the console the
    result of the failed ones, or of the first when none failed (commits, the token limit it hit).
    A later edit of a file clears its failed edit, as any edit tool's does."""
    out: list[Turn] = []
    for i, t in enumerate(turns):
        said, console = quoted_console(t.text) if t.role == "assistant" and not t.tool_calls else (t.text, "")
        out.append(t)
        if not console:
            continue
        t.text = said
        applied, failed = console_edits(console)
        for k, path in enumerate(list(dict.fromkeys(failed + applied)) or [""]):
            args = {"path": path} if path else {}
            call = _parse_call({"id": f"console_{i}_{k}", "function": {"name": "aider_edit", "arguments": args}})
            t.tool_calls.append(call)
            result = console if not failed and k == 0 else f"Applied edit to {path}"
            if path in failed:  # what failed is this call's; the rest said it was done
                result = "\n".join(ln for ln in console.splitlines() if not ln.startswith("Applied edit to "))
            out.append(Turn(role="tool", text=result, tool_call_id=call.id, name="aider_edit"))
    return out


def without_context(text: str, role: str) -> tuple[str, str]:
    """A user turn's or tool output's `text` less a harness's context blocks (CONTEXT_BLOCK:
    Cline's `<environment_details>` with its workspace listing, Claude Code's
    `<system-reminder>`), a tool output's less the label Cline puts before it (TOOL_RESULT_LABEL),
    and a user turn's less the tags put around the user's own words (HUMAN_WRAPPER: Cline's `<task>`,
    `<user_message>`) and Cline's notes on a resumed task (`without_resumption`), and either less a
    harness's automated notes to the agent (`without_automated`); then the blocks,
    of which only a stated folder is read.
    A workspace listing had filled Files with 30 paths no tool touched, and the Goal with it. A
    worked example a harness shows in a user turn (`without_examples`) is another session's: it goes."""
    if role == "user" and "---" in text:
        text = without_examples(text).strip()
    if role == "tool" and "] Result:" in text[:2100]:
        text = TOOL_RESULT_LABEL.sub("", text, count=1)
    if role == "user":
        text = without_plan_pointer(without_resumption(text))
    text = without_automated(text)  # a harness's notes to the agent, in a user turn or a tool's result
    if "<" not in text:
        return text, ""
    blocks = [m.group(0) for m in CONTEXT_BLOCK.finditer(text)]
    if blocks:
        text = CONTEXT_BLOCK.sub("", text).strip()
    if role == "user" and HUMAN_WRAPPER.search(text):
        text = HUMAN_WRAPPER.sub("", text).strip()
    return text, "\n".join(blocks)


def told_user(calls: list[ToolCall]) -> str:
    """What the agent said to the user through a tool (vocabulary.REPORT_TOOL: Hermes's
    `send_message`, Cline's `attempt_completion`): its words, read as the message's own."""
    said = [
        c.arguments[k].strip()
        for c in calls
        if REPORT_TOOL.search(c.name)
        for k in REPORT_KEYS
        if isinstance(c.arguments.get(k), str) and c.arguments[k].strip()
    ]
    return "\n\n".join(said)


def source_text(turns: list[Turn]) -> str:
    """Everything the summary may legitimately mention, untrimmed (for invention checks)."""
    parts = []
    for t in turns:
        parts.append(t.text)
        for call in t.tool_calls:
            parts.append(call.text)
            parts.extend(str(v) for v in call.arguments.values())
    return "\n".join(parts)


def split_exchanges(turns: list[Turn]) -> list[list[Turn]]:
    """Split on user messages: each exchange is a user turn (if any) plus what answered it."""
    groups: list[list[Turn]] = []
    for t in turns:
        if t.role == "user" or not groups:
            groups.append([t])
        else:
            groups[-1].append(t)
    return [g for g in groups if g]


def concluding_sentence(turns: list[Turn], max_chars: int = 220) -> str:
    """The assistant's last stated result, verbatim: the fallback narrative for an exchange."""
    for t in reversed(turns):
        if t.role != "assistant" or not t.text.strip():
            continue
        said = (ln.strip() for ln in t.text.splitlines())  # less a fence, or a drawn table's row
        lines = [ln.strip(" -*>\t") for ln in said if ln and not ln.startswith(("```", *BOX_DRAWING))]
        if not lines:
            continue
        last = lines[-1]
        sentences = re.split(r"(?<=[.!?。！？])\s+", last)
        sentence = sentences[-1] if len(sentences[-1]) > 25 or len(sentences) == 1 else " ".join(sentences[-2:])
        if len(sentence) > max_chars:
            sentence = sentence[: max_chars - 1].rsplit(" ", 1)[0] + "…"
        return sentence
    return ""
