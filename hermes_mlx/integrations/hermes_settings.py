"""What Hermes's own config says that a running request needs: one reader, cached, for the
provider, the plugin's hooks and the context engine alike.

In process Hermes's config loader is importable, so micro-compaction, the defrag threshold, the
compression route and our model come from the user's config.yaml (Hermes's defaults merged, its
loader's cache doing the caching); over loopback it cannot be read and Hermes's defaults stand.
An edited config takes effect at the next request without a restart. Never raises: a config we
cannot read means defaults.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hermes_mlx.compactor.settings import DEFAULT_DEFRAG_THRESHOLD

from .hermes_config import OUR_PROVIDERS, PLUGIN_NAME, section

# The context Hermes should plan the summarizer with: its batch input is folded chunk by chunk
# (code carries the facts past the whole-job deadline), so the 8,192-token model window is not
# the limit Hermes asks about; Hermes refuses an auxiliary compression model below 64,000.
PLANNING_CONTEXT_TOKENS = 262_144


@dataclass(frozen=True)
class HermesSettings:
    micro: bool = False  # compression.micro_compact
    defrag_threshold_tokens: int = DEFAULT_DEFRAG_THRESHOLD  # compression.micro_compact_defrag_threshold_tokens
    provider: str = ""  # auxiliary.compression.provider, lower case
    aux_model: str | None = None  # auxiliary.compression.model, when that route names us
    plugin_model: str | None = None  # plugins.entries.hermes-mlx.settings.model (plugin.yaml's schema)
    engine: bool = False  # context.engine: hermes-mlx (our context engine replaces Hermes's compressor)
    source: str = "defaults"  # "config.yaml" when read from Hermes

    @property
    def ours(self) -> bool:
        """Compaction requests come to our provider."""
        return self.provider in OUR_PROVIDERS

    @property
    def model(self) -> str | None:
        """The summarizer model when no request names one: the compression route's model when
        it names us (a user switching from provider mode keeps the model), else the plugin's own
        setting, else the embedded default (None)."""
        return self.aux_model or self.plugin_model


def _positive_int(value: Any, default: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return default
    return number if number > 0 else default


def _name(value: Any) -> str | None:
    return str(value or "").strip() or None


def from_config(config: Any) -> HermesSettings:
    """The settings in a config mapping (Hermes's loaded config, or config.yaml as written)."""
    compression = section(config, "compression")
    aux = section(config, "auxiliary", "compression")
    provider = str(aux.get("provider") or "").strip().lower()
    return HermesSettings(
        micro=compression.get("micro_compact") is True,
        defrag_threshold_tokens=_positive_int(
            compression.get("micro_compact_defrag_threshold_tokens"), DEFAULT_DEFRAG_THRESHOLD
        ),
        provider=provider,
        aux_model=_name(aux.get("model")) if provider in OUR_PROVIDERS else None,
        plugin_model=_name(section(config, "plugins", "entries", PLUGIN_NAME, "settings").get("model")),
        engine=str(section(config, "context").get("engine") or "").strip() == PLUGIN_NAME,
        source="config.yaml",
    )


def hermes_settings() -> HermesSettings:
    """Hermes's settings when Hermes is in this process, else its defaults. Read through Hermes's
    own loader at each call: it caches on the config file's path, size and time (~0.3 ms a hit),
    so an edited config.yaml, a profile switch and Hermes's managed scope are all followed, which
    a cache of ours keyed on one file would miss."""
    try:
        from hermes_cli.config import load_config

        return from_config(load_config() or {})
    except Exception:
        return HermesSettings()
