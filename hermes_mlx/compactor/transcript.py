"""OpenAI-format transcripts: validation, structural repair, exchanges and token estimates.

A compaction pass must never make a transcript invalid, and must never lose a message. So the
input is checked first: what cannot be interpreted is a `TranscriptError` naming the message
index; what is only structurally broken is repaired as Hermes's own compressor repairs it
(context_compressor._sanitize_tool_pairs), so a pass hands Hermes the shape it would make itself:
a result without a call gets a call (nothing is dropped), missing ids are assigned, and calls
that never got a result are taken off their assistant message (one stub result per call would
turn one message of 3,000 calls into 3,000 messages) unless that assistant is the last one, whose
calls may still be running: those stay as they are. User messages are never rewritten here.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from hermes_mlx.compactor import markers
from hermes_mlx.errors import UsageError
from hermes_mlx.summarizer.api import Message
from hermes_mlx.summarizer.budget import bounded_count, hermes_tokens
from hermes_mlx.summarizer.text import trim_middle
from hermes_mlx.summarizer.text_actions import answers_action

ROLES = ("system", "developer", "user", "assistant", "tool")
REPAIRED_KEY = "_repaired"  # set on every message this module synthesizes or rewrites
CALLS_REMOVED_TEXT = "(tool call removed)"  # Hermes's content for a turn left with no call and no text
UNKNOWN_TOOL_NAME = "unknown_tool"
MESSAGE_OVERHEAD_TOKENS = 4  # role and separators, as chat templates add them

TokenCounter = Callable[[str], int]


class TranscriptError(UsageError):
    """A message that cannot be interpreted. Carries the index so the user can find it."""

    def __init__(self, index: int, problem: str):
        super().__init__(f"message {index}: {problem}")
        self.index = index
        self.problem = problem


@dataclass
class Repair:
    index: int  # index in the repaired list of the message added or changed
    kind: str  # assigned_call_id | assigned_result_id | synthesized_call | removed_calls
    detail: str


# ---------------------------------------------------------------------------------------------
# Reading content


def content_text(message: Message) -> str:
    """Plain text of a message's content: None is empty, parts are joined, non-text parts noted."""
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    pieces = []
    for part in content:
        if part.get("type") == "text" or "text" in part:
            pieces.append(str(part.get("text", "")))
        else:
            pieces.append(f"[{part.get('type', 'part')}]")
    return "\n".join(pieces)


def message_text(message: Message) -> str:
    """Everything in a message that costs tokens: content plus tool call names and arguments."""
    text = content_text(message)
    calls = message.get("tool_calls") or []
    if calls:
        rendered = []
        for call in calls:
            function = call.get("function") or {}
            rendered.append(f"{function.get('name', '')}({function.get('arguments', '')})")
        text = f"{text}\n" + "\n".join(rendered) if text else "\n".join(rendered)
    return text


def make_counter(count: TokenCounter | None) -> TokenCounter:
    """A memoized, never-raising counter: passes re-count the same messages every turn. Without
    a tokenizer (or when it fails) it counts as Hermes does when it has none (hermes_tokens).
    The tokenizer never gets more than budget.EXACT_COUNT_CHARS of one text (bounded_count): a
    50 MB tool output is counted by its head and tail, the rest estimated."""

    @functools.lru_cache(maxsize=8192)
    def counted(text: str) -> int:
        if count is None:
            return hermes_tokens(text)
        try:
            return int(bounded_count(count, text))
        except Exception:
            return hermes_tokens(text)

    return counted


def message_tokens(message: Message, count: TokenCounter = hermes_tokens) -> int:
    return count(message_text(message)) + MESSAGE_OVERHEAD_TOKENS


def transcript_tokens(messages: Iterable[Message], count: TokenCounter = hermes_tokens) -> int:
    return sum(message_tokens(m, count) for m in messages)


# ---------------------------------------------------------------------------------------------
# Validation and repair


def check_message(message: object, index: int) -> None:
    """Raise TranscriptError when a message cannot be interpreted at all."""
    if not isinstance(message, dict):
        raise TranscriptError(index, f"expected a JSON object, got {type(message).__name__}")
    role = message.get("role")
    if role not in ROLES:
        shown = "missing" if role is None else repr(role)
        raise TranscriptError(index, f"role is {shown} (expected one of: {', '.join(ROLES)})")
    content = message.get("content")
    if content is not None and not isinstance(content, (str, list)):
        raise TranscriptError(index, f"content must be a string, null or a list of parts, got {type(content).__name__}")
    if isinstance(content, list):
        for j, part in enumerate(content):
            if not isinstance(part, dict):
                raise TranscriptError(index, f"content part {j} is not an object")
    for key in ("tool_call_id", "name"):
        if message.get(key) is not None and not isinstance(message[key], str):
            raise TranscriptError(index, f"{key} must be a string, got {type(message[key]).__name__}")
    calls = message.get("tool_calls")
    if calls is not None:
        if role != "assistant":
            raise TranscriptError(index, f"a {role} message cannot carry tool_calls")
        if not isinstance(calls, list):
            raise TranscriptError(index, "tool_calls must be a list")
        for j, call in enumerate(calls):
            if not isinstance(call, dict):
                raise TranscriptError(index, f"tool call {j} is not an object")
            if call.get("id") is not None and not isinstance(call["id"], str):
                raise TranscriptError(index, f"tool call {j} id must be a string")
            function = call.get("function")
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                raise TranscriptError(index, f"tool call {j} has no function name")


def repair(messages: list[Message]) -> tuple[list[Message], list[Repair]]:
    """A valid copy of `messages` and the repairs made; the input itself is never modified.

    Tool results pair with the calls of the assistant message right before their run of tool
    messages. Calls left unanswered when the run ends are removed from that assistant (its text
    stays; "(tool call removed)" when it had none), except in the last assistant of the transcript
    (in flight: its results may come); a result nobody asked for gets a synthesized call (added to
    the run's assistant, or a new assistant message in front of it). Messages that need no change
    keep their identity, and when nothing needs repair the very same list comes back.
    """
    for index, message in enumerate(messages):
        check_message(message, index)

    out: list[Message] = []
    repairs: list[Repair] = []
    pending: list[str] = []  # call ids of the current assistant still waiting for a result
    in_tool_run = False
    run_owner = -1  # index in `out` of the assistant whose results are being read

    def close_run() -> None:
        if not pending:
            return
        owner, unanswered = out[run_owner], Counter(pending)  # a repeated id may be answered once
        kept, names = [], Counter()
        for call in reversed(owner["tool_calls"]):  # the later of two calls sharing an id goes
            if unanswered[call["id"]] > 0:
                unanswered[call["id"]] -= 1
                names[call["function"]["name"]] += 1
            else:
                kept.append(call)
        kept.reverse()
        fixed = {k: v for k, v in owner.items() if k != "tool_calls"} | {REPAIRED_KEY: True}
        if kept:
            fixed["tool_calls"] = kept
        elif not content_text(owner).strip():
            fixed["content"] = CALLS_REMOVED_TEXT
        out[run_owner] = fixed
        shown = ", ".join(f"{name} x{n}" for name, n in names.most_common(5))
        repairs.append(Repair(run_owner, "removed_calls", f"{len(pending)} calls without a result ({shown})"))
        pending.clear()

    for index, message in enumerate(messages):
        role = message["role"]
        if role == "tool":
            call_id = message.get("tool_call_id")
            if not call_id and pending:
                call_id = pending[0]
                message = {**message, "tool_call_id": call_id, REPAIRED_KEY: True}
                repairs.append(Repair(len(out), "assigned_result_id", f"message {index} -> {call_id}"))
            if call_id in pending:
                pending.remove(call_id)
                out.append(message)
                in_tool_run = True
                continue
            # A result nobody asked for: give it a call so the pair is valid and nothing is lost.
            if not call_id:
                call_id = f"call_repaired_{index}"
                message = {**message, "tool_call_id": call_id, REPAIRED_KEY: True}
            name = message.get("name") or UNKNOWN_TOOL_NAME
            call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}
            if in_tool_run or pending:
                # Inside a run of results: the call joins the assistant that owns the run.
                owner = out[run_owner]
                out[run_owner] = {**owner, "tool_calls": list(owner["tool_calls"]) + [call], REPAIRED_KEY: True}
                repairs.append(Repair(run_owner, "synthesized_call", f"result at message {index}"))
            else:
                out.append({"role": "assistant", "content": None, "tool_calls": [call], REPAIRED_KEY: True})
                run_owner = len(out) - 1
                repairs.append(Repair(run_owner, "synthesized_call", f"result at message {index}"))
            out.append(message)
            in_tool_run = True
            continue

        if in_tool_run or pending:
            close_run()
        in_tool_run = False
        calls = message.get("tool_calls") if role == "assistant" else None
        if calls:
            fixed = []
            changed = False
            for j, call in enumerate(calls):
                if not call.get("id"):
                    call = {**call, "id": f"call_repaired_{index}_{j}"}
                    changed = True
                fixed.append(call)
            if changed:
                message = {**message, "tool_calls": fixed, REPAIRED_KEY: True}
                repairs.append(Repair(len(out), "assigned_call_id", f"message {index}"))
            run_owner = len(out)
            pending.extend(call["id"] for call in fixed)
        out.append(message)
    pending.clear()  # the last assistant's calls: in flight, as Hermes leaves them

    if not repairs:
        return messages, []
    return out, repairs


# ---------------------------------------------------------------------------------------------
# Structure


def split_turns(messages: list[Message]) -> list[list[Message]]:
    """Cut a recorded session into agent turns: each ends right before a user message that
    follows non-user traffic. Leading system messages ride with the first turn."""
    turns: list[list[Message]] = []
    current: list[Message] = []
    answered = False
    for message in messages:
        if message.get("role") == "user" and answered:
            turns.append(current)
            current, answered = [], False
        current.append(message)
        if message.get("role") in ("assistant", "tool"):
            answered = True
    if current:
        turns.append(current)
    return turns


def clip_for_summary(messages: list[Message], max_chars: int) -> list[Message]:
    """Copies whose content fits the summarizer: a 5 MB tool log must not become a 5 MB prompt.

    Only the summarizer's input is clipped; the transcript keeps every message as it was.
    """
    clipped = []
    for message in messages:
        text = content_text(message)
        if len(text) > max_chars:
            head = max_chars * 2 // 3
            message = {**message, "content": trim_middle(text, head, max_chars - head)}
        clipped.append(message)
    return clipped


def kept_for_summary(messages: list[Message], max_chars: int) -> list[Message]:
    """What of `messages` stays verbatim beside the summary (no summary marker), clipped as the
    summarizer's input is: what it tells the summarizer the reader still has (a 50 MB log in
    the tail is not searched whole)."""
    return clip_for_summary([m for m in messages if not markers.is_marker(m)], max_chars)


def head_end(messages: list[Message], protect_first_n: int) -> int:
    """End of the protected head: the first messages, never ending between a call and its result.

    It ends before compaction's own rows, a summary marker and the merged user row just ahead of
    it: every pass rebuilds those. So a head that a batch pass let go (compactor/batch.py) stays
    gone, as Hermes's head decays to the system prompt once a summary sits there."""
    end = min(max(protect_first_n, 0), len(messages))
    while end < len(messages) and messages[end].get("role") == "tool":
        end += 1
    first = next((i for i in range(end) if markers.is_marker(messages[i])), -1)
    if first >= 0:
        end = first - 1 if first and messages[first - 1].get(markers.MERGED_FROM_KEY) else first
    return end


def tail_start(
    messages: list[Message],
    floor: int,
    budget_tokens: int,
    min_messages: int = 1,
    count: TokenCounter = hermes_tokens,
) -> int:
    """Start of the protected tail: the recent messages that fit `budget_tokens` (at least
    `min_messages`), moved back so a tool result never leaves its call behind, nor a text
    action's output its action (`observes`)."""
    start = len(messages)
    used = 0
    while start > floor:
        cost = message_tokens(messages[start - 1], count)
        if len(messages) - start >= min_messages and used + cost > budget_tokens:
            break
        used += cost
        start -= 1
    while floor < start < len(messages) and (messages[start].get("role") == "tool" or observes(messages, start)):
        start -= 1
    return start


def observes(messages: list[Message], i: int) -> bool:
    """`messages[i]` is a user row that carries what a text action printed (mini-swe-agent's
    `<returncode>` envelope, SWE-agent's `bash-$` prompt, a ReAct `Observation:`) after the
    assistant row before it: the agent's turn goes on, and the row is folded with that turn, never
    kept as the user's words (its output had filled the user row and the summary's Goal)."""
    if not 0 < i < len(messages) or messages[i].get("role") != "user" or markers.is_marker(messages[i]):
        return False
    if len(markers.originals(messages[i])) > 1:  # a merged row: a person's words may follow the output
        return False
    before = messages[i - 1]
    if before.get("role") != "assistant":
        return False
    return answers_action(content_text(before), bool(before.get("tool_calls")), content_text(messages[i]))


def find_exchange(
    messages: list[Message], start: int, limit: int, skip: Callable[[Message], bool]
) -> tuple[int, int] | None:
    """The next whole agent turn at or after `start`, ending before `limit`: (first, end).

    It begins at an assistant message (user messages and rows `skip` matches, such as summary
    markers, are stepped over, never absorbed) and runs over assistant and tool rows up to the
    next user message. A text action and the output that came back for it (`observes`) are one
    exchange, closed by that output. A turn cut by `limit` is not an exchange yet.
    """
    limit = min(limit, len(messages))
    idx = start
    while idx < limit and (messages[idx].get("role") != "assistant" or skip(messages[idx])):
        idx += 1
    if idx >= limit:
        return None
    first = idx
    idx += 1
    while idx < limit and messages[idx].get("role") in ("assistant", "tool") and not skip(messages[idx]):
        idx += 1
    if idx < limit and observes(messages, idx):
        return first, idx + 1
    if idx >= len(messages):
        return None
    boundary = messages[idx]
    if boundary.get("role") in ("assistant", "tool") and not skip(boundary):
        return None
    return first, idx
