"""Hermes's transcript wire format: how Hermes writes a conversation into a compaction prompt.

`hermes_serialize` is Hermes's `_serialize_for_summary` (agent/context_compressor.py) minus its
truncation; `hermes_prompts.parse_turns` reads the same text back. The bench feeds it to the
mlx_lm.server baseline and scores fidelity on it, and the integration tests build Hermes's
requests with it, so one copy serves all of them.
"""

from __future__ import annotations

import json

from hermes_mlx.summarizer.api import Message
from hermes_mlx.summarizer.redact import redact


def hermes_serialize(messages: list[Message], redact_secrets: bool = False) -> str:
    """The messages as Hermes serializes them for its summarizer. Hermes redacts every content
    with its own patterns; `redact_secrets` stands ours in for them."""
    clean = redact if redact_secrets else str
    parts = []
    for m in messages:
        content = m.get("content") or ""
        if not isinstance(content, str):
            content = json.dumps(content)
        content = clean(content)
        if m.get("role") == "tool":
            parts.append(f"[TOOL RESULT {m.get('tool_call_id', '')}]: {content}")
        elif m.get("role") == "assistant":
            calls = m.get("tool_calls") or []
            if calls:
                content += (
                    "\n[Tool calls:\n"
                    + "\n".join(f"  {c['function']['name']}({clean(c['function']['arguments'])})" for c in calls)
                    + "\n]"
                )
            parts.append(f"[ASSISTANT]: {content}")
        else:
            parts.append(f"[{str(m.get('role', '')).upper()}]: {content}")
    return "\n\n".join(parts)
