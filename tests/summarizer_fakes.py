"""A scripted stand-in for the engine's score(): queued "answers" pick sentences, requests recorded;
and a summarizer that no model stands behind (code ranks), for tests that run whole passes."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from hermes_mlx.summarizer import MLXSummarizer
from hermes_mlx.summarizer.summary import Summary, parse


@dataclass
class FakeScore:
    scores: list
    prompt_tokens: int = 0
    cached_tokens: int = 0
    generation_tokens: int = 0
    model: str = "fake"


def _words(text: str) -> set:
    return {w.lower() for w in re.findall(r"[\w./-]+", text or "")}


class FakeModel:
    """Each queued output scripts one model call: the numbered sentence of the prompt sharing
    most words with it scores highest (none shared: all tie, and the summarizer's tie-break
    decides). An exception instance in the queue is raised; `error` fails every call."""

    def __init__(self, *outputs, error: Exception | None = None):
        self.outputs = list(outputs)
        self.error = error
        self.requests: list = []

    def score(self, candidates, prefix, *, model=None, timeout=None):
        self.requests.append({"request": prefix, "candidates": list(candidates)})
        if self.error is not None:
            raise self.error
        out = self.outputs.pop(0) if self.outputs else ""
        if isinstance(out, BaseException):
            raise out
        text = out[0] if isinstance(out, tuple) else out
        listed = dict(re.findall(r"^(\d+)\. (.*)$", prefix[-1]["content"], flags=re.MULTILINE))
        mine = _words(text)
        scores = [len(mine & _words(listed.get(c, ""))) / (1 + len(_words(listed.get(c, "")))) - 1 for c in candidates]
        return FakeScore(scores, len(json.dumps(prefix)) // 4)

    def chosen(self, i: int = -1) -> list:
        """The sentences listed in call i's prompt, by number."""
        return re.findall(r"^\d+\. (.*)$", self.requests[i]["request"][-1]["content"], flags=re.MULTILINE)


def count(text, model=None):
    return len(text if isinstance(text, str) else json.dumps(text)) // 4 + 1


def call(cid, name, **args):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def ran(cid, name, result, **args) -> list[dict]:
    """One tool call and its result: the assistant's turn that makes it, and the tool's answer."""
    return [
        {"role": "assistant", "content": "", "tool_calls": [call(cid, name, **args)]},
        {"role": "tool", "tool_call_id": cid, "content": result},
    ]


def failing_exchange():
    return [
        {
            "role": "assistant",
            "content": "The export suite has five tests.",
            "tool_calls": [call("c1", "terminal", command="pytest tests/test_export.py -q")],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": json.dumps(
                {
                    "output": "E   AssertionError: assert '19.99' == '20.00'\nFAILED tests/test_export.py::test_rounding - AssertionError: assert '19.99' == '20.00'\n1 failed",
                    "exit_code": 1,
                }
            ),
        },
        {
            "role": "assistant",
            "content": "The rounding test fails: ledgerly/export/csv_export.py rounds each line instead of the total.",
        },
    ]


def fixing_exchange():
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("c2", "patch", path="ledgerly/export/csv_export.py", old="a", new="b")],
        },
        {"role": "tool", "tool_call_id": "c2", "content": "patched"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [call("c3", "terminal", command="pytest tests/test_export.py -q")],
        },
        {"role": "tool", "tool_call_id": "c3", "content": json.dumps({"output": "5 passed", "exit_code": 0})},
        {"role": "assistant", "content": "Rounding now happens once on the invoice total; all 5 export tests pass."},
    ]


def facts_are_in_their_session(path) -> bool:
    """Every fact of a real session's facts file is in the session: a message's content or a tool
    call's arguments (as written, or JSON-escaped)."""
    from hermes_mlx.bench.shipped import facts_path, load_facts
    from hermes_mlx.compactor.sessions import load_session

    facts, messages = load_facts(facts_path(path)), load_session(path)
    said = "\n".join(
        [str(m.get("content") or "") for m in messages]
        + [c["function"]["arguments"] for m in messages for c in m.get("tool_calls") or []]
    )
    return bool(facts.must_keep()) and all(f in said or json.dumps(f)[1:-1] in said for _, f in facts.must_keep())


def rough_count(text: str) -> int:
    """A token count of a quarter of the characters, at least 1: no tokenizer loaded."""
    return max(1, len(text) // 4)


def code_summarizer() -> MLXSummarizer:
    """A summarizer with no model to call (code ranks), counting tokens roughly, in an 8K window."""
    return MLXSummarizer(score=None, count_tokens=rough_count, context_window=8192)


def one_pass(messages: list[dict]) -> Summary:
    """`messages` summarized in one batch pass with no earlier summary, parsed back."""
    return parse(code_summarizer().update(None, messages).text)
