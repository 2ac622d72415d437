"""Which engine model a request's `model` name means: one rule for the provider and for `serve`.

Hermes fills in a model name on every request: ours (`hermes-mlx-default`, set by setup), a
manifest model or folder the user chose, or, when its config names none for compaction, its main
model's id (`anthropic/claude-3.5`), which is no model here. The rule, in order:

- one of our default names means the default (serve's --model, the provider's settings model);
- a name given at start-up (serve's --model / --allow-model) is taken as given;
- a path-like name (engine.models.path_like: absolute, `~` or dot-relative) is a folder. In
  process the user's own config names it, so it must resolve or the request fails; a server's
  client may name only a folder its operator allowed, and any other gets one refusal whether or
  not it exists, so the server tells nobody what is on the disk;
- a manifest name must be present here (in process it may be fetched, as any first use is); in
  process any name the engine resolves (a repo id, a folder named without ./) is taken too;
- any other name is some other provider's model id: the default, logged once.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from hermes_mlx.engine.errors import EngineError, ModelNotFound
from hermes_mlx.engine.models import manifests, path_like, resolve_model

from .hermes_config import DEFAULT_AUX_MODEL, PLUGIN_NAME, PROVIDER_NAME
from .openai_shapes import RequestError

logger = logging.getLogger("hermes_mlx.integrations")

DEFAULT_NAMES = frozenset({"", "default", PROVIDER_NAME, PLUGIN_NAME, DEFAULT_AUX_MODEL})
REFUSED_MODEL = "is not a model this server offers (name its default, a model present here, or ask its operator)"


_FOREIGN: set[str] = set()  # names already logged as some other provider's model id


def _in_process(name: str) -> None:
    """The engine's own lookup, which remembers each name's folder: the provider runs this rule on
    every request, and the request then runs on the folder found here."""
    from hermes_mlx.engine.generate import resolve

    resolve(name)


def _resolved(name: str) -> Path | None:
    try:
        return Path(name).expanduser().resolve()
    except (OSError, RuntimeError, ValueError):
        return None


class ModelPolicy:
    """The rule above for one entry point. `trusted` (the in-process provider): any folder or
    manifest model may be named and a missing one raises the engine's ModelNotFound; otherwise
    (a server) a refused name raises RequestError("model")."""

    def __init__(self, default: str | None, allowed: Iterable[str] = (), *, trusted: bool = False):
        self.default = default
        self.trusted = trusted
        self.names: set[str] = set()
        self.paths: dict[Path | None, str] = {}
        for name in [default, *allowed]:
            if name:
                self.names.add(name)
                if not trusted and (path_like(name) or Path(name).expanduser().is_dir()):
                    self.paths[_resolved(name)] = name  # what a server's client may name by path

    def pick(self, requested: str | None) -> str | None:
        """May look at the file system (a server runs it off its event loop)."""
        name = (requested or "").strip()
        if name in DEFAULT_NAMES:
            return self.default
        if name in self.names:
            return name
        if path_like(name):
            if self.trusted:
                _in_process(name)  # ModelNotFound names the folder
                return name
            found = self.paths.get(_resolved(name))
            if found is None:
                raise RequestError("model", REFUSED_MODEL)
            return found
        if self.trusted:  # a manifest model (fetched on first use, as anywhere) or a model folder
            try:
                _in_process(name)
                return name
            except ModelNotFound:
                if name in manifests():
                    raise  # ours, but not usable here: say so rather than answer with another model
        elif name in manifests():
            try:
                resolve_model(name, fetch=False)  # present here; never fetched for a server's client
            except EngineError:
                raise RequestError("model", REFUSED_MODEL) from None
            return name
        if name not in _FOREIGN:
            logger.info("model %r is not a local model; using %s", name, self.default or "the embedded default")
            _FOREIGN.add(name)
        return self.default


def engine_model(requested: str | None, fallback: str | None = None) -> str | None:
    """The in-process rule for one name: `requested`, or `fallback` where the rule gives the default."""
    return ModelPolicy(fallback, trusted=True).pick(requested)
