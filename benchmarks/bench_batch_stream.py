"""Progress on a huge batch compaction: time to the first content chunk and the longest gap
between chunks, for a Hermes batch prompt over a ~200,000-token middle, streamed through the
in-process provider exactly as Hermes's watchdogs see it (60 s between chunks, 300 s before
the first).

    python benchmarks/bench_batch_stream.py [--tokens 200000] [--model NAME]

Measured on the 2-core x86 machine with other work running (2026-11-30, embedded model): a
200,076-token middle gave its first content chunk after 15.2 s and no gap over 15.2 s
(138 chunks, a keep-alive newline per folded chunk and every 15 s); the summary (11,995
characters) came after 257 s, inside the 80% share of Hermes's 300 s timeout.
"""

from __future__ import annotations

import argparse
import json
import time

import hermes_mlx  # noqa: F401  (BLAS before MLX)
from hermes_mlx.integrations.provider import MLXClient
from hermes_mlx.summarizer.budget import hermes_tokens


def turns_text(tokens: int) -> str:
    """Serialized turns as Hermes writes them, about `tokens` long by Hermes's count (ASCII: /4)."""
    parts, size, i = [], 0, 0
    while size < tokens * 4:
        i += 1
        part = (
            f"[USER]: Check module {i}, please.\n\n[ASSISTANT]: I read src/module_{i}.py and ran "
            f"`pytest tests/test_module_{i}.py -q`; it failed with AssertionError: expected {i} got {i + 1} "
            f"at src/module_{i}.py:{i % 90 + 10}. I fixed the bound. "
            + " ".join(f"Detail {i}.{k}: step_{i}_{k} reads config/settings_{i}.yaml." for k in range(25))
            + "\n\n"
        )
        parts.append(part)
        size += len(part)
    return "".join(parts)


def prompt(tokens: int) -> list[dict]:
    body = (
        "You are a summarization agent creating a context checkpoint.\n\n"
        "Create a structured checkpoint summary for the conversation after earlier turns are compacted.\n\n"
        f"TURNS TO SUMMARIZE:\n{turns_text(tokens)}\n\nUse this exact structure:\n\n## Goal\n[...]\n\n"
        "Target ~3000 tokens. Be CONCRETE.\n\nWrite only the summary body."
    )
    return [{"role": "user", "content": body}]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=200_000)
    ap.add_argument("--model", default=None)
    args = ap.parse_args()
    messages = prompt(args.tokens)
    client = MLXClient(model=args.model)
    started = time.monotonic()
    stamps, text = [], ""
    for chunk in client.chat.completions.create(model="hermes-mlx-default", messages=messages, stream=True):
        piece = chunk.choices[0].delta.get("content") if chunk.choices else None
        if piece:
            stamps.append(time.monotonic() - started)
            text += piece
    total = time.monotonic() - started
    gaps = [b - a for a, b in zip([0.0] + stamps, stamps)]
    print(
        json.dumps(
            {
                "middle_tokens_hermes_count": hermes_tokens(messages[0]["content"]),
                "first_content_chunk_s": round(stamps[0], 2) if stamps else None,
                "longest_gap_s": round(max(gaps), 2) if gaps else None,
                "content_chunks": len(stamps),
                "total_s": round(total, 1),
                "summary_chars": len(text.strip()),
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
