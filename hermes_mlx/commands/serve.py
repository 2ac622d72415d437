"""`hermes-mlx serve`: the OpenAI-compatible loopback server (see integrations/server.py)."""

from __future__ import annotations

import argparse
import os
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    from hermes_mlx.integrations.server import DEFAULT_HOST, DEFAULT_PORT, MAX_BODY_BYTES

    p = subparsers.add_parser(
        "serve",
        help="OpenAI-compatible summarizer server on 127.0.0.1 (for hermes-agent 0.19 and other agents)",
        description="Serve /v1/chat/completions (SSE streaming), /v1/models and /health on loopback. "
        "Hermes config: providers: {mlx: {base_url: http://127.0.0.1:PORT/v1}} and "
        "auxiliary.compression.provider: mlx (or run `hermes-mlx setup-hermes`).",
    )
    p.add_argument("--model", default=None, help="manifest name or local model folder (default: the embedded model)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 picks a free one)")
    p.add_argument("--host", default=DEFAULT_HOST,
                   help="address to bind (default 127.0.0.1; anything else is reachable from other machines)")
    p.add_argument("--api-key", default=None,
                   help="require this bearer token (default: $HERMES_MLX_SERVE_API_KEY, else none)")
    p.add_argument("--max-body-mb", type=float, default=MAX_BODY_BYTES / 2**20, help="request size limit in MiB")
    p.add_argument("--log-level", default="warning", choices=["debug", "info", "warning", "error"])
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import logging

    from hermes_mlx.engine.errors import EngineError
    from hermes_mlx.integrations.server import API_KEY_ENV, serve

    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    try:
        return serve(args.model, host=args.host, port=args.port,
                     api_key=args.api_key or os.environ.get(API_KEY_ENV) or None,
                     max_body_bytes=int(args.max_body_mb * 2**20), log_level=args.log_level)
    except (OSError, EngineError) as exc:
        print(f"hermes-mlx serve: {exc.strerror if isinstance(exc, OSError) and exc.strerror else exc}", file=sys.stderr)
        return 2
