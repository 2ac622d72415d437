"""The engine end to end on the embedded default model: the CLI a new user runs first."""

import json
import os
import subprocess
import sys

import pytest

from hermes_mlx.engine.generate import count_tokens, generate

pytestmark = pytest.mark.real_model

SYSTEM = ("You are a careful assistant. Answer in one short sentence. " * 12).strip()


def test_cli_generate_end_to_end():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "hermes_mlx.cli",
            "generate",
            "--json",
            "--max-tokens",
            "24",
            "What is the capital of France?",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=os.environ.copy(),
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert "Paris" in result["text"]
    assert result["finish_reason"] == "stop"
    assert result["generation_tokens"] > 0 and result["prompt_tps"] > 0 and result["load_s"] > 0


def test_shared_system_prompt_is_reused_and_does_not_change_the_answer():
    def ask(question):
        return generate([{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}], max_tokens=16)

    ask("What is 2 + 2?")
    reused = ask("What is the capital of France?")
    prefix = count_tokens([{"role": "system", "content": SYSTEM}])
    assert reused.cached_tokens >= prefix - 4  # the generation prompt's tokens differ
    from hermes_mlx.engine.generate import unload

    unload(None)
    fresh = ask("What is the capital of France?")
    assert fresh.cached_tokens == 0
    assert fresh.text == reused.text
