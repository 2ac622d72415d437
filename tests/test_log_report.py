"""Telemetry report: parse Hermes-format log lines, aggregate, format, and the CLI command."""

from __future__ import annotations

import argparse
import gzip
import json
import logging

import pytest

from hermes_mlx.commands import report as report_cmd
from hermes_mlx.compactor import log_report as report
from hermes_mlx.integrations.hermes_config import agent_log_path

# The seed's five-pass session: (messages, tokens, occupancy %, duration ms).
SEED = [
    (40, 39, 27479, 27778, 8.7, 2200),
    (61, 59, 48676, 48128, 15.0, 4500),
    (70, 67, 58309, 55915, 17.5, 9100),
    (84, 80, 75251, 69818, 21.8, 36200),
    (84, 80, 74659, 70264, 22.0, 31200),
]


def payload(n=1, session="sess-a", outcome="absorbed", mb=40, ma=39, tb=1000, ta=900, occ=2.6, ms=1500, ex=868):
    """Exactly the fields Hermes's micro-compaction telemetry carries."""
    return {
        "event": "micro_compaction",
        "session_id": session,
        "outcome": outcome,
        "messages_before": mb,
        "messages_after": ma,
        "tokens_before": tb,
        "tokens_after": ta,
        "tokens_delta": None if tb is None or ta is None else ta - tb,
        "exchange_tokens": ex,
        "rolling_summary_tokens": 31,
        "cursor": 12,
        "passes_total": n,
        "tokens_saved_total": 0,
        "duration_ms": ms,
        "threshold_tokens": 34816,
        "context_limit": 40960,
        "occupancy_pct": occ,
        "main_model": "main",
        "aux_model": "mlx/tiny",
    }


def hermes_line(p: dict, prefix="2026-11-29 10:00:00,123 INFO agent.context_compressor: ") -> str:
    """The line Hermes writes: `micro compaction telemetry: ` + sorted, compact JSON."""
    return prefix + "micro compaction telemetry: " + json.dumps(p, sort_keys=True, separators=(",", ":"))


def seed_lines(session="sess-a"):
    return [
        hermes_line(payload(i, session, mb=mb, ma=ma, tb=tb, ta=ta, occ=occ, ms=ms, ex=900))
        for i, (mb, ma, tb, ta, occ, ms) in enumerate(SEED, start=1)
    ]


def test_line_written_by_a_real_logger_parses(caplog):
    log = logging.getLogger("agent.context_compressor")
    with caplog.at_level(logging.INFO, logger="agent.context_compressor"):
        log.info("micro compaction telemetry: %s", json.dumps(payload(), sort_keys=True, separators=(",", ":")))
    line = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s").format(caplog.records[0])
    rec = report.parse_record(line)
    assert rec.kind == "micro" and rec.outcome == "absorbed" and rec.session_id == "sess-a"
    assert (rec.tokens_before, rec.tokens_after, rec.tokens_delta) == (1000, 900, -100)
    assert rec.exchange_tokens == 868 and rec.occupancy_pct == 2.6 and rec.duration_ms == 1500
    assert all(isinstance(v, (int, float, str, type(None))) for v in vars(rec).values())  # numbers, no payload


@pytest.mark.parametrize(
    "prefix",
    ["", "[INFO] ", "Nov 29 10:00:00 host hermes[123]: WARNING agent.context_compressor - ", "\ufeffx | "],
)
def test_any_prefix(prefix):
    assert report.parse_record(hermes_line(payload(), prefix)).outcome == "absorbed"


def test_batch_lines_and_non_telemetry():
    batch = (
        'INFO agent.context_compressor: compaction telemetry: {"event":"compaction","outcome":"compressed",'
        '"session_id":"s","tokens_before":30000,"tokens_after":9000,"duration_ms":41000}'
    )
    rec = report.parse_record(batch)
    assert rec.kind == "batch" and rec.outcome == "compressed" and rec.tokens_delta == -21000
    assert report.parse_record("INFO Micro-compaction: 37 -> 36 messages") is None
    assert report.parse_record("DEBUG failed to emit micro-compaction telemetry: boom") is None
    with pytest.raises(ValueError):
        report.parse_record('micro compaction telemetry: {"event": "micro_compaction", ')
    with pytest.raises(ValueError):
        report.parse_record("micro compaction telemetry: {}}}".replace("{}}}", "{]"))


def test_nulls_and_odd_values():
    p = payload(tb=None, ta=None, occ=None, ms=None)
    p["exchange_tokens"] = "lots"
    rec = report.parse_record(hermes_line(p))
    assert rec.tokens_delta is None and rec.occupancy_pct is None and rec.exchange_tokens is None
    s = report.summarize([rec])
    assert s.tokens_saved == 0 and s.duration_p50_ms is None and s.mean_absorbed_exchange_tokens is None
    assert "?" in report.telemetry_table([rec]) and "p50 -" in report.format_summary(s)


def test_bad_lines_are_counted_and_skipped():
    lines = seed_lines()[:2] + [
        "micro compaction telemetry: {not json",
        "micro compaction telemetry: [1]",
        "plain log line",
    ]
    result = report.parse_lines(lines, "agent.log")
    assert len(result.records) == 2 and result.bad_lines == 2 and result.lines_read == 5
    assert result.records[1].source == "agent.log:2"
    assert "skipped bad lines: 2" in report.format_report(result)


def test_summary_of_the_seed_session():
    lines = seed_lines()
    lines.insert(2, hermes_line(payload(outcome="defrag", tb=50000, ta=49000, ex=None, ms=1000, occ=15.3)))
    lines.append(hermes_line(payload(outcome="summarize_failed", tb=70264, ta=70264, ex=700, ms=500, occ=22.0)))
    s = report.summarize(report.parse_lines(lines).records)
    assert s.passes == 7 and s.kinds == {"micro": 7}
    assert s.outcomes == {"absorbed": 5, "defrag": 1, "summarize_failed": 1}
    assert s.tokens_saved == -(299 - 548 - 2394 - 5433 - 4395) + 1000
    assert s.mean_absorbed_exchange_tokens == 900 and s.absorbed_passes == 5  # failed pass excluded
    assert s.duration_max_ms == 36200 and s.duration_p50_ms == 4500
    assert s.duration_p95_ms == pytest.approx(31200 + (36200 - 31200) * 0.7)
    assert s.occupancy_last_pct == 22.0 and s.occupancy_peak_pct == 22.0


def test_percentile():
    assert report.percentile([], 50) is None
    assert report.percentile([7], 95) == 7
    assert report.percentile([1, 2, 3, 4], 50) == 2.5
    assert report.percentile([3, 1, 2], 100) == 3


def test_table_matches_the_seed_layout():
    table = report.telemetry_table(report.parse_lines(seed_lines()).records)
    rows = table.splitlines()
    assert rows[0].split() == ["pass", "outcome", "messages", "tokens", "delta", "occupancy", "duration"]
    assert rows[1].split() == ["1", "absorbed", "40", "->", "39", "27,479", "->", "27,778", "+299", "8.7%", "2.2s"]
    assert rows[4].split()[-3:] == ["-5,433", "21.8%", "36.2s"]
    assert len(rows) == 6


def test_per_session_grouping():
    lines = [x for pair in zip(seed_lines("a"), seed_lines("b")) for x in pair]
    result = report.parse_lines(lines)
    combined = report.format_report(result)
    assert "sessions: 2" in combined and combined.splitlines()[-1].split()[1] == "b"
    per = report.format_report(result, per_session=True)
    assert per.count("== session a ==") == 1 and per.count("== session b ==") == 1
    assert "== all sessions ==" in per
    block_a = per.split("== session b ==")[0]
    assert "passes: 5 (micro 5)" in block_a and "\n   5  absorbed" in block_a


def test_default_log_path(monkeypatch, tmp_path):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    assert agent_log_path() == tmp_path / "logs" / "agent.log"
    monkeypatch.delenv("HERMES_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert agent_log_path() == tmp_path / "home" / ".hermes" / "logs" / "agent.log"


# ---------------------------------------------------------------------------------------------
# the command


def _run(argv):
    parser = argparse.ArgumentParser()
    report_cmd.register(parser.add_subparsers())
    args = parser.parse_args(["report", *argv])
    return args.func(args)


def test_command_reads_files_and_gz(tmp_path, capsys):
    plain = tmp_path / "agent.log"
    plain.write_text("\n".join(seed_lines("a")[:3]) + "\n")
    with gzip.open(tmp_path / "agent.log.1.gz", "wt") as fh:
        fh.write("\n".join(seed_lines("a")[3:]) + "\n")
    assert _run([str(plain), str(tmp_path / "agent.log.1.gz")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("passes: 5 (micro 5)") and "36.2s" in out


def test_command_defaults_to_hermes_home(tmp_path, monkeypatch, capsys):
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "agent.log").write_bytes(("\n".join(seed_lines()) + "\n\xff\n").encode("latin-1"))
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    assert _run(["--per-session"]) == 0
    assert "== session sess-a ==" in capsys.readouterr().out


def test_command_json(tmp_path, capsys):
    log = tmp_path / "x.log"
    log.write_text("\n".join(seed_lines()) + "\nmicro compaction telemetry: {oops\n")
    assert _run(["--json", "--per-session", str(log)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["bad_lines"] == 1 and data["summary"]["passes"] == 5
    assert data["sessions"]["sess-a"]["duration_max_ms"] == 36200


def test_command_missing_file_is_one_clear_error(tmp_path, capsys):
    assert _run([str(tmp_path / "nope.log")]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"hermes-mlx report: cannot read {tmp_path / 'nope.log'}: No such file or directory"


def test_command_empty_log(tmp_path, capsys):
    (tmp_path / "e.log").write_text("nothing here\n")
    assert _run([str(tmp_path / "e.log")]) == 0
    assert "no compaction telemetry found" in capsys.readouterr().out


def test_cli_dispatcher_registers_report():
    from hermes_mlx.cli import build_parser

    args = build_parser().parse_args(["report", "--per-session", "a.log"])
    assert args.func is report_cmd.run and args.per_session and args.logs == ["a.log"]


def test_lines_from_our_own_telemetry_module_parse():
    telemetry = pytest.importorskip("hermes_mlx.compactor.telemetry")
    totals = telemetry.Totals()
    micro = telemetry.payload(
        "micro_compaction",
        totals,
        outcome="absorbed",
        session_id="s",
        messages_before=9,
        messages_after=7,
        tokens_before=5000,
        tokens_after=4200,
        exchange_tokens=900,
        duration_ms=1200,
        threshold_tokens=8000,
        context_limit=10000,
    )
    line = "2026-11-29 10:00:00 INFO agent.context_compressor: " + telemetry.format_line(micro)
    rec = report.parse_record(line)
    assert rec.kind == "micro" and rec.tokens_delta == -800 and rec.occupancy_pct == 52.5
    batch = dict(micro, event="batch_compaction", outcome="compressed")
    assert report.parse_record(telemetry.format_line(batch)).kind == "batch"
