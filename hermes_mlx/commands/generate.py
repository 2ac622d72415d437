"""`hermes-mlx generate`: one prompt through the warm engine, text or JSON stats out.

The repetition guard is on here (the engine leaves it off): a person reading a 135M model's
reply wants it to end once it only repeats itself, not sixteen copies later (issue 23).
"""

from __future__ import annotations

import argparse
import json
import sys

STATS = [
    "prompt_tokens",
    "cached_tokens",
    "generation_tokens",
    "prompt_tps",
    "generation_tps",
    "peak_memory_mb",
    "load_s",
    "ttft_s",
    "total_s",
    "finish_reason",
]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("generate", help="generate text with a local model")
    p.add_argument("prompt", help="the prompt ('-' reads standard input)")
    p.add_argument("--model", default=None, help="manifest name or mlx-lm folder (default: the embedded model)")
    p.add_argument("--max-tokens", type=int, default=256)
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--system", default=None, help="a system message to put first")
    p.add_argument("--raw", action="store_true", help="send the prompt as is, without the chat template")
    p.add_argument("--stop", action="append", default=None, help="a stop string (repeatable)")
    p.add_argument("--timeout", type=float, default=None, help="seconds before giving up")
    p.add_argument("--json", action="store_true", help="print one JSON object with text and stats")
    p.add_argument(
        "--no-repetition-guard",
        dest="repetition_guard",
        action="store_false",
        help="decode to max_tokens or EOS even when the output repeats itself verbatim "
        "(by default a loop ends the reply, one copy kept, finish_reason 'repetition')",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hermes_mlx.engine.errors import EngineError
    from hermes_mlx.engine.generate import generate, stream_generate

    prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
    if args.raw:
        request = prompt
    else:
        request = [{"role": "system", "content": args.system}] if args.system else []
        request.append({"role": "user", "content": prompt})
    options = dict(
        model=args.model,
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        stop=args.stop,
        timeout=args.timeout,
        repetition_guard=args.repetition_guard,
    )
    try:
        if args.json:
            result = generate(request, **options)
            print(json.dumps({"text": result.text, **{k: getattr(result, k) for k in STATS}, "model": result.model}))
            return 0
        for chunk in stream_generate(request, **options):
            print(chunk.text, end="", flush=True)
            result = chunk.result
        print()
        print(
            f"[{result.prompt_tokens} prompt tokens ({result.cached_tokens} cached) at "
            f"{result.prompt_tps:.1f} tok/s, {result.generation_tokens} generated at "
            f"{result.generation_tps:.1f} tok/s, {result.peak_memory_mb:.0f} MB peak, "
            f"load {result.load_s:.2f}s, {result.finish_reason}]",
            file=sys.stderr,
        )
        return 0
    except EngineError as exc:
        print(f"hermes-mlx: {exc}", file=sys.stderr)
        return 2
