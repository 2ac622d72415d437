"""Measure what a summary entry of each kind is worth: budget.ENTRY_VALUE.

Every shipped real session (both corpora) is compacted in batch mode with no summary budget, so
nothing is dropped; each entry of the final summary is then checked against the session's fact
list (the exact strings a reader needs). An entry's worth is the share of entries of its kind that
hold at least one fact ("any fact", what budget.ENTRY_VALUE uses), beside the share holding a fact
at stake (one the compacted transcript's kept messages no longer hold, so only the summary can
carry it). Findings are shown for comparison; each is worth its ranker's score
(findings.FEATURE_WEIGHTS, fitted by fit_finding_weights.py). The last two columns are the
entries the kept turns spell out and the share of those holding a fact at stake: what
budget.SAID_IN_KEPT discounts.

    python benchmarks/entry_values.py [--window 32768]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict

import hermes_mlx  # noqa: F401  (BLAS before mlx)
from hermes_mlx.bench.agents import real_sessions, real_window
from hermes_mlx.bench.harness import last_summary
from hermes_mlx.bench.shipped import load_with_facts
from hermes_mlx.compactor.batch import BatchCompactor
from hermes_mlx.compactor.markers import is_marker
from hermes_mlx.compactor.replay import replay
from hermes_mlx.compactor.settings import CompactorSettings
from hermes_mlx.summarizer.budget import ENTRY_VALUE, file_kind, named_text
from hermes_mlx.summarizer.ledger import OUTCOME_SEP
from hermes_mlx.summarizer.summarizer import MLXSummarizer
from hermes_mlx.summarizer.summary import parse
from hermes_mlx.summarizer.text import normalize, source_text


def entries(summary: str) -> list[tuple[str, str]]:
    """(kind, text) of every entry, in budget.ENTRY_VALUE's kinds."""
    s = parse(summary)
    led = s.ledger
    out = [("goal", s.goal)] if s.goal else []
    out += [("user_message", x) for x in led.asks] + [("constraint", x) for x in led.constraints]
    out += [("state", x) for x in s.state] + [("remaining", x) for x in s.remaining]
    out += [("decision", x) for x in s.decisions] + [("question", x) for x in s.questions]
    out += [("command_outcome" if c.outcome else "command", f"{c.cmd} {c.latest_outcome()}") for c in led.commands]
    out += [("outcome_history", c.outcome.rsplit(OUTCOME_SEP, 1)[0]) for c in led.commands if OUTCOME_SEP in c.outcome]
    out += [("error", e.line) for e in led.errors] + [("resolved_error", x) for x in led.resolved]
    named = named_text(s)
    out += [(file_kind(p, a, named), p) for p, a in led.files.items()]
    out += [("identifier", x) for x in led.ids] + [("url", x) for x in led.urls]
    out += [("other_section", body) for _, body in s.extras]
    out += [("progress (findings: by their ranker)", x) for x in s.progress]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--window", type=int, default=0, help="the main model's window (default: half each session's tokens)"
    )
    args = ap.parse_args()
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
    for path in real_sessions():
        session = load_with_facts(path)
        facts = [f for _, f in session.facts.must_keep()]
        summarizer = MLXSummarizer()
        messages = session.messages
        window = args.window or real_window(messages)
        settings = CompactorSettings(context_limit=window, session_id=path.stem, summary_budget_tokens=10**6)
        done = replay(messages, summarizer, mode="batch", settings=settings)
        live = BatchCompactor(summarizer, settings).compact(done.messages, force=True).messages
        verbatim = [m for m in live if not is_marker(m)]
        kept = json.dumps(verbatim, ensure_ascii=False)
        shown = source_text(normalize(verbatim))  # what the summarizer is told stays (its `kept=`)
        stake = [f for f in facts if f not in kept and json.dumps(f, ensure_ascii=False)[1:-1] not in kept]
        for kind, text in entries(last_summary(live)):
            t = tally[kind]
            t[0] += 1
            t[1] += any(f in text for f in facts)
            t[2] += any(f in text for f in stake)
            if len(text.strip()) > 2 and text.strip() in shown:
                t[3] += 1
                t[4] += any(f in text for f in stake)
    print(
        f"{'kind':16s} {'entries':>7s} {'any fact':>8s} {'at stake':>8s} {'in force':>8s} {'shown':>6s} {'at stake':>8s}"
    )
    for kind in sorted(tally, key=lambda k: -tally[k][1] / tally[k][0]):
        n, hits, stake, shown_n, shown_stake = tally[kind]
        value = ENTRY_VALUE.get(kind, float("nan"))
        share = f"{shown_stake / shown_n:8.3f}" if shown_n else f"{'-':>8s}"
        print(f"{kind[:16]:16s} {n:7d} {hits / n:8.3f} {stake / n:8.3f} {value:8.3f} {shown_n:6d} {share}")


if __name__ == "__main__":
    main()
