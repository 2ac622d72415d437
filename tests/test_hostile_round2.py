"""Hostile round two (issue 20): what a hostile user tried that did not hold, each case pinned.

Device nodes are made inside tmp_path (mknod, as root) so that a regression replaces a node of
the test's own, never the machine's /dev/null.
"""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest
import test_cli
from fakes import ScriptedSummarizer, session

from hermes_mlx.cli import main
from hermes_mlx.compactor.sessions import load_jsonl, save_jsonl
from hermes_mlx.files import NotAFileTarget, atomic_write

fake, src = test_cli.fake, test_cli.src  # the scripted `compact` fixtures, shared

pytestmark = pytest.mark.timeout(120)


def compact(*args) -> int:
    return main(["compact", *map(str, args), "--no-progress", "--context-limit", "4000"])


def one_error(capsys, needle: str, prefix: str = "hermes-mlx compact: ") -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith(prefix)]
    assert len(lines) == 1 and needle in lines[0], err
    return lines[0]


def char_device(path: Path) -> Path:
    """A character device node like /dev/null, but the test's own."""
    if os.geteuid() != 0:
        pytest.skip("mknod needs root")
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    return path


def special(kind: str, tmp_path: Path) -> Path:
    """A path naming something that is not a regular file: a device, a FIFO, or a link to one."""
    node = tmp_path / "node"
    if kind.endswith("fifo"):
        os.mkfifo(node)
    else:
        char_device(node)
    if kind.startswith("link"):
        link = tmp_path / "link"
        link.symlink_to(node)
        return link
    return node


def is_untouched(path: Path, kind: str) -> bool:
    node = path.resolve()
    mode = os.lstat(node).st_mode
    return (stat.S_ISFIFO(mode) if kind.endswith("fifo") else stat.S_ISCHR(mode)) and (
        not kind.startswith("link") or path.is_symlink()
    )


SPECIALS = ["chardev", "fifo", "link-to-chardev", "link-to-fifo"]


# ------------------------------------------------------------------------------------------------
# 1. Writes follow symlinks to their target and never replace a device, a FIFO or a link.


@pytest.mark.parametrize("kind", SPECIALS)
@pytest.mark.parametrize("option", ["--out", "--store"])
def test_compact_refuses_a_target_that_is_not_a_regular_file_before_any_work(kind, option, src, tmp_path, fake, capsys):
    target = special(kind, tmp_path)
    assert compact(src, option, target) == 2
    one_error(capsys, "FIFO" if kind.endswith("fifo") else "character device")
    assert fake["summarizer"].calls == []
    assert is_untouched(target, kind)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted({"s.jsonl", "node", target.name})  # no journal


def test_compact_out_through_a_symlink_writes_its_target_and_keeps_the_link(src, tmp_path, fake):
    real = tmp_path / "real.jsonl"
    real.write_text("old\n")
    real.chmod(0o640)
    link = tmp_path / "out.jsonl"
    link.symlink_to(real)
    assert compact(src, "--out", link) == 0
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert load_jsonl(real) and stat.S_IMODE(real.stat().st_mode) == 0o640


def test_compact_in_place_through_a_symlink_keeps_the_link(src, tmp_path, fake):
    link = tmp_path / "link.jsonl"
    link.symlink_to(src)
    inode = src.stat().st_ino
    assert compact(link, "--in-place") == 0
    assert link.is_symlink() and src.stat().st_ino != inode  # renamed over the target, not the link
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_save_jsonl_through_a_dangling_link_creates_its_target(tmp_path):
    link = tmp_path / "link.jsonl"
    link.symlink_to(tmp_path / "new.jsonl")
    save_jsonl(session(2), link)
    assert link.is_symlink() and load_jsonl(tmp_path / "new.jsonl") == session(2)


@pytest.mark.parametrize("kind", SPECIALS)
def test_save_jsonl_refuses_what_is_not_a_regular_file(kind, tmp_path):
    target = special(kind, tmp_path)
    with pytest.raises(NotAFileTarget):
        save_jsonl(session(2), target)
    assert is_untouched(target, kind)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_atomic_write_leaves_no_temporary_file_when_writing_fails(tmp_path):
    target = tmp_path / "f.txt"
    target.write_text("old")

    def fail(fh):
        fh.write("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_write(target, fail)
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_store_through_a_link_to_a_device_is_refused_by_the_store_itself(tmp_path):
    from hermes_mlx.compactor.store import SessionStore, StoreError

    link = special("link-to-chardev", tmp_path)
    with pytest.raises(StoreError, match="character device"):
        SessionStore(link)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "node"]


def setup(home: Path, *extra: str) -> int:
    return main(["setup-hermes", "--hermes-home", str(home), "--path", "loopback", "--no-check", *extra])


def test_setup_hermes_updates_a_symlinked_config_and_keeps_the_link(tmp_path, capsys):
    real = tmp_path / "dotfiles" / "hermes.yaml"
    real.parent.mkdir()
    real.write_text("model: {default: x}  # mine\n")
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").symlink_to(real)
    assert setup(home) == 0
    assert (home / "config.yaml").is_symlink()
    text = real.read_text()
    assert "provider: mlx" in text and "# mine" in text
    assert list(home.glob("config.yaml.bak-*"))


@pytest.mark.parametrize("kind", ["chardev", "fifo"])
def test_setup_hermes_refuses_a_config_that_is_not_a_file_unread(kind, tmp_path, capsys):
    home = tmp_path / "home"
    home.mkdir()
    node = special(kind, tmp_path)
    (home / "config.yaml").symlink_to(node)
    assert setup(home) == 2  # a FIFO is never opened: this would hang
    one_error(capsys, "FIFO" if kind == "fifo" else "character device", "setup-hermes: ")
    assert is_untouched(home / "config.yaml", "link-" + kind)
    assert sorted(p.name for p in home.iterdir()) == ["config.yaml"]


# ------------------------------------------------------------------------------------------------
# 6. setup-hermes keeps a config's mode, and a new config is 0600 (it may hold API keys).


def test_setup_hermes_keeps_a_0600_config_0600(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text("providers: {openai: {api_key: sk-secret}}\n")
    config.chmod(0o600)
    assert setup(tmp_path) == 0
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    (backup,) = tmp_path.glob("config.yaml.bak-*")
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600


def test_setup_hermes_creates_a_new_config_0600(tmp_path):
    old = os.umask(0o022)
    try:
        assert setup(tmp_path / "fresh") == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "fresh" / "config.yaml").stat().st_mode) == 0o600


# ------------------------------------------------------------------------------------------------
# 16. setup-hermes on an immutable config leaves nothing behind; a port out of range is refused.


def test_setup_hermes_on_an_immutable_config_leaves_nothing_behind(tmp_path, capsys, make_unwritable):
    config = tmp_path / "config.yaml"
    config.write_text("model: {default: x}\n")
    make_unwritable(config)
    assert setup(tmp_path) == 2
    line = one_error(capsys, "read-only or immutable", "setup-hermes: ")
    assert "Errno" not in line
    assert [p.name for p in tmp_path.iterdir()] == ["config.yaml"]


@pytest.mark.parametrize("port", ["70000", "-1", "http"])
def test_setup_hermes_refuses_a_port_out_of_range(port, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        setup(tmp_path, "--port", port)
    assert exit_.value.code == 2
    assert "--port" in capsys.readouterr().err
    assert not (tmp_path / "config.yaml").exists()


# ------------------------------------------------------------------------------------------------
# 9. bench --out naming an existing file is refused before any work.


def test_bench_out_naming_a_file_is_refused_before_work(src, tmp_path, capsys, monkeypatch):
    from hermes_mlx.bench import run as bench_run

    monkeypatch.setattr(bench_run, "run", lambda *a, **k: pytest.fail("bench ran with a bad --out"))
    monkeypatch.setattr(bench_run, "resolve", lambda model: pytest.fail("bench resolved a model with a bad --out"))
    taken = tmp_path / "results"
    taken.write_text("mine")
    assert main(["bench", str(src), "--out", str(taken), "--scenarios", "none", "--no-baselines"]) == 2
    one_error(capsys, "is not a folder", "hermes-mlx bench: ")
    assert taken.read_text() == "mine"


# ------------------------------------------------------------------------------------------------
# 11. Numeric options are checked while parsing: one usage line naming the option, exit 2.


def parse_error(capsys, argv: list[str], option: str) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert option in err and "Traceback" not in err


@pytest.fixture
def no_serving(monkeypatch):
    """`serve` must refuse before it would start: a regression returns 0 here instead of serving."""
    from hermes_mlx.integrations import server

    monkeypatch.setattr(server, "serve", lambda *a, **k: 0)


@pytest.mark.parametrize(
    "option, value",
    [
        ("--port", "70000"),
        ("--port", "-1"),
        ("--max-body-mb", "nan"),
        ("--max-body-mb", "inf"),
        ("--max-body-mb", "-1"),
        ("--request-timeout", "nan"),
        ("--request-timeout", "inf"),
        ("--max-prompt-tokens", "0"),
    ],
)
def test_serve_refuses_numbers_out_of_range(option, value, capsys, no_serving):
    parse_error(capsys, ["serve", option, value], option)


@pytest.mark.parametrize(
    "option, value", [("--context-limit", "0"), ("--context-limit", "-5"), ("--tail-tokens", "-5")]
)
def test_fidelity_refuses_numbers_out_of_range(option, value, capsys):
    parse_error(capsys, ["fidelity", option, value], option)


@pytest.mark.parametrize("scenario", ["cpu100000", "sessions-100000", "alternating-100000"])
def test_bench_dry_run_refuses_absurd_scenario_counts(scenario, src, capsys):
    assert main(["bench", str(src), "--dry-run", "--scenarios", scenario]) == 2
    one_error(capsys, "at most", "hermes-mlx bench: ")


# ------------------------------------------------------------------------------------------------
# 12. A key no client can send is refused at start (and a binary key file is one clear error).


@pytest.mark.parametrize(
    "key, why",
    [("clé-secrète", "not ASCII"), ("key ", "whitespace"), (" key", "whitespace"), ("key\x07", "control")],
)
@pytest.mark.parametrize("source", ["env", "file", "option"])
def test_serve_refuses_a_key_no_client_can_send(key, why, source, tmp_path, monkeypatch, capsys, no_serving):
    from hermes_mlx.integrations.server import API_KEY_ENV

    monkeypatch.delenv(API_KEY_ENV, raising=False)
    argv = ["serve"]
    if source == "env":
        monkeypatch.setenv(API_KEY_ENV, key)
    elif source == "file":
        (tmp_path / "key").write_bytes(key.encode("utf-8") + b"\n")
        argv += ["--api-key-file", str(tmp_path / "key")]
    else:
        argv += ["--api-key", key]
    assert main(argv) == 2
    one_error(capsys, "ASCII" if source == "file" and why == "not ASCII" else why, "hermes-mlx serve: ")


# fixed bytes, not os.urandom: a draw whose first line is printable ASCII (CI once drew b"A]\n…") is a key
BINARY = bytes.fromhex(
    "ef51716e534ac3df6562043f78f41d76c994b1992f05bad7da8c0eef71db38d338c1bafc22369dbd4d1488833bb9ff0a"
)


@pytest.mark.parametrize("content", [BINARY, b"\x00" * 100_000, b"\n\x8c\x11tr\xc2\xff\n", b""])
def test_serve_refuses_a_binary_key_file(content, tmp_path, capsys, no_serving):
    (tmp_path / "key").write_bytes(content)
    assert main(["serve", "--api-key-file", str(tmp_path / "key")]) == 2
    one_error(capsys, "--api-key-file", "hermes-mlx serve: ")


# ------------------------------------------------------------------------------------------------
# 15. fidelity exits non-zero when one of several sessions failed.


def test_fidelity_exits_1_when_one_of_several_sessions_failed(src, tmp_path, capsys, monkeypatch):
    from types import SimpleNamespace

    from hermes_mlx.bench import fidelity
    from hermes_mlx.commands import compact
    from hermes_mlx.summarizer import summarizer

    monkeypatch.setattr(summarizer, "MLXSummarizer", lambda *a, **k: ScriptedSummarizer())
    monkeypatch.setattr(compact, "build_summarizer", lambda args: None)  # no model load
    monkeypatch.setattr(fidelity, "run_session", lambda *a, **k: SimpleNamespace())
    monkeypatch.setattr(fidelity, "score", lambda name, *a, **k: SimpleNamespace(passes=1, name=name))
    monkeypatch.setattr(fidelity, "table", lambda scores: f"{len(scores)} sessions")
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json\n")
    assert main(["fidelity", str(src), str(broken)]) == 1
    err = capsys.readouterr().err
    assert "broken.jsonl" in err and "1 of 2 sessions failed" in err


# ------------------------------------------------------------------------------------------------
# 10. report: odd numbers and nesting are bad lines, unreadable files one clear error, memory bounded.

GOOD_LINE = (
    'micro compaction telemetry: {"outcome":"absorbed","session_id":"s","tokens_before":900,"tokens_after":400}\n'
)


def report_json(capsys, *paths) -> dict:
    import json

    assert main(["report", "--json", *map(str, paths)]) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return json.loads(captured.out)


@pytest.mark.parametrize(
    "payload",
    [
        '{"outcome":"absorbed","tokens_before":1e400,"tokens_after":1}',
        '{"outcome":"absorbed","tokens_before":Infinity}',
        '{"outcome":"absorbed","duration_ms":-Infinity}',
        '{"outcome":"absorbed","duration_ms":NaN}',
        '{"outcome":"absorbed","tokens_delta":' + "9" * 400 + "}",
        '{"outcome":"absorbed","tokens_delta":' + "9" * 5000 + "}",
        "[" * 100_000,
        '{"a":' * 100_000,
    ],
    ids=["1e400", "Infinity", "-Infinity", "NaN", "400-digits", "5000-digits", "deep-list", "deep-object"],
)
def test_report_counts_unusable_payloads_as_bad_lines(payload, tmp_path, capsys):
    log = tmp_path / "agent.log"
    log.write_text(GOOD_LINE + "micro compaction telemetry: " + payload + "\n" + GOOD_LINE)
    out = report_json(capsys, log)
    assert out["bad_lines"] == 1 and out["summary"]["passes"] == 2


def gz(tmp_path: Path, data: bytes, name: str = "agent.log.gz") -> Path:
    import gzip

    path = tmp_path / name
    path.write_bytes(gzip.compress(data, compresslevel=1))
    return path


@pytest.mark.parametrize("damage", ["truncated", "not-gzip", "garbled"])
def test_report_on_a_corrupt_gz_is_one_clear_error(damage, tmp_path, capsys):
    path = gz(tmp_path, GOOD_LINE.encode() * 2000)
    data = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "not-gzip":
        path.write_bytes(b"plain text, not gzip\n" * 10)
    else:
        path.write_bytes(data[:20] + bytes(b ^ 0x5A for b in data[20:-8]) + data[-8:])
    assert main(["report", str(path)]) == 2
    one_error(capsys, str(path), "hermes-mlx report: ")


def test_report_refuses_a_device(capsys):
    assert main(["report", "/dev/zero"]) == 2  # read for ever before: memory grew without limit
    one_error(capsys, "device", "hermes-mlx report: ")


def test_report_reads_a_gzip_bomb_in_bounded_memory(tmp_path, capsys):
    import tracemalloc

    bomb = gz(tmp_path, GOOD_LINE.encode() + b"\0" * (48 << 20) + b"\n" + GOOD_LINE.encode())
    assert bomb.stat().st_size < 1 << 20
    tracemalloc.start()
    try:
        out = report_json(capsys, bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out["summary"]["passes"] == 2
    assert peak < 24 << 20, f"peak {peak >> 20} MiB for a 48 MiB line"


# ------------------------------------------------------------------------------------------------
# 13. doctor says a config.yaml it cannot parse cannot be parsed (not "provider unset").


@pytest.mark.parametrize(
    "content, says",
    [
        (b"auxiliary:\n  compression:\n    provider: mlx\n  bad: [unclosed\n", "cannot be parsed as YAML at line"),
        (b"plugins:\n\tenabled: [hermes-mlx]\n", "cannot be parsed as YAML"),
        (b"auxiliary: {compression: {provider: \xff\xfe}}\n", "not UTF-8"),
        (b"- provider: mlx\n", "not a mapping"),
        (b"[" * 100_000, "cannot be parsed"),
    ],
    ids=["unclosed", "tab", "not-utf8", "list", "deep"],
)
def test_doctor_reports_an_unparsable_config_as_unparsable(content, says, tmp_path):
    from hermes_mlx.integrations.hermes_checks import doctor_report

    (tmp_path / "config.yaml").write_bytes(content)
    report = doctor_report(tmp_path, {"path": "loopback"}, run_feasibility=False)
    assert len(report["warnings"]) == 1 and says in report["warnings"][0], report["warnings"]


# ------------------------------------------------------------------------------------------------
# 17. One model, one cache entry, whatever it is called.


def test_the_default_model_by_its_manifest_name_is_the_same_cache_entry():
    from hermes_mlx.engine.generate import resolve
    from hermes_mlx.engine.models import DEFAULT_MODEL

    assert resolve(None) == resolve(DEFAULT_MODEL)  # resolving loads nothing: the folder is present


def test_one_folder_by_three_names_loads_once(tmp_path):
    from tiny import build_tiny_model

    from hermes_mlx.engine.generate import engine_state, generate, warm_models

    folder = build_tiny_model(tmp_path / "m17", seed=17)
    link = tmp_path / "alias"
    link.symlink_to(folder)
    models, _ = engine_state()
    before = models.loads
    for name in (str(folder), str(link), str(folder) + "/"):
        generate("hello", model=name, max_tokens=2)
    assert models.loads - before == 1
    assert len([w for w in warm_models() if Path(w["path"]).resolve() == folder.resolve()]) == 1


# ------------------------------------------------------------------------------------------------
# 7, 8, 14. serve: slow bodies hold no queue place; a cut stream ends with an error and no [DONE];
# a client that hangs up mid-body is a clean log line.

WAIT_S = 120  # a bound on waiting for the server, never a speed assertion
HELLO = {"model": "x", "messages": [{"role": "user", "content": "hello"}], "max_tokens": 4}


def partial_body(port: int, declared: int = 1000) -> socket.socket:
    """A client that sends its headers and the first bytes of its body, then nothing more."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT_S)
    sock.sendall(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: " + str(declared).encode() + b"\r\n\r\n" + b'{"messages": ['
    )
    return sock


def status_of(sock) -> int:
    head = b""
    while b"\r\n" not in head:
        part = sock.recv(4096)
        assert part, head
        head += part
    return int(head.split(b" ", 2)[1])


def test_slow_bodies_hold_no_queue_place_and_get_408(tiny_model):
    from test_server import in_process
    from test_server_abuse import health, post, until

    from hermes_mlx.integrations.server import build_app

    app = build_app(tiny_model, max_running=1, max_waiting=1, body_timeout=3)
    with in_process(app, WAIT_S) as port:
        slow = [partial_body(port) for _ in range(6)]
        until(lambda h: h["active"] >= 7, port)  # the six, and this /health request
        h = health(port)
        assert h["waiting"] == 0 and h["running"] == 0  # they are not in the queue
        status, body = post(port, HELLO)
        assert status == 200, body  # a whole request still gets through
        assert [status_of(s) for s in slow] == [408] * 6  # each told at its body deadline
        for s in slow:
            s.close()
    assert app.state.waiting == 0 and app.state.running == 0


def test_a_client_that_hangs_up_mid_body_is_a_clean_log_line(tiny_model, caplog):
    import logging

    from test_server import in_process
    from test_server_abuse import until

    from hermes_mlx.integrations.server import build_app

    app = build_app(tiny_model)
    with caplog.at_level(logging.INFO, logger="hermes_mlx.integrations"), in_process(app, WAIT_S) as port:
        sock = partial_body(port)
        until(lambda h: h["active"] >= 2, port)  # it, and this /health request
        sock.close()
        until(lambda h: h["active"] == 1, port)
    records = [r for r in caplog.records if r.name.startswith("hermes_mlx")]
    assert not [r for r in records if r.levelno >= logging.ERROR], [r.getMessage() for r in records]
    assert any("hung up while sending" in r.getMessage() for r in records)


def test_a_stream_cut_by_sigterm_ends_with_an_error_event_and_no_done(tiny_model):
    import json
    import signal

    from serve_process import start_server
    from test_server_abuse import LONG, until

    proc, port = start_server("--model", tiny_model, "--max-prompt-tokens", "1000000", "--request-timeout", "600")
    try:
        raw = json.dumps({**LONG, "stream": True}).encode()
        sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT_S)
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: " + str(len(raw)).encode() + b"\r\n\r\n" + raw
        )
        until(lambda h: h["busy"] and h["warm"] and h["running"] == 1, port)  # the engine has it
        seen = sock.recv(65536)
        assert b"data: " in seen  # the stream has started
        proc.send_signal(signal.SIGTERM)
        while part := sock.recv(65536):
            seen += part
        proc.wait(timeout=WAIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = seen.decode()
    assert "data: [DONE]" not in text, text[-500:]
    errors = [json.loads(x[6:]) for x in text.splitlines() if x.startswith("data: {") and '"error"' in x]
    assert errors and "shutting down" in errors[-1]["error"]["message"], text[-500:]
