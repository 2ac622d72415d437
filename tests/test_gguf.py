"""GGUF -> MLX converter on synthetic GGUFs written the way llama.cpp writes them.

A tiny random llama (tests/tiny.py) is exported to GGUF with the `gguf` package: names mapped,
Q/K rows permuted like llama.cpp's converter, tensors quantized to Q8_0 / Q4_1 / Q4_0 where asked.
Converting back must give the original model: same logits (exactly for F32, closely when quantized).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

import mlx.core as mx  # noqa: E402
from tiny import build_tiny_model  # noqa: E402

from hermes_mlx.engine.errors import CorruptModel, UnsupportedModel  # noqa: E402
from hermes_mlx.engine.gguf import convert_gguf, read_gguf, unpermute_rows  # noqa: E402

Q = gguf.GGMLQuantizationType


def permute_rows(w, n_head: int):
    """llama.cpp's own permutation (HF order -> GGUF order): the engine only undoes it, a GGUF
    built here needs it done."""
    rows = w.shape[0]
    rest = tuple(w.shape[1:])
    return w.reshape(n_head, 2, rows // n_head // 2, *rest).swapaxes(1, 2).reshape(w.shape)


_BLOCK = {
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
    "input_layernorm": "attn_norm",
    "post_attention_layernorm": "ffn_norm",
}
PROBE = "The quick brown fox 0123456789 def main(): return 0\t tabs  and   spaces"


def gguf_name(hf: str) -> str:
    if hf == "model.embed_tokens.weight":
        return "token_embd.weight"
    if hf == "model.norm.weight":
        return "output_norm.weight"
    if hf == "lm_head.weight":
        return "output.weight"
    _, _, layer, rest = hf.split(".", 3)
    module = rest[: -len(".weight")]
    return f"blk.{layer}.{_BLOCK[module]}.weight"


def write_gguf(
    model_dir: Path,
    out: Path,
    *,
    types: dict[str, Q] | None = None,
    arch: str = "llama",
    pre: str = "gpt2",
    permute: bool = True,
    extra_tensors: dict[str, tuple[np.ndarray, Q]] | None = None,
) -> Path:
    """Export a tiny HF-layout llama folder as a llama.cpp-style GGUF.

    `types` maps GGUF tensor names (or "*" for every 2-D weight) to a quantization type.
    """
    config = json.loads((model_dir / "config.json").read_text())
    tok = json.loads((model_dir / "tokenizer.json").read_text())
    tok_cfg = json.loads((model_dir / "tokenizer_config.json").read_text())
    vocab = sorted(tok["model"]["vocab"].items(), key=lambda kv: kv[1])
    tokens = [t for t, _ in vocab]
    special = {a["content"] for a in tok["added_tokens"] if a["special"]}
    merges = [m if isinstance(m, str) else " ".join(m) for m in tok["model"]["merges"]]
    types = types or {}

    w = gguf.GGUFWriter(str(out), arch)
    p = arch
    w.add_uint32(f"{p}.embedding_length", config["hidden_size"])
    w.add_uint32(f"{p}.block_count", config["num_hidden_layers"])
    w.add_uint32(f"{p}.feed_forward_length", config["intermediate_size"])
    w.add_uint32(f"{p}.attention.head_count", config["num_attention_heads"])
    w.add_uint32(f"{p}.attention.head_count_kv", config["num_key_value_heads"])
    w.add_float32(f"{p}.attention.layer_norm_rms_epsilon", config["rms_norm_eps"])
    w.add_float32(f"{p}.rope.freq_base", config["rope_theta"])
    w.add_uint32(f"{p}.context_length", config["max_position_embeddings"])
    w.add_uint32(f"{p}.vocab_size", len(tokens))
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_merges(merges)
    w.add_token_types([3 if t in special else 1 for t in tokens])
    w.add_eos_token_id(tokens.index(tok_cfg["eos_token"]))
    w.add_bool("tokenizer.ggml.add_bos_token", False)
    w.add_chat_template(tok_cfg["chat_template"])

    weights = {k: np.array(v.astype(mx.float32)) for k, v in mx.load(str(model_dir / "model.safetensors")).items()}
    for hf, arr in weights.items():
        name = gguf_name(hf)
        if permute and ".attn_q." in name:
            arr = permute_rows(arr, config["num_attention_heads"])
        elif permute and ".attn_k." in name:
            arr = permute_rows(arr, config["num_key_value_heads"])
        qtype = types.get(name, types.get("*") if arr.ndim == 2 else None)
        if qtype is None or qtype == Q.F32:
            w.add_tensor(name, np.ascontiguousarray(arr, dtype=np.float32))
        else:
            w.add_tensor(name, gguf.quants.quantize(np.ascontiguousarray(arr), qtype), raw_dtype=qtype)
    for name, (arr, qtype) in (extra_tensors or {}).items():
        w.add_tensor(name, arr, raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return out


def logits(folder: Path, text: str = PROBE) -> np.ndarray:
    from mlx_lm import load

    model, tokenizer = load(str(folder))
    ids = tokenizer.encode(text)
    return np.array(model(mx.array([ids]))[0].astype(mx.float32))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", seed=3)


def test_unpermute_inverts_llama_cpp_permute():
    for n_head, rows, cols in [(4, 64, 16), (2, 32, 5), (9, 576, 3)]:
        w = np.arange(rows * cols).reshape(rows, cols)
        permuted = permute_rows(w, n_head)
        assert not np.array_equal(permuted, w)
        assert np.array_equal(unpermute_rows(permuted, n_head), w)
        assert np.array_equal(np.array(unpermute_rows(mx.array(permuted), n_head)), w)


def test_f32_roundtrip_gives_identical_model(tiny, tmp_path):
    path = write_gguf(tiny, tmp_path / "m.gguf")
    out = convert_gguf(path, tmp_path / "out")
    config = json.loads((out / "config.json").read_text())
    assert "quantization" not in config
    assert config["tie_word_embeddings"] is True
    assert config["eos_token_id"] == 2
    np.testing.assert_allclose(logits(out), logits(tiny), atol=1e-4)


def test_conversion_without_unpermute_would_be_wrong(tiny, tmp_path):
    # Guard for the test above: skipping the permutation must visibly change the model.
    path = write_gguf(tiny, tmp_path / "m.gguf", permute=False)
    out = convert_gguf(path, tmp_path / "out")
    assert not np.allclose(logits(out), logits(tiny), atol=1e-2)


def test_quantized_tensors_stay_quantized_and_unpermuted(tiny, tmp_path):
    types = {"*": Q.Q4_1, "token_embd.weight": Q.Q8_0, "blk.1.ffn_up.weight": Q.Q4_0}
    out = convert_gguf(write_gguf(tiny, tmp_path / "m.gguf", types=types), tmp_path / "out")
    config = json.loads((out / "config.json").read_text())
    assert config["quantization"] == {
        "group_size": 32,
        "bits": 4,
        "model.embed_tokens": {"group_size": 32, "bits": 8},
    }
    saved = mx.load(str(out / "model.safetensors"))
    original = mx.load(str(tiny / "model.safetensors"))
    for module, bits in [
        ("model.layers.0.self_attn.q_proj", 4),
        ("model.layers.1.self_attn.k_proj", 4),
        ("model.layers.1.mlp.up_proj", 4),
        ("model.embed_tokens", 8),
    ]:
        assert saved[f"{module}.weight"].dtype == mx.uint32
        restored = mx.dequantize(
            saved[f"{module}.weight"], saved[f"{module}.scales"], saved[f"{module}.biases"], group_size=32, bits=bits
        )
        ref = original[f"{module}.weight"]
        # Within quantization error only if weights, scales and biases were all put back in place.
        step = (mx.max(ref) - mx.min(ref)).item() / (2**bits - 1)
        assert mx.max(mx.abs(restored - ref)).item() <= step
    a, b = logits(out).ravel(), logits(tiny).ravel()
    assert np.corrcoef(a, b)[0, 1] > 0.99


def test_tokenizer_matches_original_and_keeps_specials(tiny, tmp_path):
    from tokenizers import Tokenizer

    out = convert_gguf(write_gguf(tiny, tmp_path / "m.gguf"), tmp_path / "out")
    ours = Tokenizer.from_file(str(out / "tokenizer.json"))
    ref = Tokenizer.from_file(str(tiny / "tokenizer.json"))
    text = "<|im_start|>user\n" + PROBE + "  \t\n<|im_end|>"
    assert ours.encode(text).ids == ref.encode(text).ids
    assert ours.encode("<|im_start|>").ids == [ref.token_to_id("<|im_start|>")]
    assert ours.decode(ours.encode(PROBE).ids) == PROBE
    cfg = json.loads((out / "tokenizer_config.json").read_text())
    assert cfg["eos_token"] == "<|im_end|>"
    assert "<|im_start|>" in cfg["chat_template"]


def test_smollm_pre_tokenizer_splits_digits(tiny, tmp_path):
    from tokenizers import Tokenizer

    out = convert_gguf(write_gguf(tiny, tmp_path / "m.gguf", pre="smollm"), tmp_path / "out")
    tok = Tokenizer.from_file(str(out / "tokenizer.json"))
    assert tok.encode("12345").tokens == ["1", "2", "3", "4", "5"]


def test_k_quant_tensor_is_named(tiny, tmp_path):
    bad = np.zeros((2, 144), dtype=np.uint8)  # two Q4_K blocks of 256 values
    path = write_gguf(tiny, tmp_path / "m.gguf", extra_tensors={"blk.0.ffn_extra.weight": (bad, Q.Q4_K)})
    with pytest.raises(UnsupportedModel, match=r"blk\.0\.ffn_extra\.weight' is Q4_K"):
        convert_gguf(path, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_other_architecture_is_named(tiny, tmp_path):
    path = write_gguf(tiny, tmp_path / "m.gguf", arch="qwen2")
    with pytest.raises(UnsupportedModel, match="architecture 'qwen2'"):
        convert_gguf(path, tmp_path / "out")


def test_unknown_tensor_and_pre_tokenizer_are_named(tiny, tmp_path):
    freqs = np.ones(8, dtype=np.float32)
    path = write_gguf(tiny, tmp_path / "a.gguf", extra_tensors={"rope_freqs.weight": (freqs, Q.F32)})
    with pytest.raises(UnsupportedModel, match="rope_freqs"):
        convert_gguf(path, tmp_path / "out")
    path = write_gguf(tiny, tmp_path / "b.gguf", pre="qwen2")
    with pytest.raises(UnsupportedModel, match="pre-tokenizer 'qwen2'"):
        convert_gguf(path, tmp_path / "out")


def test_truncated_and_foreign_files_are_corrupt(tiny, tmp_path):
    path = write_gguf(tiny, tmp_path / "m.gguf")
    data = path.read_bytes()
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(data[: len(data) - 1000])
    with pytest.raises(CorruptModel, match="truncated"):
        convert_gguf(cut, tmp_path / "out")
    cut.write_bytes(data[:5000])  # ends inside the header
    with pytest.raises(CorruptModel, match="truncated"):
        read_gguf(cut)
    foreign = tmp_path / "x.gguf"
    foreign.write_bytes(b"PK\x03\x04" + bytes(100))
    with pytest.raises(CorruptModel, match="not a GGUF file"):
        convert_gguf(foreign, tmp_path / "out")
    with pytest.raises(CorruptModel, match="no such GGUF file"):
        read_gguf(tmp_path / "missing.gguf")


def test_header_reader_reports_types_and_shapes(tiny, tmp_path):
    header = read_gguf(write_gguf(tiny, tmp_path / "m.gguf", types={"*": Q.Q8_0}))
    by_name = {t.name: t for t in header.tensors}
    assert header.metadata["general.architecture"] == "llama"
    assert by_name["blk.0.attn_q.weight"].type_name == "Q8_0"
    assert by_name["blk.0.attn_q.weight"].shape == (64, 64)
    assert by_name["output_norm.weight"].type_name == "F32"
