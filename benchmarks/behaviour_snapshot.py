"""Snapshot what hermes-mlx does to the shipped sessions, so that a refactor can show it changed
nothing a user sees: the final transcripts and the telemetry of every pass, timings left out.

    python benchmarks/behaviour_snapshot.py OUT.json            # take a snapshot
    python benchmarks/behaviour_snapshot.py OUT.json --against BEFORE.json   # and compare

It runs the `hermes-mlx compact` command (in this process, so the model loads once) on every
shipped session, synthetic, adversarial and real, in micro and in batch mode, with the embedded
model. Then Hermes's own requests go through the in-process provider (MLXClient, the path
`auxiliary.compression.provider: mlx` takes): each exchange of the synthetic and adversarial
sessions as Hermes's micro prompt, folding the rolling summary on, and the whole session as one
batch prompt. Greedy decoding on one machine is deterministic, so any difference is a change in
behaviour. Each run keeps its last summary as text, so a comparison explains what changed: the
summary lines each changed run lost and gained, and the telemetry fields that differ.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import hashlib
import io
import json
import re
import sys
import tempfile
from pathlib import Path

from hermes_mlx.bench.harness import last_summary
from hermes_mlx.cli import main as cli

SESSIONS = Path(__file__).parent / "sessions"
TIMING = {"duration_ms", "wall_s", "ttft_s", "total_s", "load_s", "queue_ms", "prefill_ms", "decode_ms"}
TELEMETRY = re.compile(r"telemetry: (\{.*\})$")


def sessions() -> list[Path]:
    return (
        sorted(SESSIONS.glob("*.jsonl"))
        + sorted((SESSIONS / "adversarial").glob("*.jsonl"))
        + sorted((SESSIONS / "real").glob("*.jsonl"))
        + sorted((SESSIONS / "real-2").glob("*.jsonl"))
    )


def telemetry(log: Path) -> list[dict]:
    rows = []
    for line in log.read_text(encoding="utf-8").splitlines():
        found = TELEMETRY.search(line)
        if found:
            row = json.loads(found.group(1))
            rows.append({k: v for k, v in sorted(row.items()) if k not in TIMING and not k.endswith("_ms")})
    return rows


def run(session: Path, mode: str, work: Path) -> dict:
    out, log = work / f"{session.stem}.{mode}.out.jsonl", work / f"{session.stem}.{mode}.log"
    limit = "32768" if session.parent.name.startswith("real") else "8192"
    args = ["compact", str(session), "--mode", mode, "--context-limit", limit]
    with contextlib.redirect_stdout(io.StringIO()):
        code = cli([*args, "--out", str(out), "--log", str(log), "--no-progress"])
    transcript = out.read_text(encoding="utf-8") if out.exists() else ""
    messages = [json.loads(line) for line in transcript.splitlines() if line.strip()]
    return {
        "exit": code,
        "transcript_sha256": hashlib.sha256(transcript.encode()).hexdigest(),
        "summary": last_summary(messages),
        "telemetry": telemetry(log) if log.exists() else [],
    }


# Hermes's batch prompt in its shape (a template of headings over bracketed placeholders after the
# turns): a prompt without placeholders is no compaction request, and the provider would hand it
# to the model to write 1,500 tokens freely (5 minutes a session on 2 cores)
BATCH_PROMPT = (
    "Create a structured checkpoint summary for the conversation after earlier turns are compacted.\n\n"
    "TURNS TO SUMMARIZE:\n{turns}\n\nUse this exact structure:\n\n"
    "## Goal\n[What the user is trying to accomplish]\n\n## Progress\n[What was done, with outcomes]\n\n"
    "## Next Steps\n[What remains]\n\nTarget ~900 tokens."
)


def exchanges(messages: list[dict]) -> list[list[dict]]:
    """The assistant-and-tool runs between user messages: what Hermes's micro pass folds, one each."""
    runs, current = [], []
    for message in messages:
        if message.get("role") in ("assistant", "tool"):
            current.append(message)
        elif current:
            runs.append(current)
            current = []
    return runs + ([current] if current else [])


def through_provider(session: Path) -> dict:
    from hermes_mlx.compactor.sessions import load_session
    from hermes_mlx.integrations.hermes_prompts import micro_prompt
    from hermes_mlx.integrations.hermes_wire import hermes_serialize
    from hermes_mlx.integrations.provider import MLXClient

    client = MLXClient()

    def ask(messages: list[dict]) -> str:
        reply = client.chat.completions.create(
            model="hermes-mlx-default", messages=messages, max_tokens=1500, temperature=0.1
        )
        return reply.choices[0].message.content

    messages = load_session(session)
    summary, micro = None, []
    for exchange in exchanges(messages):
        summary = ask(micro_prompt(summary, hermes_serialize(exchange))) or summary
        micro.append(hashlib.sha256((summary or "").encode()).hexdigest())
    batch = ask([{"role": "user", "content": BATCH_PROMPT.format(turns=hermes_serialize(messages))}])
    return {
        "micro": micro,
        "summary": summary or "",
        "batch_sha256": hashlib.sha256(batch.encode()).hexdigest(),
        "batch": batch,
    }


def explain(key: str, before: dict | None, after: dict | None) -> list[str]:
    """What changed in one run: its summary's lines lost (-) and gained (+), the telemetry fields
    that differ, and the exit status."""
    if before is None or after is None:
        return [f"  {'new run' if before is None else 'run gone'}"]
    out = []
    if before.get("exit") != after.get("exit"):
        out.append(f"  exit {before.get('exit')} -> {after.get('exit')}")
    for field in ("summary", "batch"):
        old, new = (before.get(field) or "").splitlines(), (after.get(field) or "").splitlines()
        diff = [
            ln
            for ln in difflib.unified_diff(old, new, lineterm="", n=0)
            if ln[:1] in "+-" and ln[:3] not in ("+++", "---")
        ]
        out += [f"  {field} {ln[:1]} {ln[1:][:200]}" for ln in diff]
    rows_before, rows_after = before.get("telemetry") or [], after.get("telemetry") or []
    if len(rows_before) != len(rows_after):
        out.append(f"  passes {len(rows_before)} -> {len(rows_after)}")
    for i, (a, b) in enumerate(zip(rows_before, rows_after)):
        fields = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        out += [f"  pass {i + 1} {k}: {a.get(k)!r} -> {b.get(k)!r}" for k in fields]
    if not out and before.get("micro") != after.get("micro"):
        out.append("  an intermediate rolling summary differs (the last one is the same)")
    if not out:
        out.append("  the transcript differs outside the summary (kept messages)")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--against", type=Path, help="an earlier snapshot to compare with")
    parser.add_argument("--only", help="substring of the session names to run")
    options = parser.parse_args(argv)
    snapshot = {}
    with tempfile.TemporaryDirectory() as tmp:
        for session in sessions():
            if options.only and options.only not in session.name:
                continue
            for mode in ("micro", "batch"):
                key = f"{session.parent.name}/{session.stem}:{mode}"
                snapshot[key] = run(session, mode, Path(tmp))
                print(key, snapshot[key]["exit"], len(snapshot[key]["telemetry"]), "passes", flush=True)
            if not session.parent.name.startswith("real"):
                key = f"{session.parent.name}/{session.stem}:provider"
                snapshot[key] = through_provider(session)
                print(key, len(snapshot[key]["micro"]), "micro requests, 1 batch", flush=True)
    options.out.write_text(json.dumps(snapshot, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    if not options.against:
        return 0
    before = json.loads(options.against.read_text(encoding="utf-8"))
    changed = [k for k in sorted(set(before) | set(snapshot)) if before.get(k) != snapshot.get(k)]
    for key in changed:
        print("changed:", key)
        print("\n".join(explain(key, before.get(key), snapshot.get(key))))
    print(f"{len(snapshot)} runs, {len(changed)} changed")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
