"""The process-wide warm model cache: load once, reuse, unload when idle or over budget.

Only the worker thread calls into `ModelCache` (that is what makes "loading twice at once
loads once" hold: the second request finds the model the first one loaded). Tokenizers are
cached apart, behind a lock, so callers can count tokens without waiting for the worker.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_mlx.engine.prompt_cache import PromptCache, budget_bytes, env_float

log = logging.getLogger(__name__)

DEFAULT_IDLE_UNLOAD_S = 900.0
DEFAULT_MEMORY_BUDGET_MB = 8192.0
DEFAULT_CONTEXT = 4096
CPU_PREFILL_STEP = 256


@dataclass
class LoadedModel:
    name: str
    path: Path
    model: Any
    tokenizer: Any
    config: dict
    context_window: int
    load_s: float
    nbytes: int
    weights: str  # what the weights became: "float32 (dequantized for CPU)", "4-bit as stored", ...
    prefill_step: int = 2048  # prompt tokens per forward pass while reading the prompt
    last_used: float = field(default_factory=time.monotonic)


def read_config(path: Path) -> dict:
    return json.loads((path / "config.json").read_text())


def context_window(config: dict) -> int:
    for key in ("max_position_embeddings", "max_sequence_length", "n_positions", "seq_length"):
        if isinstance(config.get(key), int):
            return config[key]
    text = config.get("text_config") or {}
    return int(text.get("max_position_embeddings", DEFAULT_CONTEXT))


def on_cpu() -> bool:
    import mlx.core as mx

    return mx.default_device().type == mx.DeviceType.cpu


def fit_for_device(model: Any, budget_bytes: float) -> str:
    """On a CPU, make the weights what this CPU runs fastest; leave Metal alone.

    Measured on x86 CPUs: dense float32 through OpenBLAS beats MLX's quantized matmul ~8x,
    and float16 quantization scales are ~45x slower than float32 ones. So small models are
    dequantized to float32; models too big for that keep 4-bit weights with float32 scales.
    """
    import mlx.core as mx
    import mlx.nn as nn
    from mlx.utils import tree_flatten, tree_map
    from mlx_lm.utils import dequantize_model

    if not on_cpu():
        return "as stored (Metal)"
    quantized = any(isinstance(m, (nn.QuantizedLinear, nn.QuantizedEmbedding)) for m in model.modules())
    n_params = sum(v.size for k, v in tree_flatten(model.parameters()) if not k.endswith(("scales", "biases")))

    def to32(x):
        return x.astype(mx.float32) if x.dtype in (mx.float16, mx.bfloat16) else x

    model.update(tree_map(to32, model.parameters()))  # float32 scales first: dequantizes faster too
    if quantized:
        bits = {getattr(m, "bits", 4) for m in model.modules() if hasattr(m, "bits")}
        dense_bytes = 4 * n_params * (32 / max(bits))  # packed uint32 holds 32/bits weights
        if dense_bytes > budget_bytes / 2:
            mx.eval(model.parameters())
            return "quantized, float32 scales (too big to dequantize)"
        dequantize_model(model)
    mx.eval(model.parameters())
    return "float32 (dequantized for CPU)" if quantized else "float32"


def model_nbytes(model: Any) -> int:
    from mlx.utils import tree_flatten

    return sum(v.nbytes for _, v in tree_flatten(model.parameters()))


class ModelCache:
    def __init__(self) -> None:
        self.models: dict[str, LoadedModel] = {}
        self.idle_unload_s = env_float("HERMES_MLX_IDLE_UNLOAD_S", DEFAULT_IDLE_UNLOAD_S)
        self.memory_budget_mb = env_float("HERMES_MLX_MEMORY_BUDGET_MB", DEFAULT_MEMORY_BUDGET_MB)
        self.loads = 0  # how many loads ran, for tests and telemetry
        self.prompts = PromptCache(budget_bytes(self.memory_budget_mb))  # prefixes, per model
        self.on_unload: list[Callable[[str], None]] = []  # told each unloaded model's key

    def get(self, key: str, path: Path) -> tuple[LoadedModel, float]:
        """The loaded model and the seconds this call spent loading it (0 when warm)."""
        loaded = self.models.get(key)
        if loaded is not None:
            loaded.last_used = time.monotonic()
            return loaded, 0.0
        loaded = self._load(key, path)
        self._evict_over_budget(keep=key)
        return loaded, loaded.load_s

    def _load(self, key: str, path: Path) -> LoadedModel:
        import mlx.core as mx
        from mlx_lm import load

        from hermes_mlx.engine.errors import CorruptModel

        start = time.perf_counter()
        try:
            model, tokenizer, config = load(str(path), return_config=True)
        except Exception as exc:
            raise CorruptModel(f"could not load model '{key}' from {path}: {exc}") from exc
        weights = fit_for_device(model, self.memory_budget_mb * 1e6)
        mx.clear_cache()
        loaded = LoadedModel(
            name=key,
            path=path,
            model=model,
            tokenizer=tokenizer,
            config=config,
            context_window=context_window(config),
            load_s=time.perf_counter() - start,
            nbytes=model_nbytes(model),
            weights=weights,
            # On CPUs, 256-token steps read a 1,600-token prompt ~1.5x faster than mlx-lm's
            # 2,048 (the attention scores stay in cache); Metal keeps mlx-lm's default.
            prefill_step=CPU_PREFILL_STEP if on_cpu() else 2048,
        )
        self.models[key] = loaded
        self.loads += 1
        self._fit_to_warm()
        log.info("hermes-mlx: loaded %s in %.2fs (%s, %.0f MB)", key, loaded.load_s, weights, loaded.nbytes / 1e6)
        return loaded

    def _fit_to_warm(self) -> None:
        """Size the prompt caches to what is warm and, on Metal, keep that resident (weights and
        prompt caches' budget)."""
        from hermes_mlx.engine import residency

        model_bytes = sum(m.nbytes for m in self.models.values())
        self.prompts.max_bytes = budget_bytes(self.memory_budget_mb, model_bytes)  # the next insert trims
        residency.wire(model_bytes, self.prompts.max_bytes if model_bytes else 0, int(self.memory_budget_mb * 1e6))

    def _evict_over_budget(self, keep: str) -> None:
        budget = self.memory_budget_mb * 1e6
        while sum(m.nbytes for m in self.models.values()) > budget and len(self.models) > 1:
            victim = min((m for m in self.models.values() if m.name != keep), key=lambda m: m.last_used)
            self.unload(victim.name, why="memory budget")

    def evict_idle(self) -> None:
        now = time.monotonic()
        for loaded in list(self.models.values()):
            if now - loaded.last_used >= self.idle_unload_s:
                self.unload(loaded.name, why="idle")

    def unload(self, key: str, why: str = "asked") -> None:
        if self.models.pop(key, None) is None:
            return
        self.prompts.drop(key)
        for hook in self.on_unload:
            hook(key)
        self._fit_to_warm()  # after the hooks: the batcher has closed its generator; nothing warm releases
        import mlx.core as mx

        mx.clear_cache()
        log.info("hermes-mlx: unloaded %s (%s)", key, why)


class TokenizerCache:
    """Tokenizers without the weights, for counting tokens on the caller's thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokenizers: dict[str, Any] = {}

    def get(self, key: str, path: Path) -> Any:
        with self._lock:
            tokenizer = self._tokenizers.get(key)
            if tokenizer is None:
                from mlx_lm.utils import load_tokenizer

                config = read_config(path)
                tokenizer = load_tokenizer(path, eos_token_ids=config.get("eos_token_id"))
                self._tokenizers[key] = tokenizer
            return tokenizer
