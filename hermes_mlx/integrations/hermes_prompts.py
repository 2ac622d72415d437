"""Hermes's compaction prompts: recognising them, taking them apart, and writing the micro one.

Hermes writes one micro prompt (agent/micro_compaction.py) and two batch prompts, first and
update (agent/context_compressor.py). Their landmarks below are copied from those files; a
request that matches none is a `passthrough`. A request is recognised once, where it enters
(server.chat, provider.create, the plugin's guess computed ahead); the Prompt travels down from
there to the size limit, the adapter and passthrough.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum

from hermes_mlx.summarizer.api import Message
from hermes_mlx.summarizer.requested_layout import Heading, read_layout

# Hermes's prompt landmarks (agent/context_compressor.py and agent/micro_compaction.py).
MICRO_SUMMARY = "## Current Running Summary\n"
MICRO_EXCHANGE = "\n\n## Next Exchange to Merge\n"
MICRO_TAIL = "\n\nReturn ONLY the updated summary text"
NO_SUMMARY = "(No previous summary yet.)"
BATCH_FIRST = "Create a structured checkpoint summary"
BATCH_TURNS = "TURNS TO SUMMARIZE:\n"
BATCH_FIRST_END = "\n\nUse this exact structure:"
BATCH_UPDATE = "You are updating a context compaction summary"
BATCH_PREVIOUS = "PREVIOUS SUMMARY:\n"
BATCH_NEW = "\n\nNEW TURNS TO INCORPORATE:\n"
BATCH_UPDATE_END = "\n\nUpdate the summary using this exact structure."
MEMORY = "\n\nMEMORY PROVIDER CONTEXT:\n"
# The focus runs to the quote that ends its line, unless the next line is one of its own bullets
# ("Recent user focus:\n- ..."); the sentence after it has changed wording before.
FOCUS = re.compile(r'\n\nFOCUS TOPIC: "(.*?)"[ \t]*(?:\n(?!- )|\Z)', re.S)
RECENT_FOCUS = "Recent user focus:"
TARGET = re.compile(r"Target ~(\d+) tokens")
# Hermes's "lean" mode adds its session-log allowance to the stated target
# ("Spend up to ~4000 tokens here"); our summary has no such log, so that share is not ours.
LEAN_LOG = re.compile(r"## Detailed Session Log[^\n]*\n(?:.*\n)*?.*Spend up to ~(\d+) tokens here")

_TAG = re.compile(
    r"(?:^|\n\n)\[(USER|ASSISTANT|SYSTEM|DEVELOPER|TOOL|FUNCTION|UNKNOWN|TOOL RESULT(?: [^\]\n]*)?)\]: ", re.M
)
_CALL_LINE = re.compile(r"^  ([^\s()]+)\((.*)$")


class Kind(StrEnum):
    """Which of Hermes's prompts a request is. The values are the names telemetry and logs use."""

    MICRO = "micro"  # fold one exchange into the rolling summary
    MICRO_DEFRAG = "micro_defrag"  # shorten the rolling summary
    BATCH = "batch"  # summarize a span of turns
    BATCH_UPDATE = "batch_update"  # fold new turns into the previous batch summary
    PASSTHROUGH = "passthrough"  # none of them: the model answers it as it is


@dataclass
class Prompt:
    """What a request turned out to be, and its parts."""

    kind: Kind
    source: str = ""  # the user message recognised (the key of an answer computed ahead)
    summary: str | None = None
    turns: list[Message] = field(default_factory=list)
    focus: str | None = None
    budget_tokens: int | None = None
    text: str = ""  # micro_defrag: the summary to shorten
    user_notes: list[str] = field(default_factory=list)  # batch: user words found only in the focus
    layout: list[Heading] = field(default_factory=list)  # batch: the headings its template asks for, in order


def _between(text: str, start: str, end: str | None) -> str | None:
    i = text.find(start)
    if i < 0:
        return None
    i += len(start)
    if end is None:
        return text[i:]
    j = text.find(end, i)
    return text[i:j] if j >= 0 else None


def _drop_memory(turns_text: str) -> str:
    i = turns_text.rfind(MEMORY)
    return turns_text[:i] if i >= 0 else turns_text


def _focus(text: str) -> str | None:
    matches = list(FOCUS.finditer(text))
    return (matches[-1].group(1).strip() or None) if matches else None


def user_notes(focus: str | None, turns: list[Message]) -> list[str]:
    """User messages Hermes names in its "Recent user focus" block that are not among the turns:
    Hermes dropped them from the span it summarizes, so the summary must carry them."""
    if not focus or not focus.lstrip().startswith(RECENT_FOCUS):
        return []
    seen = " ".join(" ".join(str(m.get("content") or "").split()) for m in turns if m.get("role") == "user")
    notes = []
    for line in focus.splitlines()[1:]:
        item = line[2:].strip() if line.startswith("- ") else ""
        probe = item.rstrip("…").strip()
        if probe and probe not in seen and item not in notes:
            notes.append(item)
    return notes


def _budget(text: str) -> int | None:
    match = TARGET.search(text)
    if not match:
        return None
    lean = LEAN_LOG.search(text)
    return max(1, int(match.group(1)) - (int(lean.group(1)) if lean else 0))


def parse_turns(text: str) -> list[Message]:
    """Hermes's `[USER]: ...` / `[ASSISTANT]: ...` / `[TOOL RESULT id]: ...` text back to messages.

    Tool calls come back with the ids of the results that follow them, so the summarizer's
    ledger pairs each command with its output as it would on the original transcript.
    """
    matches = list(_TAG.finditer(text or ""))
    messages: list[Message] = []
    for n, match in enumerate(matches):
        end = matches[n + 1].start() if n + 1 < len(matches) else len(text)
        body = text[match.end() : end]
        tag = match.group(1)
        if tag.startswith("TOOL RESULT"):
            messages.append({"role": "tool", "tool_call_id": tag[len("TOOL RESULT") :].strip(), "content": body})
        elif tag == "ASSISTANT":
            content, calls = _split_tool_calls(body)
            message: Message = {"role": "assistant", "content": content}
            if calls:
                message["tool_calls"] = calls
            messages.append(message)
        else:
            messages.append({"role": "user" if tag == "UNKNOWN" else tag.lower(), "content": body})
    _pair_call_ids(messages)
    return messages


def _split_tool_calls(body: str) -> tuple[str, list[dict]]:
    i = body.rfind("[Tool calls:\n")
    stripped = body.rstrip()
    if i < 0 or not stripped.endswith("\n]"):
        return body, []
    block = stripped[i + len("[Tool calls:\n") : -2]
    entries: list[list[str]] = []
    for line in block.split("\n"):
        match = _CALL_LINE.match(line)
        if match:
            entries.append([match.group(1), match.group(2)])
        elif entries:
            entries[-1][1] += "\n" + line
    calls = []
    for name, args in entries:
        args = args[:-1] if args.endswith(")") else args
        calls.append(
            {"id": "", "type": "function", "function": {"name": name, "arguments": "" if args == "..." else args}}
        )
    return body[:i].rstrip("\n"), calls


def _pair_call_ids(messages: list[Message]) -> None:
    for i, message in enumerate(messages):
        calls = message.get("tool_calls") or []
        if not calls:
            continue
        ids = []
        for later in messages[i + 1 :]:
            if later.get("role") != "tool":
                break
            ids.append(later.get("tool_call_id") or "")
        for k, call in enumerate(calls):
            call["id"] = ids[k] if k < len(ids) and ids[k] else f"call_{i}_{k}"


def recognise(messages: list[dict]) -> Prompt:
    """Which Hermes prompt this is, with its parts; `passthrough` when it is none of them."""
    users = [m for m in messages if m.get("role") == "user"]
    text = users[-1].get("content") if users else ""
    if not isinstance(text, str) or not text:
        return Prompt(Kind.PASSTHROUGH)
    if MICRO_SUMMARY in text and MICRO_EXCHANGE in text:  # by its two headings, whatever the wording above
        start = text.find(MICRO_SUMMARY) + len(MICRO_SUMMARY)
        middle = text[start:]
        tail = middle.rfind(MICRO_TAIL)
        middle = middle[:tail] if tail >= 0 else middle
        summary, _, exchange = middle.partition(MICRO_EXCHANGE)
        summary = None if summary.strip() in ("", NO_SUMMARY) else summary.strip()
        turns = parse_turns(exchange)
        if summary is None and not turns and exchange.strip():
            # Hermes's defrag: the old summary arrives as the "exchange" with no summary to merge into.
            return Prompt(Kind.MICRO_DEFRAG, text, text=exchange.strip())
        if not turns and exchange.strip():
            turns = [{"role": "assistant", "content": exchange.strip()}]
        return Prompt(Kind.MICRO, text, summary=summary, turns=turns)
    if BATCH_UPDATE in text and BATCH_PREVIOUS in text and BATCH_NEW in text:
        summary = _between(text, BATCH_PREVIOUS, BATCH_NEW)
        turns_text = _between(text, BATCH_NEW, BATCH_UPDATE_END)
        if summary is not None and turns_text is not None:
            turns, focus = parse_turns(_drop_memory(turns_text)), _focus(text)
            return Prompt(
                Kind.BATCH_UPDATE,
                text,
                summary=summary.strip() or None,
                turns=turns,
                focus=focus,
                budget_tokens=_budget(text),
                user_notes=user_notes(focus, turns),
                layout=read_layout(text),
            )
    if BATCH_FIRST in text and BATCH_TURNS in text:
        turns_text = _between(text, BATCH_TURNS, BATCH_FIRST_END)
        if turns_text is not None:
            turns, focus = parse_turns(_drop_memory(turns_text)), _focus(text)
            return Prompt(
                Kind.BATCH,
                text,
                turns=turns,
                focus=focus,
                budget_tokens=_budget(text),
                user_notes=user_notes(focus, turns),
                layout=read_layout(text),
            )
    body = _defrag_body(text)
    if body:
        return Prompt(Kind.MICRO_DEFRAG, text, text=body)
    return Prompt(Kind.PASSTHROUGH, text)


_DEFRAG_ASK = re.compile(r"\b(?:defrag\w*|condense|shorten|compress|re-?summari[sz]e|rewrite)\b", re.I)
_INSTRUCTION_TAIL = re.compile(r"\n\n(?:Return|Output|Write|Respond|Reply|Keep|Do not)\b[^\n]*\Z")


def _defrag_body(text: str) -> str | None:
    """A request to shorten a summary with a prompt of its own: instructions that ask to
    condense a summary, then the summary (`##` sections), and no serialized turns."""
    head = text[:800]
    if _TAG.search(text) or "summary" not in head.lower() or not _DEFRAG_ASK.search(head):
        return None
    start = re.search(r"^#{1,3} \S", text, re.M)
    if start is None or start.start() > 2000:
        return None
    body = _INSTRUCTION_TAIL.sub("", text[start.start() :].rstrip()).strip()
    return body or None


def micro_prompt(summary: str | None, exchange_text: str) -> list[dict]:
    """Hermes's micro-pass request, word for word (agent/micro_compaction.py); for self-checks,
    tests and benchmarks that must look exactly like Hermes on the wire."""
    block = summary if summary and summary.strip() else NO_SUMMARY
    user = (
        "You are a summarization agent creating a compact record of an "
        "ongoing conversation.  You are given a running summary and the "
        "next exchange from the conversation.  Merge the exchange's key "
        "decisions, requirements, file paths, and open questions into the "
        "summary.  Preserve the summary's structure.  Drop resolved details "
        "that are no longer relevant.  Add new decisions, file paths, and "
        "open questions.\n\n"
        "NEVER include API keys, tokens, passwords, secrets, credentials, "
        "or connection strings in the summary \u2014 replace any that appear "
        "with [REDACTED].\n\n"
        f"## Current Running Summary\n{block}\n\n"
        f"## Next Exchange to Merge\n{exchange_text}\n\n"
        "Return ONLY the updated summary text, no preamble or explanation. "
        "Do not include this instruction block in your output."
    )
    return [
        {"role": "system", "content": "You are a conversation summarization assistant."},
        {"role": "user", "content": user},
    ]
