"""Redaction end to end: credentials planted in a session never reach what we write.

A sample of the corpus (secrets_corpus.py: every rule, twice where it has several contexts) is
planted in user text, assistant text, tool-call arguments and tool outputs. Then the real
summarizer runs, with a model that repeats every line it was shown (so anything redaction let
through would come back out), through:

(a) `hermes-mlx compact` in process (--log, --out, --store): the summary markers in the written
    transcript, the store's summary rows and other tables, the telemetry lines, the log file and
    what the command printed;
(b) `serve` (the ASGI app, in process): Hermes's micro prompt and batch prompt, streamed and not,
    every SSE chunk and the body, and the server's log records;
(c) `serve` again with each secret cut in two by one of Hermes's truncation markers: neither half
    may reach the summary.

A secret counts as leaked when any 8-character run of it appears: a partial match that leaves a
tail behind is a leak. User and tool messages the transcript keeps verbatim hold the secrets by
design and are not checked; only what we write is. The model's own requests are checked as well
(README: secrets are redacted before the model sees anything).
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest
from secrets_corpus import Case, build_corpus
from summarizer_fakes import FakeScore, count
from test_adapter import batch_prompt, hermes_serialize

from hermes_mlx.cli import main
from hermes_mlx.compactor import markers
from hermes_mlx.compactor.sessions import load_session, save_jsonl
from hermes_mlx.compactor.telemetry import parse_line
from hermes_mlx.summarizer.summarizer import MLXSummarizer

RUN = 8  # a leak is any run of this many characters of a secret


@dataclass
class FakeResult:  # what the engine's generate() returns, as far as the summarizer reads it
    text: str
    finish_reason: str = "stop"
    prompt_tokens: int = 0
    cached_tokens: int = 0
    generation_tokens: int = 0
    model: str = "echo"


def sample(cases: list[Case]) -> list[Case]:
    """Every rule once, and a second context of it where the corpus has several (deterministic)."""
    groups: dict[str, list[Case]] = defaultdict(list)
    for case in cases:
        groups[case.rule.split("#")[0]].append(case)
    picked = []
    for i, group in enumerate(groups.values()):
        picked.append(group[i % len(group)])
        if len(group) > 1:
            picked.append(group[(i + len(group) // 2 + 1) % len(group)])
    return picked


CORPUS = build_corpus()
SAMPLE = sample(CORPUS)
RULES = {c.rule.split("#")[0] for c in CORPUS}


class Leaks:
    """Every 8-character run of every planted secret, mapped to its case, for a linear scan."""

    def __init__(self, cases: list[Case]):
        self.runs: dict[str, str] = {}
        for case in cases:
            for secret in case.secrets:
                for i in range(len(secret) - RUN + 1):
                    self.runs.setdefault(secret[i : i + RUN], case.rule)

    def find(self, text: str) -> dict[str, str]:
        """rule -> the first run of one of its secrets found in `text`."""
        found: dict[str, str] = {}
        for i in range(len(text) - RUN + 1):
            rule = self.runs.get(text[i : i + RUN])
            if rule is not None:
                found.setdefault(rule, text[i : i + RUN])
        return found


LEAKS = Leaks(SAMPLE)


class EchoModel:
    """The worst summarizer model. Asked to write (`generate`), it repeats every line it was
    shown; asked to choose among numbered sentences (`score`), it prefers the one holding most
    of a planted secret, then the longest. Either way anything redaction let through comes out."""

    def __init__(self):
        self.requests: list[list[dict]] = []

    def __call__(self, request, *, model=None, max_tokens=256, **kwargs):
        self.requests.append(request)
        shown = request[-1]["content"]
        text = "\n".join(f"- {line.strip()}" for line in shown.splitlines() if line.strip())
        return FakeResult(text, "stop", len(json.dumps(request)) // 4, 0, max(1, len(text) // 4))

    def score(self, candidates, prefix, *, model=None, timeout=None, **kwargs):
        self.requests.append(prefix)
        listed = dict(re.findall(r"^(\d+)\. (.*)$", prefix[-1]["content"], flags=re.MULTILINE))
        scores = [len(LEAKS.find(listed.get(c, ""))) * 1000.0 + len(listed.get(c, "")) for c in candidates]
        return FakeScore(scores, len(json.dumps(prefix)) // 4, model="echo")

    def seen(self) -> str:
        return "\n".join(m["content"] for request in self.requests for m in request)


def summarizer(echo: EchoModel, **kwargs) -> MLXSummarizer:
    return MLXSummarizer(model=None, score=echo.score, count_tokens=count, context_window=8192, **kwargs)


def call(cid: str, name: str, **args) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def planted_session(cases: list[Case]) -> list[dict]:
    """Turns of four cases each: one in the user's ask, one in a command the assistant runs, one in
    the tool's output, one in the assistant's answer."""
    messages = [{"role": "system", "content": "You are a coding agent."}]
    for n in range(0, len(cases), 4):
        a, b, c, d = (cases[(n + k) % len(cases)].text for k in range(4))
        cid = f"call_{n}"
        messages += [
            {"role": "user", "content": f"Deploy step {n}: use this and keep it out of git.\n{a}"},
            {
                "role": "assistant",
                "content": f"Running step {n}.",
                "tool_calls": [call(cid, "terminal", command=b.replace("\n", " "))],
            },
            {
                "role": "tool",
                "tool_call_id": cid,
                "content": json.dumps({"output": f"config for step {n}:\n{c}\nexit 0", "exit_code": 0}),
            },
            {"role": "assistant", "content": f"Step {n} is configured with {d} and the tests pass."},
        ]
    return messages


def assert_clean(where: dict[str, str], label: str) -> int:
    """Fail naming every leak; returns how many texts were checked (printed for `pytest -s`)."""
    leaks = {name: found for name, text in where.items() if (found := LEAKS.find(text))}
    marks = sum(text.count("[REDACTED]") for text in where.values())
    print(
        f"\n{label}: {len(SAMPLE)} planted cases ({len(RULES)} rules, {len(LEAKS.runs)} secret runs) checked in "
        f"{len(where)} texts, {sum(map(len, where.values())):,} chars, {marks} [REDACTED] marks, {len(leaks)} with a leak"
    )
    assert not leaks, json.dumps(leaks, indent=1)[:4000]
    return len(where)


def test_the_sample_covers_every_rule():
    assert {c.rule.split("#")[0] for c in SAMPLE} == RULES
    assert len(SAMPLE) > len(RULES)


# ---------------------------------------------------------------------------------- (a) compact


@pytest.fixture
def echo(monkeypatch):
    from hermes_mlx.commands import compact

    model = EchoModel()
    monkeypatch.setattr(compact, "build_summarizer", lambda args: summarizer(model))
    return model


def store_texts(db: Path) -> dict[str, str]:
    """What the store holds that we wrote: summary rows, and every other table whole."""
    out = {}
    with sqlite3.connect(db) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            for n, row in enumerate(conn.execute(f"SELECT * FROM {table}")):
                values = dict(zip(cols, row))
                if table == "messages" and not markers.is_marker(values):
                    continue  # the user's and the tools' own text, kept verbatim by design
                out[f"{table}[{n}]"] = json.dumps(values, ensure_ascii=False)
    return out


@pytest.mark.parametrize("mode", ["micro", "batch"])
def test_compact_writes_no_planted_secret(mode, tmp_path, echo, capsys):
    src, out, log, db = (tmp_path / name for name in ("s.jsonl", "out.jsonl", "c.log", "state.db"))
    messages = planted_session(SAMPLE)
    save_jsonl(messages, src)
    args = [
        "compact",
        str(src),
        "--mode",
        mode,
        "--context-limit",
        "4096",
        "--no-progress",
        "--out",
        str(out),
        "--log",
        str(log),
        "--store",
        str(db),
    ]
    assert main(args) == 0
    printed = capsys.readouterr()

    compacted = load_session(out)
    summaries = {f"marker[{i}]": m["content"] for i, m in enumerate(compacted) if markers.is_marker(m)}
    assert summaries and all(markers.parse(s) for s in summaries.values())
    log_text = log.read_text(encoding="utf-8")
    telemetry = [d for line in log_text.splitlines() if (d := parse_line(line)) is not None]
    assert telemetry
    stored = store_texts(db)
    assert any(k.startswith("messages") for k in stored)  # summary rows were written

    # The echo model did its worst: what it saw (redacted input) is in the summaries.
    assert any("[REDACTED]" in s for s in summaries.values())
    checked = assert_clean(
        {
            **summaries,
            **{f"telemetry[{i}]": json.dumps(d) for i, d in enumerate(telemetry)},
            "log": log_text,
            "stdout": printed.out,
            "stderr": printed.err,
            **stored,
            "model requests": echo.seen(),
        },
        f"compact --mode {mode}",
    )
    assert checked >= 5
    # The transcript still holds the originals verbatim (the check above would see them).
    verbatim = "\n".join(json.dumps(m) for m in compacted if not markers.is_marker(m))
    assert LEAKS.find(verbatim)


# ---------------------------------------------------------------------------------- (b) serve


@pytest.fixture
def served(tiny_model, monkeypatch):
    from starlette.testclient import TestClient
    from test_server import BASE

    from hermes_mlx.integrations import adapter
    from hermes_mlx.integrations.server import build_app

    model = EchoModel()
    monkeypatch.setattr(adapter, "make_summarizer", lambda *args, **kwargs: summarizer(model))
    with TestClient(build_app(tiny_model, max_prompt_tokens=1_000_000), base_url=BASE) as client:
        yield client, model


def prompts(cases: list[Case]) -> dict[str, list[dict]]:
    session = planted_session(cases)[1:]
    exchange = session[1:4]  # an assistant call, its result, the answer
    previous = "## Goal\nDeploy the service.\n\n## Progress\n- " + cases[-1].text.replace("\n", " ")
    return {
        "micro": _micro(None, hermes_serialize(session[1:])),
        "micro-later": _micro(previous, hermes_serialize(exchange)),
        "batch": batch_prompt(session),
        "batch-update": batch_prompt(session[4:], previous=previous, focus="the deploy " + cases[0].text[:60]),
    }


def _micro(summary, text):
    from hermes_mlx.integrations.hermes_prompts import micro_prompt

    return micro_prompt(summary, text)


@pytest.mark.parametrize("stream", [False, True])
def test_serve_answers_hermes_prompts_without_planted_secrets(stream, served, caplog):
    client, echo = served
    caplog.set_level(logging.DEBUG)
    texts: dict[str, str] = {}
    # Four prompts over the whole sample, each with its own slice of cases (bounded work per request).
    for i, name in enumerate(("micro", "micro-later", "batch", "batch-update")):
        messages = prompts(SAMPLE[i::4])[name]
        body = {"model": "mlx", "messages": messages, "max_tokens": 4000}
        if stream:
            with client.stream("POST", "/v1/chat/completions", json={**body, "stream": True}) as r:
                assert r.status_code == 200
                lines = [line for line in r.iter_lines() if line]
            content = "".join(
                json.loads(x[6:])["choices"][0]["delta"].get("content") or ""
                for x in lines
                if x.startswith("data: {") and json.loads(x[6:])["choices"]
            )
            for i, line in enumerate(lines):
                texts[f"{name} chunk {i}"] = line
        else:
            r = client.post("/v1/chat/completions", json=body)
            assert r.status_code == 200, r.text
            content = r.json()["choices"][0]["message"]["content"]
            texts[f"{name} body"] = r.text
        assert content.strip(), name  # the summarizer answered (an empty answer would prove nothing)
        texts[f"{name} content"] = content
    texts["log"] = "\n".join(
        f"{rec.name} {rec.levelname} {rec.getMessage()} {rec.exc_text or ''}" for rec in caplog.records
    )
    texts["model requests"] = echo.seen()
    assert any("[REDACTED]" in t for t in texts.values())
    assert_clean(texts, f"serve stream={stream}")


# Hermes cuts long text before we see it ("...[truncated]...", " ... ", 0.22's elision marker); it
# redacts first, but what its patterns miss can arrive cut in two, too short for any pattern.
CUTS = [
    "\n...[truncated]...\n",
    " ...[truncated]",
    "⟪HERMES-CONTEXT-COMPRESSION: 1,234 of 5,678 chars omitted …⟫",
    " ... ",
]


def cut_session(cases: list[Case]) -> tuple[list[dict], Leaks]:
    """Each secret cut in its middle by one of Hermes's markers; the Leaks of both halves."""
    messages, halves = [{"role": "user", "content": "Deploy the service."}], []
    for n, case in enumerate(cases):
        secret = case.secrets[0]
        at = case.text.find(secret)
        if at < 0 or len(secret) < 20:
            continue
        k = len(secret) // 2
        text = case.text[: at + k] + CUTS[n % len(CUTS)] + case.text[at + len(secret) - k + 4 :]
        halves.append(Case(case.rule, text, (secret[:k], secret[len(secret) - k + 4 :])))
        cid = f"c{n}"
        messages += [
            {
                "role": "assistant",
                "content": f"Checking step {n}.",
                "tool_calls": [call(cid, "terminal", command=f"cat cfg{n}.env")],
            },
            {"role": "tool", "tool_call_id": cid, "content": f"line one\n{text}\nexit 0"},
            {"role": "assistant", "content": f"Step {n} config read."},
        ]
    return messages, Leaks(halves)


def test_serve_keeps_halves_of_cut_secrets_out_of_the_summary(served):
    client, _ = served
    messages, halves = cut_session(SAMPLE)
    prompts_ = {"micro": _micro(None, hermes_serialize(messages[1:])), "batch": batch_prompt(messages)}
    for name, prompt in prompts_.items():
        r = client.post("/v1/chat/completions", json={"model": "mlx", "messages": prompt, "max_tokens": 4000})
        content = r.json()["choices"][0]["message"]["content"]
        assert content.strip(), name
        found = halves.find(content)
        print(
            f"\ncut secrets, {name}: {len(halves.runs)} runs of {len(messages) // 3} halved secrets, {len(found)} leaked"
        )
        assert not found, found
