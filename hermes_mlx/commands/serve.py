"""`hermes-mlx serve`: the OpenAI-compatible loopback server (see integrations/server.py)."""

from __future__ import annotations

import argparse
import os
import sys

MAX_KEY_LINE = 4096  # bytes: far beyond any bearer token


def register(subparsers: argparse._SubParsersAction) -> None:
    from hermes_mlx.integrations.server import (
        API_KEY_ENV,
        DEFAULT_HOST,
        DEFAULT_MAX_PROMPT_TOKENS,
        DEFAULT_PORT,
        DEFAULT_REQUEST_TIMEOUT,
        MAX_BODY_BYTES,
    )

    from .options import int_at_least, port, positive_float

    p = subparsers.add_parser(
        "serve",
        help="OpenAI-compatible summarizer server on 127.0.0.1 (for hermes-agent 0.19 and other agents)",
        description="Serve /v1/chat/completions (SSE streaming), /v1/models and /health on loopback. "
        "Hermes config: providers: {mlx: {base_url: http://127.0.0.1:PORT/v1}} and "
        "auxiliary.compression.provider: mlx (or run `hermes-mlx setup-hermes`). Requests must name "
        "localhost, 127.0.0.1 or [::1] in Host (or an --allowed-host) and carry no other site's Origin.",
    )
    p.add_argument("--model", default=None, help="manifest name or local model folder (default: the embedded model)")
    p.add_argument(
        "--allow-model",
        action="append",
        default=[],
        metavar="PATH",
        help="another model folder clients may name (repeatable); other paths are refused",
    )
    p.add_argument("--port", type=port, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 picks a free one)")
    p.add_argument(
        "--host",
        default=DEFAULT_HOST,
        help="address to bind (default 127.0.0.1; anything else is reachable from other machines "
        f"and needs a key: ${API_KEY_ENV} or --api-key-file)",
    )
    p.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests whose Host header names NAME (repeatable)",
    )
    p.add_argument(
        "--api-key-file",
        default=None,
        metavar="FILE",
        help=f"require the bearer token in FILE (its first line); or set ${API_KEY_ENV}",
    )
    p.add_argument(
        "--api-key",
        default=None,
        help=f"require this bearer token; visible to other users in `ps`: prefer ${API_KEY_ENV} or --api-key-file",
    )
    p.add_argument(
        "--request-timeout",
        type=positive_float,
        default=DEFAULT_REQUEST_TIMEOUT,
        metavar="S",
        help=f"seconds one request may take, queueing included (default {DEFAULT_REQUEST_TIMEOUT:g}); "
        "a request's own smaller `timeout` lowers it",
    )
    p.add_argument(
        "--max-prompt-tokens",
        type=int_at_least(1),
        default=DEFAULT_MAX_PROMPT_TOKENS,
        metavar="N",
        help=f"refuse longer prompts with 413 before any model work (default {DEFAULT_MAX_PROMPT_TOKENS})",
    )
    p.add_argument(
        "--max-body-mb", type=positive_float, default=MAX_BODY_BYTES / 2**20, help="request size limit in MiB"
    )
    p.add_argument("--log-level", default="warning", choices=["debug", "info", "warning", "error"])
    p.set_defaults(func=run)


def api_key(args: argparse.Namespace) -> str | None:
    """--api-key, else --api-key-file's first line, else the environment; never stripped of
    anything but the file's line ending (a key with spaces is a different key). A key no HTTP
    client can send back (not printable ASCII, spaces at either end) is refused here, at start,
    rather than found out as 401s."""
    from hermes_mlx.errors import UsageError
    from hermes_mlx.integrations.http_guard import unsendable_key
    from hermes_mlx.integrations.server import API_KEY_ENV

    key, source = _api_key(args), "--api-key"
    if args.api_key_file and not args.api_key:
        source = f"--api-key-file {args.api_key_file}"
    elif not args.api_key:
        source = f"${API_KEY_ENV}"
    if key is not None and (why := unsendable_key(key)):
        raise UsageError(f"the key from {source} {why}; a client cannot send it in an Authorization header")
    return key


def _api_key(args: argparse.Namespace) -> str | None:
    from hermes_mlx.errors import UsageError
    from hermes_mlx.integrations.server import API_KEY_ENV

    if args.api_key:
        # Any user on this machine can read a command line (`ps`); the environment and a file
        # stay the owner's. Said at every start, since the key is already out by then.
        print(
            f"warning: --api-key is visible to other users in `ps`; prefer ${API_KEY_ENV} or --api-key-file",
            file=sys.stderr,
        )
        return args.api_key
    if args.api_key_file:
        with open(args.api_key_file, "rb") as f:
            raw = f.readline(MAX_KEY_LINE + 1)  # bounded: --api-key-file /dev/zero must not eat memory
        try:
            key = raw.rstrip(b"\r\n").decode("ascii")
        except UnicodeDecodeError:
            raise UsageError(f"--api-key-file {args.api_key_file}: its first line is not ASCII text") from None
        if len(raw) > MAX_KEY_LINE:
            raise UsageError(f"--api-key-file {args.api_key_file}: its first line is over {MAX_KEY_LINE} bytes")
        if not key:  # an empty file, or random bytes that open with a newline
            raise UsageError(f"--api-key-file {args.api_key_file}: its first line holds no key")
        return key
    return os.environ.get(API_KEY_ENV) or None


def run(args: argparse.Namespace) -> int:
    import logging

    from hermes_mlx.engine.errors import EngineError
    from hermes_mlx.integrations.server import serve

    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    if args.request_timeout <= 0 or args.max_prompt_tokens <= 0 or args.max_body_mb <= 0:
        print(
            "hermes-mlx serve: --request-timeout, --max-prompt-tokens and --max-body-mb must be positive",
            file=sys.stderr,
        )
        return 2
    try:
        return serve(
            args.model,
            host=args.host,
            port=args.port,
            api_key=api_key(args),
            max_body_bytes=int(args.max_body_mb * 2**20),
            log_level=args.log_level,
            request_timeout=args.request_timeout,
            max_prompt_tokens=args.max_prompt_tokens,
            allowed_hosts=tuple(args.allowed_host),
            allowed_models=tuple(args.allow_model),
        )
    except (OSError, EngineError) as exc:
        print(
            f"hermes-mlx serve: {exc.strerror if isinstance(exc, OSError) and exc.strerror else exc}", file=sys.stderr
        )
        return 2
