"""Exceptions shared by the engine's modules, so callers catch one base class and print one line.

They stand under the project's one root (hermes_mlx.errors.HermesMLXError) with their exit code
on the class: 2 where the user named something that cannot run, 1 for a failure at run time.
"""

from __future__ import annotations

from hermes_mlx.errors import HermesMLXError


class EngineError(HermesMLXError):
    """Base of every error the engine raises on purpose; its message is meant for the user."""


class ModelNotFound(EngineError):
    """A model name, path or cache entry that does not lead to a usable model folder."""

    exit_code = 2


class UnsupportedModel(EngineError):
    """A model (architecture, tensor type, tokenizer) this project cannot convert or run."""

    exit_code = 2


class CorruptModel(EngineError):
    """A model file that exists but is truncated, malformed or half-written."""


class ChecksumMismatch(CorruptModel):
    """A downloaded file whose sha256 differs from the pinned one."""


class FetchError(EngineError):
    """Fetching a model from its source failed (network, pip, missing wheelhouse)."""


class InvalidRequest(EngineError, ValueError):
    """A request the engine cannot run as given (bad messages, max_tokens <= 0, ...)."""

    exit_code = 2


class PromptTooLong(InvalidRequest):
    """A prompt longer than the model's window; the engine never truncates silently."""


class DeadlineExceeded(EngineError, TimeoutError):
    """The request's deadline passed before it could start, or the engine stopped answering."""


class Cancelled(EngineError):
    """The caller gave up (its client went away, or the server is shutting down)."""
