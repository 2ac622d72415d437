"""Keep the warm model resident on Apple Silicon, so a pass after a pause does not fault it back in.

On Metal, macOS may page out GPU memory that sat unused for a while; the next pass then waits for
the weights to come back. `mx.set_wired_limit` asks the OS to keep that much memory resident, so
while a model is warm we wire its weights plus the prompt caches' budget (bounded by the engine's
memory budget and by the device's recommended working set, which is also the most macOS allows),
and we unwire on unload so an idle server holds nothing down. On a CPU there is nothing to wire.

mlx-lm's own helpers wire the whole recommended working set and later restore the limit they
found: stream_generate around one generation (which composes with ours), BatchGenerator from its
creation until close(). Generators that overlap restore each other's stale values, so whoever
creates or closes one calls `reassert()` afterwards to put our limit back.

Plain functions over one module-level record; the engine calls them from its worker thread and
`status()` may be read from any thread.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

log = logging.getLogger(__name__)

_lock = threading.Lock()
_wired: dict[str, Any] = {}  # what wire() last set: limit, model_bytes, cache_bytes, budget_bytes, max_recommended


def on_metal() -> bool:
    """Metal is there and MLX computes on it (a Mac run with the CPU as default wires nothing)."""
    import mlx.core as mx

    try:
        return bool(mx.metal.is_available()) and mx.default_device().type == mx.DeviceType.gpu
    except Exception:
        return False


def max_recommended() -> int | None:
    """The device's recommended working set in bytes (also the largest wired limit macOS takes)."""
    import mlx.core as mx

    info = getattr(mx, "device_info", None) or getattr(mx.metal, "device_info", None)
    try:
        size = info().get("max_recommended_working_set_size") if info else None
    except Exception:
        return None
    return int(size) if size else None


def plan(model_bytes: int, cache_bytes: int, budget_bytes: int, recommended: int | None) -> int:
    """The limit to wire: weights plus prompt caches, no more than the memory budget nor the
    device's recommended working set."""
    want = max(0, model_bytes) + max(0, cache_bytes)
    caps = [c for c in (budget_bytes, recommended) if c is not None and c > 0]
    return min([want, *caps])


def wire(model_bytes: int, cache_bytes: int, budget_bytes: int) -> int:
    """Wire the warm models' memory (`model_bytes`: all warm weights together); returns the limit
    set, 0 on a CPU, with nothing warm, or when the OS refused. Call again after every load and
    unload that leaves a model warm: each call replaces the last."""
    if model_bytes <= 0:
        release()
        return 0
    if not on_metal():
        return 0
    import mlx.core as mx

    recommended = max_recommended()
    limit = plan(model_bytes, cache_bytes, budget_bytes, recommended)
    with _lock:
        try:
            mx.set_wired_limit(limit)
        except Exception as exc:  # over the system's wired limit, or an old macOS: run unwired
            log.warning("hermes-mlx: could not wire %.0f MB: %s", limit / 1e6, exc)
            _wired.clear()
            _wired["error"] = str(exc)
            return 0
        _wired.clear()
        _wired.update(
            limit=limit,
            model_bytes=model_bytes,
            cache_bytes=cache_bytes,
            budget_bytes=budget_bytes,
            max_recommended=recommended,
        )
    log.info("hermes-mlx: wired %.0f MB (weights %.0f MB + prompt caches)", limit / 1e6, model_bytes / 1e6)
    return limit


def release() -> None:
    """Unwire: nothing warm should hold memory down."""
    with _lock:
        if not _wired.get("limit"):
            _wired.clear()
            return
        import mlx.core as mx

        try:
            mx.set_wired_limit(0)
        except Exception as exc:
            log.warning("hermes-mlx: could not release the wired limit: %s", exc)
        _wired.clear()
    log.info("hermes-mlx: released the wired limit")


def reassert() -> int:
    """Set our limit again (0 when nothing is wired); returns it. For after mlx-lm changed it."""
    if not on_metal():
        return 0
    import mlx.core as mx

    with _lock:
        limit = _wired.get("limit", 0)
        try:
            mx.set_wired_limit(limit)
        except Exception as exc:
            log.warning("hermes-mlx: could not set the wired limit back to %.0f MB: %s", limit / 1e6, exc)
    return limit


def status() -> dict:
    """What is wired now, for `doctor` and the bench's idle-gap probe."""
    with _lock:
        wired = dict(_wired)
    metal = on_metal()
    out: dict[str, Any] = {"device": "metal" if metal else "cpu", "wired_bytes": wired.get("limit", 0)}
    if metal:
        out["max_recommended"] = wired.get("max_recommended") or max_recommended()
        for key in ("model_bytes", "cache_bytes", "budget_bytes", "error"):
            if key in wired:
                out[key] = wired[key]
    return out


def describe(found: dict) -> str:
    """`status()` as doctor's one line."""
    if found.get("device") != "metal":
        return "n/a on CPU"
    if found.get("error"):
        return f"nothing (the OS refused: {found['error']})"
    cap = (
        f"; the device recommends at most {found['max_recommended'] / 1e9:.1f} GB"
        if found.get("max_recommended")
        else ""
    )
    if not found.get("wired_bytes"):
        return f"nothing (no model warm){cap}"
    return (
        f"{found['wired_bytes'] / 1e9:.2f} GB (weights {found.get('model_bytes', 0) / 1e9:.2f} GB"
        f" + prompt caches {found.get('cache_bytes', 0) / 1e9:.2f} GB){cap}"
    )
