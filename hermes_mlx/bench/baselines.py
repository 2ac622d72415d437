"""Baseline (b): Hermes's own micro prompt, verbatim, sent to mlx-lm's server over loopback.

This is what the Hermes docs suggest today (`python -m mlx_lm.server` as an OpenAI endpoint for
the compression model). The server runs in a child process with `import hermes_mlx` first so
it gets the same fast BLAS as ours; the comparison is then about the prompt and the output, not
the math library. For the same reason its weights get the same in-memory form as ours
(`fit_for_device`: dense float32 on a CPU, as stored on Metal) and, on a CPU, the same
256-token prefill step (a flag mlx_lm.server has): without that, on an x86 CPU the server ran
4-bit weights with float16 scales, ~7x slower per token, and the ratio measured kernels.
Baseline (c), a model load per pass, is harness.run_passes with an unload before each pass.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field

from hermes_mlx.bench.harness import Pass, session_turns
from hermes_mlx.engine.cache import CPU_PREFILL_STEP, on_cpu
from hermes_mlx.integrations.hermes_prompts import micro_prompt
from hermes_mlx.integrations.hermes_wire import hermes_serialize
from hermes_mlx.summarizer.api import Message

# mlx_lm.server's own main(), with its loader wrapped so the weights take the form ours take
SERVER_MAIN = """
import sys, hermes_mlx
import mlx_lm.server as server
from hermes_mlx.engine.cache import ModelCache, fit_for_device
_load = server.load
def load(*args, **kwargs):
    out = _load(*args, **kwargs)
    fit_for_device(out[0], ModelCache().memory_budget_mb * 1e6)
    return out
server.load = load
sys.argv = {argv!r}
server.main()
"""
HERMES_MAX_TOKENS = 1500  # Hermes's cap on a micro-pass reply
HERMES_TEMPERATURE = 0.1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class MlxLmServer:
    model_path: str
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen | None = None

    def start(self, timeout: float = 300.0) -> MlxLmServer:
        argv = [
            "mlx_lm.server",
            "--model",
            self.model_path,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--log-level",
            "WARNING",
        ]
        if on_cpu():
            argv += ["--prefill-step-size", str(CPU_PREFILL_STEP)]
        code = SERVER_MAIN.format(argv=argv)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode(errors="replace")[-800:] if self.proc.stderr else ""
                raise RuntimeError(f"mlx_lm.server exited with {self.proc.returncode}: {err}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("mlx_lm.server did not open its port in time")

    def chat(self, messages: list[dict], max_tokens: int) -> tuple[dict, float]:
        body = json.dumps(
            {
                "model": "default_model",
                "messages": messages,
                "max_tokens": max_tokens,
                "temperature": HERMES_TEMPERATURE,
            }
        )
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=1800)
        started = time.monotonic()
        try:
            conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
            response = conn.getresponse()
            data = json.loads(response.read())
        finally:
            conn.close()
        if response.status != 200:
            raise RuntimeError(f"mlx_lm.server answered {response.status}: {str(data)[:300]}")
        return data, time.monotonic() - started

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.proc is not None:
            self.proc.wait(timeout=10)
            if self.proc.stderr:
                self.proc.stderr.close()

    def __enter__(self) -> MlxLmServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def run_hermes_passes(
    messages: list[Message],
    *,
    model_path: str,
    session: str,
    scenario: str = "none",
    max_passes: int = 2,
    max_tokens: int = HERMES_MAX_TOKENS,
    on_pass=None,
    only_turns: set[int] | None = None,
) -> tuple[list[Pass], str, str]:
    """Hermes's micro loop: per agent turn, fold the turn's assistant/tool messages into the
    running summary with Hermes's prompt; the reply becomes the next running summary.
    `only_turns` limits it to the turns where our passes ran, so per-pass ratios compare like
    with like; the other turns are skipped, not folded (each would cost minutes on a slow
    machine), so this summary lacks them. Returns the passes, the last summary and the
    exchanges folded into it (for fidelity)."""
    passes: list[Pass] = []
    folded: list[str] = []
    summary: str | None = None
    with MlxLmServer(model_path) as server:
        server.chat([{"role": "user", "content": "hi"}], 1)  # load and warm up outside the timed passes
        for turn_no, turn in enumerate(session_turns(messages), 1):
            if len(passes) >= max_passes:
                break
            exchange = [m for m in turn if m.get("role") not in ("user", "system")]
            if not exchange or (only_turns and turn_no not in only_turns):
                continue
            p = Pass(
                scenario=scenario,
                variant="mlx_lm.server",
                session=session,
                number=len(passes) + 1,
                turn=turn_no,
                idle_before_s=0.0,
                duration_s=0.0,
                calls=1,
            )
            folded.append(hermes_serialize(exchange, redact_secrets=True))
            try:
                data, elapsed = server.chat(micro_prompt(summary, folded[-1]), max_tokens)
                usage = data.get("usage") or {}
                p.prompt_tokens = int(usage.get("prompt_tokens") or 0)
                p.generation_tokens = int(usage.get("completion_tokens") or 0)
                p.outcome = (data.get("choices") or [{}])[0].get("finish_reason") or "stop"
                summary = (data.get("choices") or [{}])[0].get("message", {}).get("content") or summary
            except Exception as exc:
                elapsed, p.outcome, p.error = 0.0, "error", f"{type(exc).__name__}: {exc}"
            p.duration_s = round(elapsed, 4)
            passes.append(p)
            if on_pass is not None:
                on_pass(p)
    return passes, summary or "", "\n\n".join(folded)
