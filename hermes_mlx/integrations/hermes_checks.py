"""What will break a Hermes session with hermes-mlx, said before the session finds out.

Two kinds of check. `config_findings` reads the user's config.yaml for lines that defeat us
(each verified in Hermes's sources, named below). `feasibility` runs Hermes's own
`check_compression_model_feasibility` (agent/conversation_compression.py) on a stand-in agent
built from that config, in a child process of this interpreter: importing Hermes runs its
start-up code and plugin discovery, HERMES_HOME must be the folder being checked, and a hang
must stay bounded. The child may reach loopback only, so the check is offline like a session.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_mlx.summarizer.budget import MICRO_LOW

from .hermes_settings import from_config

PLUGIN_NAME = "hermes-mlx"
# Below this defrag threshold our rolling summary, cut to 60% of it after every defrag
# (summarizer/budget.py), has ~360 tokens (~1,400 characters): the headings, the goal and a few
# facts. Most of the ledger would be dropped to the archive on every pass.
MIN_DEFRAG_THRESHOLD_TOKENS = 600
MINIMUM_CONTEXT_LENGTH = 64_000  # agent/model_metadata.py, for the message when Hermes is absent
_TAG = "HERMES_MLX_FEASIBILITY "


@dataclass(frozen=True)
class Finding:
    key: str
    problem: str
    fix: str

    def line(self) -> str:
        return f"{self.key}: {self.problem}. Fix: {self.fix}"


def _section(config: Any, *keys: str) -> dict:
    for key in keys:
        config = config.get(key) if isinstance(config, dict) else None
    return config if isinstance(config, dict) else {}


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
    aux = _section(config, "auxiliary", "compression")
    plugins = _section(config, "plugins")
    compression = _section(config, "compression")
    if aux.get("provider") != "mlx":
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
        if "mlx" in _section(config, "providers"):
            out.append(
                Finding(
                    "providers.mlx",
                    "is set, so Hermes sends provider mlx to that URL (the loopback "
                    "server) instead of the in-process plugin",
                    "remove providers.mlx, or keep it and run `hermes-mlx serve` (loopback path)",
                )
            )
    else:
        if not _section(config, "providers", "mlx").get("base_url"):
            out.append(
                Finding(
                    "providers.mlx.base_url",
                    "is missing, so Hermes has no address for provider mlx",
                    "set it to http://127.0.0.1:8765/v1 and run `hermes-mlx serve --port 8765`",
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
    from .engine_config import engine_findings

    out += engine_findings(config, path)
    threshold = from_config(config).defrag_threshold_tokens
    if threshold < MIN_DEFRAG_THRESHOLD_TOKENS:
        keep = int(threshold * MICRO_LOW)
        out.append(
            Finding(
                "compression.micro_compact_defrag_threshold_tokens",
                f"is {threshold:,}: after each defrag hermes-mlx cuts the rolling summary to "
                f"{int(MICRO_LOW * 100)}% of it ({keep:,} tokens, ~{keep * 4:,} characters), room for "
                "the headings and a few facts, so most facts are dropped to the archive every pass",
                f"raise it to at least {MIN_DEFRAG_THRESHOLD_TOKENS:,} (Hermes's default is 2,000)",
            )
        )
    return out


@dataclass
class Feasibility:
    """Hermes's verdict on the compression model: `ok` None when the check could not run."""

    ok: bool | None
    detail: str
    aux_model: str = ""
    provider: str = ""
    context: int | None = None
    minimum: int | None = None
    notices: list[str] = field(default_factory=list)

    def line(self) -> str:
        verdict = {True: "pass", False: "FAIL", None: "not run"}[self.ok]
        return f"Hermes compression feasibility check: {verdict}: {self.detail}"


def _verdict(raw: dict) -> Feasibility:
    if raw.get("crash"):
        return Feasibility(None, f"could not run Hermes's check: {raw['crash']}")
    model, provider = raw.get("aux_model") or "", raw.get("provider") or ""
    context, minimum, notices = raw.get("context"), raw.get("minimum"), raw.get("notices") or []
    who = f"compression model {model or '?'} (provider {provider or '?'})"
    if raw.get("error"):
        return Feasibility(False, f"{who}: {raw['error']}", model, provider, context, minimum, notices)
    if context is None:
        said = "; ".join(notices) or "it returned without resolving the compression model"
        return Feasibility(False if notices else None, f"{who}: {said}", model, provider, None, minimum, notices)
    ok = context >= (minimum or MINIMUM_CONTEXT_LENGTH)
    sign = ">=" if ok else "<"
    detail = f"{who} reports {context:,} tokens {sign} Hermes's minimum {minimum or MINIMUM_CONTEXT_LENGTH:,}"
    if raw.get("override") is not None:
        detail += f" (auxiliary.compression.context_length: {raw['override']} overrides what the provider reports)"
    return Feasibility(
        ok, detail + "".join(f"; Hermes says: {n}" for n in notices), model, provider, context, minimum, notices
    )


def feasibility(home: str | os.PathLike, *, python: str | None = None, timeout: float = 120.0) -> Feasibility:
    """Run Hermes's feasibility check against `home`'s config.yaml in a child of this interpreter."""
    env = {**os.environ, "HERMES_HOME": str(home), "PYTHONUNBUFFERED": "1"}
    try:
        done = subprocess.run(
            [python or sys.executable, "-m", __name__],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Feasibility(None, f"could not run Hermes's check: {exc}")
    for line in reversed(done.stdout.splitlines()):
        if line.startswith(_TAG):
            return _verdict(json.loads(line[len(_TAG) :]))
    tail = " | ".join(done.stderr.strip().splitlines()[-3:])
    return Feasibility(None, f"could not run Hermes's check (exit {done.returncode}): {tail}")


def doctor_report(home: str | os.PathLike, info: dict, *, run_feasibility: bool = True) -> dict:
    """What `hermes-mlx doctor` says about Hermes's config in `home` for the path `info` names:
    warnings (each with its fix) and, when Hermes is importable here, its feasibility verdict."""
    from .hermes_config import config_problem, read_config

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


# ---------------------------------------------------------------- the child (Hermes imported here)


class _StandIn:
    """The attributes `check_compression_model_feasibility` reads from an AIAgent, set the way
    agent/agent_init.py sets them from config.yaml."""

    compression_enabled = True
    status_callback = None
    session_id = "hermes-mlx-doctor"
    api_mode = ""

    def __init__(self, config: dict, minimum: int):
        model = config.get("model")
        model = model if isinstance(model, dict) else {"default": model or ""}
        # Hermes always has a main model; 0.19 names it as the compression model when
        # auxiliary.compression.model is unset, so an empty one would read as "no provider".
        self.model = str(model.get("default") or model.get("model") or "main-model")
        self.provider = str(model.get("provider") or "")
        self.base_url = str(model.get("base_url") or "")
        self.api_key = ""
        aux_ctx = _section(config, "auxiliary", "compression").get("context_length")
        try:
            self._aux_compression_context_length_config = int(aux_ctx) if aux_ctx is not None else None
        except (TypeError, ValueError):
            self._aux_compression_context_length_config = None
        try:
            from hermes_cli.config import get_compatible_custom_providers

            self._custom_providers = get_compatible_custom_providers(config)
        except Exception:
            custom = config.get("custom_providers")
            self._custom_providers = custom if isinstance(custom, list) else []
        self._minimum_tool_context_length = minimum
        # threshold 0: only the floor is judged (the main model's window is not known offline)
        self.context_compressor = type("Compressor", (), {"threshold_tokens": 0, "context_length": 0})()
        self.notices: list[str] = []

    def _current_main_runtime(self) -> dict:
        return {k: getattr(self, k) for k in ("model", "provider", "base_url", "api_key", "api_mode", "session_id")}

    def _emit_status(self, msg: str) -> None:
        self.notices.append(msg)

    _emit_diagnostic_status = _emit_status


def _loopback_only() -> None:
    import ipaddress
    import socket

    def check(address: Any) -> None:
        if isinstance(address, tuple) and address[0] not in ("localhost", ""):
            try:
                ok = ipaddress.ip_address(address[0]).is_loopback
            except ValueError:
                ok = False
            if not ok:
                raise OSError(f"hermes-mlx's feasibility check stays offline (not {address[0]})")

    connect, connect_ex, sendto = socket.socket.connect, socket.socket.connect_ex, socket.socket.sendto
    socket.socket.connect = lambda self, address: (check(address), connect(self, address))[1]
    socket.socket.connect_ex = lambda self, address: (check(address), connect_ex(self, address))[1]
    socket.socket.sendto = lambda self, data, *args: (check(args[-1]), sendto(self, data, *args))[1]


def probe() -> dict:
    """Hermes's check on a stand-in agent; the numbers it compared, captured on the way."""
    import agent.model_metadata as mm
    from agent.conversation_compression import check_compression_model_feasibility
    from hermes_cli.config import load_config

    config = load_config() or {}
    floor = getattr(mm, "get_minimum_tool_context_length", None)
    minimum = floor(None) if floor else mm.MINIMUM_CONTEXT_LENGTH  # 0.19 has only the constant
    seen: dict = {}
    original = mm.get_model_context_length

    def resolved(model: str, *args: Any, **kwargs: Any) -> int:
        seen.update(
            aux_model=model, provider=kwargs.get("provider") or "", override=kwargs.get("config_context_length")
        )
        seen["context"] = value = original(model, *args, **kwargs)
        return value

    mm.get_model_context_length = resolved  # the check imports it from the module at call time
    stand_in = _StandIn(config, minimum)
    error = None
    try:
        check_compression_model_feasibility(stand_in)
    except ValueError as exc:
        error = str(exc)
    finally:
        mm.get_model_context_length = original
    aux = _section(config, "auxiliary", "compression")
    return {
        "aux_model": seen.get("aux_model") or aux.get("model") or "",
        "provider": seen.get("provider") or aux.get("provider") or "",
        "context": seen.get("context"),
        "override": seen.get("override"),
        "minimum": minimum,
        "error": error,
        "notices": stand_in.notices,
    }


def _main() -> None:
    import logging

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    _loopback_only()
    try:
        result = probe()
    except Exception as exc:
        result = {"crash": f"{type(exc).__name__}: {exc}"}
    print(_TAG + json.dumps(result, default=str), flush=True)


if __name__ == "__main__":
    _main()
