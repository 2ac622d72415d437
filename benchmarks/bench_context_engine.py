"""The context engine on the real sessions: facts at stake kept in the summary, and kept or
recoverable through the recall tool.

Each session of benchmarks/sessions/real/ is fed to the engine (integrations/context_engine.py)
the way Hermes feeds it: turn by turn (a turn ends where the next user message starts), the micro
pass after each turn (`_micro_compact`, Hermes's finalizer seam), `on_turn_complete` after it,
and a batch `compress` when the transcript crosses the threshold. A fact is *at stake* when the
session showed it and no live message holds it any more (only the summary can carry it). It is
*kept* when the last summary marker holds it verbatim, and *recoverable* when the recall tool,
asked with the fact's own two or three rarest words (fewest messages of the session hold them),
returns a line that holds it verbatim.

    .venv/bin/python benchmarks/bench_context_engine.py [--sessions N] [--context-limit 16384]
        [--json out.json] [--scripted]

--scripted uses a deterministic stand-in summarizer (fast; for checking the harness, not figures).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

import hermes_mlx  # noqa: F401  (puts the BLAS in place before MLX loads)
from hermes_mlx.bench.shipped import REAL_DIR, load_with_facts, shipped_sessions
from hermes_mlx.compactor import markers
from hermes_mlx.compactor.transcript import transcript_tokens
from hermes_mlx.integrations import recall
from hermes_mlx.integrations.context_engine import EngineCore
from hermes_mlx.summarizer.budget import hermes_tokens

_WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-/]*[A-Za-z0-9_]|[A-Za-z0-9_]")


def turns_of(messages: list[dict]) -> list[list[dict]]:
    """The session cut where each user message starts (the system prompt rides with the first)."""
    out: list[list[dict]] = []
    for m in messages:
        if m.get("role") == "user" or not out:
            out.append([])
        out[-1].append(m)
    return out


def rarest_words(fact: str, texts: list[str], n: int = 3) -> list[str]:
    """The fact's n words held by the fewest of the session's messages (longer first on a tie)."""
    words = list(dict.fromkeys(w for w in _WORD.findall(fact) if len(w) > 1)) or [fact]
    lowered = [t.lower() for t in texts]
    df = {w: sum(w.lower() in t for t in lowered) for w in words}
    return sorted(words, key=lambda w: (df[w], -len(w)))[:n]


def replay(engine: EngineCore, messages: list[dict]) -> list[dict]:
    live: list[dict] = []
    for turn in turns_of(messages):
        live = live + turn
        if engine.should_compress(transcript_tokens(live, hermes_tokens)):
            live = engine.compress(live)
        live = engine._micro_compact(live)
        engine.on_turn_complete(list(live))
    return live


def score(name: str, engine: EngineCore, seen: list[dict], live: list[dict], facts) -> dict:
    seen_texts = [recall.row_text(m) for m in seen]
    seen_all = "\n".join(seen_texts)
    live_text = "\n".join(recall.row_text(m) for m in live if not markers.is_marker(m))
    marker = next((m for m in reversed(live) if markers.is_marker(m)), None)
    summary = markers.parse(marker.get("content")) if marker else ""
    present = [f for _, f in facts.must_keep() if f in seen_all]
    stake = [f for f in present if f not in live_text]
    kept = [f for f in stake if f in summary]
    recovered = []
    for fact in stake:
        if fact in summary:
            continue
        query = " ".join(rarest_words(fact, seen_texts))
        answer = json.loads(engine.handle_tool_call(recall.TOOL_NAME, {"query": query, "limit": 12}))
        if any(fact in m["text"] for m in answer.get("matches", [])):
            recovered.append(fact)
    return {
        "session": name,
        "messages": len(seen),
        "live_messages": len(live),
        "facts_seen": len(present),
        "stake": len(stake),
        "kept": len(kept),
        "kept_or_recoverable": len(kept) + len(recovered),
        "lost": [f for f in stake if f not in kept and f not in recovered][:20],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=0, help="first N sessions only (0: all)")
    ap.add_argument("--context-limit", type=int, default=16384)
    ap.add_argument("--json", default=None)
    ap.add_argument("--scripted", action="store_true")
    args = ap.parse_args()
    summarizer = None
    if args.scripted:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
        from fakes import ScriptedSummarizer

        summarizer = ScriptedSummarizer()
    paths = shipped_sessions(REAL_DIR)
    paths = paths[: args.sessions] if args.sessions else paths
    rows = []
    with tempfile.TemporaryDirectory() as home:
        for path in paths:
            name = path.name[: -len(".jsonl")]
            engine = EngineCore(summarizer, home=home)
            engine.context_length = args.context_limit
            engine.threshold_tokens = int(args.context_limit * engine.threshold_percent)
            engine._micro_compact_enabled = True
            engine.on_session_start(name, hermes_home=home, model="recorded")
            session = load_with_facts(path)
            started = time.perf_counter()
            live = replay(engine, session.messages)
            row = score(name, engine, session.messages, live, session.facts)
            row["seconds"] = round(time.perf_counter() - started, 1)
            rows.append(row)
            print(
                f"{name:55s} stake {row['stake']:3d}  kept {row['kept']:3d}  "
                f"kept/recoverable {row['kept_or_recoverable']:3d}  ({row['seconds']} s)",
                flush=True,
            )
    stake = sum(r["stake"] for r in rows)
    kept = sum(r["kept"] for r in rows)
    either = sum(r["kept_or_recoverable"] for r in rows)
    total = {
        "sessions": len(rows),
        "stake": stake,
        "kept_pct": round(100 * kept / stake, 1) if stake else None,
        "kept_or_recoverable_pct": round(100 * either / stake, 1) if stake else None,
    }
    print(json.dumps(total))
    if args.json:
        Path(args.json).write_text(json.dumps({"total": total, "sessions": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
