"""Fidelity of compaction: does what the agent reads after compaction still tell the truth?

Each session is replayed through the real summarizer (micro, or batch with a final forced pass)
and its last summary is scored against everything the session said up to then: planted facts
kept (summary or live context, `context_fidelity`), faithfulness (the share of narrative lines
the source supports, by the same rules the gate applies to model lines), contradictions (a
narrative line stating a user constraint with its polarity flipped), invented names and numbers
(anywhere in the summary), and the gate's own counts over every pass.

All of the bench's fidelity scoring is here: `hermes-mlx bench` writes `context_fidelity` of its
uncontended replay, and `summary_fidelity` of the mlx_lm.server baseline, beside its timings.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from hermes_mlx.bench.agents import real_window, removed_pct
from hermes_mlx.bench.harness import Replay, last_summary
from hermes_mlx.bench.hygiene import hygiene
from hermes_mlx.bench.shipped import ADVERSARIAL_DIR, load_with_facts, reference_summary, shipped_sessions
from hermes_mlx.compactor.batch import BatchCompactor
from hermes_mlx.compactor.markers import is_marker
from hermes_mlx.compactor.replay import replay
from hermes_mlx.compactor.settings import CompactorSettings
from hermes_mlx.summarizer.api import Message
from hermes_mlx.summarizer.budget import hermes_tokens
from hermes_mlx.summarizer.extract import find_paths
from hermes_mlx.summarizer.faithful import (
    REASONS,
    STOCK_STEMS,
    Source,
    clauses,
    content_stems,
    directive_shaped,
    negated,
    polarity_flip,
    tally,
    unsupported_parts,
)
from hermes_mlx.summarizer.redact import redact
from hermes_mlx.summarizer.summary import parse
from hermes_mlx.summarizer.text import normalize, source_text
from hermes_mlx.summarizer.workfolder import absolute, rooted

# what render() writes around verbatim entries: counts and exit statuses are ours, not claims
_FORMATTING = re.compile(
    r"\(\+\d+ more (?:lines|tool calls)\)|\(\d+ more earlier steps condensed\)|… and \d+ more error lines?|"
    r"\bexit [\d?→ -]+|^#+ .*$|\[REDACTED[^\]]*\]",
    re.MULTILINE,
)
_NAME_OR_NUMBER = re.compile(
    r"(?<![\w.])\d+(?:\.\d+)*(?![\w])|\b[A-Za-z][\w]*(?:[_.][\w]+)+\b|\b[A-Z][A-Z0-9]{2,}(?:_[A-Z0-9]+)*\b"
    r"|\b[a-z]+[A-Z]\w*\b"
)


def default_sessions() -> list[Path]:
    """The shipped recorded sessions and the adversarial set."""
    return shipped_sessions() + shipped_sessions(ADVERSARIAL_DIR)


class Recording:
    """Wraps a summarizer: every SummaryResult it returns is kept (gate counts, timings)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.results: list = []

    def _keep(self, result):
        self.results.append(result)
        return result

    # arguments pass through as given: the compactors' calls and the summarizer's signature
    # change together, and the recording must not stand between them
    def merge(self, *args, **kwargs):
        return self._keep(self.inner.merge(*args, **kwargs))

    def update(self, *args, **kwargs):
        return self._keep(self.inner.update(*args, **kwargs))

    def defrag(self, *args, **kwargs):
        return self._keep(self.inner.defrag(*args, **kwargs))

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def run_session(
    messages: list[Message],
    summarizer,
    *,
    mode: str = "micro",
    context_limit: int = 32768,
    tail_tokens: int | None = None,
    session_id: str = "",
    summary_budget_tokens: int | None = None,
) -> Replay:
    """Replay one session; batch mode ends with a forced pass so every session gets a batch
    summary (the `/compress` path), as a short session never crosses the threshold. A small
    `tail_tokens` lets short sessions' exchanges reach the summarizer at all; a batch summary's
    budget is Hermes's for the span unless `summary_budget_tokens` says."""
    rec = Recording(summarizer)
    settings = CompactorSettings(
        context_limit=context_limit,
        session_id=session_id,
        tail_tokens=tail_tokens,
        summary_budget_tokens=summary_budget_tokens,
    )
    result = replay(messages, rec, mode=mode, settings=settings)
    live = result.messages
    failures = [f"{r.outcome}: {r.error}" for r in result.records if r.error]
    if mode == "batch":
        forced = BatchCompactor(rec, settings).compact(live, force=True)
        live = forced.messages
        if forced.error:
            failures.append(f"{forced.outcome}: {forced.error}")
    return Replay(
        summary=last_summary(live), messages=live, seen=result.original, results=rec.results, failures=failures
    )


def leaked(secret: str, text: str, window: int = 16) -> bool:
    """A secret leaks when any 16 characters of it in a row do: a model copies secrets cut short."""
    n = min(window, len(secret))
    return n > 0 and any(secret[i : i + n] in text for i in range(len(secret) - n + 1))


def as_read(summary: str) -> str:
    """The summary as its reader takes it: a path Files lists relative to the working folder it
    states is also that folder's whole path, so a fact naming the whole path
    (`/home/marco/projects/spotter/plan.md`) is kept by `Working folder: ...` and `plan.md`."""
    led = parse(summary).ledger
    whole = [absolute(p, led.root) for p in led.files if led.root and not rooted(p)]
    return summary + ("\n" + "\n".join(whole) if whole else "")


def summary_fidelity(summary: str, seen_text: str, facts) -> dict:
    """What a summary alone carries: planted facts seen that it keeps, paths in it that appear
    nowhere in what it was made from (invented), secrets it leaks. Baseline (b) keeps only this."""
    present = [f for _, f in facts.must_keep() if f in seen_text] if facts else []
    read = as_read(summary)
    return {
        "facts_seen": len(present),
        "kept_in_summary": sum(f in read for f in present),
        "invented_paths": [p for p in find_paths(summary) if p not in seen_text],
        "secrets_leaked": [s for s in (facts.secrets if facts else []) if leaked(s, summary)],
        "summary_chars": len(summary),
    }


def context_fidelity(replay: Replay, facts) -> dict:
    """Ours after the last pass: `summary_fidelity`, plus `context`: facts of the session so far
    still in what the agent sees (summary plus live messages; "nothing lost"), and `absorbed`:
    facts whose every message was folded away, so only the summary can carry them."""
    from hermes_mlx.integrations.hermes_wire import hermes_serialize

    seen, summary = hermes_serialize(replay.seen), replay.summary
    row = summary_fidelity(summary, seen, facts)
    live = hermes_serialize([m for m in replay.messages if not is_marker(m)])
    present = [f for _, f in facts.must_keep() if f in seen] if facts else []
    absorbed = [f for f in present if f not in live]
    read = as_read(summary)
    in_context = [f for f in present if f in live or f in read]
    return {
        **row,
        "facts_in_context": len(in_context),
        "context_survival_pct": round(100 * len(in_context) / len(present), 1) if present else None,
        "facts_absorbed": len(absorbed),
        "absorbed_kept_in_summary": sum(f in read for f in absorbed),
        "absorbed_kept_verbatim": sum(f in summary for f in absorbed),  # plain substring, no path joined
        "lost": [f for f in present if f not in in_context],
    }


def narrative_lines(summary: str) -> list[str]:
    """The summary's lines that are not verbatim ledger entries: goal and narrative sections."""
    s = parse(summary)
    return [x for x in [s.goal, *s.progress, *s.decisions, *s.questions, *s.remaining] if x and x.strip()]


def unsupported_lines(lines: list[str], src: Source) -> list[str]:
    """Lines with a word, name or number the source lacks, or a clause of flipped polarity."""
    out = []
    for line in lines:
        line = line.removeprefix("(earlier) ")
        if line in src.text:
            continue
        missing, _ = unsupported_parts(line, src)
        if missing or polarity_flip(line, src):
            out.append(line)
    return out


def constraints_of(seen: list[Message], facts) -> list[str]:
    """User constraints: the planted decisions, and every directive-shaped user sentence."""
    out = list(getattr(facts, "decisions", None) or [])
    for t in normalize(seen):
        if t.role == "user":
            out += [s for s in re.split(r"(?<=[.!?])\s+|\n+", t.text) if directive_shaped(s) and s not in out]
    return out


def contradictions(lines: list[str], constraints: list[str], source: str = "") -> list[tuple[str, str]]:
    """(line, constraint) pairs where a clause of a summary line restates a constraint clause
    (two words in common, two thirds of its fact words) with the opposite polarity. Lines copied
    verbatim from the session (`source`) are what someone said there, not the summary's claims."""
    claims = [(line, [(content_stems(c), negated(c)) for c in clauses(line)]) for line in lines if line not in source]
    out = []
    for c in constraints:
        for stems, neg in Source.of(c).clauses:
            facts = stems - STOCK_STEMS
            for line, parts in claims:
                hit = any(
                    len(mine & stems) >= 2 and 3 * len(mine & facts) >= 2 * len(facts) and mine_neg != neg
                    for mine, mine_neg in parts
                )
                if hit and line not in c and (line, c) not in out:
                    out.append((line, c))
    return out


def invented(summary: str, seen_text: str) -> list[str]:
    """Names (dotted, snake_case, camelCase, ALL_CAPS) and numbers in the summary that the
    session never contains, matched whole: a near-copy (one extra letter) counts."""
    body = _FORMATTING.sub(" ", summary)
    out = []
    for tok in _NAME_OR_NUMBER.findall(body):
        tok = tok.rstrip(".")
        if tok and not re.search(r"(?<![\w])" + re.escape(tok) + r"(?![\w])", seen_text) and tok not in out:
            out.append(tok)
    return out


@dataclass
class SessionScore:
    session: str
    mode: str
    passes: int
    facts_seen: int
    facts_kept: int
    lost: list
    lines: int
    unsupported: list
    contradictions: list
    invented: list
    directives_outside: list
    secrets_leaked: list
    gate: dict
    pass_s: list = field(default_factory=list)
    # facts whose every message compaction removed: only the summary can carry them
    stake: int = 0
    stake_kept: int = 0
    stake_kept_verbatim: int = 0  # the same by plain substring (a path relative to the folder stated misses)
    summary_tokens: int = 0
    reference_facts: int | None = None  # of all the session's facts, in the agent's own summary
    reference_tokens: int | None = None
    summary_facts: int = 0  # of all the session's facts, in ours (compare with the reference)
    context_limit: int = 0  # the window the session ran at
    removed_pct: float | None = None  # the share of the session's tokens compaction removed
    failures: list = field(default_factory=list)  # "outcome: reason" of each pass that failed
    hygiene: dict = field(default_factory=dict)  # hygiene.HYGIENE's offending lines (all empty: clean)

    @property
    def faithful_pct(self) -> float | None:
        return round(100 * (self.lines - len(self.unsupported)) / self.lines, 1) if self.lines else None

    @property
    def gate_keep_pct(self) -> float | None:
        total = self.gate.get("kept", 0) + sum(self.gate.get("dropped", {}).values())
        return round(100 * self.gate.get("kept", 0) / total, 1) if total else None

    def to_dict(self) -> dict:
        d = dict(self.__dict__)
        d.update(
            faithful_pct=self.faithful_pct,
            gate_keep_pct=self.gate_keep_pct,
            pass_s_p50=round(statistics.median(self.pass_s), 2) if self.pass_s else None,
            pass_s_total=round(sum(self.pass_s), 2),
        )
        d["contradictions"] = [{"line": a, "constraint": b} for a, b in self.contradictions]
        return d


def score(
    name: str, mode: str, run: Replay, facts, reference: str | None = None, context_limit: int = 0
) -> SessionScore:
    seen_turns = normalize(run.seen)
    seen_text = source_text(seen_turns)
    raw = "\n".join(str(m.get("content") or "") for m in run.seen) + "\n" + seen_text
    ctx = context_fidelity(run, facts)
    lines = narrative_lines(run.summary)
    gate: dict = {"kept": 0, "dropped": {r: 0 for r in REASONS}, "replaced": 0}
    for r in run.results:
        tally(gate, (getattr(r, "details", None) or {}).get("gate") or {})
    return SessionScore(
        session=name,
        mode=mode,
        passes=len(run.results),
        facts_seen=ctx["facts_seen"],
        facts_kept=ctx["facts_in_context"],
        lost=ctx["lost"],
        lines=len(lines),
        unsupported=unsupported_lines(lines, Source.of(seen_text)),
        contradictions=contradictions(lines, constraints_of(run.seen, facts), seen_text),
        invented=invented(run.summary, raw + "\n" + redact(raw)),
        directives_outside=[x for x in lines if directive_shaped(x)],
        secrets_leaked=ctx["secrets_leaked"],
        gate=gate,
        pass_s=[round(r.duration_s, 3) for r in run.results],
        stake=ctx["facts_absorbed"],
        stake_kept=ctx["absorbed_kept_in_summary"],
        stake_kept_verbatim=ctx["absorbed_kept_verbatim"],
        summary_tokens=hermes_tokens(run.summary),
        reference_facts=sum(f in reference for _, f in facts.must_keep()) if reference and facts else None,
        reference_tokens=hermes_tokens(reference) if reference else None,
        summary_facts=sum(f in as_read(run.summary) for _, f in facts.must_keep()) if facts else 0,
        context_limit=context_limit,
        hygiene=hygiene(run.summary, run.seen),
        removed_pct=removed_pct(run.seen, [m for m in run.messages if not is_marker(m)]),
        failures=list(run.failures),
    )


def score_session(
    path: Path, summarizer, *, mode: str = "micro", context_limit: int | None = 32768, tail_tokens: int | None = None
) -> SessionScore:
    """Replay the session at `path` with `summarizer` and score its last summary: against the
    facts file beside it, if any, and the agent's own summary at the same cut, if the session
    has one. `context_limit=None` is the real sessions' rule (`agents.real_window`: half the
    session's tokens). SessionFormatError or TranscriptError for a session that cannot be replayed."""
    session = load_with_facts(path)
    window = context_limit or real_window(session.messages)
    run = run_session(
        session.messages,
        summarizer,
        mode=mode,
        context_limit=window,
        tail_tokens=tail_tokens,
        session_id=path.stem,
    )
    return score(path.stem, mode, run, session.facts, reference_summary(path), window)


def table(scores: list[SessionScore]) -> str:
    """The text report: one row a session, then what each row's counts stand for."""
    header = (
        "session",
        "mode",
        "window",
        "removed",
        "passes",
        "facts kept",
        "at stake kept",
        "summary facts/tok",
        "reference facts/tok",
        "faithful",
        "contradicted",
        "invented",
        "gate kept",
        "pass p50 s",
    )
    rows = [header]
    for s in scores:
        d = s.to_dict()
        rows.append(
            (
                s.session,
                s.mode,
                str(s.context_limit or "-"),
                "-" if s.removed_pct is None else f"{s.removed_pct:.0f}%",
                str(s.passes) + (f" ({len(s.failures)} failed)" if s.failures else ""),
                f"{s.facts_kept}/{s.facts_seen}",
                f"{s.stake_kept}/{s.stake}",
                f"{s.summary_facts}/{s.summary_tokens}",
                "-" if s.reference_tokens is None else f"{s.reference_facts}/{s.reference_tokens}",
                "-" if s.faithful_pct is None else f"{s.faithful_pct:.0f}% of {s.lines}",
                str(len(s.contradictions)),
                str(len(s.invented)),
                "-" if s.gate_keep_pct is None else f"{s.gate_keep_pct:.0f}%",
                "-" if d["pass_s_p50"] is None else f"{d['pass_s_p50']:.1f}",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    out = ["  ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip() for r in rows]
    out.insert(1, "  ".join("-" * w for w in widths))
    for s in scores:
        notes = [f"  lost: {x}" for x in s.lost] + [f"  unsupported: {x}" for x in s.unsupported]
        notes += [f"  contradicts {c!r}: {x}" for x, c in s.contradictions] + [f"  invented: {x}" for x in s.invented]
        notes += [f"  directive outside constraints: {x}" for x in s.directives_outside]
        notes += [f"  secret leaked: {x[:6]}…" for x in s.secrets_leaked]
        notes += [f"  pass failed: {x}" for x in dict.fromkeys(s.failures)]
        if notes:
            out += ["", f"{s.session} ({s.mode}):", *notes]
    return "\n".join(out)
