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

from hermes_mlx.compactor.sessions import SessionFormatError

_PACKAGED = Path(__file__).resolve().parent / "sessions"  # a wheel's package data
_CHECKOUT = Path(__file__).resolve().parents[2] / "benchmarks" / "sessions"  # a source checkout
SESSIONS_DIR = _PACKAGED if _PACKAGED.is_dir() else _CHECKOUT
ADVERSARIAL_DIR = SESSIONS_DIR / "adversarial"


def shipped_sessions(directory: str | Path | None = None) -> list[Path]:
    """The recorded sessions in `directory` (default: the shipped set; empty if absent)."""
    d = Path(directory) if directory is not None else SESSIONS_DIR
    return sorted(d.glob("*.jsonl")) if d.is_dir() else []


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

    KEEP = ("paths", "commands", "errors", "urls", "identifiers", "decisions")

    def must_keep(self) -> list[tuple[str, str]]:
        """(category, fact) pairs that should survive compaction."""
        return [(cat, fact) for cat in self.KEEP for fact in getattr(self, cat)]

    def all_facts(self) -> list[tuple[str, str]]:
        return [(f.name, fact) for f in fields(self) for fact in getattr(self, f.name)]


def load_facts(path: str | Path) -> SessionFacts:
    """Read `NAME.facts.yaml`: a mapping of category -> list of exact strings."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SessionFormatError(f"{path}: cannot read facts file: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise SessionFormatError(f"{path}: invalid YAML: {exc}") from exc
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


def facts_path(session_path: str | Path) -> Path:
    """`x/NAME.jsonl` -> `x/NAME.facts.yaml`."""
    p = Path(session_path)
    stem = p.name[: -len(".jsonl")] if p.name.endswith(".jsonl") else p.stem
    return p.with_name(stem + ".facts.yaml")
