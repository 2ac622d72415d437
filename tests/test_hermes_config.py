"""setup-hermes: config merge with a backup and no clobbering, the self-check, and doctor facts."""

import argparse

import pytest
import yaml
from fakes import ScriptedSummarizer
from starlette.testclient import TestClient

from hermes_mlx.integrations import adapter, hermes_config as hc


def test_fresh_home_gets_the_loopback_lines(tmp_path):
    result = hc.write_config(tmp_path / "h", "loopback", port=9001)
    data = yaml.safe_load(result.config_path.read_text())
    assert data == {"providers": {"mlx": {"base_url": "http://127.0.0.1:9001/v1", "api_key": "local"}},
                    "auxiliary": {"compression": {"provider": "mlx"}}}
    assert result.backup is None and result.changes


def test_merge_keeps_other_keys_and_backs_up(tmp_path):
    original = {
        "model": {"default": "anthropic/claude", "provider": "openrouter"},
        "auxiliary": {"compression": {"provider": "auto", "timeout": 400}, "vision": {"provider": "x"}},
        "plugins": {"enabled": ["disk-cleanup"], "disabled": ["y"]},
        "providers": {"other": {"base_url": "http://127.0.0.1:1/v1"}},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(original))
    result = hc.write_config(tmp_path, "in-process")
    data = yaml.safe_load(path.read_text())
    assert data["model"] == original["model"]
    assert data["auxiliary"]["compression"] == {"provider": "mlx", "timeout": 400}
    assert data["auxiliary"]["vision"] == {"provider": "x"}
    assert data["plugins"] == {"enabled": ["disk-cleanup", "hermes-mlx"], "disabled": ["y"]}
    assert data["providers"] == original["providers"]
    assert yaml.safe_load(result.backup.read_text()) == original
    assert "auxiliary.compression.provider: 'auto' -> 'mlx'" in result.changes
    # idempotent: a second run changes nothing and makes no second backup
    again = hc.write_config(tmp_path, "in-process")
    assert again.changes == [] and again.backup is None


def test_in_process_warns_about_a_loopback_provider_entry(tmp_path):
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({"providers": {"mlx": {"base_url": "http://127.0.0.1:8765/v1"}}}))
    assert hc.write_config(tmp_path, "in-process").warnings


def test_non_mapping_config_is_refused(tmp_path):
    (tmp_path / "config.yaml").write_text("- a\n- b\n")
    with pytest.raises(ValueError, match="not a mapping"):
        hc.write_config(tmp_path, "loopback")
    assert (tmp_path / "config.yaml").read_text() == "- a\n- b\n"


def test_hermes_info_without_hermes():
    info = hc.hermes_info()
    assert info["importable"] is False and info["path"] == "loopback"
    assert set(info) >= {"distribution", "version", "location", "micro_compaction", "plugin_entry_point"}


def test_hermes_home(monkeypatch, tmp_path):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    assert hc.hermes_home() == tmp_path
    assert hc.hermes_home(tmp_path / "x") == tmp_path / "x"


GOOD = "## Goal\nFix src/pager.py\n\n## Progress\n- tests pass"


def test_self_check_in_process(monkeypatch):
    monkeypatch.setattr(adapter, "_summarizer", lambda model, timeout: ScriptedSummarizer([GOOD]))
    check = hc.self_check("in-process")
    assert check.ok and "pager.py" in check.content


def test_self_check_reports_a_failed_summary(monkeypatch):
    monkeypatch.setattr(adapter, "_summarizer", lambda model, timeout: ScriptedSummarizer([False]))
    check = hc.self_check("in-process")
    assert not check.ok and "empty" in check.detail


def test_self_check_loopback_without_a_server_says_how_to_start_one():
    with __import__("socket").socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    check = hc.self_check("loopback", port=port, timeout=10)
    assert not check.ok and f"hermes-mlx serve --port {port}" in check.detail


def test_setup_command(monkeypatch, tmp_path, capsys):
    from hermes_mlx.commands import setup_hermes

    monkeypatch.setattr(adapter, "_summarizer", lambda model, timeout: ScriptedSummarizer([GOOD]))
    parser = argparse.ArgumentParser()
    setup_hermes.register(parser.add_subparsers())
    args = parser.parse_args(["setup-hermes", "--hermes-home", str(tmp_path), "--path", "in-process"])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "self-check ok" in out and "plugins.enabled: added 'hermes-mlx'" in out
    assert yaml.safe_load((tmp_path / "config.yaml").read_text())["auxiliary"]["compression"]["provider"] == "mlx"
