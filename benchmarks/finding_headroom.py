"""Where the facts a batch summary loses are: which only a finding can carry, and how many of those
any finding holds, the ranker's best hold, and the summary keeps; then the ceiling no choice among
today's lines can beat (no budget, every candidate finding kept).

Each real session of both corpora is compacted in batch mode as `fidelity --real` does it (a window
of half its tokens), once with Hermes's budget and once with none. A fact at stake (every message
holding it was folded away) *needs a finding* when no section of the unbudgeted summary but
Progress holds it: no command, error, file or identifier entry will carry it whatever the budget.
For those, per agent and per kind: how many a candidate finding of the session holds at all
(`findings.candidates`), how many the ranker's top 12 findings hold (FEATURE_WEIGHTS, fitted on
every agent), and how many the budgeted summary keeps. Plain substrings, as the fact lists are.

    python benchmarks/finding_headroom.py [--top 12]
"""

from __future__ import annotations

import argparse
import re
from collections import Counter

import hermes_mlx  # noqa: F401  (BLAS before mlx)
from hermes_mlx.bench.agents import agent_of, real_sessions, real_window
from hermes_mlx.bench.fidelity import run_session
from hermes_mlx.bench.shipped import load_with_facts
from hermes_mlx.compactor.markers import is_marker
from hermes_mlx.integrations.hermes_wire import hermes_serialize
from hermes_mlx.summarizer.findings import findings, rank
from hermes_mlx.summarizer.summarizer import MLXSummarizer
from hermes_mlx.summarizer.text import normalize

UNBUDGETED = 1_000_000
COLUMNS = ("at stake", "need a finding", "a finding holds", "top findings hold", "summary keeps")


def batch_run(session, path, budget: int | None):
    """One batch replay of `session` (its Replay), with `budget` summary tokens, or Hermes's for the span."""
    return run_session(
        session.messages,
        MLXSummarizer(),
        mode="batch",
        context_limit=real_window(session.messages),
        session_id=path.stem,
        summary_budget_tokens=budget,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--top", type=int, default=12, help="the ranker's best findings counted")
    args = ap.parse_args()
    by_agent: dict[str, Counter] = {}
    by_kind: dict[str, Counter] = {}
    for path in real_sessions():
        session = load_with_facts(path)
        run = batch_run(session, path, None)
        seen = hermes_serialize(run.seen)
        live = hermes_serialize([m for m in run.messages if not is_marker(m)])
        kinds = {f: k for k, f in session.facts.must_keep()}
        stake = [f for _, f in session.facts.must_keep() if f in seen and f not in live]
        others = re.sub(r"(?ms)^## Progress\n.*?(?=^## |\Z)", "", batch_run(session, path, UNBUDGETED).summary)
        found = findings(normalize(session.messages))
        best = [f.text for f in rank(found)[: args.top]]
        agent = agent_of(path)
        for f in stake:
            for row in (by_agent.setdefault(agent, Counter()), by_kind.setdefault(kinds[f], Counter())):
                row["at stake"] += 1
                if f not in others:  # only a finding can carry it
                    row["need a finding"] += 1
                    row["a finding holds"] += any(f in x.text for x in found)
                    row["top findings hold"] += any(f in x for x in best)
                    row["summary keeps"] += f in run.summary
    for title, table in (("agent", by_agent), ("kind", by_kind)):
        print(f"| {title} | " + " | ".join(COLUMNS) + " |")
        print("|---" * (len(COLUMNS) + 1) + "|")
        total = Counter()
        for key, row in sorted(table.items()):
            total.update(row)
            print(f"| {key} | " + " | ".join(str(row[c]) for c in COLUMNS) + " |")
        print("| **all** | " + " | ".join(f"**{total[c]}**" for c in COLUMNS) + " |\n")
    # what no choice among today's lines can beat: every section unbudgeted, every candidate kept
    t = sum(by_agent.values(), Counter())
    ceiling = t["at stake"] - t["need a finding"] + t["a finding holds"]
    print(f"ceiling (no budget, every candidate finding kept): {ceiling}/{t['at stake']}")


if __name__ == "__main__":
    main()
