"""A secret never makes a compaction pass fail, and never reaches the summary (issue 20, items 2-3).

The verifier re-redacts the whole summary and refuses it when anything changes ("secret left in
summary"). Text was redacted message by message, before the ledger folded a user's lines into one
(`token:` then its value on the next line); once folded, redact() saw `token: <value>` and the
verifier refused every later pass, so the transcript was never compacted again. Here secrets of
the hostile classes sit wherever a user, a tool or the assistant may put them, split over lines
at random, and three passes in a row (batch, iterative batch, micro merge) must all succeed with
no 8-character run of any secret in what they return.
"""

from __future__ import annotations

import json
import random
import string

import pytest
from secrets_corpus import Gen, _hostile_password, _jwt, _wrap
from summarizer_fakes import FakeModel, call, count

from hermes_mlx.summarizer.ledger import user_message
from hermes_mlx.summarizer.redact import has_secret, redact
from hermes_mlx.summarizer.summarizer import MLXSummarizer

RUN = 8


def _summarizer() -> MLXSummarizer:
    return MLXSummarizer(model=None, score=FakeModel().score, count_tokens=count, context_window=8192)


def _leaks(secret: str, text: str) -> list[str]:
    return [secret[i : i + RUN] for i in range(len(secret) - RUN + 1) if secret[i : i + RUN] in text]


def _passes(span: list[dict]) -> list:
    """Batch over the span, an iterative batch over a later span, a micro merge of an exchange."""
    s = _summarizer()
    first = s.update(None, span)
    later = [
        {"role": "user", "content": "Now run the tests, please."},
        {"role": "assistant", "content": "Running them.", "tool_calls": [call("c9", "terminal", command="pytest -q")]},
        {"role": "tool", "tool_call_id": "c9", "content": json.dumps({"output": "3 passed", "exit_code": 0})},
    ]
    second = s.update(first.text if first.ok else None, later)
    third = s.merge(second.text if second.ok else None, [{"role": "assistant", "content": "All green."}])
    return [first, second, third]


def _span(role: str, body: str) -> list[dict]:
    if role == "user":
        return [
            {"role": "user", "content": f"Deploy the service to staging.\n{body}\nKeep it out of git."},
            {"role": "assistant", "content": "Deployed to staging."},
        ]
    if role == "tool":
        return [
            {"role": "user", "content": "Deploy the service to staging."},
            {
                "role": "assistant",
                "content": "Deploying.",
                "tool_calls": [call("c1", "terminal", command="./deploy.sh")],
            },
            {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"output": f"{body}\ndone", "exit_code": 0})},
            {"role": "assistant", "content": "Deployed to staging."},
        ]
    return [
        {"role": "user", "content": "Deploy the service to staging."},
        {"role": "assistant", "content": f"Deployed to staging with\n{body}"},
    ]


def _assert_passes(span: list[dict], secret: str) -> None:
    for n, result in enumerate(_passes(span), 1):
        assert result.ok, f"pass {n}: {result.error}"
        assert not _leaks(secret, result.text), f"pass {n} leaks {_leaks(secret, result.text)[:2]}:\n{result.text}"
        assert not has_secret(result.text)


def test_a_token_on_the_line_after_its_name_fails_no_pass():
    # The case: `token:` ends a line of the user's message and the value starts the next.
    g = Gen(20)
    for value in (g.s(string.ascii_letters + string.digits, 32), _jwt(g), _wrap(g, _jwt(g)), _hostile_password(g)):
        for body in (f"token:\n{value}", f"my API key:\n  {value}", f"the password is\n{value}"):
            _assert_passes(_span("user", body), value)


def test_user_messages_are_redacted_in_the_summary_after_folding():
    # The summary carries the user's messages folded onto one line; the fold is redacted again.
    g = Gen(21)
    value = g.s(string.ascii_letters + string.digits, 32)
    folded = user_message(f"here it is, token:\n{value}\nthanks")
    assert value[:RUN] not in folded and folded == redact(folded)
    assert user_message("Please fix the build,\nthen run the tests.") == "Please fix the build, then run the tests."


try:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover - hypothesis is in the test extras
    given = None

if given is not None:
    NAMES = ["token", "TOKEN", "api_key", "password", "Password", "secret", "GITHUB_TOKEN", "pw", "passphrase"]
    SHAPES = [
        "{name}:\n{value}",
        "{name}:\n    {value}\n",
        "{name}: {value}",
        "{name}={value}",
        "the {name} is {value}",
        "the {name} is\n{value}",
        "{name} is: {value}.",
        "{value}",
        "use this ({value}) for now",
    ]

    @st.composite
    def placements(draw):
        seed = draw(st.integers(0, 10_000))
        g = Gen(seed)
        kind = draw(st.sampled_from(["random", "jwt", "wrapped-jwt", "password", "aws"]))
        value = {
            "random": lambda: g.s(string.ascii_letters + string.digits, draw(st.integers(24, 48))),
            "jwt": lambda: _jwt(g),
            "wrapped-jwt": lambda: _wrap(g, _jwt(g), draw(st.sampled_from(["\n", "\n  ", "\r\n"]))),
            "password": lambda: _hostile_password(g),
            "aws": lambda: "AKIA" + "".join(random.Random(seed).choice(string.ascii_uppercase) for _ in range(16)),
        }[kind]()
        shape = draw(st.sampled_from(SHAPES))
        if kind in ("random", "password") and shape in ("{value}", "use this ({value}) for now"):
            shape = "{name}:\n{value}"  # a bare password or random string is not recognisable as one
        body = shape.format(name=draw(st.sampled_from(NAMES)), value=value)
        secret = value.replace("\r", "").replace("\n", "").replace(" ", "")
        return draw(st.sampled_from(["user", "tool", "assistant"])), body, value, secret

    @pytest.mark.timeout(600)
    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(placements())
    def test_no_secret_placement_fails_a_pass(placement):
        role, body, value, secret = placement
        span = _span(role, body)
        for n, result in enumerate(_passes(span), 1):
            assert result.ok, f"pass {n}: {result.error}\n{body!r}"
            shown = " ".join(result.text.split())
            for part in {secret, *value.split()}:
                assert not _leaks(part, shown), f"pass {n} leaks {part!r}:\n{result.text}"
