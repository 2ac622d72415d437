"""`hermes-mlx models list|pull|info`: what models exist, which are here, and how to get the rest."""

from __future__ import annotations

import argparse
import json
import sys

from hermes_mlx.engine.errors import EngineError


def _size(n: int) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


def cmd_list(args: argparse.Namespace) -> int:
    from hermes_mlx.engine.models import list_models

    entries = list_models()
    if args.json:
        rows = [
            {
                "name": e.manifest.name, "default": e.default, "present": e.present,
                "path": str(e.path) if e.path else None, "size_bytes": e.size_bytes,
                "parameters": e.manifest.parameters, "reasoning": e.manifest.reasoning,
                "source": e.manifest.source,
            }
            for e in entries
        ]  # fmt: skip
        print(json.dumps(rows, indent=2))
        return 0
    header = ("NAME", "PARAMS", "SIZE", "PRESENT", "REASONING")
    rows = [
        (
            e.manifest.name + (" (default)" if e.default else ""),
            e.manifest.parameters,
            _size(e.size_bytes) if e.present else f"~{_size(e.size_bytes)}",
            "yes" if e.present else "no",
            "yes (poor fit)" if e.manifest.reasoning else "no",
        )
        for e in entries
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    return 0


def cmd_pull(args: argparse.Namespace) -> int:
    from hermes_mlx.engine.models import DEFAULT_MODEL, model_entry, pull_model

    entry = model_entry(args.name or DEFAULT_MODEL)
    if entry.present:
        print(f"{entry.manifest.name} is already present at {entry.path}")
        return 0
    path = pull_model(entry.manifest.name, progress=not args.quiet)
    print(f"{entry.manifest.name} ready at {path}")
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    from hermes_mlx.engine.models import model_entry

    entry = model_entry(args.name)
    m = entry.manifest
    fields = [
        ("name", m.name + (" (default)" if entry.default else "")),
        ("description", m.description),
        ("source", ", ".join(f"{k}={v}" for k, v in m.source.items() if not k.endswith("sha256"))),
        ("architecture", m.architecture),
        ("parameters", m.parameters),
        ("quantization", m.quantization),
        ("context window", f"{m.context_window} tokens"),
        ("size", _size(entry.size_bytes) if entry.present else f"~{_size(entry.size_bytes)} to download"),
        ("present", f"yes, at {entry.path}" if entry.present else f"no; get it with: {m.fetch_command}"),
        ("reasoning", "yes" if m.reasoning else "no"),
        ("chat template", m.chat_template),
        ("notes", m.notes),
    ]
    for key, value in fields:
        print(f"{key + ':':16}{value}")
    if m.reasoning_warning:
        print(f"warning: {m.reasoning_warning}", file=sys.stderr)
    return 0


def _guard(func):
    def run(args: argparse.Namespace) -> int:
        try:
            return func(args)
        except EngineError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1

    return run


def register(subparsers) -> None:
    parser = subparsers.add_parser("models", help="list, fetch and describe models")
    sub = parser.add_subparsers(dest="models_command", required=True)

    p = sub.add_parser("list", help="known models: size, present or not, reasoning flag")
    p.add_argument("--json", action="store_true", help="print one JSON array")
    p.set_defaults(func=_guard(cmd_list))

    p = sub.add_parser("pull", help="fetch (and convert) a model; does nothing when it is present")
    p.add_argument("name", nargs="?", help="model name (default: the embedded default)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_guard(cmd_pull))

    p = sub.add_parser("info", help="a model's manifest and where it is")
    p.add_argument("name")
    p.set_defaults(func=_guard(cmd_info))
