"""Hermes's compaction prompts: recognising them, taking them apart, and writing the micro one.

Hermes writes one micro prompt (agent/micro_compaction.py) and two batch prompts, first and
update (agent/context_compressor.py), and rewords them between releases; upstream proposes more
(a defrag prompt of its own, PR #104486; a continuation schema, PR #85291). So `recognise` goes by
their structure (sections, serialized turns, a template of bracketed placeholders, labelled
blocks); the few fixed strings below only cut the parts precisely. A request that matches none
is a `passthrough`. A request is recognised once, where it enters
(server.chat, provider.create, the plugin's guess computed ahead); the Prompt travels down from
there to the size limit, the adapter and passthrough.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum

from hermes_mlx.summarizer.api import Message
from hermes_mlx.summarizer.requested_layout import Heading, read_layout

# Fixed strings of Hermes's prompts (agent/context_compressor.py, agent/micro_compaction.py).
MICRO_TAIL = "\n\nReturn ONLY the updated summary text"
NO_SUMMARY = "(No previous summary yet.)"
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
    """Which Hermes prompt this is, with its parts; `passthrough` when it is none of them.

    By structure, not wording (Hermes rewords its prompts between releases): a batch prompt has a
    template (the last run of `## ` headings over bracketed placeholders, requested_layout.py)
    after a block of serialized turns (`[USER]: ...`), and an update also a block before them,
    the previous summary, each block opened by a capitals label line ("TURNS TO SUMMARIZE:").
    A micro prompt has `## ` sections and no template: the section holding the turns is the
    exchange, the one before it the running summary (a parenthesized line means none). With no
    turns at all, a running summary to shorten is a defrag, Hermes's own (the merge prompt with
    no summary) or one with a prompt of its own (upstream PR #104486)."""
    users = [m for m in messages if m.get("role") == "user"]
    text = users[-1].get("content") if users else ""
    if not isinstance(text, str) or not text:
        return Prompt(Kind.PASSTHROUGH)
    layout = read_layout(text)
    found = (_batch(text, layout) if layout else None) or _micro(text) or (None if layout else _defrag(text))
    return found or Prompt(Kind.PASSTHROUGH, text)


_LABEL = re.compile(r"^[A-Z][A-Z0-9 ()/&_-]{2,}:[ \t]*$", re.M)  # a block of the prompt: "PREVIOUS SUMMARY:"
_H2 = re.compile(r"^## \S[^\n]*$", re.M)
_NONE_LINE = re.compile(r"^\([^\n]*\)$")  # "(No previous summary yet.)"
_INSTRUCTION_TAIL = re.compile(r"\n\n(?:Return|Output|Write|Respond|Reply|Keep|Do not)\b[^\n]*\Z")
_CHARS = re.compile(r"(\d[\d,]*)\s*(?:characters|chars)\b", re.I)


def _batch(text: str, layout: list[Heading]) -> Prompt | None:
    """A batch prompt: the turns block (the label line before the first serialized turn, to the
    paragraph that introduces the template), and the block before it (the previous summary)."""
    template = text.rfind("## " + layout[0].title)
    head = text[:template].rstrip()
    cut = head.rfind("\n\n")
    if cut > 0 and not _TAG.match(head[cut:]):
        head = head[:cut]  # the paragraph that introduces the template ("Use this exact structure:")
    first = _TAG.search(head)
    if first is None:
        return None
    labels = [m for m in _LABEL.finditer(head) if m.end() <= first.start()]
    turns_label = labels[-1] if labels and not head[labels[-1].end() : first.start()].strip() else None
    turns_text = head[turns_label.end() if turns_label else first.start() :]
    summary = None
    if turns_label is not None and len(labels) > 1:
        summary = head[labels[0].end() : turns_label.start()].strip() or None
    turns, focus = parse_turns(_drop_memory(turns_text)), _focus(text)
    return Prompt(
        Kind.BATCH_UPDATE if summary else Kind.BATCH,
        text,
        summary=summary,
        turns=turns,
        focus=focus,
        budget_tokens=_budget(text),
        user_notes=user_notes(focus, turns),
        layout=layout,
    )


def _without_tail(body: str) -> str:
    i = body.rfind(MICRO_TAIL)
    body = body[:i] if i >= 0 else _INSTRUCTION_TAIL.sub("", body.rstrip())
    return body.strip()


def _micro(text: str) -> Prompt | None:
    """Hermes's micro prompt: a running-summary section and an exchange section."""
    heads = list(_H2.finditer(text))
    if len(heads) < 2:
        return None
    first_tag = _TAG.search(text, heads[0].end())
    if first_tag is not None:
        exchange = [h for h in heads if h.end() < first_tag.start()][-1]
        summary = text[heads[0].end() : exchange.start()].strip() if exchange is not heads[0] else ""
        summary = None if not summary or _NONE_LINE.match(summary) else summary
        body = _without_tail(text[exchange.end() :])
        turns = parse_turns(body) or [{"role": "assistant", "content": body}]
        return Prompt(Kind.MICRO, text, summary=summary, turns=turns)
    placeholder = text[heads[0].end() : heads[1].start()].strip()
    if _NONE_LINE.match(placeholder):  # Hermes's defrag: no summary to merge into, the old one as the exchange
        body = _without_tail(text[heads[1].end() :])
        return Prompt(Kind.MICRO_DEFRAG, text, text=body) if body else None
    return None


def _defrag(text: str) -> Prompt | None:
    """A running summary to shorten with a prompt of its own: a short instruction, then the summary
    (`##` sections), no serialized turns. The instruction must speak of a summary: a provider must
    not take an arbitrary markdown question for a defrag."""
    start = _H2.search(text) or re.search(r"^#{1,3} \S", text, re.M)
    if start is None or start.start() > 2000 or _TAG.search(text) or "summar" not in text[: start.start()].lower():
        return None
    body = _without_tail(text[start.start() :])
    chars = _CHARS.search(text[: start.start()] + text[len(text) - 600 :])
    budget = max(1, int(chars.group(1).replace(",", "")) // 4) if chars else None
    return Prompt(Kind.MICRO_DEFRAG, text, text=body, budget_tokens=budget) if body else None


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
