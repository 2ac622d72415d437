"""Batch compaction on the real agent sessions, findings ranked by code and by the model.

For each session in benchmarks/sessions/real/ (batch at a 32K window, ending with a forced
pass, as `hermes-mlx fidelity --real --mode batch`): facts at stake (their every message was
compacted away) kept in the summary, summary tokens (Hermes's count), pass p50, and the
reference summary's facts and tokens where the session has one. Then one forced batch pass
over a ~100K-token transcript (real sessions joined), p50 of three, with the time spent in the
model's calls stated.

    python benchmarks/bench_real_sessions.py [--ranking code,model] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import hermes_mlx  # noqa: F401  (BLAS under MLX first)
from hermes_mlx.bench.fidelity import score_session
from hermes_mlx.bench.shipped import REAL_DIR, shipped_sessions
from hermes_mlx.compactor.batch import BatchCompactor
from hermes_mlx.compactor.sessions import load_session
from hermes_mlx.compactor.settings import CompactorSettings
from hermes_mlx.summarizer.budget import hermes_tokens
from hermes_mlx.summarizer.summarizer import MLXSummarizer


class TimedScore:
    """The engine's score(), timed: the model's share of a pass."""

    def __init__(self) -> None:
        from hermes_mlx.engine.score import score as engine_score

        self.inner, self.seconds, self.calls = engine_score, 0.0, 0

    def __call__(self, *args, **kwargs):
        started = time.perf_counter()
        try:
            return self.inner(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - started
            self.calls += 1


def corpus(ranking: str) -> list[dict]:
    rows = []
    for path in shipped_sessions(REAL_DIR):
        timed = TimedScore()
        s = score_session(path, MLXSummarizer(ranking=ranking, score=timed), mode="batch", context_limit=32768)
        rows.append(
            {
                "session": path.stem,
                "ranking": ranking,
                "stake": s.stake,
                "stake_kept": s.stake_kept,
                "summary_tokens": s.summary_tokens,
                "summary_facts": s.summary_facts,
                "reference_facts": s.reference_facts,
                "reference_tokens": s.reference_tokens,
                "pass_p50_s": round(statistics.median(s.pass_s), 2) if s.pass_s else None,
                "model_s": round(timed.seconds, 2),
                "model_calls": timed.calls,
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def long_session(target_tokens: int = 100_000) -> list[dict]:
    """Real sessions joined (one system prompt) until the transcript holds `target_tokens`."""
    out: list[dict] = []
    for path in shipped_sessions(REAL_DIR):
        messages = load_session(path)
        out += messages if not out else [m for m in messages if m.get("role") != "system"]
        if hermes_tokens(json.dumps(out)) >= target_tokens:
            break
    return out


def big_pass(ranking: str, repeats: int = 3) -> dict:
    messages = long_session()
    tokens = hermes_tokens(json.dumps(messages))
    durations, model_s = [], []
    for _ in range(repeats):
        timed = TimedScore()
        summarizer = MLXSummarizer(ranking=ranking, score=timed)
        started = time.perf_counter()
        result = BatchCompactor(summarizer, CompactorSettings(context_limit=32768)).compact(messages, force=True)
        durations.append(time.perf_counter() - started)
        model_s.append(timed.seconds)
        assert result.outcome == "compacted", result.outcome
    row = {
        "ranking": ranking,
        "transcript_tokens": tokens,
        "pass_p50_s": round(statistics.median(durations), 2),
        "model_p50_s": round(statistics.median(model_s), 2),
    }
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranking", default="code,model")
    ap.add_argument("--json", default=None, help="write every row here")
    args = ap.parse_args()
    out = {"sessions": [], "long": []}
    for ranking in args.ranking.split(","):
        rows = corpus(ranking)
        out["sessions"] += rows
        kept, stake = sum(r["stake_kept"] for r in rows), sum(r["stake"] for r in rows)
        print(f"{ranking}: facts at stake kept {kept}/{stake} ({100 * kept / max(1, stake):.0f}%)", flush=True)
        out["long"].append(big_pass(ranking))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
