"""`hermes-mlx setup-hermes` as a library call: write Hermes's config, say what in it will still
break a session, run Hermes's own feasibility check, then prove the path answers.

The order is the point: the file layer writes (hermes_config.py), the checks layer reads the
merged result (hermes_checks.py), and only then does one micro-pass prompt, word for word as
Hermes sends it, go down the configured path (in process through the provider, or to `serve`
over loopback). This is the one Hermes-config module that imports the provider.
"""

from __future__ import annotations

import json
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from .hermes_checks import config_findings, drops_first_turns, hermes_info
from .hermes_config import DEFAULT_AUX_MODEL, DEFAULT_PORT, PLUGIN_NAME, SetupResult, hermes_home, write_config
from .hermes_feasibility import Feasibility, feasibility
from .hermes_prompts import micro_prompt

SELF_CHECK_EXCHANGE = (
    "[ASSISTANT]: Ran the tests after fixing the off-by-one in src/pager.py.\n"
    '[Tool calls:\n  terminal({"command": "pytest tests/test_pager.py -q"})\n]\n\n'
    "[TOOL RESULT call_1]: 4 passed in 0.12s"
)


@dataclass
class Setup:
    """What setup did and found, for the command to print."""

    info: dict  # hermes_checks.hermes_info()
    path: str  # in-process | loopback
    written: SetupResult
    protect_first_turns: bool  # compression.protect_first_n: 0 was asked for (Hermes 0.19)
    feasibility: Feasibility | None = None  # None when Hermes is not importable here, or not checked
    check: CheckResult | None = None  # None when not checked


def setup(
    home: str | Path | None = None,
    path: str = "auto",
    *,
    port: int = DEFAULT_PORT,
    api_key: str | None = None,
    model: str | None = None,
    engine: bool = False,
    check: bool = True,
    info: dict | None = None,
) -> Setup:
    """Write -> findings -> (feasibility, self-check). Raises OSError or ValueError when the
    config cannot be written (nothing is checked then); `engine` needs the in-process path.
    `info` is hermes_checks.hermes_info(), when the caller has it already."""
    info = info or hermes_info()
    path = info["path"] if path == "auto" else path
    if engine and path != "in-process":
        raise ValueError("--engine needs the in-process path (a Hermes 0.22+ in this environment)")
    # Hermes 0.19 drops the first user turns at its second compaction unless protect_first_n is 0.
    protect = path == "loopback" and drops_first_turns(info)
    plugin = info["plugin_entry_point"] or PLUGIN_NAME
    folder = hermes_home(home)
    written = write_config(
        folder, path, port=port, plugin=plugin, api_key=api_key, protect_first_turns=protect, engine=engine
    )
    found = config_findings(written.config, path, first_turns_at_risk=protect, plugin=plugin)
    written.warnings = [f.line() for f in found]
    done = Setup(info, path, written, protect)
    return run_checks(done, port=port, model=model, api_key=api_key) if check else done


def run_checks(done: Setup, *, port: int = DEFAULT_PORT, model: str | None = None, api_key: str | None = None) -> Setup:
    """The checks after the write: Hermes's feasibility verdict (when Hermes is importable here),
    then one micro-pass prompt down the configured path. Never raises for a failed check."""
    if done.info["importable"]:
        done.feasibility = feasibility(done.written.config_path.parent)
    done.check = self_check(done.path, port=port, model=model, api_key=api_key)
    return done


@dataclass
class CheckResult:
    ok: bool
    detail: str
    seconds: float = 0.0
    content: str = ""


def self_check(
    path: str, *, port: int = DEFAULT_PORT, model: str | None = None, api_key: str | None = None, timeout: float = 300.0
) -> CheckResult:
    """One micro-pass prompt, as Hermes would send it, down the configured path."""
    messages = micro_prompt(None, SELF_CHECK_EXCHANGE)
    started = time.perf_counter()
    try:
        if path == "in-process":
            from .provider import MLXClient  # at use: importing it registers provider mlx with a Hermes here

            response = MLXClient(model=model).chat.completions.create(model=model, messages=messages, temperature=0.1)
            content = response.choices[0].message.content
        else:
            body = json.dumps({"model": model or DEFAULT_AUX_MODEL, "messages": messages, "temperature": 0.1}).encode()
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
