"""The thin CLI over the engine: generate (text and --json) and doctor."""

import dataclasses
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from fakes import ScriptedSummarizer, session

from hermes_mlx.cli import main
from hermes_mlx.compactor.sessions import load_session, save_jsonl
from hermes_mlx.compactor.store import SessionStore
from hermes_mlx.compactor.store_rows import encode


def test_generate_json_names_stats_as_mlx_lm_does(tiny_model, capsys):
    from mlx_lm.generate import GenerationResponse

    from hermes_mlx.commands.generate import STATS

    assert main(["generate", "--model", tiny_model, "--max-tokens", "4", "--json", "hello"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"text", "model", *STATS}
    shared = {f.name for f in dataclasses.fields(GenerationResponse)} & set(out)
    assert shared >= {"text", "prompt_tokens", "prompt_tps", "generation_tokens", "generation_tps", "finish_reason"}
    assert 1 <= out["generation_tokens"] <= 4


def test_generate_streams_text_and_prints_stats(tiny_model, capsys):
    assert main(["generate", "--model", tiny_model, "--max-tokens", "3", "--raw", "def main"]) == 0
    captured = capsys.readouterr()
    assert "prompt tokens" in captured.err and "generated" in captured.err


def test_generate_bad_input_is_one_clear_error(tiny_model, capsys):
    assert main(["generate", "--model", tiny_model, "--max-tokens", "0", "x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hermes-mlx: max_tokens must be a positive integer")
    assert "Traceback" not in err


def test_doctor_reports_the_path_in_use(capsys):
    assert main(["doctor", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["device"] in ("cpu", "gpu (Metal)")
    for key in ("blas", "weights", "cache_folder", "models", "mlx", "mlx_lm", "hermes_integration"):
        assert key in report
    assert isinstance(report["models"], list)
    assert [m["name"] for m in report["models"] if m["default"]] == ["smollm2-135m-instruct"]
    assert report["hermes_integration"]["path"] in ("in-process", "loopback")


# ---------------------------------------------------------------------------------------------
# `compact`: every input is checked before the first pass, and the exit code tells the truth.

ROOT = Path(__file__).resolve().parent.parent


class Killed(BaseException):
    """Stands in for SIGKILL in-process: no `except Exception` in the code under test stops it."""


@pytest.fixture
def fake(monkeypatch):
    from hermes_mlx.commands import compact

    holder = {"summarizer": ScriptedSummarizer()}
    monkeypatch.setattr(compact, "build_summarizer", lambda args: holder["summarizer"])
    return holder


@pytest.fixture
def src(tmp_path):
    path = tmp_path / "s.jsonl"
    save_jsonl(session(8), path)
    return path


def compact(*args) -> int:
    return main(["compact", *map(str, args), "--no-progress"])


def one_line_error(capsys, needle: str) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("hermes-mlx compact: ")]
    assert len(lines) == 1 and needle in lines[0], err
    return lines[0]


def immutable(path: Path) -> bool:
    """Make `path` unwritable even for root (chattr +i); False where that is not possible."""
    if os.geteuid() != 0:
        path.chmod(0o555 if path.is_dir() else 0o444)
        return True
    return subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False).returncode == 0


def mutable(path: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True, check=False)
    path.chmod(0o755 if path.is_dir() else 0o644)


def stored_originals_missing(db: Path, session_id: str, originals: list[dict]) -> list[dict]:
    with SessionStore(db) as store:
        rows = {encode(r.message, 0) for r in store.history(session_id)}
    return [m for m in originals if encode(m, 0) not in rows]


@pytest.mark.parametrize("option", ["--out", "--log", "--store"])
def test_compact_missing_folder_or_directory_target_is_refused_before_any_pass(option, src, tmp_path, fake, capsys):
    assert compact(src, "--context-limit", 4000, option, tmp_path / "nope" / "x") == 2
    one_line_error(capsys, "does not exist")
    assert compact(src, "--context-limit", 4000, option, tmp_path) == 2
    one_line_error(capsys, "is a directory")
    assert fake["summarizer"].calls == []


def test_compact_out_equal_to_input_needs_in_place(src, tmp_path, fake, capsys):
    before = src.read_bytes()
    assert compact(src, "--context-limit", 4000, "--out", src) == 2
    one_line_error(capsys, "--in-place")
    assert src.read_bytes() == before and fake["summarizer"].calls == []
    link = tmp_path / "link.jsonl"
    link.symlink_to(src)
    assert compact(src, "--context-limit", 4000, "--out", link) == 2  # the same file by another name
    assert src.read_bytes() == before

    assert compact(src, "--context-limit", 4000, "--in-place") == 0
    after = load_session(src)
    assert len(after) < len(session(8)) and any(m.get("_compressed_summary") for m in after)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.jsonl", "s.jsonl"]  # no temp file left


def test_compact_log_same_as_input_is_refused(src, fake, capsys):
    assert compact(src, "--log", src) == 2
    one_line_error(capsys, "is the session file itself")


@pytest.mark.parametrize("value", ["0", "-5", "1023"])
def test_compact_nonsensical_context_limit_is_refused(value, src, fake, capsys):
    assert compact(src, "--context-limit", value) == 2
    one_line_error(capsys, "--context-limit must be at least 1024")


@pytest.mark.parametrize("model", ["no-such-model", "/nonexistent/model-folder"])
def test_compact_absent_model_is_refused_at_once(model, src, capsys):
    assert compact(src, "--model", model) == 2
    one_line_error(capsys, f"cannot use {model} as the summarizer")


def test_compact_model_that_fails_to_load_is_refused(src, tmp_path, capsys):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llama"}')
    assert compact(src, "--model", folder) in (1, 2)
    one_line_error(capsys, "as the summarizer")


def test_compact_every_pass_failed_is_exit_1_with_the_reason_once(src, fake, capsys):
    fake["summarizer"] = ScriptedSummarizer([False] * 200)
    assert compact(src, "--context-limit", 4000) == 1
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("hermes-mlx compact:")]
    assert lines and all("failed" in line for line in lines)
    assert any(line.endswith(" passes)") and "every pass failed" in line for line in lines)
    assert any("passes failed: summarize_failed: scripted merge failure" in line for line in lines)
    assert len(lines) == len(set(lines))  # deduplicated, with counts


def test_compact_surrogates_are_stored_losslessly(src, tmp_path, fake, capsys):
    messages = session(8)
    messages[7]["content"] = "tool output \ud800 with a lone surrogate"
    save_jsonl(messages, src)
    db = tmp_path / "state.db"
    assert compact(src, "--context-limit", 1024, "--store", db, "--out", tmp_path / "o.jsonl") == 0
    assert "store write" not in capsys.readouterr().err
    assert stored_originals_missing(db, "s", messages) == []
    with SessionStore(db) as store:
        hits = store.search("s", "with a lone surrogate")
        assert [h.message["content"] for h in hits] == [messages[7]["content"]]  # exact, and searchable
        assert not hits[0].active and hits[0].compacted  # archived by a pass, not left behind


def test_compact_store_grows_with_the_transcript_not_with_passes(tmp_path, fake, capsys):
    src = tmp_path / "long.jsonl"
    save_jsonl(session(30), src)
    db = tmp_path / "state.db"
    assert compact(src, "--context-limit", 4000, "--store", db) == 0
    with sqlite3.connect(db) as conn:
        (rows,) = conn.execute("SELECT COUNT(*) FROM messages").fetchone()
        (passes,) = conn.execute("SELECT passes FROM replay_state").fetchone()
    assert passes > 20
    assert rows <= len(session(30)) + 2 * passes  # originals + each pass's summary (and merged user row)


@pytest.mark.parametrize("what", ["file", "folder"])
def test_compact_unwritable_store_is_an_error_not_warnings(what, src, tmp_path, fake, capsys):
    folder = tmp_path / "db"
    folder.mkdir()
    db = folder / "state.db"
    SessionStore(db).close()
    target = db if what == "file" else folder
    if not immutable(target):
        pytest.skip("cannot make a file immutable here")
    try:
        assert compact(src, "--context-limit", 4000, "--store", db) == 2  # found before any work
    finally:
        mutable(target)
    one_line_error(capsys, "not writable")
    assert fake["summarizer"].calls == []


def test_compact_immutable_shm_is_an_error_not_sigbus(src, tmp_path):
    db = tmp_path / "state.db"
    SessionStore(db).close()
    shm = Path(str(db) + "-shm")
    shm.write_bytes(b"")
    if not immutable(shm):
        pytest.skip("cannot make a file immutable here")
    try:
        code = (
            "import sys; sys.path.insert(0, 'tests'); from fakes import ScriptedSummarizer;"
            "from hermes_mlx.commands import compact; compact.build_summarizer = lambda a: ScriptedSummarizer();"
            "from hermes_mlx.cli import main;"
            f"sys.exit(main(['compact', {str(src)!r}, '--store', {str(db)!r}, '--no-progress']))"
        )
        proc = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
        )
    finally:
        mutable(shm)
    assert proc.returncode == 2, proc.stderr  # not -SIGBUS
    assert "-shm is not writable" in proc.stderr and "Traceback" not in proc.stderr


def test_compact_locked_store_is_an_error(src, tmp_path, fake, capsys, monkeypatch):
    db = tmp_path / "state.db"
    SessionStore(db).close()
    monkeypatch.setitem(SessionStore.__init__.__kwdefaults__, "timeout", 0.05)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        assert compact(src, "--context-limit", 4000, "--store", db) == 1
    finally:
        holder.close()
    one_line_error(capsys, "database is locked")


def test_compact_hermes_state_db_as_store_is_rejected_untouched(src, tmp_path, fake, capsys):
    db = tmp_path / "hermes-state.db"
    conn = sqlite3.connect(db)
    conn.execute(
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL,"
        " content TEXT, timestamp REAL NOT NULL)"
    )
    conn.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES ('a', 'user', 'hi', 1.0)")
    conn.commit()
    conn.close()
    before = db.read_bytes()
    assert compact(src, "--store", db) == 2
    one_line_error(capsys, "another schema")
    assert db.read_bytes() == before  # in particular, not switched to WAL (header bytes 18-19)
    assert before[18:20] == b"\x01\x01"
    assert not Path(str(db) + "-wal").exists()


def test_compact_killed_run_resumes_from_the_store(tmp_path, fake, capsys):
    src = tmp_path / "s.jsonl"
    messages = session(12)
    save_jsonl(messages, src)
    db = tmp_path / "state.db"
    fake["summarizer"] = ScriptedSummarizer([True] * 5 + [Killed()])
    with pytest.raises(Killed):
        compact(src, "--context-limit", 4000, "--store", db)
    with SessionStore(db) as store:
        state = store.progress("s")
    assert state is not None and 0 < state.turns < 12
    capsys.readouterr()
    fake["summarizer"] = ScriptedSummarizer()
    assert compact(src, "--context-limit", 4000, "--store", db) == 0
    out = capsys.readouterr().out
    assert f"resumed session 's' from {db} after turn {state.turns} of 12" in out
    with SessionStore(db) as store:
        assert store.progress("s").turns == 12 and not store.progress("s").pending
        assert store.integrity_check() == "ok"
    assert stored_originals_missing(db, "s", messages) == []
    # A third run has nothing left to do, and says so.
    assert compact(src, "--context-limit", 4000, "--store", db) == 0
    assert "already replayed to the end" in capsys.readouterr().out


def test_compact_store_of_a_different_transcript_is_not_resumed(src, tmp_path, fake, capsys):
    db = tmp_path / "state.db"
    assert compact(src, "--context-limit", 4000, "--store", db) == 0
    other = session(8)
    other[1]["content"] = "a different first question"
    save_jsonl(other, src)
    assert compact(src, "--context-limit", 4000, "--store", db) == 2
    one_line_error(capsys, "--restart")
    assert compact(src, "--context-limit", 4000, "--store", db, "--restart") == 0


def test_compact_deep_json_is_a_clear_error(tmp_path, fake, capsys):
    src = tmp_path / "deep.jsonl"
    src.write_text('{"role": "user", "content": "x", "meta": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    assert compact(src) == 2
    one_line_error(capsys, "nested too deeply")


@pytest.mark.parametrize("session_id", [None, 7])
def test_compact_state_db_with_null_or_integer_session_id(session_id, tmp_path, fake, capsys):
    db = tmp_path / "state.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id, role TEXT, content, timestamp REAL)")
    rows = [(session_id, "user", "hello", 1.0), (session_id, "assistant", "hi", 2.0)]
    conn.executemany("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)", rows)
    conn.commit()
    conn.close()
    if session_id is None:
        assert compact(db) == 2
        one_line_error(capsys, "no session_id")
    else:
        assert compact(db, "--session-id", "7") == 0
        assert compact(db) == 0


@pytest.mark.parametrize("content", [b"\xff\xfe", 42])
def test_compact_state_db_with_non_text_content_is_a_clear_error(content, tmp_path, fake, capsys):
    db = tmp_path / "state.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content, timestamp REAL)")
    conn.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES ('a', 'user', ?, 1.0)", (content,))
    conn.commit()
    conn.close()
    assert compact(db) == 2
    one_line_error(capsys, "row 1: content is")


# ---------------------------------------------------------------------------------------------
# The process ends with the command's status, not MLX's teardown abort.


def test_the_process_ends_with_the_command_status_once_mlx_is_loaded(monkeypatch, capsys):
    # MLX can abort the interpreter's teardown ("terminate called without an active exception",
    # exit 134) after a thread other than the engine's used it: seen on Ctrl-C to `serve`. So
    # cli.main() with no argv (the `hermes-mlx` process) runs the exit handlers, flushes, and
    # ends with os._exit; called with an argv (in process, as these tests do) it just returns.
    import atexit

    import mlx.core  # noqa: F401  (what makes the teardown risky)

    from hermes_mlx import cli

    events = []

    class Exited(BaseException):
        pass

    def fake_exit(code):
        events.append(("os._exit", code))
        raise Exited

    monkeypatch.setattr(cli.os, "_exit", fake_exit)
    monkeypatch.setattr(atexit, "_run_exitfuncs", lambda: events.append(("exit handlers", None)))
    monkeypatch.setattr(cli.logging, "shutdown", lambda: events.append(("logging flushed", None)))
    monkeypatch.setattr(sys, "argv", ["hermes-mlx", "models", "list"])
    with pytest.raises(Exited):
        cli.main()
    assert events == [("exit handlers", None), ("logging flushed", None), ("os._exit", 0)]
    assert "smollm2-135m-instruct" in capsys.readouterr().out
    events.clear()
    assert cli.main(["models", "list"]) == 0 and events == []


def test_the_process_prints_everything_before_it_ends(tiny_model):
    # os._exit skips the interpreter's own flushing: what the command printed must still arrive.
    code = (
        "import sys, threading, hermes_mlx;"
        "from hermes_mlx.engine.generate import count_tokens;"
        f"t = threading.Thread(target=count_tokens, args=([{{'role': 'user', 'content': 'hi'}}],), kwargs={{'model': {tiny_model!r}}});"
        "t.start(); t.join();"
        f"sys.argv = ['hermes-mlx', 'generate', '--model', {tiny_model!r}, '--max-tokens', '2', '--json', 'hi'];"
        "from hermes_mlx.cli import main; sys.exit(main())"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "terminate called" not in proc.stderr
    assert json.loads(proc.stdout)["generation_tokens"] >= 1


def test_a_bug_still_shows_its_traceback_and_exits_1(tmp_path):
    code = (
        "import sys, mlx.core; from hermes_mlx.commands import report;"
        "report.run = lambda args: 1 / 0;"
        "sys.argv = ['hermes-mlx', 'report', 'x.log'];"
        "from hermes_mlx.cli import main; sys.exit(main())"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 1 and "ZeroDivisionError" in proc.stderr and "Traceback" in proc.stderr
