"""The recorded sessions shipped for the bench, and their planted-facts files.

A session `NAME.jsonl` may have a `NAME.facts.yaml` beside it: what a compaction must keep and
what it must never repeat. Only the bench and its fidelity scoring read these, so they live here.
The sessions sit in `benchmarks/sessions/` of a source checkout and are installed as package
data (`hermes_mlx/bench/sessions/`) by a wheel, so `hermes-mlx bench --quick` works after a
regular `pip install`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path

import yaml

from hermes_mlx.compactor.sessions import SessionFormatError, load_session
from hermes_mlx.summarizer.api import Message

_PACKAGED = Path(__file__).resolve().parent / "sessions"  # a wheel's package data
_CHECKOUT = Path(__file__).resolve().parents[2] / "benchmarks" / "sessions"  # a source checkout
SESSIONS_DIR = _PACKAGED if _PACKAGED.is_dir() else _CHECKOUT
ADVERSARIAL_DIR = SESSIONS_DIR / "adversarial"
REAL_DIR = SESSIONS_DIR / "real"  # sessions real agents wrote (MIT), with fact lists in JSON
# the second real corpus (seven more agents; MIT and Apache-2.0): `real-2` in a checkout, and
# `real_2` in a wheel, whose package names cannot hold a hyphen
REAL2_DIR = SESSIONS_DIR / ("real_2" if SESSIONS_DIR == _PACKAGED else "real-2")


def shipped_sessions(directory: str | Path | None = None) -> list[Path]:
    """The recorded sessions in `directory` (default: the shipped set; empty if absent)."""
    d = Path(directory) if directory is not None else SESSIONS_DIR
    return sorted(d.glob("*.jsonl")) if d.is_dir() else []


def example_names() -> list[str]:
    """The names `hermes-mlx compact --example NAME` takes: the real sessions shipped here."""
    return [p.name[: -len(".jsonl")] for p in shipped_sessions(REAL_DIR)]


def example_session(name: str) -> Path | None:
    """The shipped real session called `name` (no folders, no suffix), or None. Looked up by
    name so the README's main command runs the same from a wheel as from a checkout."""
    return REAL_DIR / f"{name}.jsonl" if name in example_names() else None


@dataclass
class SessionFacts:
    """What a compaction of a recorded session must keep, and what it must never repeat."""

    paths: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    identifiers: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list)  # must NOT appear in any summary
    injections: list[str] = field(default_factory=list)  # planted instructions, never to follow
    # the real sessions' fact kinds that the planted ones lack
    requests: list[str] = field(default_factory=list)  # the user's request, verbatim
    agent_decisions: list[str] = field(default_factory=list)  # the agent's choices with their reason
    outcomes: list[str] = field(default_factory=list)  # test counts, commit lines, closed tasks
    next_steps: list[str] = field(default_factory=list)  # work the session leaves open

    KEEP = (
        "paths",
        "commands",
        "errors",
        "urls",
        "identifiers",
        "decisions",
        "requests",
        "agent_decisions",
        "outcomes",
        "next_steps",
    )

    def must_keep(self) -> list[tuple[str, str]]:
        """(category, fact) pairs that should survive compaction."""
        return [(cat, fact) for cat in self.KEEP for fact in getattr(self, cat)]

    def all_facts(self) -> list[tuple[str, str]]:
        return [(f.name, fact) for f in fields(self) for fact in getattr(self, f.name)]


# `NAME.facts.json` (the real sessions): {"facts": [{"kind", "text"}]}, kinds to our categories
JSON_KINDS = {
    "user_request": "requests",
    "file": "paths",
    "command": "commands",
    "error": "errors",
    "identifier": "identifiers",
    "decision": "agent_decisions",
    "outcome": "outcomes",
    "next_step": "next_steps",
}


def load_facts(path: str | Path) -> SessionFacts:
    """Read `NAME.facts.yaml` (a mapping of category -> list of exact strings) or `NAME.facts.json`."""
    path = Path(path)
    if path.suffix == ".json":
        return _load_json_facts(path)
    try:
        data = yaml.safe_load(_facts_text(path))
    except yaml.YAMLError as exc:
        raise SessionFormatError(f"{path}: invalid YAML: {exc}") from exc
    except RecursionError:
        raise SessionFormatError(f"{path}: nested too deeply to be a facts file") from None
    if not isinstance(data, dict):
        raise SessionFormatError(f"{path}: expected a mapping of category -> list of strings")
    known = {f.name for f in fields(SessionFacts)}
    values: dict[str, list[str]] = {}
    for key, items in data.items():
        if key not in known:
            raise SessionFormatError(f"{path}: unknown category {key!r} (known: {', '.join(sorted(known))})")
        if items is None:
            items = []
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise SessionFormatError(f"{path}: {key!r} must be a list of strings")
        values[key] = items
    return SessionFacts(**values)


def _facts_text(path: Path) -> str:
    """A facts file's text; SessionFormatError naming the file when it cannot be read as UTF-8."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SessionFormatError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise SessionFormatError(f"{path}: cannot read facts file: {exc.strerror or exc}") from exc


def _load_json_facts(path: Path) -> SessionFacts:
    import json

    text = _facts_text(path)
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SessionFormatError(f"{path}: invalid JSON: {exc}") from exc
    except RecursionError:
        raise SessionFormatError(f"{path}: nested too deeply to be a facts file") from None
    items = data.get("facts") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise SessionFormatError(f'{path}: expected {{"facts": [{{"kind", "text"}}, ...]}}')
    out = SessionFacts()
    for item in items:
        kind = JSON_KINDS.get(item.get("kind")) if isinstance(item, dict) else None
        if kind is None or not isinstance(item.get("text"), str):
            raise SessionFormatError(f"{path}: bad fact {item!r} (kinds: {', '.join(JSON_KINDS)})")
        getattr(out, kind).append(item["text"])
    return out


def facts_path(session_path: str | Path) -> Path:
    """`x/NAME.jsonl` -> `x/NAME.facts.yaml`, or `x/NAME.facts.json` where only that exists."""
    p = Path(session_path)
    stem = p.name[: -len(".jsonl")] if p.name.endswith(".jsonl") else p.stem
    yaml_path = p.with_name(stem + ".facts.yaml")
    json_path = p.with_name(stem + ".facts.json")
    return json_path if json_path.is_file() and not yaml_path.is_file() else yaml_path


@dataclass
class Session:
    """A recorded session, and its facts when a facts file sits beside it."""

    path: Path
    messages: list[Message]
    facts: SessionFacts | None


def load_with_facts(path: str | Path, session_id: str | None = None) -> Session:
    """The session at `path` (`session_id` picks one of a Hermes state.db) with the facts file
    beside it, if any; SessionFormatError names the file and the fault."""
    path = Path(path)  # load_session refuses what is no regular file (/dev/zero), before the facts
    fp = facts_path(path)
    return Session(path, load_session(path, session_id), load_facts(fp) if fp.is_file() else None)


def reference_summary(session_path: str | Path) -> str | None:
    """The summary the session's own agent wrote at the same cut (`NAME.reference_summary.txt`), if any."""
    p = Path(session_path)
    stem = p.name[: -len(".jsonl")] if p.name.endswith(".jsonl") else p.stem
    ref = p.with_name(stem + ".reference_summary.txt")
    return ref.read_text(encoding="utf-8") if ref.is_file() else None
