"""Gated abstractive vs extractive narrative, on the same sessions: faithfulness and pass time.

Abstractive (what ships): the model writes one or two sentences, the faithfulness gate checks
each against the exchange and replaces what fails with the closest assistant sentence.
Extractive (the alternative tried): the model only chooses which assistant sentence carries the
step's outcome, by likelihood in one forward pass and no decode: the prompt lists the candidate
sentences numbered, asks which one states the result, and the logits of the next token over the
numbers pick it; code copies that sentence verbatim.

    .venv/bin/python benchmarks/bench_extractive.py [SESSION.jsonl ...] [--tail-tokens 512] [--out x.json]

Default sessions: the adversarial set. Prints one row per (session, variant) and writes JSON.

Measured here (2 shared x86 cores, load average 6-8 from other work, embedded 135M model,
micro, --tail-tokens 512, adversarial set; 5 passes each, the same exchanges):
  abstractive+gate  narrative 8 lines, 100% faithful, 0 contradicted, 0 invented; the gate
                    kept 2 of 8 model lines (6 unsupported, replaced verbatim); pass p50 37.2 s,
                    195 s in all
  extractive        narrative 5 lines, 100% faithful (verbatim by construction), 0 contradicted,
                    0 invented; pass p50 21.4 s, 121 s in all
Equal faithfulness in what reaches the summary; the extractive passes were cheaper (no decode).
Not adopted yet: it needs a logits call on the engine's worker thread (the engine owns the
model) and changes what every merge/update test scripts; see the report.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import hermes_mlx  # noqa: F401  (BLAS before mlx)
from hermes_mlx.bench.fidelity import run_session, score
from hermes_mlx.bench.shipped import ADVERSARIAL_DIR, facts_path, load_facts, shipped_sessions
from hermes_mlx.compactor.sessions import load_session
from hermes_mlx.summarizer.faithful import statements
from hermes_mlx.summarizer.summarizer import MLXSummarizer

QUESTION = "Which numbered sentence states the result of this step? Answer with its number."


class Extractive(MLXSummarizer):
    """The model chooses among the assistant's own sentences; nothing it writes is used."""

    def __init__(self, loaded, **kw):
        super().__init__(**kw)
        self.loaded = loaded

    def _ask(self, tpl, content, sources, stats, focus=None, turns=None):
        import mlx.core as mx

        cands = statements(turns or [])[-9:]
        if len(cands) <= 1:
            return cands
        tok = self.loaded.tokenizer
        listing = "\n".join(f"{i + 1}. {c}" for i, c in enumerate(cands))
        messages = [{"role": "system", "content": tpl.system},
                    {"role": "user", "content": f"{content}\n\nSentences:\n{listing}\n\n{QUESTION}"}]
        ids = list(tok.apply_chat_template(messages, add_generation_prompt=True))
        logits = self.loaded.model(mx.array([ids]))[0, -1]
        numbers = [tok.encode(str(i + 1), add_special_tokens=False)[-1] for i in range(len(cands))]
        scores = logits[mx.array(numbers)]
        mx.eval(scores)
        stats["prompt_tokens"] += len(ids)
        stats["gate"]["kept"] = stats["gate"].get("kept", 0) + 1  # one verbatim line chosen
        return [cands[int(mx.argmax(scores).item())]]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("sessions", nargs="*")
    ap.add_argument("--tail-tokens", type=int, default=512)
    ap.add_argument("--out", default="bench-results/extractive.json")
    args = ap.parse_args()
    paths = [Path(p) for p in args.sessions] or shipped_sessions(ADVERSARIAL_DIR)

    from hermes_mlx.engine.cache import ModelCache
    from hermes_mlx.engine.generate import resolve

    key, path = resolve(None)
    loaded, _ = ModelCache().get(key, path)
    rows = []
    for p in paths:
        messages, facts = load_session(p), load_facts(facts_path(p))
        for variant, summarizer in (("abstractive+gate", MLXSummarizer()), ("extractive", Extractive(loaded))):
            started = time.perf_counter()
            run = run_session(messages, summarizer, mode="micro", tail_tokens=args.tail_tokens, session_id=p.stem)
            s = score(p.stem, "micro", run, facts).to_dict()
            s.update(variant=variant, wall_s=round(time.perf_counter() - started, 2))
            rows.append(s)
            print(f"{p.stem:22} {variant:17} passes {s['passes']:2}  faithful {s['faithful_pct']}% of {s['lines']}  "
                  f"contradicted {len(s['contradictions'])}  invented {len(s['invented'])}  "
                  f"pass p50 {s['pass_s_p50']} s  total {s['pass_s_total']} s", flush=True)
    for variant in ("abstractive+gate", "extractive"):
        mine = [r for r in rows if r["variant"] == variant]
        lines = sum(r["lines"] for r in mine)
        bad = sum(len(r["unsupported"]) for r in mine)
        passes = [t for r in mine for t in r["pass_s"]]
        print(f"{variant}: faithful {100 * (lines - bad) / lines if lines else 0:.1f}% of {lines} lines, "
              f"pass p50 {statistics.median(passes) if passes else 0:.2f} s, total {sum(passes):.1f} s over {len(passes)} passes")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(rows, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
