"""The README's main command (issue 23): it parses, names a session the package ships, and prints
the table, the tokens and a summary. CI runs the real thing from the wheel (.ci/run); these
checks are the fast half, with a scripted summarizer."""

import pytest
from fakes import ScriptedSummarizer
from readme_command import main_argv, main_command, printed_summary

from hermes_mlx.bench.shipped import REAL_DIR, example_names, example_session
from hermes_mlx.cli import build_parser, main


def test_the_readme_main_command_parses_and_names_a_shipped_session():
    argv = main_argv()
    assert argv[0] == "hermes-mlx", main_command()
    args = build_parser().parse_args(argv[1:])
    assert args.command == "compact" and args.session is None and args.example
    path = example_session(args.example)
    assert path is not None and path.parent == REAL_DIR and path.is_file()


def test_examples_are_the_shipped_real_sessions_by_name():
    names = example_names()
    assert len(names) >= 2 and all("/" not in n and not n.endswith(".jsonl") for n in names)
    assert example_session("../real/" + names[0]) is None and example_session("nope") is None


@pytest.fixture
def fake(monkeypatch):
    from hermes_mlx.commands import compact

    monkeypatch.setattr(compact, "build_summarizer", lambda args: ScriptedSummarizer())


def test_the_main_command_prints_the_table_the_tokens_and_the_summary(fake, capsys):
    assert main([*main_argv()[1:], "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("pass ") and "tokens " in out and " before -> " in out
    assert printed_summary(out)


def test_example_alone_lists_the_names_and_a_wrong_one_is_exit_2(fake, capsys):
    assert main(["compact", "--example"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in example_names())
    assert main(["compact", "--example", "nope"]) == 2
    err = capsys.readouterr().err
    assert "no shipped session named 'nope'" in err and example_names()[0] in err


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["compact"], "--example NAME"),
        (["compact", "s.jsonl", "--example", "x"], "not both"),
        (["compact", "--example", "x", "--in-place"], "--in-place"),
    ],
)
def test_session_and_example_are_one_or_the_other(argv, needle, fake, capsys):
    assert main(argv) == 2
    assert needle in capsys.readouterr().err
