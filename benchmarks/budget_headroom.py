"""How much the summary budget binds: facts at stake kept in batch mode with Hermes's budget for
the span scaled by each factor, per agent, and how many progress lines each pass's summary keeps.

Every real session of both corpora is replayed as `fidelity --real` does it (a window of half its
tokens, a forced last pass). Hermes's budget (`budget.hermes_summary_budget`) is the one the issue
holds us to; the larger factors say what the same rules would keep with more room, and so where a
better use of the room would pay. Measured at session 15's end: x1 126/175, x1.5 130, x2 137
(cursor 19, 21, 27), and a Cursor session's progress falls to one line over its passes
(ai-agents-course-ru 33 -> 23 -> 11 -> 2 -> 1) as its ledger grows.

    python benchmarks/budget_headroom.py [--factors 1,1.5,2] [--only cursor]
"""

from __future__ import annotations

import argparse
from collections import Counter

import hermes_mlx  # noqa: F401  (BLAS before mlx)
import hermes_mlx.compactor.batch as batch
from hermes_mlx.bench.agents import agent_of, real_sessions, real_window
from hermes_mlx.bench.fidelity import as_read, run_session
from hermes_mlx.bench.shipped import load_with_facts
from hermes_mlx.compactor.markers import is_marker
from hermes_mlx.integrations.hermes_wire import hermes_serialize
from hermes_mlx.summarizer.summarizer import MLXSummarizer
from hermes_mlx.summarizer.summary import parse


def scaled(factor: float):
    """Hermes's budget for the span, times `factor`."""
    hermes = batch.hermes_summary_budget
    return lambda span, window: int(hermes(span, window) * factor)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--factors", default="1,1.5,2")
    ap.add_argument("--only", default="", help="comma-separated parts of session names")
    args = ap.parse_args()
    factors = [float(x) for x in args.factors.split(",")]
    kept: dict[float, Counter] = {f: Counter() for f in factors}
    stake: Counter = Counter()
    hermes = batch.hermes_summary_budget
    try:
        for path in real_sessions():
            if args.only and not any(n in path.stem for n in args.only.split(",")):
                continue
            session, agent = load_with_facts(path), agent_of(path)
            for factor in factors:
                batch.hermes_summary_budget = scaled(factor) if factor != 1 else hermes
                run = run_session(
                    session.messages,
                    MLXSummarizer(),
                    mode="batch",
                    context_limit=real_window(session.messages),
                    session_id=path.stem,
                )
                seen = hermes_serialize(run.seen)
                live = hermes_serialize([m for m in run.messages if not is_marker(m)])
                at_stake = [f for _, f in session.facts.must_keep() if f in seen and f not in live]
                read = as_read(run.summary)
                kept[factor][agent] += sum(f in read for f in at_stake)
                if factor == factors[0]:
                    stake[agent] += len(at_stake)
                    lines = [len(parse(r.text).progress) for r in run.results if r.ok]
                    print(f"{path.stem}: progress lines per pass {' -> '.join(map(str, lines))}")
    finally:
        batch.hermes_summary_budget = hermes
    print("\n| agent | at stake | " + " | ".join(f"kept at x{f:g}" for f in factors) + " |")
    print("|---" * (len(factors) + 2) + "|")
    for agent in sorted(stake):
        print(f"| {agent} | {stake[agent]} | " + " | ".join(str(kept[f][agent]) for f in factors) + " |")
    total = sum(stake.values())
    print(f"| **all** | **{total}** | " + " | ".join(f"**{sum(kept[f].values())}**" for f in factors) + " |")


if __name__ == "__main__":
    main()
