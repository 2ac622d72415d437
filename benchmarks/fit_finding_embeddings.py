"""Does the model's reading of a finding rank it better than code's features? Measured, leave one
agent out.

Every candidate finding of both shipped real-session corpora (the rows fit_finding_weights.py
fits) is read by the embedded default model: its final hidden states, averaged over the
finding's first `--tokens` tokens. For each agent, a logistic model is fitted on the other
agents' findings over code's features plus the first K principal components of those states
(PCA fitted on the other agents too), and the facts held by each of the left-out agent's
sessions' top findings are counted, beside code's features alone fitted the same way.

The rows' features are FEATURE_WEIGHTS' (findings.features); the label is whether a finding
holds one of its session's facts verbatim. About 10 minutes on 2 cores (the model reads ~3,400
findings); `--cache FILE.npy` keeps the states for the next run.

    python benchmarks/fit_finding_embeddings.py [--k 4 8 16] [--top 6 12 24] [--cache states.npy]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from fit_finding_weights import fit, load, top_facts  # benchmarks/ is the script's folder

import hermes_mlx  # noqa: F401  (BLAS before mlx)

TOKENS = 48  # a finding's first tokens the model reads (findings run to ~65)
BATCH = 16


def hidden_states(texts: list[str], tokens: int) -> np.ndarray:
    """Mean final hidden state of each text under the embedded default model, as the engine
    loads it (dense float32 on a CPU)."""
    import mlx.core as mx
    from mlx_lm import load as load_model

    from hermes_mlx.engine.cache import fit_for_device
    from hermes_mlx.engine.models import resolve_model

    model, tokenizer = load_model(str(resolve_model()))
    fit_for_device(model, 8e9)
    out: list[np.ndarray | None] = [None] * len(texts)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # alike lengths pad least
    started = time.perf_counter()
    for b in range(0, len(order), BATCH):
        idx = order[b : b + BATCH]
        ids = [tokenizer.encode(texts[i])[:tokens] or [0] for i in idx]
        width = max(map(len, ids))
        grid = np.zeros((len(ids), width), dtype=np.int32)
        mask = np.zeros((len(ids), width, 1), dtype=np.float32)
        for row, seq in enumerate(ids):  # padding on the right: a causal model's earlier states ignore it
            grid[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1
        states = model.model(mx.array(grid))
        mean = (states * mx.array(mask)).sum(axis=1) / mx.array(mask).sum(axis=1)
        for row, i in enumerate(np.array(mean)):
            out[idx[row]] = i
        if b % (BATCH * 40) == 0:
            print(f"  read {b:,}/{len(texts):,} findings, {time.perf_counter() - started:.0f} s", flush=True)
    return np.stack(out)


def components(states: np.ndarray, train: np.ndarray, k: int) -> np.ndarray:
    """Every row's first k principal components of the training rows' states, unit variance."""
    mu, sd = states[train].mean(0), states[train].std(0) + 1e-6
    z = (states - mu) / sd
    _, s, vt = np.linalg.svd(z[train], full_matrices=False)
    return z @ vt[:k].T / np.sqrt(s[:k] ** 2 / train.sum())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--k", type=int, nargs="+", default=[4, 8, 16], help="principal components of the states")
    ap.add_argument("--top", type=int, nargs="+", default=[6, 12, 24], help="findings a session keeps")
    ap.add_argument("--tokens", type=int, default=TOKENS)
    ap.add_argument("--cache", type=Path, help="a .npy file for the states: read if present, else written")
    args = ap.parse_args()
    sessions = load()
    rows = [(s["agent"], i, r) for i, s in enumerate(sessions) for r in s["rows"]]
    if args.cache and args.cache.exists():
        states = np.load(args.cache)
    else:
        states = hidden_states([r[0] for _, _, r in rows], args.tokens)
        if args.cache:
            np.save(args.cache, states)
    code = np.array([r[1] for _, _, r in rows], dtype=float)
    labels = np.array([1.0 if r[2] else 0.0 for _, _, r in rows])
    agents = sorted({a for a, _, _ in rows})

    def left_out_scores(k: int) -> np.ndarray:
        """Every finding scored by the model fitted without its agent (k=0: code's features alone)."""
        scores = np.zeros(len(rows))
        for agent in agents:
            train = np.array([a != agent for a, _, _ in rows])
            x = np.hstack([code, components(states, train, k)]) if k else code
            scores[~train] = x[~train] @ fit(x[train], labels[train])
        return scores

    by_session: dict[int, list[int]] = {}
    for j, (_, i, _) in enumerate(rows):
        by_session.setdefault(i, []).append(j)
    scored = {k: left_out_scores(k) for k in [0, *args.k]}

    def held(k: int, top: int) -> dict[str, int]:
        """Facts the left-out agent's sessions' top findings hold, per agent."""
        out = dict.fromkeys(agents, 0)
        for i, mine in by_session.items():
            out[sessions[i]["agent"]] += top_facts([rows[j][2] for j in mine], list(scored[k][mine]), top)
        return out

    reachable = {a: sum(len({f for r in s["rows"] for f in r[2]}) for s in sessions if s["agent"] == a) for a in agents}
    print(f"facts held by each session's top findings, left-out agent (reachable: {sum(reachable.values())})")
    for top in args.top:
        base = held(0, top)
        line = f"top {top:3d}: code {sum(base.values()):4d}"
        for k in args.k:
            line += f" | +{k} components {sum(held(k, top).values()):4d}"
        print(line, flush=True)
    k, top = args.k[len(args.k) // 2], args.top[len(args.top) // 2]
    base, model = held(0, top), held(k, top)
    print(f"\nper agent, top {top}, {k} components:")
    print(f"{'agent':14s} {'reachable':>9s} {'code':>5s} {'+model':>6s}")
    for agent in agents:
        print(f"{agent:14s} {reachable[agent]:9d} {base[agent]:5d} {model[agent]:6d}")


if __name__ == "__main__":
    main()
