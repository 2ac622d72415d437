"""GGUF (llama.cpp) -> mlx-lm model folder, for the llama architecture.

Weights come from `mx.load`, which already repacks GGUF Q4_0 / Q4_1 / Q8_0 blocks into MLX's
affine quantized layout (group size 32), so they stay quantized. What `mx.load` does not do is
undo llama.cpp's interleaving of the Q/K rows (its converter reorders them for its own RoPE
kernel), rename tensors, write a config, or build a tokenizer; that is this module's job.

We read the GGUF header ourselves first: it is cheap, gives metadata as plain Python values, and
lets us name the exact tensor and type we cannot convert before `mx.load` fails with a generic error.
"""

from __future__ import annotations

import json
import mmap
import re
import struct
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_mlx.engine.errors import CorruptModel, UnsupportedModel

GROUP_SIZE = 32  # every legacy GGUF quant (Q4_0, Q4_1, Q8_0) uses blocks of 32

# ggml type id -> (name, elements per block, bytes per block); sizes only where we need them.
GGML_TYPES: dict[int, tuple[str, int, int]] = {
    0: ("F32", 1, 4),
    1: ("F16", 1, 2),
    2: ("Q4_0", 32, 18),
    3: ("Q4_1", 32, 20),
    6: ("Q5_0", 32, 22),
    7: ("Q5_1", 32, 24),
    8: ("Q8_0", 32, 34),
    9: ("Q8_1", 32, 36),
    10: ("Q2_K", 256, 84),
    11: ("Q3_K", 256, 110),
    12: ("Q4_K", 256, 144),
    13: ("Q5_K", 256, 176),
    14: ("Q6_K", 256, 210),
    15: ("Q8_K", 256, 292),
    16: ("IQ2_XXS", 256, 66),
    17: ("IQ2_XS", 256, 74),
    18: ("IQ3_XXS", 256, 98),
    19: ("IQ1_S", 256, 50),
    20: ("IQ4_NL", 32, 18),
    21: ("IQ3_S", 256, 110),
    22: ("IQ2_S", 256, 82),
    23: ("IQ4_XS", 256, 136),
    24: ("I8", 1, 1),
    25: ("I16", 1, 2),
    26: ("I32", 1, 4),
    27: ("I64", 1, 8),
    28: ("F64", 1, 8),
    29: ("IQ1_M", 256, 56),
    30: ("BF16", 1, 2),
    34: ("TQ1_0", 256, 54),
    35: ("TQ2_0", 256, 66),
    39: ("MXFP4", 32, 17),
}
CONVERTIBLE_TYPES = ("F32", "F16", "Q4_0", "Q4_1", "Q8_0")

_SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9

# GGUF tensor names -> mlx-lm llama names.
_GLOBAL_NAMES = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head"}
_BLOCK_NAMES = {
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
    "attn_norm": "input_layernorm",
    "ffn_norm": "post_attention_layernorm",
}
_TENSOR_RE = re.compile(r"^(?:blk\.(\d+)\.)?(\w+)\.(weight|scales|biases)$")

# llama.cpp token types (tokenizer.ggml.token_type)
_CONTROL, _USER_DEFINED = 3, 4


@dataclass
class GGUFTensor:
    name: str
    shape: tuple[int, ...]  # numpy order (outermost first), the reverse of GGUF's ne[]
    type_name: str
    offset: int  # from the start of the data section
    nbytes: int | None  # None for types whose block size we do not know


@dataclass
class GGUFHeader:
    version: int
    metadata: dict[str, Any]
    tensors: list[GGUFTensor] = field(default_factory=list)
    data_offset: int = 0
    file_size: int = 0


class _Reader:
    def __init__(self, buf: mmap.mmap, path: Path):
        self.buf, self.pos, self.path = buf, 0, path

    def take(self, fmt: str):
        try:
            (value,) = struct.unpack_from(fmt, self.buf, self.pos)
        except struct.error:
            raise CorruptModel(f"{self.path}: GGUF header ends early at byte {self.pos} (truncated file?)") from None
        self.pos += struct.calcsize(fmt)
        return value

    def string(self) -> str:
        n = self.take("<Q")
        if self.pos + n > len(self.buf):
            raise CorruptModel(f"{self.path}: GGUF header ends early at byte {self.pos} (truncated file?)")
        raw = self.buf[self.pos : self.pos + n]
        self.pos += n
        return raw.decode("utf-8", errors="replace")

    def value(self, vtype: int):
        if vtype == _STRING:
            return self.string()
        if vtype == _ARRAY:
            etype, n = self.take("<I"), self.take("<Q")
            if etype in _SCALAR and etype != 7:
                import numpy as np

                width = struct.calcsize(_SCALAR[etype])
                if self.pos + n * width > len(self.buf):
                    raise CorruptModel(f"{self.path}: GGUF header ends early at byte {self.pos} (truncated file?)")
                arr = np.frombuffer(self.buf, dtype=_SCALAR[etype], count=n, offset=self.pos).tolist()
                self.pos += n * width
                return arr
            return [self.value(etype) for _ in range(n)]
        if vtype not in _SCALAR:
            raise CorruptModel(f"{self.path}: unknown GGUF metadata value type {vtype} at byte {self.pos}")
        return self.take(_SCALAR[vtype])


def read_gguf(path: str | Path) -> GGUFHeader:
    """Parse a GGUF header (metadata and tensor table) without touching the tensor data."""
    path = Path(path)
    if not path.is_file():
        raise CorruptModel(f"{path}: no such GGUF file")
    with open(path, "rb") as f:
        size = path.stat().st_size
        if size < 24:
            raise CorruptModel(f"{path}: {size} bytes is too small to be a GGUF file")
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            if buf[:4] != b"GGUF":
                raise CorruptModel(f"{path}: not a GGUF file (magic {bytes(buf[:4])!r}, expected b'GGUF')")
            r = _Reader(buf, path)
            r.pos = 4
            version = r.take("<I")
            if version not in (2, 3):
                raise UnsupportedModel(f"{path}: GGUF version {version}; only versions 2 and 3 are read")
            n_tensors, n_kv = r.take("<Q"), r.take("<Q")
            metadata: dict[str, Any] = {}
            for _ in range(n_kv):
                key = r.string()
                metadata[key] = r.value(r.take("<I"))
            tensors = []
            for _ in range(n_tensors):
                name = r.string()
                dims = [r.take("<Q") for _ in range(r.take("<I"))]
                type_id, offset = r.take("<I"), r.take("<Q")
                type_name, block, block_bytes = GGML_TYPES.get(type_id, (f"ggml type {type_id}", 0, 0))
                count = 1
                for d in dims:
                    count *= d
                nbytes = count // block * block_bytes if block else None
                tensors.append(GGUFTensor(name, tuple(reversed(dims)), type_name, offset, nbytes))
            align = int(metadata.get("general.alignment", 32))
            data_offset = -(-r.pos // align) * align
    header = GGUFHeader(version, metadata, tensors, data_offset, size)
    for t in tensors:
        if t.nbytes is not None and data_offset + t.offset + t.nbytes > size:
            raise CorruptModel(
                f"{path}: tensor {t.name} ends at byte {data_offset + t.offset + t.nbytes} "
                f"but the file has {size} bytes (truncated download?)"
            )
    return header


def mlx_name(gguf_name: str) -> str:
    """Map a GGUF tensor name (as `mx.load` returns it) to the mlx-lm llama parameter name."""
    m = _TENSOR_RE.match(gguf_name)
    if m:
        layer, base, suffix = m.groups()
        if layer is None and base in _GLOBAL_NAMES:
            return f"{_GLOBAL_NAMES[base]}.{suffix}"
        if layer is not None and base in _BLOCK_NAMES:
            return f"model.layers.{layer}.{_BLOCK_NAMES[base]}.{suffix}"
    hint = " (Llama 3 style rope scaling)" if gguf_name.startswith("rope_freqs") else ""
    raise UnsupportedModel(f"GGUF tensor '{gguf_name}'{hint} has no llama counterpart; cannot convert it")


def unpermute_rows(w, n_head: int):
    """Invert llama.cpp's `LlamaModel.permute` on the output rows (works for weights, scales, biases).

    llama.cpp stores each head's rows interleaved (pairs i, i+half side by side) for its RoPE;
    mlx-lm's RoPE expects HF's order (first half, then second half).
    """
    rows = w.shape[0]
    if rows % (2 * n_head):
        raise CorruptModel(f"{rows} rows do not split into {n_head} heads of even size")
    rest = tuple(w.shape[1:])
    return w.reshape(n_head, rows // n_head // 2, 2, *rest).swapaxes(1, 2).reshape(w.shape)


def _need(md: dict, key: str):
    if key not in md:
        raise CorruptModel(f"GGUF metadata lacks '{key}'")
    return md[key]


def _f32(value) -> float:
    """GGUF stores float32; print the shortest decimal that round-trips (1e-05, not 9.99999974e-06)."""
    import numpy as np

    return float(str(np.float32(value)))


def model_config(header: GGUFHeader) -> dict[str, Any]:
    """The mlx-lm config.json for a llama GGUF (quantization added by the caller)."""
    md = header.metadata
    arch = md.get("general.architecture")
    if arch != "llama":
        raise UnsupportedModel(f"GGUF architecture '{arch}' is not supported; only 'llama' converts")
    hidden = int(_need(md, "llama.embedding_length"))
    n_head = int(_need(md, "llama.attention.head_count"))
    tokens = md.get("tokenizer.ggml.tokens") or []
    config: dict[str, Any] = {
        "model_type": "llama",
        "hidden_size": hidden,
        "num_hidden_layers": int(_need(md, "llama.block_count")),
        "intermediate_size": int(_need(md, "llama.feed_forward_length")),
        "num_attention_heads": n_head,
        "num_key_value_heads": int(md.get("llama.attention.head_count_kv", n_head)),
        "rms_norm_eps": _f32(_need(md, "llama.attention.layer_norm_rms_epsilon")),
        "rope_theta": _f32(md.get("llama.rope.freq_base", 10000.0)),
        "max_position_embeddings": int(_need(md, "llama.context_length")),
        "vocab_size": int(md.get("llama.vocab_size", len(tokens))),
        "tie_word_embeddings": not any(t.name == "output.weight" for t in header.tensors),
    }
    head_dim = md.get("llama.attention.key_length", md.get("llama.rope.dimension_count"))
    if head_dim is not None and int(head_dim) != hidden // n_head:
        config["head_dim"] = int(head_dim)
    scaling = md.get("llama.rope.scaling.type", "none")
    if scaling == "linear":
        config["rope_scaling"] = {"type": "linear", "factor": float(_need(md, "llama.rope.scaling.factor"))}
    elif scaling != "none":
        raise UnsupportedModel(f"GGUF rope scaling '{scaling}' is not supported (only none or linear)")
    for key, out in (("tokenizer.ggml.bos_token_id", "bos_token_id"), ("tokenizer.ggml.eos_token_id", "eos_token_id")):
        if key in md:
            config[out] = int(md[key])
    return config


def build_tokenizer(metadata: dict[str, Any]):
    """A `tokenizers.Tokenizer` plus the tokenizer_config.json dict, from GGUF tokenizer metadata.

    Only byte-level BPE ('gpt2' in GGUF terms) is handled; the pre-tokenizer follows llama.cpp's
    `tokenizer.ggml.pre` so that ids match llama.cpp's (e.g. 'smollm' splits digits one by one).
    """
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors

    kind = metadata.get("tokenizer.ggml.model")
    if kind != "gpt2":
        raise UnsupportedModel(f"GGUF tokenizer model '{kind}' is not supported; only byte-level BPE ('gpt2')")
    pre = metadata.get("tokenizer.ggml.pre", "default")
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    if pre == "smollm":
        pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level])
    elif pre in ("gpt2", "default"):
        pre_tokenizer = byte_level
    else:
        raise UnsupportedModel(f"GGUF pre-tokenizer '{pre}' is not supported (known: smollm, gpt2, default)")
    tokens = list(_need(metadata, "tokenizer.ggml.tokens"))
    merges = [tuple(m.split(" ", 1)) for m in _need(metadata, "tokenizer.ggml.merges")]
    types = list(metadata.get("tokenizer.ggml.token_type") or [1] * len(tokens))
    if len(types) != len(tokens):
        raise CorruptModel(f"GGUF has {len(tokens)} tokens but {len(types)} token types")
    vocab: dict[str, int] = {}
    for i, tok in enumerate(tokens):
        vocab.setdefault(tok, i)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False, byte_fallback=False))
    tok.pre_tokenizer = pre_tokenizer
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(
        [AddedToken(tokens[i], special=True, normalized=False) for i, t in enumerate(types) if t == _CONTROL]
    )
    tok.add_tokens(
        [AddedToken(tokens[i], special=False, normalized=False) for i, t in enumerate(types) if t == _USER_DEFINED]
    )

    def token(key: str) -> str | None:
        idx = metadata.get(key)
        return tokens[int(idx)] if idx is not None and 0 <= int(idx) < len(tokens) else None

    bos = token("tokenizer.ggml.bos_token_id")
    if metadata.get("tokenizer.ggml.add_bos_token", False) and bos is not None:
        bos_id = int(metadata["tokenizer.ggml.bos_token_id"])
        tok.post_processor = processors.TemplateProcessing(
            single=f"{bos} $A", pair=f"{bos} $A {bos} $B", special_tokens=[(bos, bos_id)]
        )
    config: dict[str, Any] = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": bos,
        "eos_token": token("tokenizer.ggml.eos_token_id"),
        "unk_token": token("tokenizer.ggml.unknown_token_id"),
        "pad_token": token("tokenizer.ggml.padding_token_id"),
        "clean_up_tokenization_spaces": False,
        "model_max_length": int(metadata.get("llama.context_length", 2048)),
    }
    if "tokenizer.chat_template" in metadata:
        config["chat_template"] = metadata["tokenizer.chat_template"]
    return tok, config


def convert_gguf(gguf_path: str | Path, out_dir: str | Path) -> Path:
    """Write an mlx-lm folder (config.json, model.safetensors, tokenizer files) for a llama GGUF.

    Writes into `out_dir` directly; callers that need atomicity pass a temporary folder and rename.
    """
    import mlx.core as mx

    gguf_path, out_dir = Path(gguf_path), Path(out_dir)
    header = read_gguf(gguf_path)
    config = model_config(header)
    bad = [t for t in header.tensors if t.type_name not in CONVERTIBLE_TYPES]
    if bad:
        more = (
            f" (and {len(bad) - 1} more tensors of types {sorted({t.type_name for t in bad})})" if len(bad) > 1 else ""
        )
        raise UnsupportedModel(
            f"{gguf_path.name}: tensor '{bad[0].name}' is {bad[0].type_name}{more}; only "
            f"{', '.join(CONVERTIBLE_TYPES)} convert. Use a Q4_0, Q4_1 or Q8_0 GGUF of this model."
        )
    for t in header.tensors:
        mlx_name(t.name)  # fail on unknown tensors before the expensive load
    tokenizer, tokenizer_config = build_tokenizer(header.metadata)

    try:
        raw = mx.load(str(gguf_path))
    except Exception as exc:  # mx.load raises RuntimeError/ValueError with its own text
        raise CorruptModel(f"{gguf_path}: cannot read tensors: {exc}") from exc

    n_head, n_kv = config["num_attention_heads"], config["num_key_value_heads"]
    weights = {}
    for name, w in raw.items():
        if ".attn_q." in name:
            w = unpermute_rows(w, n_head)
        elif ".attn_k." in name:
            w = unpermute_rows(w, n_kv)
        weights[mlx_name(name)] = w

    bits = {}
    for name, scales in weights.items():
        if name.endswith(".scales"):
            module = name[: -len(".scales")]
            packed = weights[module + ".weight"].shape[-1]
            bits[module] = packed * 32 // (scales.shape[-1] * GROUP_SIZE)
    if bits:
        default = Counter(bits.values()).most_common(1)[0][0]
        quant: dict[str, Any] = {"group_size": GROUP_SIZE, "bits": default}
        for module, b in sorted(bits.items()):
            if b != default:
                quant[module] = {"group_size": GROUP_SIZE, "bits": b}
        config["quantization"] = quant

    embed = weights.get("model.embed_tokens.weight")
    if embed is not None and embed.shape[0] != config["vocab_size"]:
        raise CorruptModel(f"embedding has {embed.shape[0]} rows but the vocabulary has {config['vocab_size']} tokens")

    out_dir.mkdir(parents=True, exist_ok=True)
    mx.save_safetensors(str(out_dir / "model.safetensors"), weights, metadata={"format": "mlx"})
    (out_dir / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    tokenizer.save(str(out_dir / "tokenizer.json"))
    (out_dir / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=2) + "\n")
    return out_dir
