"""`hermes-mlx doctor`: which path this machine will take, and what is missing."""

from __future__ import annotations

import argparse
import http.client
import importlib.metadata as md
import json
import os
import platform
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "doctor",
        help="report device, BLAS, weights path, cache, models and what in Hermes's config will break compaction",
    )
    p.add_argument("--json", action="store_true")
    p.add_argument("--hermes-home", default=None, help="Hermes's folder (default: $HERMES_HOME, else ~/.hermes)")
    p.add_argument(
        "--serve-port", type=int, default=None, help="where `hermes-mlx serve` listens, for its prompt-cache counters"
    )
    p.set_defaults(func=run)


def _version(dist: str) -> str | None:
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


def hermes_facts(hermes_home: str | None = None) -> dict:
    """Which path Hermes will take, and what in its config.yaml will break a session."""
    out: dict = {}
    try:
        from hermes_mlx.integrations.hermes_checks import doctor_report, hermes_info
        from hermes_mlx.integrations.hermes_config import hermes_home as home_of

        info = hermes_info()
        out["hermes_integration"] = info
        out["hermes_config"] = doctor_report(home_of(hermes_home), info)
        if info.get("importable"):
            from hermes_mlx.integrations.hermes_seams import from_sources

            out["hermes_seams"] = from_sources()
    except Exception as exc:  # doctor reports, it does not fail
        out["hermes_integration"] = f"could not inspect Hermes: {exc}"
    return out


def served_prompt_cache(port: int) -> dict | None:
    """A running `serve`'s prompt-cache counters from its /health, or None when none answers."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=0.5)
    try:
        conn.request("GET", "/health")
        reply = conn.getresponse()
        found = json.loads(reply.read()).get("prompt_cache") if reply.status == 200 else None
    except (OSError, ValueError, AttributeError, http.client.HTTPException):
        return None
    finally:
        conn.close()
    return found if isinstance(found, dict) else None


def prompt_cache_facts(port: int | None = None) -> dict | None:
    """The counters of a `serve` on this machine, since doctor's own process has served nothing;
    without one, this process's (its budget, zero counts). None from an engine with no stats."""
    from hermes_mlx.integrations.server import DEFAULT_PORT, prompt_cache_report

    port = port or DEFAULT_PORT
    found = served_prompt_cache(port)
    if found is not None:
        return {**found, "source": f"serve on 127.0.0.1:{port}"}
    found = prompt_cache_report()
    return {**found, "source": f"this process; no serve answered on 127.0.0.1:{port}"} if found else None


def prompt_cache_line(found: dict | None) -> str:
    if not found:
        return "not reported by this engine"
    keys = ("hits", "misses", "evictions", "entries")
    counts = ", ".join(f"{found[k]} {k}" for k in keys if k in found)
    held = f"{found.get('bytes', 0) / 1e6:.1f} of {found.get('budget_bytes', 0) / 1e6:.0f} MB"
    return f"{counts}, {held} ({found.get('source', '')})"


def facts(hermes_home: str | None = None, serve_port: int | None = None) -> dict:
    from hermes_mlx.engine.blas import blas_info
    from hermes_mlx.engine.paths import home

    blas = blas_info()
    import mlx.core as mx

    device = mx.default_device()
    on_cpu = device.type == mx.DeviceType.cpu
    out = {
        "platform": f"{platform.system()} {platform.machine()}, Python {platform.python_version()}",
        "cpu_cores": os.cpu_count(),
        "mlx": _version("mlx"),
        "mlx_lm": _version("mlx-lm"),
        "device": "cpu" if on_cpu else "gpu (Metal)",
        "blas": f"{blas.name} ({blas.reason})" + (f": {blas.path}" if blas.path else ""),
        "weights": (
            "dense float32 at load (quantized matmul and float16 scales are slow on CPUs)"
            if on_cpu
            else "as stored (4-bit stays 4-bit on Metal)"
        ),
        "cache_folder": str(home()),
    }
    try:
        from hermes_mlx.engine import residency

        out["prompt_cache"] = prompt_cache_facts(serve_port)
        out["wired"] = residency.status()
    except Exception as exc:  # doctor reports, it does not fail
        out["prompt_cache"] = f"could not read: {exc}"
    out.update(hermes_facts(hermes_home))
    try:
        from hermes_mlx.engine.models import list_models

        out["models"] = [
            {"name": m.manifest.name, "present": m.present, "reasoning": m.manifest.reasoning, "default": m.default}
            for m in list_models()
        ]
    except Exception as exc:  # doctor reports, it does not fail
        out["models"] = f"could not list models: {exc}"
    return out


def print_hermes_config(report: dict) -> None:
    print(f"hermes config: {report['config']} ({report['path']} path)")
    if "feasibility" in report:
        print(f"  {report['feasibility']['line']}")
    for line in report.get("warnings", []):
        print(f"warning: {line}")
    if not report.get("warnings"):
        print("  no config line found that would break compaction")


def run(args: argparse.Namespace) -> int:
    report = facts(getattr(args, "hermes_home", None), getattr(args, "serve_port", None))
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for key, value in report.items():
        if key == "hermes_config" and isinstance(value, dict):
            print_hermes_config(value)
        elif key == "hermes_integration" and isinstance(value, dict):
            print("hermes: " + ", ".join(f"{k}={v}" for k, v in value.items()))
        elif key == "hermes_seams" and isinstance(value, dict):
            print("hermes seams (private names hermes-mlx uses):")
            for name, row in value.items():
                print(f"  {name:<28} " + (f"found: {row['found']}" if row["found"] else f"missing: {row['then']}"))
        elif key == "prompt_cache" and not isinstance(value, str):
            print(f"prompt cache: {prompt_cache_line(value)}")
        elif key == "wired" and isinstance(value, dict):
            from hermes_mlx.engine.residency import describe

            print(f"wired: {describe(value)}")
        elif key == "models" and isinstance(value, list):
            print("models:")
            for m in value:
                flags = ("present" if m["present"] else "absent") + (", reasoning" if m["reasoning"] else "")
                flags += ", default" if m["default"] else ""
                print(f"  {m['name']:<32} {flags}")
        else:
            print(f"{key}: {value}")
    if report["device"] == "cpu" and not report["blas"].startswith("openblas") and sys.platform != "darwin":
        print("warning: no fast BLAS: prompt reading will be ~10x slower (install ngsolve-openblas)")
    return 0
