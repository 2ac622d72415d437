"""The project's expected errors: each carries a message meant for the user and an exit code.

Why one base class: `hermes-mlx` catches these once (cli.main), prints one line and exits with
the code, so commands raise instead of each printing and returning its own codes. Lives at the
package root because every layer may raise it. Anything else escaping a command is a bug and
keeps its traceback. The engine's errors (engine/errors.py) and the summarizer's, compactor's
and integrations' input errors all stand under HermesMLXError.
"""

from __future__ import annotations


class HermesMLXError(Exception):
    """A failure the user can act on (a file that cannot be written, a store that is locked)."""

    exit_code = 1


class UsageError(HermesMLXError, ValueError):
    """Bad input or arguments: nothing was done."""

    exit_code = 2
