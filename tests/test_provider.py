"""The in-process client and the Hermes provider registration (with a stand-in `providers` package)."""

import importlib
import sys
import textwrap

import pytest
from fakes import ScriptedSummarizer
from test_adapter import EXCHANGE, hermes_serialize

from hermes_mlx.integrations import adapter, hermes_prompts, provider
from hermes_mlx.integrations.hermes_config import DEFAULT_AUX_MODEL
from hermes_mlx.integrations.hermes_settings import PLANNING_CONTEXT_TOKENS
from hermes_mlx.integrations.openai_shapes import RequestError

HELLO = [{"role": "user", "content": "hello"}]


def test_imports_without_hermes():
    assert "providers" not in sys.modules or not hasattr(sys.modules["providers"], "register_provider")
    assert provider._REGISTERED is False and provider.make_profile() is None
    provider.register(object())  # the general plugin hook is harmless without Hermes


def test_create_returns_openai_shape(tiny_model):
    client = provider.MLXClient(model=tiny_model)
    assert client.HERMES_SKIP_TRANSPORT_WRAP and client.HERMES_SKIP_ASYNC_WRAP
    response = client.chat.completions.create(
        model=None, messages=HELLO, max_tokens=4, temperature=0.0, timeout=30, extra_body={"x": 1}, stream_options=None
    )
    choice = response.choices[0]
    assert isinstance(choice.message.content, str) and choice.finish_reason in ("stop", "length")
    assert response.usage.completion_tokens <= 4 and response.usage.prompt_tokens > 0
    assert response.usage.prompt_tokens_details.cached_tokens >= 0
    assert response["choices"][0]["message"]["content"] == choice.message.content


def test_stream_yields_chunks_and_a_final_one(tiny_model):
    client = provider.create_client(model=tiny_model, api_key="ignored", unknown_kwarg=1)
    chunks = list(client.chat.completions.create(messages=HELLO, max_tokens=5, stream=True))
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.get("content") or "" for c in chunks)
    assert isinstance(text, str)
    last = chunks[-1]
    assert last.choices[0].finish_reason in ("stop", "length") and last.usage.completion_tokens <= 5


def test_stream_asked_for_usage_ends_with_the_usage_chunk_as_the_server_does(tiny_model):
    client = provider.MLXClient(model=tiny_model)
    chunks = list(
        client.chat.completions.create(
            messages=HELLO, max_tokens=5, stream=True, stream_options={"include_usage": True}
        )
    )
    finals = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    assert len(finals) == 1 and "usage" not in finals[0]
    assert chunks[-1].choices == [] and 0 < chunks[-1].usage.completion_tokens <= 5


def test_stream_closed_early_frees_the_engine(tiny_model):
    client = provider.MLXClient(model=tiny_model)
    stream = client.chat.completions.create(messages=HELLO, max_tokens=300, stream=True)
    next(stream)
    next(stream)
    stream.close()
    again = client.chat.completions.create(messages=HELLO, max_tokens=2)
    assert again.usage.completion_tokens <= 2


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"n": 2}, "n"),
        ({"tools": [{"type": "function", "function": {"name": "f"}}]}, "tools"),
        (
            {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:"}}]}]},
            "messages[0].content[0]",
        ),
        ({"max_tokens": -1}, "max_tokens"),
    ],
)
def test_bad_input_raises_naming_the_field(kwargs, field):
    client = provider.MLXClient()
    with pytest.raises(RequestError) as err:
        client.chat.completions.create(**{"messages": HELLO, **kwargs})
    assert err.value.field == field


def test_micro_prompt_goes_through_the_summarizer(monkeypatch):
    fake = ScriptedSummarizer(["## Goal\nFix rounding\n\n## Progress\n- found it"])
    monkeypatch.setattr(adapter, "make_summarizer", lambda model, timeout: fake)
    client = provider.MLXClient()
    response = client.chat.completions.create(
        model="hermes-mlx-default",
        messages=hermes_prompts.micro_prompt(None, hermes_serialize(EXCHANGE)),
        max_tokens=1500,
        temperature=0.1,
    )
    assert fake.methods() == ["merge"]
    assert response.choices[0].message.content.startswith("## Goal")
    assert response.choices[0].finish_reason == "stop"


FAKE_PROVIDERS = {
    "providers/__init__.py": """
        from providers.base import ProviderProfile
        REGISTRY = {}
        def register_provider(profile):
            REGISTRY[profile.name] = profile
    """,
    "providers/base.py": """
        from dataclasses import dataclass, field
        @dataclass
        class ProviderProfile:
            name: str
            aliases: tuple = ()
            display_name: str = ""
            description: str = ""
            env_vars: tuple = ()
            base_url: str = ""
            auth_type: str = "api_key"
            supports_health_check: bool = True
            default_aux_model: str = ""
            fallback_models: tuple = ()
            def create_client(self, **kwargs):
                return None
    """,
}


def test_registers_with_a_hermes_providers_package(tmp_path, monkeypatch, tiny_model):
    for name, text in FAKE_PROVIDERS.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv(provider.KEY_ENV, raising=False)
    saved = {k: sys.modules.pop(k) for k in list(sys.modules) if k == "providers" or k.startswith("providers.")}
    try:
        module = importlib.reload(provider)
        assert module._REGISTERED is True
        import providers

        profile = providers.REGISTRY["mlx"]
        assert profile.aliases == ("hermes-mlx",) and profile.default_aux_model == DEFAULT_AUX_MODEL
        assert profile.HERMES_SKIP_TRANSPORT_WRAP and profile.HERMES_SKIP_ASYNC_WRAP
        import os

        assert os.environ[provider.KEY_ENV]  # Hermes's api-key route sees a key
        client = profile.create_client(api_key="local", base_url="http://x", command=None)
        assert client.HERMES_SKIP_TRANSPORT_WRAP and hasattr(client.chat.completions, "create")
        # Hermes plans with what the summarizer accepts (it folds), never the model's 512-token window:
        # below 64,000 Hermes refuses the compression model at its first batch compaction.
        assert profile.get_model_context_length(tiny_model) == PLANNING_CONTEXT_TOKENS >= 64_000
    finally:
        for k in [k for k in sys.modules if k == "providers" or k.startswith("providers.")]:
            del sys.modules[k]
        sys.modules.update(saved)
        importlib.reload(provider)


def test_older_hermes_without_create_client_is_not_registered(tmp_path, monkeypatch):
    (tmp_path / "providers").mkdir()
    (tmp_path / "providers/__init__.py").write_text("def register_provider(p):\n    raise AssertionError\n")
    (tmp_path / "providers/base.py").write_text(
        "from dataclasses import dataclass\n@dataclass\nclass ProviderProfile:\n    name: str\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    saved = {k: sys.modules.pop(k) for k in list(sys.modules) if k == "providers" or k.startswith("providers.")}
    try:
        assert importlib.reload(provider)._REGISTERED is False
    finally:
        for k in [k for k in sys.modules if k == "providers" or k.startswith("providers.")]:
            del sys.modules[k]
        sys.modules.update(saved)
        importlib.reload(provider)
