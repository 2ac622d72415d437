"""Summarizer figures for issue 3: replay recorded tool-heavy sessions as micro-compaction merge
passes (one exchange each: an assistant message up to the next user message) and, optionally,
one batch update of the whole session.

A pass decodes nothing. Code carries the facts (the ledger); per chunk the model reads the
exchange once and picks which of the assistant's own numbered sentences states the outcome,
read off the logits of that one prefill, and code copies the pick verbatim (see
hermes_mlx/summarizer/summarizer.py). So per pass: prompt and cached tokens (the prefill), the
sentences picked, wall time, and the size of the summary afterwards (what a rewrite of the
summary would have had to generate). After the last pass: planted paths / commands / errors
present, invented paths, leaked secrets, lifted injections.

    python benchmarks/bench_summarizer.py [--session NAME ...] [--model NAME] [--limit N]
                                          [--batch] [--code-only] [--json OUT.json]

After the last pass the summary is defragged once (sizes and facts reported again).
--code-only never asks the model (as when a pass's deadline has passed): every chunk gets the
code-written narrative, so only code-carried facts count (seconds instead of minutes; useful on
a busy machine; the tokenizer is still loaded for the counts).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import hermes_mlx  # noqa: F401  (BLAS first)
from hermes_mlx.bench.shipped import SESSIONS_DIR as SESSIONS
from hermes_mlx.bench.shipped import SessionFacts, load_with_facts
from hermes_mlx.summarizer import MLXSummarizer
from hermes_mlx.summarizer.extract import find_paths
from hermes_mlx.summarizer.summary import parse
from hermes_mlx.summarizer.verify import instruction_like


def no_time(*args, **kwargs):
    """--code-only's scorer: the summarizer treats a TimeoutError as no time left for the model."""
    raise TimeoutError("code-only: the model is not asked")


def exchanges(messages: list[dict]) -> list[list[dict]]:
    """Hermes's micro unit: from an assistant message up to (not including) the next user turn."""
    out, current = [], None
    for m in messages:
        if m.get("role") in ("user", "system"):
            if current:
                out.append(current)
            current = None
        else:
            current = (current or []) + [m]
    if current:
        out.append(current)
    return out


def check_facts(summary: str, messages: list[dict], facts: SessionFacts, *, micro: bool) -> dict:
    """Planted facts in the summary. In micro mode user turns are never compacted, so a fact
    stated in a user message counts as kept (the compactor leaves those messages in place)."""
    session_text = json.dumps(messages, ensure_ascii=False)
    raw = "\n".join(json.dumps(m, ensure_ascii=False) for m in messages)
    users = "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "user")
    report: dict = {}
    for kind in ("paths", "commands", "errors", "urls", "identifiers", "decisions"):
        items = getattr(facts, kind)
        present = [f for f in items if f in summary or (micro and f in users)]
        report[kind] = {
            "planted": len(items),
            "present": len(present),
            "missing": [f for f in items if f not in present],
        }
    invented = [p for p in find_paths(summary) if p not in session_text and p not in raw]
    report["invented_paths"] = invented
    report["secrets_leaked"] = [s for s in facts.secrets if s in summary]
    narrative = parse(summary).narrative_text()
    report["injection_in_narrative"] = instruction_like(narrative)
    return report


def run_session(name: str, s: MLXSummarizer, limit: int | None, batch: bool) -> dict:
    session = load_with_facts(SESSIONS / f"{name}.jsonl")
    messages, facts = session.messages, session.facts
    units = exchanges(messages)[:limit] if limit else exchanges(messages)
    passes, summary, failures = [], None, 0
    for i, ex in enumerate(units):
        started = time.perf_counter()
        r = s.merge(summary, ex)
        wall = time.perf_counter() - started
        if not r.ok:
            failures += 1
            print(f"  pass {i + 1}: FAILED {r.error}", file=sys.stderr)
            continue
        summary = r.text
        full = s.count_tokens(summary)
        row = {
            "pass": i + 1,
            "exchange_chars": len(json.dumps(ex)),
            "prompt_tokens": r.prompt_tokens,
            "cached_tokens": r.cached_tokens,
            "summary_tokens": full,
            "wall_s": round(wall, 2),
            "chunks": r.chunks,
            "narrative": r.details.get("narrative"),
            "picks": r.details.get("picks", []),  # per model call, the sentence numbers chosen
            "rejected": r.details.get("rejected", []),
        }
        passes.append(row)
        print(
            f"  pass {row['pass']:>2}: prompt {row['prompt_tokens']:>5} cached {row['cached_tokens']:>4} "
            f"summary {full:>5} {row['wall_s']:>6.1f}s {row['narrative']} picks {row['picks']}",
            file=sys.stderr,
        )
    result = {
        "session": name,
        "exchanges": len(units),
        "failed_passes": failures,
        "passes": passes,
        "micro_facts": check_facts(summary or "", messages, facts, micro=True),
        "final_summary_tokens": s.count_tokens(summary or ""),
        "final_summary": summary or "",
    }
    if passes:
        result["totals"] = {
            "summary_tokens_mean": round(statistics.mean(p["summary_tokens"] for p in passes), 1),
            "prompt_tokens_mean": round(statistics.mean(p["prompt_tokens"] for p in passes), 1),
            "cached_tokens_mean": round(statistics.mean(p["cached_tokens"] for p in passes), 1),
            "wall_s_mean": round(statistics.mean(p["wall_s"] for p in passes), 2),
            "wall_s_median": round(statistics.median(p["wall_s"] for p in passes), 2),
            "model_narrative_passes": sum(p["narrative"] == "model" for p in passes),
        }
    if summary:
        started = time.perf_counter()
        r = s.defrag(summary)
        result["defrag"] = {
            "ok": r.ok,
            "error": r.error,
            "tokens_before": r.details.get("tokens_before"),
            "tokens_after": r.details.get("tokens_after"),
            "condensed": r.details.get("condensed"),  # model: it picked the bullets kept; code: the ends kept
            "wall_s": round(time.perf_counter() - started, 1),
            "facts": check_facts(r.text, messages, facts, micro=True) if r.ok else None,
        }
    if batch:
        started = time.perf_counter()
        r = s.update(None, [m for m in messages if m.get("role") != "system"])
        result["batch"] = {
            "ok": r.ok,
            "error": r.error,
            "input_chars": len(json.dumps(messages)),
            "chunks": r.chunks,
            "prompt_tokens": r.prompt_tokens,
            "summary_tokens": s.count_tokens(r.text),
            "wall_s": round(time.perf_counter() - started, 1),
            "facts": check_facts(r.text, messages, facts, micro=False),
        }
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--session", action="append", help="session name among the shipped sessions (default: all)")
    ap.add_argument("--model", default=None)
    ap.add_argument("--limit", type=int, default=None, help="merge only the first N exchanges")
    ap.add_argument("--batch", action="store_true", help="also run one batch update over the whole session")
    ap.add_argument("--code-only", action="store_true", help="never ask the model: code-carried facts only")
    ap.add_argument("--json", default=None, help="write the full report here")
    args = ap.parse_args(argv)

    names = args.session or sorted(p.stem for p in SESSIONS.glob("*.jsonl"))
    s = MLXSummarizer(model=args.model, score=no_time if args.code_only else None, timeout=900)
    report = []
    for name in names:
        print(f"{name}:", file=sys.stderr)
        report.append(run_session(name, s, args.limit, args.batch))
        r = report[-1]
        print(
            json.dumps({k: v for k, v in r.items() if k not in ("passes", "final_summary")}, indent=1), file=sys.stderr
        )
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    ok = all(
        not r["micro_facts"]["invented_paths"]
        and not r["micro_facts"]["secrets_leaked"]
        and all(
            r["micro_facts"][k]["present"] == r["micro_facts"][k]["planted"] for k in ("paths", "commands", "errors")
        )
        for r in report
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
