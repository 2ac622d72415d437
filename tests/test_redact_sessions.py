"""Redaction loses no fact of the shipped sessions, and catches every secret planted in them.

The summary must keep commit hashes, ids, paths, commands and test names verbatim, so a rule
that redacts too much costs facts silently. Every fact listed for the benchmark sessions
(benchmarks/sessions/*.facts.yaml, adversarial/, the real agent sessions' real/*.facts.json and,
where it exists, /work/shared/real-sessions-2)
must come out of redact() unchanged and must still be in the session's text once each message
is redacted as the summarizer redacts it; the facts listed under `secrets` must be gone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_mlx.bench.shipped import load_facts
from hermes_mlx.summarizer.redact import redact
from hermes_mlx.summarizer.text import to_text

SESSIONS = Path(__file__).resolve().parent.parent / "benchmarks" / "sessions"
FACT_FILES = sorted([*SESSIONS.glob("*.facts.*"), *SESSIONS.glob("*/*.facts.*")])
# The second real corpus, where this machine has it (it is being copied to sessions/real-2/).
SHARED = Path("/work/shared/real-sessions-2")
SHARED_FILES = sorted(SHARED.glob("*.facts.json")) if SHARED.is_dir() else []


def session_texts(facts_file: Path) -> list[str]:
    """Each message's content and each tool call's arguments, as the summarizer reads them."""
    session = facts_file.parent / (facts_file.name.split(".facts")[0] + ".jsonl")
    texts = []
    for line in session.read_text(encoding="utf-8").splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict):
            continue
        texts.append(to_text(msg.get("content")))
        for c in msg.get("tool_calls") or []:
            if isinstance(c, dict) and isinstance(c.get("function"), dict):
                texts.append(str(c["function"].get("arguments") or ""))
    return texts


def test_every_session_has_its_facts():
    assert len(FACT_FILES) >= 15
    assert any(p.parent.name == "real" for p in FACT_FILES)


@pytest.mark.parametrize("facts_file", FACT_FILES + SHARED_FILES, ids=lambda p: p.name.split(".facts")[0])
def test_redaction_keeps_every_fact_and_no_secret(facts_file):
    facts = load_facts(facts_file)
    raw = session_texts(facts_file)
    redacted = "\n".join(redact(t) for t in raw)
    raw_text = "\n".join(raw)
    changed = [f for _, f in facts.all_facts() if f not in facts.secrets and redact(f) != f]
    assert not changed, f"redact() changes facts: {changed[:5]}"
    lost = [f for _, f in facts.must_keep() if f in raw_text and f not in redacted]
    assert not lost, f"facts lost to redaction in context: {lost[:5]}"
    kept = [s for s in facts.secrets if s in redacted]
    assert not kept, f"planted secrets left: {kept}"
