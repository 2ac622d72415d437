"""Every private Hermes name we use goes through hermes_seams: found where this Hermes keeps it,
or a safe way out when it has it nowhere. A fake Hermes on disk stands for each shape: the 0.22
fork (`_aux_progress` in agent/auxiliary_client.py), upstream main (the thread-local moved to a
split-off module, only the tick left in auxiliary_client), and one with no seam at all."""

import logging
import sys
import textwrap
from pathlib import Path

import pytest

from hermes_mlx.integrations import context_engine, hermes_seams, plugin

ROOT = Path(__file__).resolve().parent.parent

FORK_022 = {  # the fork's shape: the thread-local in auxiliary_client, mixin helpers in micro_compaction
    "agent/auxiliary_client.py": "import threading\n_aux_progress = threading.local()\n",
    "agent/micro_compaction.py": """
        class MicroCompactionMixin:
            def _micro_start_watermark(self, held):
                return None, 7
            def _sync_micro_compact_to_db(self, messages, *, held, start_watermark):
                self.synced = (len(messages), start_watermark)
                return True
            @staticmethod
            def _rolling_summary_from_marker(content):
                return "theirs:" + content
            def _build_micro_summary_prompt(self, existing_summary, exchange_text):
                return [{"role": "user", "content": existing_summary + "|" + exchange_text}]
        """,
}
UPSTREAM_SPLIT = {  # upstream main: the local lives in a split-off module; auxiliary_client keeps the tick
    "agent/auxiliary_progress.py": "import threading\n_aux_progress = threading.local()\n",
    "agent/auxiliary_client.py": """
        from agent.auxiliary_progress import _aux_progress as _local
        def _notify_aux_progress():
            hook = getattr(_local, "hook", None)
            if hook is not None:
                hook()
        """,
}


@pytest.fixture
def fake_hermes(tmp_path, monkeypatch):
    """Write a fake Hermes package and make it the importable `agent`, for one test."""

    def install(files: dict) -> Path:
        for rel, body in {"agent/__init__.py": "", **files}.items():
            path = tmp_path / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(body))
        monkeypatch.syspath_prepend(str(tmp_path))
        return tmp_path

    for name in [m for m in sys.modules if m == "agent" or m.startswith("agent.")]:
        monkeypatch.delitem(sys.modules, name)
    hermes_seams.forget()
    yield install
    for name in [m for m in sys.modules if m == "agent" or m.startswith("agent.")]:
        del sys.modules[name]
    hermes_seams.forget()


class Chunked:
    on_chunk = None


def test_every_private_hermes_name_in_our_code_goes_through_the_seam_table():
    """No module but hermes_seams names a private Hermes helper; the table names each one once."""
    names = [p.split(":")[1].split(".")[-1] for s in hermes_seams.SEAMS.values() for p in s.places]
    private = {n for n in names if n.startswith("_")}
    for path in (ROOT / "hermes_mlx").rglob("*.py"):
        if path.name == "hermes_seams.py":
            continue
        text = path.read_text()
        assert not any(f".{n}(" in text or f".{n}," in text for n in private), path


def test_aux_progress_is_found_in_the_fork(fake_hermes):
    fake_hermes(FORK_022)
    ticks = []
    from agent import auxiliary_client

    auxiliary_client._aux_progress.hook = lambda: ticks.append(1)
    summarizer = Chunked()
    with context_engine._progress_to_hermes(summarizer):
        summarizer.on_chunk()
    assert ticks == [1] and summarizer.on_chunk is None
    assert hermes_seams.find("aux_progress")[1] == "agent.auxiliary_client:_aux_progress"


def test_aux_progress_is_found_after_upstream_split_it_off(fake_hermes):
    fake_hermes(UPSTREAM_SPLIT)
    ticks = []
    from agent import auxiliary_progress

    auxiliary_progress._aux_progress.hook = lambda: ticks.append(1)
    summarizer = Chunked()
    with context_engine._progress_to_hermes(summarizer):
        summarizer.on_chunk()
        summarizer.on_chunk()
    assert ticks == [1, 1]
    assert hermes_seams.find("aux_progress")[1] == "agent.auxiliary_progress:_aux_progress"


def test_a_missing_seam_degrades_and_is_logged_once(fake_hermes, caplog):
    fake_hermes({})
    summarizer = Chunked()
    with caplog.at_level(logging.WARNING, logger="hermes_mlx.integrations"):
        for _ in range(3):
            with context_engine._progress_to_hermes(summarizer):
                assert summarizer.on_chunk is None  # no hook: the batch runs without ticks
    said = [r.getMessage() for r in caplog.records if "aux_progress" in r.getMessage()]
    assert len(said) == 1 and "context_timeout_seconds" in said[0]


def test_engine_micro_commit_uses_hermes_helpers_or_skips_the_pass(fake_hermes, tmp_path):
    fake_hermes(FORK_022)
    engine = context_engine.EngineCore(home=tmp_path)
    engine._session_db = object()
    assert engine._hermes_start_watermark([]) == (None, 7)
    assert engine._hermes_commit([{"role": "user"}], [], 7) and engine.synced == (1, 7)
    hermes_seams.forget()
    for name in [m for m in sys.modules if m.startswith("agent.")]:
        del sys.modules[name]
    (tmp_path / "agent" / "micro_compaction.py").write_text("class MicroCompactionMixin:\n    pass\n")
    messages = [{"role": "user", "content": "hi"}]
    assert engine._hermes_start_watermark([]) == (None, None)  # unbounded, as Hermes's own on such a store
    assert engine._micro_pass(messages) is messages  # no commit path: no pass at all


def test_the_ahead_guess_reads_markers_ours_when_hermes_has_no_helper(fake_hermes):
    fake_hermes(FORK_022)
    assert plugin._rolling_summary("## Goal\nx") == "theirs:## Goal\nx"
    hermes_seams.forget()
    for name in [m for m in sys.modules if m.startswith("agent.")]:
        del sys.modules[name]
    fake_hermes({"agent/micro_compaction.py": "class MicroCompactionMixin:\n    pass\n"})
    assert plugin._rolling_summary("## Goal\nx") == "## Goal\nx"
    assert plugin.next_micro_request([{"role": "user", "content": "x"}], 2000) is None  # no builder: no guess


def test_the_ahead_guess_uses_a_defrag_mode_when_the_builder_has_one():
    """PR #104486 gives defrag its own prompt mode; the guess asks for it by the keyword's name."""

    class Builder:
        def build(self, existing, exchange, *, defrag=False):
            return [{"role": "user", "content": ("DEFRAG:" if defrag else "MERGE:") + existing + exchange}]

    assert plugin._defrag_request(Builder.build, Builder(), "old")[0]["content"] == "DEFRAG:old"

    class Fork:
        def build(self, existing, exchange):
            return [{"role": "user", "content": "MERGE:" + existing + "|" + exchange}]

    assert plugin._defrag_request(Fork.build, Fork(), "old")[0]["content"] == "MERGE:|old"


def test_doctor_reads_the_seams_from_sources_without_importing_hermes(fake_hermes):
    fake_hermes(UPSTREAM_SPLIT)
    report = hermes_seams.from_sources()
    assert not [m for m in sys.modules if m.startswith("agent.")]  # found by spec, never run
    assert report["aux_progress"]["found"] == "agent.auxiliary_progress:_aux_progress"
    assert report["sync_micro_compact_to_db"]["found"] is None and report["sync_micro_compact_to_db"]["then"]


def test_registration_checks_features_not_a_version(fake_hermes, caplog):
    """plugin.yaml pins no Hermes version (upstream reports 0.21.3, or 0.0.0 unstamped); the
    registration hook names what is missing and registers anyway."""
    assert "requires_hermes" not in (ROOT / "hermes_mlx" / "plugin.yaml").read_text()
    fake_hermes(UPSTREAM_SPLIT)
    with caplog.at_level(logging.WARNING, logger="hermes_mlx.integrations"):
        missing = hermes_seams.registration_check()
    assert "aux_progress" not in missing and "sync_micro_compact_to_db" in missing
    assert any("sync_micro_compact_to_db" in r.getMessage() for r in caplog.records)
