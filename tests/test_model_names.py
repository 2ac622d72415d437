"""One rule for which model a request's name means, held the same at both ways in: the
in-process provider (MLXClient) and `hermes-mlx serve` (HTTP). Each name is sent through the real
entry point, and the model the summarizer is built with is what the rule chose."""

import re

import pytest
from fakes import ScriptedSummarizer
from starlette.testclient import TestClient
from test_adapter import EXCHANGE, hermes_serialize

from hermes_mlx.engine.errors import ModelNotFound
from hermes_mlx.integrations import adapter, provider
from hermes_mlx.integrations.hermes_prompts import micro_prompt
from hermes_mlx.integrations.model_names import DEFAULT_NAMES, REFUSED_MODEL
from hermes_mlx.integrations.server import build_app

MESSAGES = micro_prompt(None, hermes_serialize(EXCHANGE))


@pytest.fixture
def built(monkeypatch):
    models = []

    def make(model, timeout):
        models.append(model)
        return ScriptedSummarizer(["## Goal\nFix rounding"])

    monkeypatch.setattr(adapter, "make_summarizer", make)
    return models


def through_provider(default, name):
    client = provider.MLXClient(model=default)
    client.chat.completions.create(model=name, messages=MESSAGES, temperature=0.1)


def through_server(default, name):
    with TestClient(build_app(default), base_url="http://127.0.0.1") as http:
        r = http.post("/v1/chat/completions", json={"model": name, "messages": MESSAGES})
    if r.status_code != 200:
        raise LookupError(r.json()["error"]["message"])


ENTRIES = [through_provider, through_server]


@pytest.mark.parametrize("enter", ENTRIES)
@pytest.mark.parametrize(
    "name",
    sorted(DEFAULT_NAMES)
    + ["gpt-4o-mini", "anthropic/claude-3.5", "openai/gpt-4.1"]
    # a manifest's repo id, or its name in another case, for a model that is not here
    + ["mlx-community/Qwen2.5-1.5B-Instruct-4bit", "Qwen2.5-3B-Instruct"],
)
def test_our_names_and_other_providers_ids_mean_the_default(built, tiny_model, enter, name):
    enter(tiny_model, name)
    assert built == [tiny_model]


@pytest.mark.parametrize("enter", ENTRIES)
def test_the_default_folder_named_again_is_that_folder(built, tiny_model, enter):
    enter(tiny_model, tiny_model)
    assert built == [tiny_model]


def test_a_missing_folder_fails_in_process_and_is_refused_by_the_server(built, tiny_model, tmp_path):
    absent = str(tmp_path / "no-such-model")
    with pytest.raises(ModelNotFound, match="no model folder"):
        through_provider(tiny_model, absent)
    with pytest.raises(LookupError, match=re.escape("model: " + REFUSED_MODEL)):
        through_server(tiny_model, absent)
    assert built == []


def test_a_folder_the_server_was_not_given_is_refused_but_the_user_may_name_it_in_process(built, tiny_model, tmp_path):
    from tiny import build_tiny_model

    other = str(build_tiny_model(tmp_path / "other"))
    with pytest.raises(LookupError, match=re.escape(REFUSED_MODEL)):
        through_server(tiny_model, other)  # a client may not pick folders on the server's disk
    through_provider(tiny_model, other)  # the user's own config may
    assert built == [other]


def test_a_manifest_model_that_is_not_here_fails_in_process_and_is_refused_by_the_server(built, tiny_model):
    with pytest.raises(ModelNotFound, match="qwen2.5-3b-instruct"):
        through_provider(tiny_model, "qwen2.5-3b-instruct")  # the user's config names it: say it is missing
    with pytest.raises(LookupError, match=re.escape(REFUSED_MODEL)):
        through_server(tiny_model, "qwen2.5-3b-instruct")  # never fetched for a client
    assert built == []
