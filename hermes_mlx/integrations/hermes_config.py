"""Hermes's config.yaml as a file: where it is, reading, parsing, merging our lines, writing.

The lowest of the three Hermes-config modules: hermes_settings.py reads what a running request
needs from it, hermes_checks.py says what in it will break a session, and hermes_setup.py runs
write -> findings -> self-check. Setup merges only the keys it owns and keeps a backup. The file is
edited with ruamel.yaml's round-trip mode when it is importable (Hermes installs it), so the
user's comments and key order survive; plain PyYAML otherwise. The names Hermes knows us by are
defined here, once, for every module above; Hermes's defrag threshold default is the compactor's
(compactor.settings.DEFAULT_DEFRAG_THRESHOLD).
"""

from __future__ import annotations

import io
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from hermes_mlx.files import atomic_write, write_target

PLUGIN_NAME = "hermes-mlx"  # the pip plugin (plugins.enabled), its settings entry and context.engine
PROVIDER_NAME = "mlx"  # auxiliary.compression.provider
OUR_PROVIDERS = (PROVIDER_NAME, PLUGIN_NAME)  # provider names that route compaction to us
DEFAULT_AUX_MODEL = "hermes-mlx-default"  # the model name setup writes; it means the embedded default
DEFAULT_PORT = 8765  # where `serve` listens and the loopback config points, unless told


def hermes_home(path: str | os.PathLike | None = None) -> Path:
    """Hermes's folder: `path` when given, else `$HERMES_HOME`, else ~/.hermes (as Hermes finds it).
    The one place hermes-mlx looks it up, for the config and for the log alike."""
    return Path(path or os.environ.get("HERMES_HOME") or Path.home() / ".hermes").expanduser()


def agent_log_path(home: str | os.PathLike | None = None) -> Path:
    """Where Hermes logs, and so where `report` finds the compaction telemetry by default."""
    return hermes_home(home) / "logs" / "agent.log"


def section(config: Any, *keys: str) -> dict:
    """`config[k1][k2]...` when each step is a mapping, else {}: a hand-edited config.yaml can hold
    anything at any key."""
    for key in keys:
        config = config.get(key) if isinstance(config, dict) else None
    return config if isinstance(config, dict) else {}


def config_lines(
    path: str,
    *,
    port: int = DEFAULT_PORT,
    plugin: str = PLUGIN_NAME,
    api_key: str | None = None,
    protect_first_turns: bool = False,
    engine: bool = False,
) -> dict:
    """The keys setup owns, for 'in-process' or 'loopback'. `protect_first_turns` adds
    compression.protect_first_n: 0 for a Hermes that drops the first turns (hermes_checks).
    `engine` (in process only) adds context.engine: hermes-mlx, our context engine in place of
    Hermes's compressor (integrations/context_engine.py); the provider lines stay as its fallback."""
    if path == "in-process":
        lines = {"plugins": {"enabled": [plugin]}, "auxiliary": {"compression": {"provider": PROVIDER_NAME}}}
        if engine:
            lines["context"] = {"engine": PLUGIN_NAME}
        return lines
    # A key Hermes can send (the server ignores it unless started with --api-key).
    lines: dict = {
        "providers": {PROVIDER_NAME: {"base_url": f"http://127.0.0.1:{port}/v1", "api_key": api_key or "local"}},
        "auxiliary": {"compression": {"provider": PROVIDER_NAME}},
    }
    if protect_first_turns:
        lines["compression"] = {"protect_first_n": 0}
    return lines


def config_defaults(path: str) -> dict:
    """Keys setup writes only where the user has none: the README's in-process lines. The model
    name is explicit and one the provider maps to the embedded default (or the plugin's settings
    model). Hermes 0.22 already sends that name (the profile's default_aux_model) and puts it in
    its batch telemetry; its micro telemetry's aux_model stays "" whatever the config says
    (ContextCompressor is built with summary_model_override=None)."""
    if path == "in-process":
        return {"auxiliary": {"compression": {"model": DEFAULT_AUX_MODEL}}, "compression": {"micro_compact": True}}
    return {}


def merge(base: dict, ours: dict, where: str = "", *, overwrite: bool = True) -> list[str]:
    """Deep-merge `ours` into `base` in place: lists gain missing items, our scalars win (only
    fill gaps when not `overwrite`), other keys are left alone. Returns what changed, one line each."""
    changes = []
    for key, value in ours.items():
        name = f"{where}.{key}" if where else key
        have = base.get(key)
        if isinstance(value, dict):
            if not isinstance(have, dict):
                if have is not None:
                    changes.append(f"{name}: replaced {have!r} with a mapping")
                base[key] = have = {}
            changes += merge(have, value, name, overwrite=overwrite)
        elif isinstance(value, list):
            if not isinstance(have, list):
                base[key] = have = []
            for item in value:
                if item not in have:
                    have.append(item)
                    changes.append(f"{name}: added {item!r}")
        elif have is None or (overwrite and have != value):
            base[key] = value
            changes.append(f"{name}: {have!r} -> {value!r}" if have is not None else f"{name}: set {value!r}")
    return changes


def _round_trip() -> Any:
    """ruamel.yaml in round-trip mode (comments, order and quoting kept), or None."""
    try:
        from ruamel.yaml import YAML
    except ImportError:
        return None
    rt = YAML(typ="rt")
    rt.preserve_quotes = True
    rt.width = 4096  # never re-wrap the user's long lines
    return rt


def load_config_text(text: str, rt: Any = None) -> Any:
    """Parsed config.yaml; ValueError when it does not parse (it is then left alone)."""
    if not text.strip():
        return {}
    try:
        return rt.load(text) if rt is not None else yaml.safe_load(text)
    except Exception as exc:  # ruamel's and PyYAML's errors share no base class
        raise ValueError(f"config.yaml does not parse, not touching it: {exc}") from None


def dump_config(data: Any, rt: Any = None) -> str:
    if rt is None:
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    out = io.StringIO()
    rt.dump(data, out)
    return out.getvalue()


def read_config(home: Path) -> dict:
    """`home/config.yaml` as written (Hermes's defaults not merged); {} when absent or unreadable."""
    try:
        data = yaml.safe_load((home / "config.yaml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}


def config_problem(config_path: Path) -> str | None:
    """Why `config_path` cannot be read as Hermes's config (what Hermes would fail on too), or
    None. read_config treats such a file as empty, which alone would read as "nothing set"."""
    try:
        data = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    except UnicodeDecodeError:
        return "is not UTF-8 text"
    except (yaml.YAMLError, RecursionError) as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" at line {where.line + 1}, column {where.column + 1}" if where else ""
        return f"cannot be parsed as YAML{at} ({getattr(exc, 'problem', None) or type(exc).__name__})"
    if data is not None and not isinstance(data, dict):
        return f"holds a {type(data).__name__} at the top level, not a mapping of settings"
    return None


def refuse_denied_plugin(config: Any, path: str, plugin: str, config_path: Path) -> None:
    """ValueError when the in-process lines would be written while `plugins.disabled` names the
    plugin: Hermes's deny-list wins over plugins.enabled, so the provider and the engine would
    never load and setup would report success for a path that cannot work. The entry is left to
    the user (someone put it there, perhaps on purpose) rather than silently undone."""
    disabled = section(config, "plugins").get("disabled")
    if path == "in-process" and isinstance(disabled, list) and plugin in map(str, disabled):
        raise ValueError(
            f"{config_path}: plugins.disabled names {plugin}, and Hermes's deny-list wins over plugins.enabled, "
            f"so hermes-mlx would never load; nothing was written. Remove {plugin} from plugins.disabled, "
            "then run setup-hermes again"
        )


@dataclass
class SetupResult:
    config_path: Path
    path: str
    changes: list[str] = field(default_factory=list)
    backup: Path | None = None
    warnings: list[str] = field(default_factory=list)
    round_trip: bool = False  # edited with ruamel.yaml (comments kept)
    config: Any = None  # the merged config, as written (or as found, when nothing changed)


def write_config(home: Path, path: str, *, round_trip: bool = True, **lines: Any) -> SetupResult:
    """Merge our lines (config_lines(path, **lines)) into `home/config.yaml`; the old file is
    copied aside first. The result holds the merged config, for the findings setup reports next
    (hermes_setup.py)."""
    config_path = home / "config.yaml"
    rt = _round_trip() if round_trip else None
    result = SetupResult(config_path, path, round_trip=rt is not None)
    data: Any = {}
    real = write_target(config_path)  # a link is followed (the link stays); a device or FIFO is refused unread
    if config_path.exists():
        data = load_config_text(config_path.read_text(encoding="utf-8"), rt)
        if not isinstance(data, dict):
            raise ValueError(f"{config_path}: top level is {type(data).__name__}, not a mapping; not touching it")
    refuse_denied_plugin(data, path, lines.get("plugin", PLUGIN_NAME), config_path)
    result.changes = merge(data, config_lines(path, **lines))
    result.changes += merge(data, config_defaults(path), overwrite=False)
    result.config = data
    if not result.changes:
        return result
    text = dump_config(data, rt)
    home.mkdir(parents=True, exist_ok=True)
    if real.exists() and not os.access(real, os.W_OK):
        raise ValueError(f"{config_path} is read-only or immutable; it was left as it was")
    backup = None
    if real.exists():  # copy2 keeps the mode: a 0600 config holding keys stays 0600 in its backup
        backup = config_path.with_name(f"config.yaml.bak-{time.strftime('%Y%m%d-%H%M%S')}")
        shutil.copy2(real, backup)
    try:  # a new config is 0600: it may come to hold API keys
        atomic_write(config_path, lambda fh: fh.write(text), new_mode=0o600)
    except BaseException:
        if backup is not None:
            backup.unlink(missing_ok=True)
        raise
    result.backup = backup
    return result
