"""The summarizer's contract with the compactor: what a pass returns, and what a summarizer offers.

The compactor depends only on this protocol, so tests drive it with a scripted fake and users
drive it with the MLX-backed summarizer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

Message = dict  # one OpenAI-format chat message: role, content, tool_calls, tool_call_id, name


@dataclass
class SummaryResult:
    """One summarizer call. `ok` False means: keep the previous summary, count a failure."""

    ok: bool
    text: str = ""  # the whole updated summary (markdown, `##` sections), no Hermes marker
    error: str | None = None
    prompt_tokens: int = 0
    cached_tokens: int = 0
    duration_s: float = 0.0
    chunks: int = 1
    model: str = ""
    details: dict = field(default_factory=dict)


class Summarizer(Protocol):
    def merge(
        self,
        summary: str | None,
        exchange: list[Message],
        budget_tokens: int | None = None,
        kept: list[Message] | None = None,
    ) -> SummaryResult:
        """Fold one exchange (assistant turn with its tool results) into the rolling summary: code
        extracts its facts, the model may choose which of the assistant's own sentences states its
        outcome; the result stays within `budget_tokens` (Hermes's rough count) when given, and
        what `kept` (the messages that stay verbatim beside the summary) still shows goes first."""

    def update(
        self,
        summary: str | None,
        turns: list[Message],
        focus: str | None = None,
        budget_tokens: int | None = None,
        user_notes: list[str] | None = None,
        kept: list[Message] | None = None,
    ) -> SummaryResult:
        """Batch compaction: fold a span of turns into the summary (iteratively when `summary` is
        given): code extracts the facts and ranks the agent's findings; the budget fit keeps what
        is worth most per token, and what `kept` (the head and tail that stay verbatim) still
        shows is worth little. `user_notes` are user messages the caller knows of outside
        `turns`: kept verbatim."""

    def defrag(
        self, summary: str, budget_tokens: int | None = None, kept: list[Message] | None = None
    ) -> SummaryResult:
        """Shorten an over-grown summary: older progress lines are condensed (the model may choose
        which to keep), then whole entries go, the one worth least per token first (what `kept`
        still shows before its equals), until it fits `budget_tokens` when given; nothing is
        rewritten, and what goes stays in the archive."""

    def count_tokens(self, text: str) -> int:
        """Token count in the summarizer model's tokenizer (for budgets and telemetry)."""
