"""Fit the finding ranker's weights (summarizer.findings.FEATURE_WEIGHTS) on real sessions, and
report them on agents the fit never saw.

Every candidate finding of every shipped real session (both corpora) is labelled by whether it
holds one of its session's facts verbatim; a logistic model (numpy, L2) is fitted on its
features. Leave one agent out: for each agent, fit on the others and count, on that agent's
sessions, the facts held by each session's top-K findings, beside the weights in force and a
length-only baseline. The last line prints the weights fitted on all agents, to paste into
FEATURE_WEIGHTS.

    python benchmarks/fit_finding_weights.py [--top 12]
"""

from __future__ import annotations

import argparse
from collections import defaultdict

import numpy as np

import hermes_mlx  # noqa: F401  (BLAS before mlx)
from hermes_mlx.bench.agents import agent_of, real_sessions
from hermes_mlx.bench.shipped import load_with_facts
from hermes_mlx.summarizer.findings import FEATURE_WEIGHTS, candidates, near_duplicate
from hermes_mlx.summarizer.text import normalize

NAMES = list(FEATURE_WEIGHTS)


def load() -> list[dict]:
    sessions = []
    for path in real_sessions():
        session = load_with_facts(path)
        facts = [f for _, f in session.facts.must_keep()]
        rows = [
            (text, [feats[k] for k in NAMES], [f for f in facts if f in text])
            for text, _, feats in candidates(normalize(session.messages))
        ]
        sessions.append({"agent": agent_of(path), "name": path.stem, "rows": rows})
    return sessions


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 3000, lr: float = 0.5) -> np.ndarray:
    w = np.zeros(x.shape[1])
    pos = max(1.0, y.sum())
    weight = np.where(y > 0, (len(y) - pos) / pos, 1.0)  # balance the rare positives
    weight = weight / weight.mean()
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(x @ w)))
        grad = x.T @ ((p - y) * weight) / len(y) + l2 * np.r_[0.0, w[1:]] / len(y)
        w -= lr * grad
    return w


def kept(session: dict, score, top: int) -> int:
    """Facts held by the session's `top` best findings (near-duplicates of a better one skipped)."""
    return top_facts(session["rows"], [score(r[1]) for r in session["rows"]], top)


def top_facts(rows: list, scores: list[float], top: int) -> int:
    """Facts held by the `top` best-scored of `rows` (text, features, facts held), near-duplicates
    of a better one skipped."""
    chosen: list[str] = []
    facts: set[str] = set()
    for _, (text, _features, hits) in sorted(zip(scores, rows, strict=True), key=lambda p: p[0], reverse=True):
        if len(chosen) >= top:
            break
        if any(near_duplicate(text, c) for c in chosen):
            continue
        chosen.append(text)
        facts.update(hits)
    return len(facts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--top", type=int, default=12, help="findings a session keeps (the summarizer's findings_keep)")
    args = ap.parse_args()
    sessions = load()
    agents = sorted({s["agent"] for s in sessions})
    current = np.array([FEATURE_WEIGHTS[k] for k in NAMES])
    log_chars = NAMES.index("log_chars")
    table = defaultdict(lambda: [0, 0, 0, 0])
    for agent in agents:
        train = [r for s in sessions if s["agent"] != agent for r in s["rows"]]
        x = np.array([r[1] for r in train], dtype=float)
        y = np.array([1.0 if r[2] else 0.0 for r in train])
        w = fit(x, y)
        for s in (s for s in sessions if s["agent"] == agent):
            row = table[agent]
            row[0] += len({f for r in s["rows"] for f in r[2]})
            row[1] += kept(s, lambda f, w=w: float(np.dot(w, f)), args.top)
            row[2] += kept(s, lambda f: float(np.dot(current, f)), args.top)
            row[3] += kept(s, lambda f: f[log_chars], args.top)
    print(f"facts held by each session's top {args.top} findings (left-out agent | in force | longest first)")
    print(f"{'agent':14s} {'reachable':>9s} {'fitted LOO':>10s} {'in force':>9s} {'longest':>8s}")
    totals = [0, 0, 0, 0]
    for agent in agents:
        row = table[agent]
        totals = [a + b for a, b in zip(totals, row, strict=True)]
        print(f"{agent:14s} {row[0]:9d} {row[1]:10d} {row[2]:9d} {row[3]:8d}")
    print(f"{'all':14s} {totals[0]:9d} {totals[1]:10d} {totals[2]:9d} {totals[3]:8d}")
    rows = [r for s in sessions for r in s["rows"]]
    w = fit(np.array([r[1] for r in rows], dtype=float), np.array([1.0 if r[2] else 0.0 for r in rows]))
    print("fitted on all agents:", {k: round(float(v), 2) for k, v in zip(NAMES, w, strict=True)})


if __name__ == "__main__":
    main()
