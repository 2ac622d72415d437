"""Render and parse back: our own summaries round-trip, Hermes's structured summaries and
marker-wrapped summaries are read, unknown formats are kept verbatim."""

from hermes_mlx.summarizer.ledger import Command, ErrorItem
from hermes_mlx.summarizer.summary import EARLIER, Summary, parse, render

HERMES = """[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted into the summary below.
This is a handoff from a previous context window — treat it as background reference, NOT as active instructions.

## Goal
Port the CSV export to the stripe-lite v2 API.

## Constraints & Preferences
- Don't touch the migrations.

## Completed Actions
- Read ledgerly/export/csv_export.py

## Active State
Tests failing in tests/test_export.py

## Key Decisions
- Round half up once on the total.

## Historical Pending User Asks
- Should the py3.10 pin be bumped?

## Relevant Files
- ledgerly/export/csv_export.py
- docs/export.md

## Historical Remaining Work
- Open the PR

## Critical Context
API base https://docs.stripe-lite.dev/v2/invoices

--- END OF CONTEXT SUMMARY — respond to the message below, not the summary above ---
"""


def sample() -> Summary:
    s = Summary(goal="Fix the export.", progress=["Read `a.py`.", "Tests fail."], remaining=["Open the PR"])
    led = s.ledger
    led.add_file("src/a.py", "edited")
    led.add_file("weird `name`.py")
    led.commands.append(Command("pytest -q", [1, 0]))
    led.commands.append(Command("make lint", [None]))
    led.errors.append(ErrorItem("AssertionError: 1 != 2", "pytest tests/test_a.py"))
    led.errors.append(ErrorItem("fatal: bad object"))
    led.resolved.append("KeyError: 'X'")
    led.urls.append("https://example.dev/x")
    led.ids.extend(["#12", "3f9a2c1"])
    led.constraints.append("Don't add dependencies.")
    return s


def test_roundtrip_is_stable():
    text = render(sample())
    back = parse(text)
    assert render(back) == text
    assert back.ledger.commands[0].statuses == [1, 0]
    assert back.ledger.commands[1].statuses == []  # unknown statuses are not written (no `exit ?`)
    assert back.ledger.errors[0].cmd == "pytest tests/test_a.py"
    assert back.ledger.files == {"src/a.py": "edited", "weird `name`.py": "mentioned"}


def test_reads_hermes_structured_summary():
    s = parse(HERMES)
    assert s.goal == "Port the CSV export to the stripe-lite v2 API."
    assert s.ledger.constraints == ["Don't touch the migrations."]
    assert "Read ledgerly/export/csv_export.py" in s.progress and "Tests failing in tests/test_export.py" in s.progress
    assert s.decisions == ["Round half up once on the total."]
    assert s.questions == ["Should the py3.10 pin be bumped?"]
    assert list(s.ledger.files) == ["ledgerly/export/csv_export.py", "docs/export.md"]
    assert s.remaining == ["Open the PR"]
    assert ("Critical Context", "API base https://docs.stripe-lite.dev/v2/invoices") in s.extras
    out = render(s)
    assert "CONTEXT COMPACTION" not in out and "END OF CONTEXT SUMMARY" not in out
    assert "## Critical Context" in out


def test_micro_marker_with_snapshot_heading_wraps_our_summary():
    ours = render(sample())
    wrapped = (
        "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted into the summary below.\n\n## Historical Task Snapshot\n"
        + ours
        + "\n--- END OF CONTEXT SUMMARY — respond to the message below, not the summary above ---"
    )
    assert render(parse(wrapped)) == ours


def test_unknown_format_kept_verbatim():
    text = "The agent fixed a bug in foo.py and ran make test (exit 0)."
    s = parse(text)
    assert s.extras == [(EARLIER, text)]
    assert text in render(s)


def test_garbage_inputs_do_not_raise():
    for bad in (None, "", "   ", 42, "## \n\n##", "\x00\x01binary", "#" * 10000):
        parse(bad)  # no exception
    assert render(Summary()) == ""


def test_secrets_in_previous_summary_are_redacted():
    s = parse("## Goal\nUse key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx to call the API.")
    assert "sk-ant" not in render(s)
