"""`hermes-mlx doctor`: which path this machine will take, and what is missing."""

from __future__ import annotations

import argparse
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
        from hermes_mlx.integrations.hermes_checks import doctor_report
        from hermes_mlx.integrations.hermes_config import hermes_home as home_of
        from hermes_mlx.integrations.hermes_config import hermes_info

        info = hermes_info()
        out["hermes_integration"] = info
        out["hermes_config"] = doctor_report(home_of(hermes_home), info)
    except Exception as exc:  # doctor reports, it does not fail
        out["hermes_integration"] = f"could not inspect Hermes: {exc}"
    return out


def facts(hermes_home: str | None = None) -> dict:
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
    report = facts(getattr(args, "hermes_home", None))
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for key, value in report.items():
        if key == "hermes_config" and isinstance(value, dict):
            print_hermes_config(value)
        elif key == "hermes_integration" and isinstance(value, dict):
            print("hermes: " + ", ".join(f"{k}={v}" for k, v in value.items()))
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
