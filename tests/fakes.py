"""A scripted summarizer and transcript builders: the compactor's tests run fast and exact on them."""

from __future__ import annotations

import json

from hermes_mlx.compactor import telemetry
from hermes_mlx.compactor.transcript import TranscriptError, repair
from hermes_mlx.summarizer.api import SummaryResult


class ScriptedSummarizer:
    """Implements the Summarizer protocol deterministically.

    `script` is a list consumed one entry per call (any method): True = succeed, False = fail,
    an Exception instance = raise it, a str = succeed with that text. When it runs out every call
    succeeds. Every call is recorded in `calls` as (method, args).
    """

    def __init__(self, script=None, model="fake-summarizer"):
        self.script = list(script or [])
        self.model = model
        self.calls: list[tuple[str, dict]] = []

    def _next(self, method, default_text, **args):
        self.calls.append((method, args))
        step = self.script.pop(0) if self.script else True
        if isinstance(step, BaseException):
            raise step
        if step is False:
            return SummaryResult(ok=False, error=f"scripted {method} failure", model=self.model)
        text = step if isinstance(step, str) else default_text
        return SummaryResult(ok=True, text=text, model=self.model, prompt_tokens=10)

    def merge(self, summary, exchange, budget_tokens=None, kept=None):
        first = next(
            (m.get("content") or "" for m in exchange if m.get("role") == "assistant" and m.get("content")), ""
        )
        line = f"- absorbed: {first[:40]}"
        return self._next(
            "merge",
            f"{summary}\n{line}" if summary else line,
            summary=summary,
            exchange=exchange,
            budget_tokens=budget_tokens,
            kept=kept,
        )

    def update(self, summary, turns, focus=None, budget_tokens=None, user_notes=None, kept=None):
        text = f"## Goal\nbatch summary of {len(turns)} turns"
        if summary:
            text = f"{summary}\n(updated with {len(turns)} turns)"
        if focus:
            text += f"\nfocus: {focus}"
        return self._next(
            "update", text, summary=summary, turns=turns, focus=focus, budget_tokens=budget_tokens, kept=kept
        )

    def defrag(self, summary, budget_tokens=None, kept=None):
        return self._next("defrag", "- defragged summary", summary=summary, budget_tokens=budget_tokens, kept=kept)

    def count_tokens(self, text):
        return (len(text) + 3) // 4

    def methods(self):
        return [name for name, _ in self.calls]


def user(text):
    return {"role": "user", "content": text}


def assistant(text, calls=None):
    message = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": "{}"}} for cid, name in calls
        ]
    return message


def tool(call_id, text, name="read_file"):
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": text}


def turn(n, size=400):
    """One tool-heavy agent turn: user ask, assistant call, big tool result, assistant answer."""
    return [
        user(f"question {n}"),
        assistant(f"let me look {n}", calls=[(f"call_{n}", "read_file")]),
        tool(f"call_{n}", f"file contents {n} " + "x" * size),
        assistant(f"answer {n}"),
    ]


def session(turns=8, size=400, system=True):
    messages = [{"role": "system", "content": "You are a coding agent."}] if system else []
    for n in range(turns):
        messages.extend(turn(n, size))
    return messages


def telemetry_lines(caplog, prefix):
    """(raw JSON, payload) of each telemetry line logged with `prefix`, each checked to be in
    Hermes's byte format (sorted keys, no spaces), so a test reads one pass's figures directly."""
    found = []
    for record in caplog.records:
        message = record.getMessage()
        if record.name == telemetry.LOGGER_NAME and message.startswith(prefix):
            raw = message[len(prefix) :]
            payload = json.loads(raw)
            assert raw == json.dumps(payload, sort_keys=True, separators=(",", ":"))
            found.append((raw, payload))
    return found


def tool_pairs_valid(messages) -> bool:
    """True when every call has exactly one result in its run and every result has a call: a
    transcript `repair` leaves as it is."""
    try:
        return not repair(messages)[1]
    except TranscriptError:
        return False
