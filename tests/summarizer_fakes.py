"""A scripted stand-in for the engine's generate(): returns queued outputs, records requests."""

from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass
class FakeResult:
    text: str
    finish_reason: str = "stop"
    prompt_tokens: int = 0
    cached_tokens: int = 0
    generation_tokens: int = 0
    model: str = "fake"


class FakeModel:
    def __init__(self, *outputs, error: Exception | None = None):
        self.outputs = list(outputs)
        self.error = error
        self.requests: list = []

    def __call__(self, request, *, model=None, max_tokens=256, temperature=0.0, stop=None, timeout=None):
        self.requests.append({"request": request, "max_tokens": max_tokens, "stop": stop})
        if self.error is not None:
            raise self.error
        out = self.outputs.pop(0) if self.outputs else ""
        if isinstance(out, tuple):
            text, reason = out
        else:
            text, reason = out, "stop"
        prompt = json.dumps(request)
        return FakeResult(text, reason, len(prompt) // 4, 0, max(1, len(text) // 4))


def count(text, model=None):
    return len(text if isinstance(text, str) else json.dumps(text)) // 4 + 1


def call(cid, name, **args):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def failing_exchange():
    return [
        {"role": "assistant", "content": "Running the export tests.", "tool_calls": [call("c1", "terminal", command="pytest tests/test_export.py -q")]},
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"output": "E   AssertionError: assert '19.99' == '20.00'\nFAILED tests/test_export.py::test_rounding - AssertionError: assert '19.99' == '20.00'\n1 failed", "exit_code": 1})},
        {"role": "assistant", "content": "The rounding test fails: ledgerly/export/csv_export.py rounds each line instead of the total."},
    ]


def fixing_exchange():
    return [
        {"role": "assistant", "content": None, "tool_calls": [call("c2", "patch", path="ledgerly/export/csv_export.py", old="a", new="b")]},
        {"role": "tool", "tool_call_id": "c2", "content": "patched"},
        {"role": "assistant", "content": "", "tool_calls": [call("c3", "terminal", command="pytest tests/test_export.py -q")]},
        {"role": "tool", "tool_call_id": "c3", "content": json.dumps({"output": "5 passed", "exit_code": 0})},
        {"role": "assistant", "content": "Rounding now happens once on the invoice total; all 5 export tests pass."},
    ]
