"""The options both compactors take, in one place, so a replay builds them once and hands them to both.

A micro-only option (cadence, defrag threshold) or a batch-only one (summary budget) sits here
too: each compactor reads what it needs and ignores the rest, so adding an option never means
teaching a caller which compactor accepts it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, replace

from hermes_mlx.summarizer.api import Message

THRESHOLD_RATIO = 0.8  # compaction threshold as a share of the context window
TAIL_RATIO = 0.2  # protected tail budget as a share of the threshold (the seeds' 64K of 320K)
# Hermes's compression.micro_compact_defrag_threshold_tokens default (agent/agent_init.py); the
# integrations read Hermes's own value and fall back to this one.
DEFAULT_DEFRAG_THRESHOLD = 2000


def clamp_every_n(value: object) -> int:
    """Cadence below 1 (or unreadable) means every turn, never 'disabled'."""
    try:
        return max(1, int(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 1


@dataclass(frozen=True)
class CompactorSettings:
    """Both compactors' options. `threshold_tokens` and `tail_tokens` stay as given (None: derived),
    so `dataclasses.replace(settings, context_limit=...)` moves the derived figures with it; read
    the figures in force from `threshold` and `tail`."""

    context_limit: int = 32768
    threshold_tokens: int | None = None  # None or 0: THRESHOLD_RATIO of the context
    tail_tokens: int | None = None  # None: TAIL_RATIO of the threshold
    protect_first_n: int = 3
    protect_last_n: int = 2
    max_chars_per_message: int = 24_000
    session_id: str = ""
    main_model: str = ""
    on_compacted: Callable[[list[Message]], object] | None = None  # the session store's write
    every_n_turns: int = 1  # micro: a pass every n turns
    defrag_threshold_tokens: int = DEFAULT_DEFRAG_THRESHOLD  # micro: shorten the rolling summary (defrag) at this size
    ahead: bool = False  # micro: start the next pass's summarizer call in the background (compactor/ahead.py)
    summary_budget_tokens: int | None = None  # batch: None sizes the budget from the span

    def __post_init__(self) -> None:
        object.__setattr__(self, "every_n_turns", clamp_every_n(self.every_n_turns))

    @property
    def threshold(self) -> int:
        return self.threshold_tokens or int(self.context_limit * THRESHOLD_RATIO)

    @property
    def tail(self) -> int:
        return self.tail_tokens if self.tail_tokens is not None else int(self.threshold * TAIL_RATIO)

    @classmethod
    def of(cls, settings: CompactorSettings | None = None, **options) -> CompactorSettings:
        """`settings` (or the defaults) with `options` applied; an option no compactor takes is a
        TypeError naming it, rather than a setting silently dropped."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise TypeError(
                f"unknown compactor option{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}"
                f" (known: {', '.join(sorted(known))})"
            )
        base = settings if settings is not None else cls()
        return replace(base, **options) if options else base
