"""One exception root: every error the package raises on purpose is a HermesMLXError whose class
carries the exit code, and `hermes-mlx` reads that code from it (cli.main), whatever the layer."""

import argparse
import importlib
import io
import pkgutil
from contextlib import redirect_stderr
from pathlib import Path

import pytest

from hermes_mlx import cli
from hermes_mlx.engine import errors as engine_errors
from hermes_mlx.errors import HermesMLXError, UsageError

PACKAGE = Path(__file__).resolve().parent.parent / "hermes_mlx"
# Raised and caught inside one module to stop work, never shown to a user; and the offline guard's
# refusal, which must read as the OSError a blocked socket gives.
SIGNALS = {"integrations.adapter.StreamClosed", "integrations.inflight.Closed", "loopback.NetworkBlocked"}


def exception_classes():
    """(module, class) of every exception class the package defines."""
    for info in pkgutil.walk_packages([str(PACKAGE)], "hermes_mlx."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                isinstance(value, type)
                and issubclass(value, BaseException)
                and not issubclass(value, Warning)
                and value.__module__ == info.name
            ):
                yield info.name.removeprefix("hermes_mlx."), name


@pytest.mark.parametrize(("module", "name"), sorted(exception_classes()))
def test_every_exception_of_the_package_stands_under_the_one_root(module, name):
    if f"{module}.{name}" in SIGNALS:
        return
    cls = getattr(importlib.import_module(f"hermes_mlx.{module}"), name)
    assert issubclass(cls, HermesMLXError), f"{module}.{name}"
    assert cls.exit_code in (1, 2)


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (engine_errors.ModelNotFound("no model folder at 'x'"), 2),
        (engine_errors.UnsupportedModel("gpt2 is not supported"), 2),
        (engine_errors.InvalidRequest("max_tokens must be positive"), 2),
        (engine_errors.FetchError("pip failed"), 1),
        (engine_errors.DeadlineExceeded("the deadline passed"), 1),
        (UsageError("bad flag"), 2),
        (HermesMLXError("the store is locked"), 1),
    ],
)
def test_cli_reads_the_exit_code_from_the_class(monkeypatch, error, code):
    def fails(args):
        raise error

    parser = argparse.ArgumentParser(prog="hermes-mlx")
    parser.add_subparsers(dest="command").add_parser("models").set_defaults(func=fails)
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    err = io.StringIO()
    with redirect_stderr(err):
        assert cli.main(["models"]) == code
    assert err.getvalue() == f"hermes-mlx models: {' '.join(str(error).split())}\n"
