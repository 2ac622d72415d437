"""Tiny random-weight llama models for fast, deterministic tests.

Built in a temp folder as a complete mlx-lm model folder (config.json, safetensors,
tokenizer.json, tokenizer_config.json), so the same loading path as a real model runs.
"""

from __future__ import annotations

import json
from pathlib import Path

CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{{ message['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

CORPUS = [
    "The quick brown fox jumps over the lazy dog. " * 4,
    "def main():\n    print('hello world')\n    return 0\n",
    "pytest tests/test_engine.py -q failed with AssertionError at line 42",
    "Summary: the agent edited src/app.py and ran the test suite; 3 passed, 1 failed.",
    "0123456789 ,.;:!?()[]{}<>/\\|-_=+*&^%$#@~`'\"\t\n",
]
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def build_tokenizer(folder: Path, vocab_size: int = 400) -> int:
    """Train a small byte-level BPE; returns the vocabulary size it reached."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS * 3, trainer=trainer)
    tok.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "tokenizer_class": "PreTrainedTokenizerFast",
                "bos_token": None,
                "eos_token": "<|im_end|>",
                "unk_token": "<|endoftext|>",
                "pad_token": "<|endoftext|>",
                "chat_template": CHAT_TEMPLATE,
                "model_max_length": 512,
            }
        )
    )
    return tok.get_vocab_size()


def build_tiny_model(
    folder: str | Path,
    *,
    seed: int = 0,
    hidden_size: int = 64,
    num_layers: int = 2,
    context: int = 512,
) -> Path:
    """Write a random-weight llama model folder that mlx_lm.load reads."""
    import mlx.core as mx
    from mlx.utils import tree_flatten
    from mlx_lm.models import llama

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    vocab = build_tokenizer(folder)
    eos = 2  # "<|im_end|>" is the third special token
    config = {
        "model_type": "llama",
        "hidden_size": hidden_size,
        "num_hidden_layers": num_layers,
        "intermediate_size": hidden_size * 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "rms_norm_eps": 1e-5,
        "vocab_size": vocab,
        "max_position_embeddings": context,
        "rope_theta": 10000.0,
        "tie_word_embeddings": True,
        "eos_token_id": eos,
    }
    mx.random.seed(seed)
    model = llama.Model(llama.ModelArgs.from_dict(config))
    mx.eval(model.parameters())
    weights = dict(tree_flatten(model.parameters()))
    mx.save_safetensors(str(folder / "model.safetensors"), weights, metadata={"format": "mlx"})
    (folder / "config.json").write_text(json.dumps(config))
    return folder


class HeldDecode:
    """Proves that closing a stream stops the engine, rather than only that the next call returns.

    Installed over mlx-lm's GenerationBatch.next (one decode step of the engine's batch), it
    holds the batch once the engine has emitted its first chunk, until the test sets `closed`
    (after closing the stream), and then counts the tokens each engine request decodes after
    that. An engine that honours close() decodes at most one more token for it; one that ignores
    it runs on to max_tokens or EOS.
    """

    def __init__(self, monkeypatch) -> None:
        import importlib
        import threading

        from hermes_mlx.engine import generate as engine

        mlx_generate = importlib.import_module("mlx_lm.generate")  # the module: mlx_lm.generate is also a function

        self.emitted, self.closed = threading.Event(), threading.Event()
        self.calls: list[dict[str, int]] = []  # per engine request: tokens decoded before/after `closed`
        members: dict[tuple[int, int], dict[str, int]] = {}
        real_next, real_chunk = mlx_generate.GenerationBatch.next, engine.GenerationChunk

        def chunk(*args, **kwargs):
            self.emitted.set()
            return real_chunk(*args, **kwargs)

        def step(batch):
            if self.emitted.is_set():
                self.closed.wait(120)  # a bound on waiting, not a timing assertion
            responses = real_next(batch)
            for r in responses:
                counts = members.get((id(batch), r.uid))
                if counts is None:
                    counts = members[(id(batch), r.uid)] = {"before": 0, "after": 0}
                    self.calls.append(counts)
                counts["after" if self.closed.is_set() else "before"] += 1
            return responses

        monkeypatch.setattr(mlx_generate.GenerationBatch, "next", step)
        monkeypatch.setattr(engine, "GenerationChunk", chunk)
