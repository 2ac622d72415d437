"""Every private Hermes name hermes-mlx leans on, probed once, each with its way out.

Hermes moves fast and its `_names` are not an interface: upstream main has already split
`_aux_progress` into another module and reports version 0.21.3 (0.0.0 from an unstamped checkout)
while carrying 0.22's features. So no code of ours reaches for a private name directly: it asks
`find(seam)` here, which looks the name up in each place Hermes has kept it (first found wins),
once per process, and says what we do without it; a missing seam is logged once. `doctor` reads
the same table from Hermes's sources without importing Hermes (`from_sources`), and registration
checks the features instead of a version pin (`plugin.yaml` has none).
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import re
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

logger = logging.getLogger("hermes_mlx.integrations")


@dataclass(frozen=True)
class Seam:
    """One Hermes name we use: the places it lives ("module:attr", first found wins), why we
    need it, and what happens when none of them has it."""

    name: str
    places: tuple[str, ...]
    used_for: str
    when_missing: str


# name -> Seam. A new private name we use is one row here, and `find` is the only way to reach it.
SEAMS: dict[str, Seam] = {
    s.name: s
    for s in (
        Seam(
            "aux_progress",
            (
                "agent.auxiliary_client:_aux_progress",  # 0.22 fork; upstream re-exports it here
                "agent.auxiliary_progress:_aux_progress",
                "agent.auxiliary_client:_notify_aux_progress",  # the tick itself, where the local moved
            ),
            "engine batch passes tick Hermes's compression idle deadline once per folded chunk",
            "no ticks: a batch longer than compression.context_timeout_seconds (120 s) is abandoned; "
            "raise that setting",
        ),
        Seam(
            "micro_start_watermark",
            ("agent.micro_compaction:MicroCompactionMixin._micro_start_watermark",),
            "engine micro passes read the session store's watermark before summarizing",
            "the pass commits without a watermark (Hermes's own behaviour on a store without one)",
        ),
        Seam(
            "sync_micro_compact_to_db",
            ("agent.micro_compaction:MicroCompactionMixin._sync_micro_compact_to_db",),
            "engine micro passes commit the rewritten transcript to Hermes's session DB",
            "engine micro passes are skipped when a session DB is bound (batch passes still run)",
        ),
        Seam(
            "rolling_summary_from_marker",
            ("agent.micro_compaction:MicroCompactionMixin._rolling_summary_from_marker",),
            "the provider's compute-ahead hook reads the rolling summary out of Hermes's marker",
            "our own marker reader is used (compactor/markers.py)",
        ),
        Seam(
            "serialize_for_summary",
            ("agent.context_compressor:ContextCompressor._serialize_for_summary",),
            "the compute-ahead hook writes the next exchange exactly as Hermes will",
            "no micro pass is computed ahead (each pass is answered when Hermes asks)",
        ),
        Seam(
            "build_micro_summary_prompt",
            ("agent.micro_compaction:MicroCompactionMixin._build_micro_summary_prompt",),
            "the compute-ahead hook builds the next micro request byte for byte",
            "no micro pass is computed ahead",
        ),
        Seam(
            "micro_compact_hook",
            ("agent.turn_finalizer:_micro_compact_after_turn",),
            "Hermes's turn finalizer calls an engine's `_micro_compact` (context engine micro passes)",
            "the context engine compacts in batch only, at the threshold",
        ),
        Seam(
            "feasibility_check",
            ("agent.conversation_compression:check_compression_model_feasibility",),
            "doctor runs Hermes's own compression-model window check on a stand-in agent",
            "doctor skips that check",
        ),
    )
}

_found: dict[str, Any] = {}
_logged: set[str] = set()
_lock = threading.Lock()
_MISSING = object()


def _lookup(place: str) -> Any:
    module_name, _, path = place.partition(":")
    try:
        value: Any = importlib.import_module(module_name)
    except Exception:
        return _MISSING
    for part in path.split("."):
        value = getattr(value, part, _MISSING)
        if value is _MISSING:
            return _MISSING
    return value


def find(name: str) -> tuple[Any, str | None]:
    """(the object, the place it was found) for a seam, or (None, None) when this Hermes has it
    nowhere; looked up once per process, and a missing one is logged once with its way out."""
    seam = SEAMS[name]
    with _lock:
        if name not in _found:
            _found[name] = next(
                ((value, place) for place in seam.places if (value := _lookup(place)) is not _MISSING), (None, None)
            )
        found = _found[name]
        if found[1] is None and name not in _logged:
            _logged.add(name)
            logger.warning("hermes-mlx: this Hermes has no %s (%s); %s", seam.name, seam.used_for, seam.when_missing)
    return found


def forget() -> None:
    """Probe again on the next `find` (tests, or a Hermes imported after the first probe)."""
    with _lock:
        _found.clear()
        _logged.clear()


def _module_source(module_name: str) -> str | None:
    loaded = sys.modules.get(module_name)
    try:
        spec = importlib.util.find_spec(module_name) if loaded is None else loaded.__spec__
    except (ImportError, ValueError):
        return None
    origin = getattr(spec, "origin", None)
    if not origin or not origin.endswith(".py"):
        return None
    try:
        return Path(origin).read_text(errors="replace")
    except OSError:
        return None


def _defined_in_source(place: str) -> bool:
    module_name, _, path = place.partition(":")
    source = _module_source(module_name)
    if source is None:
        return False
    leaf = re.escape(path.split(".")[-1])
    return re.search(rf"^\s*(?:async\s+def|def|class)\s+{leaf}\b|^\s*{leaf}\s*[:=]", source, re.M) is not None


def from_sources() -> dict[str, dict]:
    """What doctor says: for each seam, where this Hermes defines it (read from its sources,
    Hermes is not imported) and what we do when it does not."""
    report = {}
    for seam in SEAMS.values():
        place = next((p for p in seam.places if _defined_in_source(p)), None)
        report[seam.name] = {
            "found": place,
            "used_for": seam.used_for,
            **({} if place else {"then": seam.when_missing}),
        }
    return report


def registration_check() -> list[str]:
    """At registration, instead of a version pin: the seams this Hermes lacks, each logged once
    with what we do without it. Reads Hermes's sources (importing its modules while its plugin
    loader runs could cycle); registration goes on whatever the answer, and nothing here raises."""
    try:
        missing = [name for name, row in from_sources().items() if not row["found"]]
    except Exception as exc:  # a check, never a reason to fail registration
        logger.info("hermes-mlx: could not read Hermes's sources for its seams: %s", exc)
        return []
    for name in missing:
        with _lock:
            if name in _logged:
                continue
            _logged.add(name)
        seam = SEAMS[name]
        logger.warning("hermes-mlx: this Hermes has no %s (%s); %s", seam.name, seam.used_for, seam.when_missing)
    return missing


__all__ = ["SEAMS", "Seam", "find", "forget", "from_sources", "registration_check"]
