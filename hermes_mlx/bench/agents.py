"""Fidelity across agents: the real sessions scored at a window each session fills twice over,
then the facts at stake kept summed per agent.

Rules tuned on one agent's sessions fit that agent's shapes; the per-agent rows are what shows
it. A session's agent is the first `_` field of its file name (`claudecode_opus_spotter_0zw`:
claudecode), the convention both shipped real corpora follow; a name without one is its own
agent, so a user's own file still gets a row.

The window rule: each session runs at a context window of half its own tokens (Hermes's count,
at least MIN_WINDOW), so compaction must remove more than half of it to end under the threshold
(80% of the window). The share it did remove is measured per session (`removed_pct`): a session
whose passes failed, or that ended over the threshold, shows it there rather than hiding it.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

from hermes_mlx.bench.shipped import REAL2_DIR, REAL_DIR, shipped_sessions
from hermes_mlx.compactor.transcript import transcript_tokens
from hermes_mlx.summarizer.api import Message

MIN_WINDOW = 1024  # the smallest window `fidelity --context-limit` takes
WINDOW_SHARE = 0.5  # the window as a share of the session's own tokens


def real_sessions() -> list[Path]:
    """Both shipped corpora of sessions real agents wrote."""
    return shipped_sessions(REAL_DIR) + shipped_sessions(REAL2_DIR)


def agent_of(path: str | Path) -> str:
    """The agent that wrote a session: its file name's first `_` field (the whole stem if none)."""
    name = Path(path).name
    stem = name[: -len(".jsonl")] if name.endswith(".jsonl") else Path(name).stem
    return stem.split("_", 1)[0] or stem


def real_window(messages: list[Message]) -> int:
    """The context window a real session is scored at: half its tokens, at least MIN_WINDOW."""
    return max(MIN_WINDOW, int(transcript_tokens(messages) * WINDOW_SHARE))


def removed_pct(seen: list[Message], kept: list[Message]) -> float | None:
    """The share of the session's tokens compaction removed: the originals no longer in `kept`
    (the live transcript without its summary marker), in Hermes's count."""
    total = transcript_tokens(seen)
    return round(100 * (1 - transcript_tokens(kept) / total), 1) if total else None


@dataclass
class AgentRow:
    """One agent's sessions in one mode, summed: facts at stake kept, summary tokens (median of
    its sessions), pass p50 (over all their passes)."""

    agent: str
    mode: str
    sessions: int
    stake: int
    stake_kept: int
    summary_tokens_p50: int
    pass_s_p50: float | None
    failed_passes: int

    @property
    def kept_pct(self) -> float | None:
        return round(100 * self.stake_kept / self.stake, 1) if self.stake else None

    def to_dict(self) -> dict:
        return {**self.__dict__, "kept_pct": self.kept_pct}


OVERALL = "all"  # the row that sums every agent


def per_agent(scores: list) -> list[AgentRow]:
    """One row per (mode, agent), agents in name order, then each mode's OVERALL row."""
    rows = []
    for mode in dict.fromkeys(s.mode for s in scores):
        mine = [s for s in scores if s.mode == mode]
        groups: dict[str, list] = {}
        for s in mine:
            groups.setdefault(agent_of(s.session), []).append(s)
        for agent in sorted(groups):
            rows.append(_row(agent, mode, groups[agent]))
        rows.append(_row(OVERALL, mode, mine))
    return rows


def _row(agent: str, mode: str, scores: list) -> AgentRow:
    passes = [p for s in scores for p in s.pass_s]
    return AgentRow(
        agent=agent,
        mode=mode,
        sessions=len(scores),
        stake=sum(s.stake for s in scores),
        stake_kept=sum(s.stake_kept for s in scores),
        summary_tokens_p50=int(statistics.median(s.summary_tokens for s in scores)) if scores else 0,
        pass_s_p50=round(statistics.median(passes), 2) if passes else None,
        failed_passes=sum(len(s.failures) for s in scores),
    )


def agent_table(rows: list[AgentRow]) -> str:
    """The per-agent rows as a markdown table (it reads as text in a terminal too)."""
    out = [
        "| agent | mode | sessions | facts at stake kept | summary tokens p50 | pass p50 s | failed passes |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        pct = "-" if r.kept_pct is None else f"{r.kept_pct:.0f}%"
        name = f"**{r.agent}**" if r.agent == OVERALL else r.agent
        p50 = "-" if r.pass_s_p50 is None else f"{r.pass_s_p50:.2f}"
        out.append(
            f"| {name} | {r.mode} | {r.sessions} | {r.stake_kept}/{r.stake} ({pct}) | {r.summary_tokens_p50} "
            f"| {p50} | {r.failed_passes} |"
        )
    return "\n".join(out)
