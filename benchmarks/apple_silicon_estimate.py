"""Paper estimate: expected pass time on Apple Silicon for a 1.5B and a 4B 4-bit model.

Takes the token counts per pass that `hermes-mlx bench` measured (ours and baseline (b),
Hermes's own prompt on mlx_lm.server) and divides them by published M-series prompt and
decode speeds. It does not run a model. Pass time ~= new prompt tokens / prompt tok/s +
generated tokens / decode tok/s (+ a few ms of our own overhead, measured at 12.6 ms).

    python benchmarks/apple_silicon_estimate.py bench-results/bench.json
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

# (chip, model, prompt tok/s, decode tok/s, source). "scaled" rows derive one figure from
# another published one, as said in the row.
SPEEDS = [
    (
        "M4 Max",
        "Qwen3-4B-Instruct-2507 4-bit",
        1622.27,
        134.52,
        "mlx-lm BENCHMARKS.md (ml-explore/mlx-lm, mlx_lm/BENCHMARKS.md): mlx_lm.benchmark -p 2048 -g 128, 64GB M4 Max",
    ),
    (
        "M3 Pro",
        "Qwen3-4B-Instruct-2507 4-bit",
        615.28,
        44.62,
        "ml-explore/mlx-lm PR #1569: mlx_lm.benchmark -p 2048 -g 128, 18GB M3 Pro",
    ),
    (
        "M4 (Mac mini, 16GB)",
        "Qwen3.5-4B 4-bit",
        112.0,
        39.0,
        "jitesh.dev/blog/qwen35-apple-silicon-benchmark.html (2026-03-31): mlx_lm.generate with an 83-token prompt, "
        "which understates prompt speed",
    ),
    (
        "M4 Max",
        "Qwen2.5-1.5B 4-bit",
        1622.27 * 4.0 / 1.5,
        282.0,
        "decode: NexVeridian/llm-inference-benchmarks README (LM Studio, MLX 4-bit, M4 Max 48GB); prompt: the 4B row "
        "scaled by parameters 4.0/1.5 (prompt reading is compute-bound)",
    ),
    (
        "M3 Pro",
        "Qwen2.5-1.5B 4-bit",
        615.28 * 4.0 / 1.5,
        44.62 * 282.0 / 134.52,
        "the M3 Pro 4B row scaled: prompt by parameters 4.0/1.5, decode by the M4 Max 1.5B/4B decode ratio 282/134.5",
    ),
]


def token_counts(bench: dict) -> dict[str, tuple[float, float]]:
    """Median (new prompt tokens, generated tokens) per pass for ours and mlx_lm.server."""
    out = {}
    for variant in ("ours", "mlx_lm.server"):
        ps = [p for p in bench["passes"] if p["variant"] == variant and p["scenario"] == "none" and not p.get("error")]
        if ps:
            out[variant] = (
                statistics.median(p["prompt_tokens"] - p["cached_tokens"] for p in ps),
                statistics.median(p["generation_tokens"] for p in ps),
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bench_json", help="bench.json written by hermes-mlx bench")
    args = parser.parse_args()
    counts = token_counts(json.loads(Path(args.bench_json).read_text()))
    print(
        "token counts per pass (median): "
        + ", ".join(f"{v}: {p:.0f} new prompt + {g:.0f} generated" for v, (p, g) in counts.items())
    )
    print()
    print("| chip | model | prompt tok/s | decode tok/s | ours s/pass | mlx_lm.server s/pass | ratio |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for chip, model, pp, tg, _ in SPEEDS:
        t = {v: p / pp + g / tg for v, (p, g) in counts.items()}
        ours, base = t.get("ours"), t.get("mlx_lm.server")
        ratio = f"{ours / base:.2f}" if ours and base else "-"
        print(f"| {chip} | {model} | {pp:.0f} | {tg:.1f} | {ours or 0:.2f} | {base or 0:.2f} | {ratio} |")
    print()
    for chip, model, _, _, source in SPEEDS:
        print(f"- {chip}, {model}: {source}")


if __name__ == "__main__":
    main()
