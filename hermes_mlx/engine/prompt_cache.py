"""Prefix caches for many sessions: mlx-lm's LRUPromptCache, one per warm model, bounded in bytes.

A single "last prompt" cache lets two alternating sessions evict each other's prefix on every
request. mlx-lm's LRUPromptCache keeps many prefixes in a token trie and hands back a private
copy of the nearest one (trimmed to what the new prompt shares), so each session keeps its own
reuse until memory runs short; then the least recently stored entries go first.

Only the engine's worker thread fetches and inserts; `stats()` may be read from any thread.
"""

from __future__ import annotations

import logging
import math
import os
from dataclasses import asdict, dataclass
from typing import Any

PROMPT_CACHE_ENV = "HERMES_MLX_PROMPT_CACHE_MB"
PROMPT_CACHE_SHARE = 1 / 8  # of the engine memory budget, when the env does not say
WEIGHTS_SHARE = 0.5  # and at most this share of the warm weights (8 sessions' peak stays ~1.5x one's)
MIN_MB = 64.0  # but never less: a very small model still keeps a few prefixes
MAX_ENTRIES = 256  # the byte budget is what binds; this only caps the trie's bookkeeping

log = logging.getLogger(__name__)


def env_float(name: str, default: float) -> float:
    """A number from the environment. A malformed one ("512MB") falls back to the default with a
    warning: these are read when the engine is imported, and an error there breaks the plugin."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        log.warning("hermes-mlx: %s=%r is not a number; using %s", name, raw, default)
        return default
    return value


def budget_bytes(memory_budget_mb: float, weights_bytes: int = 0) -> int:
    """HERMES_MLX_PROMPT_CACHE_MB, else a share of the engine memory budget and, once models are
    warm, at most half their weights. A compaction prompt shares only its template with other
    sessions' prompts, so most of an entry is one session's own text: measured on the 135M model
    (a ~30 MB entry a pass), 8 sessions at once filled 500 MB of entries for the same reuse as 250."""
    default = memory_budget_mb * PROMPT_CACHE_SHARE
    if weights_bytes > 0:
        default = min(default, max(MIN_MB, weights_bytes * WEIGHTS_SHARE / 1e6))
    mb = env_float(PROMPT_CACHE_ENV, default)
    return max(0, int(mb * 1e6))


def _lru(max_bytes: int) -> Any:
    """An LRUPromptCache that counts its evictions: it drops entries for its budget through
    CacheOrder.pop and says nothing, so the pops are counted (prefixes superseded by a longer
    entry leave another way and are not evictions). MLX is imported here, on first use."""
    from mlx_lm.models.cache import LRUPromptCache

    class CountingOrder(LRUPromptCache.CacheOrder):
        popped = 0

        def pop(self):
            self.popped += 1
            return super().pop()

    lru = LRUPromptCache(max_size=MAX_ENTRIES, max_bytes=max_bytes)
    lru._lru = CountingOrder()
    return lru


@dataclass
class PromptCacheStats:
    hits: int  # requests that reused at least one cached token
    misses: int  # requests that read their whole prompt
    evictions: int  # entries dropped to stay within the budget
    bytes: int  # held now, all models together
    entries: int
    budget_bytes: int

    def to_dict(self) -> dict:
        return asdict(self)


class PromptCache:
    """The engine's prefix caches: one LRUPromptCache per warm model, all within one byte budget."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._lrus: dict[str, Any] = {}  # model key -> mlx_lm LRUPromptCache
        self.hits = self.misses = 0
        self._evicted_gone = 0  # evictions counted in caches since dropped with their model

    def fetch(self, key: str, model: Any, tokens: list[int]) -> tuple[list, int]:
        """A private cache for `tokens` and how many of them it already holds (at most all but
        the last: that one must run to give the next token's logits). Counts a hit or a miss."""
        from mlx_lm.models.cache import make_prompt_cache, trim_prompt_cache

        cache, cached = None, 0
        lru = self._lrus.get(key)
        if lru is not None and len(tokens) > 1:
            cache, rest = lru.fetch_nearest_cache(key, tokens)
            if cache is not None:
                cached = len(tokens) - len(rest)
                if cached >= len(tokens):  # an exact entry: step back one token
                    cached = len(tokens) - 1 if trim_prompt_cache(cache, 1) == 1 else 0
                if cached <= 0 or not _holds(cache, cached):
                    cache, cached = None, 0
        if cache is None:
            cache = make_prompt_cache(model)
        if cached > 0:
            self.hits += 1
        else:
            self.misses += 1
        return cache, cached

    def insert(self, key: str, tokens: list[int], cache: list) -> None:
        """Keep `cache`, which holds exactly `tokens`, for later requests; evict to the budget."""
        if not tokens or not _holds(cache, len(tokens)):
            return
        lru = self._lrus.get(key)
        if lru is None:
            lru = self._lrus[key] = _lru(self.max_bytes)
        lru.max_bytes = self.max_bytes  # the budget may have been changed since
        lru.insert_cache(key, list(tokens), cache)
        over = self.nbytes - self.max_bytes
        for other_key, other in list(self._lrus.items()):  # other models' entries pay for this one
            if over <= 0:
                break
            if other_key != key and len(other):
                before = other.nbytes
                other.trim_to(n_bytes=max(0, before - over))
                over -= before - other.nbytes

    def drop(self, key: str) -> None:
        """Forget a model's entries (it was unloaded: they only hold memory now)."""
        lru = self._lrus.pop(key, None)
        if lru is not None:
            self._evicted_gone += lru._lru.popped

    @property
    def nbytes(self) -> int:
        return sum(lru.nbytes for lru in list(self._lrus.values()))

    def stats(self) -> PromptCacheStats:
        lrus = list(self._lrus.values())
        return PromptCacheStats(
            hits=self.hits,
            misses=self.misses,
            evictions=self._evicted_gone + sum(lru._lru.popped for lru in lrus),
            bytes=sum(lru.nbytes for lru in lrus),
            entries=sum(len(lru) for lru in lrus),
            budget_bytes=self.max_bytes,
        )


def _holds(cache: list, n: int) -> bool:
    """The cache holds `n` tokens (caches that do not count tokens are taken at their word)."""
    from mlx_lm.models.cache import can_trim_prompt_cache

    if not can_trim_prompt_cache(cache):
        return True
    offset = getattr(cache[0], "offset", n)
    return isinstance(offset, int) and offset == n
