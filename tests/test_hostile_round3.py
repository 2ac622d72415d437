"""Hostile round three (issue 28): what a hostile user tried that did not hold, each case pinned.

Items 4 (secret shapes through `compact`, with the corpus in secrets_corpus.py), 8 (a device as a
session file), 10 (report at scale), 12 (report's terminal output, setup-hermes and a deny-list,
a turn of 3,000 calls). Device nodes are made inside tmp_path, as in test_hostile_round2.py.
"""

from __future__ import annotations

import json
import os

import pytest
import test_cli
from fakes import assistant, tool, tool_pairs_valid, user
from secrets_corpus import Gen, round_three_cases
from test_hostile_round2 import one_error, special

from hermes_mlx.cli import main
from hermes_mlx.compactor import log_report as report
from hermes_mlx.compactor.sessions import load_jsonl, load_session, save_jsonl
from hermes_mlx.compactor.transcript import repair
from hermes_mlx.summarizer.redact import redact

fake, src = test_cli.fake, test_cli.src  # the scripted `compact` fixtures, shared

pytestmark = pytest.mark.timeout(120)


# ------------------------------------------------------------------------------------------------
# 4. The twelve shapes the round found leaking, each with its class (more cases: secrets_corpus).


@pytest.mark.parametrize("case", round_three_cases(Gen(28)), ids=lambda c: c.rule)
def test_round_three_secret_shapes_are_redacted(case):
    out = redact(case.text)
    left = [s for s in case.secrets if any(s[i : i + 8] in out for i in range(max(1, len(s) - 7)))]
    assert not left, f"{case.text!r} -> {out!r}"
    assert redact(out) == out


@pytest.mark.parametrize(
    "text",
    [
        # what sits next to the new shapes and must stay
        "mongodb+srv://cluster0.abc.mongodb.net/test?retryWrites=true",
        "https://registry.npmjs.org:443/@types/node",
        "http://localhost:8080/api/v1/users/@me",
        "https://user:@example.com/@scope/pkg",
        "Das Passwort ist geheim.",
        "密码是必填项",
        "パスワードは必須です",
        "ｐａｓｓｗｏｒｄ：ｒｅｑｕｉｒｅｄ",
        "git log --oneline src/app / tests/unit",
        "vault login -method=oidc",
        "twine upload dist/*",
        "twine upload -r testpypi dist/*",
        "cd build-3f9a2b1c4d5e6f708192a3b4c5d6e7f801234567 && make",
        "refs/heads/fix-0123456789abcdef0123456789abcdef01234567",
        "s.append(x)",
        "see d=2 and b.txt",
        "ratio = width / height2",
    ],
)
def test_round_three_neighbours_stay(text):
    assert redact(text) == text


def test_a_url_password_ends_at_the_last_at_before_the_host():
    url = "mongodb+srv://admin:p@ss/w0rd#x1!z@cluster0.ab1cd.mongodb.net/db?retryWrites=true"
    assert redact(url) == "mongodb+srv://admin:[REDACTED]@cluster0.ab1cd.mongodb.net/db?retryWrites=true"
    assert redact("redis://:s3cr@t/x@cache:6379/0") == "redis://:[REDACTED]@cache:6379/0"


ROUND_THREE = round_three_cases(Gen(20260127 + 28))  # the corpus's own seed: what test_redact checks


@pytest.mark.parametrize("mode", ["micro", "batch"])
def test_compact_writes_none_of_the_round_three_secrets(mode, tmp_path, monkeypatch, capsys):
    """Every round-three case (not a sample) planted in a session; `compact` with a model that
    repeats all it is shown writes none of them to --out's summaries, the store, the log or stdout."""
    import test_redaction_e2e as e2e

    from hermes_mlx.commands import compact
    from hermes_mlx.compactor import markers
    from hermes_mlx.compactor.telemetry import parse_line

    echo = e2e.EchoModel()
    monkeypatch.setattr(compact, "build_summarizer", lambda args: e2e.summarizer(echo))
    src_path, out, log, db = (tmp_path / n for n in ("s.jsonl", "out.jsonl", "c.log", "state.db"))
    save_jsonl(e2e.planted_session(ROUND_THREE), src_path)
    args = ["compact", str(src_path), "--mode", mode, "--context-limit", "4096", "--no-progress"]
    assert main([*args, "--out", str(out), "--log", str(log), "--store", str(db)]) == 0
    printed = capsys.readouterr()
    written = {f"marker[{i}]": m["content"] for i, m in enumerate(load_jsonl(out)) if markers.is_marker(m)}
    log_text = log.read_text(encoding="utf-8")
    written |= {f"telemetry[{i}]": json.dumps(parse_line(x)) for i, x in enumerate(log_text.splitlines())}
    written |= {"log": log_text, "stdout": printed.out, "stderr": printed.err, "model": echo.seen()}
    written |= e2e.store_texts(db)
    assert any("[REDACTED]" in t for t in written.values()) and any(k.startswith("messages") for k in written)
    leaks = e2e.Leaks(ROUND_THREE)
    found = {name: hit for name, text in written.items() if (hit := leaks.find(text))}
    print(f"\ncompact --mode {mode}: {len(ROUND_THREE)} round-three cases, {len(found)} texts with a leak")
    assert not found, json.dumps(found, ensure_ascii=False)[:3000]


def test_full_width_text_is_matched_folded_and_kept_as_written():
    out = redact("ｐａｓｓｗｏｒｄ：Ｔｒ０ｕｂ４ｄｏｒ＆３ｘ　ｔｈａｎｋｓ")
    assert out == "ｐａｓｓｗｏｒｄ：[REDACTED]　ｔｈａｎｋｓ"


# ------------------------------------------------------------------------------------------------
# 8. A session file that is not a regular file is refused unread (compact, bench, fidelity).


@pytest.mark.parametrize("kind", ["chardev", "link-chardev", "fifo", "link-fifo"])
def test_compact_refuses_a_session_that_is_not_a_regular_file(kind, tmp_path, fake, capsys):
    path = special(kind, tmp_path)
    named = tmp_path / "s.jsonl"
    if path.is_symlink():
        os.replace(path, named)  # a `.jsonl` name does not make it a file
        path = named
    assert main(["compact", str(path), "--no-progress"]) == 2
    one_error(capsys, "not a regular file")


def test_bench_and_the_loader_refuse_dev_zero(tmp_path, capsys):
    link = tmp_path / "zero.jsonl"
    link.symlink_to("/dev/zero")
    assert main(["bench", str(link), "--dry-run"]) == 2  # read until memory ran out before
    one_error(capsys, "not a regular file", "hermes-mlx bench: ")
    for load in (load_session, load_jsonl):
        with pytest.raises(Exception, match="not a regular file"):
            load(link)


# ------------------------------------------------------------------------------------------------
# 10. report: linear in session ids, and it keeps numbers, not payloads.


def telemetry_line(session_id: str, pad: int = 0) -> str:
    payload = {"outcome": "absorbed", "session_id": session_id, "tokens_before": 900, "tokens_after": 400}
    if pad:
        payload["note"] = "x" * pad
    return "micro compaction telemetry: " + json.dumps(payload) + "\n"


@pytest.mark.timeout(60)  # 80,000 ids: about 80 s when each new id was looked up in a list
def test_report_with_80000_session_ids(tmp_path, capsys):
    log = tmp_path / "agent.log"
    log.write_text("".join(telemetry_line(f"s{i:06d}") for i in range(80_000)))
    out = json.loads(_report(capsys, "--json", log))
    assert out["summary"]["passes"] == 80_000 and len(out["summary"]["sessions"]) == 80_000
    assert out["summary"]["sessions"][:2] == ["s000000", "s000001"]  # first-seen order


def test_report_keeps_numbers_not_payloads(tmp_path):
    log = tmp_path / "agent.log"
    log.write_text(telemetry_line("a" * 300_000, pad=300_000) * 3)
    records = report.read_logs([log]).records
    assert len(records) == 3
    for rec in records:
        kept = vars(rec)
        assert all(isinstance(v, (int, float, str, type(None))) for v in kept.values()), kept.keys()
        assert sum(len(v) for v in kept.values() if isinstance(v, str)) < 1_000  # not the 600 KB payload


# ------------------------------------------------------------------------------------------------
# 12. report's terminal output, setup-hermes and a deny-list, a turn of 3,000 calls.


def _report(capsys, *args) -> str:
    assert main(["report", *map(str, args)]) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return captured.out


@pytest.mark.parametrize("per_session", [False, True])
def test_report_escapes_control_characters_in_session_ids(per_session, tmp_path, capsys):
    log = tmp_path / "agent.log"
    evil = "s\x1b]0;pwned\x07\x1b[2J\x00\u202e"
    log.write_text(telemetry_line(evil) + telemetry_line("plain"))
    out = _report(capsys, log, *(["--per-session"] if per_session else []))
    assert not any(c in out for c in "\x1b\x07\x00\u202e")
    assert "\\x1b]0;pwned\\x07" in out
    assert json.loads(_report(capsys, "--json", log))["summary"]["sessions"][0] == evil  # JSON keeps the id


def test_setup_hermes_refuses_in_process_lines_while_plugins_disabled_names_it(tmp_path, capsys):
    home = tmp_path / "home"
    home.mkdir()
    config = "plugins:\n  disabled: [hermes-mlx]\n"
    (home / "config.yaml").write_text(config)
    args = ["setup-hermes", "--hermes-home", str(home), "--path", "in-process", "--engine", "--no-check"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "plugins.disabled names hermes-mlx" in err and "Remove hermes-mlx from plugins.disabled" in err
    assert (home / "config.yaml").read_text() == config and not list(home.glob("config.yaml.bak-*"))
    (home / "config.yaml").write_text("plugins:\n  disabled: [other]\n")
    assert main(args) == 0


def three_thousand_calls(answered_then: list[dict]) -> list[dict]:
    calls = [(f"c{i}", "terminal") for i in range(3_000)]
    return [user("go"), assistant("running all of them", calls=calls), tool("c7", "ok"), *answered_then]


def test_a_turn_of_3000_calls_and_one_result_stays_one_turn():
    messages = three_thousand_calls([assistant("done"), user("next"), assistant("ok")])
    out, repairs = repair(messages)
    assert len(out) == len(messages)  # 3,025 messages came back before: a stub per call
    assert [c["id"] for c in out[1]["tool_calls"]] == ["c7"] and out[1]["content"] == "running all of them"
    assert [r.kind for r in repairs] == ["removed_calls"] and "2999 calls" in repairs[0].detail
    assert tool_pairs_valid(out) and repair(out)[0] is out
    # the last assistant's calls are in flight (Hermes keeps them for their results): untouched
    in_flight = three_thousand_calls([])
    assert repair(in_flight) == (in_flight, [])


def test_compact_writes_a_turn_of_3000_calls_without_multiplying_it(tmp_path, fake):
    src_path, out_path = tmp_path / "s.jsonl", tmp_path / "out.jsonl"
    messages = three_thousand_calls([assistant("done"), user("next"), assistant("ok")])
    save_jsonl(messages, src_path)
    assert main(["compact", str(src_path), "--no-progress", "--out", str(out_path)]) == 0
    assert len(load_jsonl(out_path)) <= len(messages)


# The new rules on long lines: each is gated and bounded, so none backtracks over a long line.
LONG_LINES = {
    "cjk-cues": "密码是" * 60_000,
    "latin-cues": "Passwort lautet " * 20_000,
    "pairs": "admin / " * 30_000,
    "azure": "azure pat " + ("a2" * 26 + " ") * 4_000 + "AZDO" * 50_000,
    "hex-idents": ("token_" + "0123456789abcdef" * 3 + "_") * 4_000,
    "url-ats": "x://a:" + "b.c@" * 60_000,
    "full-width": "ｐａｓｓｗｏｒｄ：ｘ" * 30_000,
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", list(LONG_LINES))
def test_the_new_rules_stay_linear_on_a_long_line(name):
    out = redact(LONG_LINES[name])
    assert redact(out) == out


def test_a_windows_drive_path_after_a_secret_word_is_no_secret():
    from hermes_mlx.summarizer.redact import redact

    for text in ("token C:\\Windows\\System32", "copy the secret to D:\\keys\\prod\\"):
        assert redact(text) == text, text
    assert "[REDACTED]" in redact("the token: C9xQ2mZp7LwR4tYv8KsN")  # a value is still a value
