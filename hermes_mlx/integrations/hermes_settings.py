"""What Hermes's own config says about compaction, read while a request is answered.

In process (the provider plugin) Hermes's config loader is importable, so the defrag threshold
and whether micro-compaction is on come from the user's config.yaml; over loopback they cannot
be read and Hermes's defaults stand. Never raises: a config we cannot read means defaults.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

DEFAULT_DEFRAG_THRESHOLD = 2000  # compression.micro_compact_defrag_threshold_tokens (agent/agent_init.py)
# The context Hermes should plan the summarizer with: its batch input is folded chunk by chunk
# (code carries the facts past the whole-job deadline), so the 8,192-token model window is not
# the limit Hermes asks about; Hermes refuses an auxiliary compression model below 64,000.
PLANNING_CONTEXT_TOKENS = 262_144
_TTL_S = 30.0


@dataclass(frozen=True)
class CompactionSettings:
    micro: bool = False  # compression.micro_compact
    defrag_threshold_tokens: int = DEFAULT_DEFRAG_THRESHOLD
    source: str = "defaults"  # "config.yaml" when read from Hermes


_cache: tuple[float, CompactionSettings] | None = None


def _positive_int(value, default: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return default
    return number if number > 0 else default


def from_config(config: dict) -> CompactionSettings:
    section = config.get("compression") if isinstance(config, dict) else None
    section = section if isinstance(section, dict) else {}
    return CompactionSettings(
        micro=section.get("micro_compact") is True,
        defrag_threshold_tokens=_positive_int(
            section.get("micro_compact_defrag_threshold_tokens"), DEFAULT_DEFRAG_THRESHOLD
        ),
        source="config.yaml",
    )


def compaction_settings() -> CompactionSettings:
    """Hermes's compaction settings when Hermes is in this process, else its defaults; re-read
    at most every 30 s so an edited config.yaml takes effect without a restart."""
    global _cache
    now = time.monotonic()
    if _cache is not None and now - _cache[0] < _TTL_S:
        return _cache[1]
    try:
        from hermes_cli.config import load_config

        settings = from_config(load_config() or {})
    except Exception:
        settings = CompactionSettings()
    _cache = (now, settings)
    return settings
