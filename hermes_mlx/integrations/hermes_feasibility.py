"""Hermes's own verdict on the compression model, run where Hermes runs.

`feasibility` runs Hermes's `check_compression_model_feasibility`
(agent/conversation_compression.py) on a stand-in agent built from config.yaml, in a child
process of this interpreter: importing Hermes runs its start-up code and plugin discovery,
HERMES_HOME must be the folder being checked, and a hang must stay bounded. The child may reach
loopback only (hermes_mlx.loopback), so the check is offline like a session.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

from .hermes_config import section

MINIMUM_CONTEXT_LENGTH = 64_000  # agent/model_metadata.py, for the message when Hermes is absent
_TAG = "HERMES_MLX_FEASIBILITY "


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
        aux_ctx = section(config, "auxiliary", "compression").get("context_length")
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
    aux = section(config, "auxiliary", "compression")
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

    from hermes_mlx.loopback import block_non_loopback

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    block_non_loopback("hermes-mlx's feasibility check")
    try:
        result = probe()
    except Exception as exc:
        result = {"crash": f"{type(exc).__name__}: {exc}"}
    print(_TAG + json.dumps(result, default=str), flush=True)


if __name__ == "__main__":
    _main()
