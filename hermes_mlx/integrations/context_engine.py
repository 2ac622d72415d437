"""hermes-mlx as a Hermes context engine: our compactor replaces Hermes's, opt-in.

Why a second way in: in provider mode Hermes runs its own compressor and we answer the prompts it
sends, recognised by their wording, which any Hermes release may change. Hermes 0.22 lets a
plugin replace the compressor (agent/context_engine.py `ContextEngine`). Selected by
`context.engine: hermes-mlx` in config.yaml, this engine runs our micro and batch passes
(compactor/micro.py, batch.py) with our summarizer directly: no prompt is parsed or rebuilt, the
marker and the telemetry line are Hermes's own format, and the next micro pass is computed in the
background from the turn `on_turn_complete` hands us. It also offers the main model one tool,
recall (integrations/recall.py), over the messages compaction removed.

How Hermes drives it (docs/hermes-context-engine.md has the file and function names): `compress`
is its batch pass, called on a pooled thread under a timeout, and Hermes itself commits the result
to its session DB; the micro pass is Hermes's private `_micro_compact` seam in its turn finalizer,
which an engine must commit to the session DB itself (we call Hermes's own helpers for that, so
its watermark and stale-generation rules hold). Every hook is fail-open: an exception is logged
and Hermes carries on with the conversation unchanged.

`EngineCore` holds all of it and imports nothing from Hermes, so it is testable without Hermes;
`build_engine()` makes the subclass of Hermes's ContextEngine the plugin registers.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import logging
import threading
from pathlib import Path
from typing import Any

from hermes_mlx.compactor import ahead, markers
from hermes_mlx.compactor.batch import BatchCompactor
from hermes_mlx.compactor.micro import MicroCompactor, discard_ahead
from hermes_mlx.compactor.settings import DEFAULT_DEFRAG_THRESHOLD, CompactorSettings
from hermes_mlx.compactor.store import SessionStore

from . import hermes_seams, recall
from .engine_archive import STORE_FILE, Archive, for_store, open_store, with_note
from .hermes_config import DEFAULT_AUX_MODEL, PLUGIN_NAME

logger = logging.getLogger("hermes_mlx.integrations")

DB_PERSISTED = "_db_persisted"  # Hermes's mark on a row its session DB already holds (context_compressor.py)
_SUMMARIZER_LOCK = threading.Lock()  # the warm-up thread and the first pass may both load it


def _fail_open(default):
    """A hook that logs its exception and returns `default` (or, for "input", its first argument
    unchanged): Hermes's contract is that an engine fault never stops the conversation."""

    def wrap(method):
        @functools.wraps(method)
        def guarded(self, *args, **kwargs):
            try:
                return method(self, *args, **kwargs)
            except Exception as exc:
                self.failures = getattr(self, "failures", 0) + 1
                logger.warning(
                    "hermes-mlx context engine: %s failed, conversation unchanged: %s",
                    method.__name__,
                    exc,
                    exc_info=True,
                )
                if default == "input":
                    return args[0] if args else kwargs.get("messages")
                return default

        return guarded

    return wrap


@contextlib.contextmanager
def _progress_to_hermes(summarizer: Any):
    """Tell Hermes's compression deadline that the pass is alive, once per folded chunk.

    Hermes runs compress() under an idle timeout (compression.context_timeout_seconds, 120 s by
    default) that only its aux-LLM client resets, through a hook it installs on the calling
    thread (agent/auxiliary_client.py `aux_progress_hook`). We make no aux-LLM call, so the hook
    is taken here (hermes_seams: wherever this Hermes keeps it) and handed to the summarizer's
    per-chunk callback; without it a long batch on a slow CPU would be abandoned at 120 s
    although it is making progress."""
    seam, _ = hermes_seams.find("aux_progress")  # the thread-local holding the hook, or the tick itself
    hook = getattr(seam, "hook", None) if not callable(seam) else seam
    if not callable(hook) or not hasattr(summarizer, "on_chunk"):
        yield
        return
    previous = summarizer.on_chunk
    summarizer.on_chunk = hook
    try:
        yield
    finally:
        summarizer.on_chunk = previous


class _EngineMicro(MicroCompactor):
    """Our micro compactor, with the next pass started from `on_turn_complete` instead of from the
    end of the pass: the turn Hermes hands over is the transcript the next pass will see."""

    def _look_ahead(self, messages) -> None:
        return None

    def look_ahead(self, messages) -> None:
        if self.settings.ahead:
            super()._look_ahead(messages)


class EngineCore:
    """The engine without Hermes's base class. Its token fields are the ones Hermes reads."""

    last_prompt_tokens = 0
    last_completion_tokens = 0
    last_total_tokens = 0
    threshold_tokens = 0
    context_length = 0
    compression_count = 0
    threshold_percent = 0.75
    protect_first_n = 3
    protect_last_n = 6
    # Hermes's finalizer runs `_micro_compact` when this is True; agent_init sets it from
    # compression.micro_compact (and the two below from their config keys) when the engine has them.
    _micro_compact_enabled = False
    _micro_compact_every_n_turns = 1
    _micro_compact_defrag_threshold_tokens = DEFAULT_DEFRAG_THRESHOLD
    _flush_scan_cursor_invalidated = False

    def __init__(self, summarizer: Any = None, *, home: str | Path | None = None, model: str | None = None) -> None:
        self._summarizer = summarizer
        self._model = model
        self._home = home
        self._lock = threading.RLock()
        self._session_db = None
        self._session_id = ""
        self._main_model = ""
        self._micro: _EngineMicro | None = None
        self._batch: BatchCompactor | None = None
        self._archive = Archive()  # our store, the recall index, this conversation's lineage
        self.failures = 0  # hooks that raised (and were contained)

    @property
    def name(self) -> str:
        return PLUGIN_NAME  # Hermes's `context.engine` value

    # ------------------------------------------------------------------ shared state and settings

    def clone_for_agent(self):
        """A fresh engine per agent (Hermes holds one registered instance): it shares the durable
        backend (summarizer, store) and copies only the budget figures, never the locks."""
        clone = type(self)(self._summarizer, home=self._home, model=self._model)
        for attr in ("threshold_percent", "protect_first_n", "protect_last_n", "context_length", "threshold_tokens"):
            setattr(clone, attr, getattr(self, attr))
        return clone

    def __deepcopy__(self, memo):
        return self.clone_for_agent()

    @property
    def summarizer(self):
        with _SUMMARIZER_LOCK:
            if self._summarizer is None:
                from .adapter import HERMES_TIMEOUT_S, make_summarizer
                from .model_names import engine_model

                summarizer = make_summarizer(engine_model(self._model), HERMES_TIMEOUT_S)
                # the telemetry's aux_model, named as provider mode's batch lines name it
                summarizer.model_name = self._model or DEFAULT_AUX_MODEL
                self._summarizer = summarizer
        return self._summarizer

    def settings(self, messages: list[dict]) -> CompactorSettings:
        system = 1 if messages and messages[0].get("role") == "system" else 0
        return CompactorSettings(
            context_limit=self.context_length or 65536,
            threshold_tokens=self.threshold_tokens or None,
            protect_first_n=self.protect_first_n + system,
            session_id=self._session_id,
            main_model=self._main_model,
            every_n_turns=self._micro_compact_every_n_turns,
            defrag_threshold_tokens=self._micro_compact_defrag_threshold_tokens,
            ahead=ahead.enabled(),
        )

    def _compactors(self, messages: list[dict]) -> tuple[_EngineMicro, BatchCompactor]:
        settings = self.settings(messages)
        if self._micro is None:
            self._micro = _EngineMicro(self.summarizer, settings)
            self._batch = BatchCompactor(self.summarizer, settings)
        else:  # the window may have changed (update_model); the rolling state stays
            self._micro.settings = dataclasses.replace(settings, every_n_turns=self._micro.settings.every_n_turns)
            self._batch.settings = settings
        return self._micro, self._batch

    # ------------------------------------------------------------------ Hermes's token bookkeeping

    @_fail_open(None)
    def update_from_response(self, usage: dict[str, Any]) -> None:
        usage = usage or {}
        self.last_prompt_tokens = int(usage.get("prompt_tokens") or 0)
        self.last_completion_tokens = int(usage.get("completion_tokens") or 0)
        self.last_total_tokens = int(usage.get("total_tokens") or 0)

    @_fail_open(False)
    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        tokens = self.last_prompt_tokens if prompt_tokens is None else prompt_tokens
        return bool(self.threshold_tokens) and (tokens or 0) >= self.threshold_tokens

    # ------------------------------------------------------------------ batch: Hermes commits it

    @_fail_open("input")
    def compress(self, messages, current_tokens=None, focus_topic=None, force=False, memory_context=""):
        """One batch pass over Hermes's private snapshot. Hermes has already decided to compact
        (should_compress, preflight or /compress), so the pass is forced; Hermes commits what we
        return (archive_and_compact in place, or a rotation). A failed pass returns the input."""
        with self._lock, _progress_to_hermes(self.summarizer):
            _, batch = self._compactors(messages)
            result = batch.compact(list(messages), focus=focus_topic or None, force=True)
            if not result.changed:
                return messages
            stored = self._archive.before_pass(self._session_id, messages, result.messages)
            noted = self._archive.noted(stored)
            out = [dict(with_note(m)) if noted and markers.is_marker(m) else dict(m) for m in result.messages]
            for m in out:  # Hermes's invariant: nothing compress() returns carries a persisted mark
                m.pop(DB_PERSISTED, None)
            self.compression_count += 1
            self._micro.reset()  # the batch marker holds more than the rolling summary
            self._record(out, stored)
            return out

    # ------------------------------------------------------------------ micro: we commit it

    @_fail_open("input")
    def _micro_compact(self, messages, *, turn_session_id=None):
        """Hermes's finalizer calls this after each answered turn (agent/turn_finalizer.py). The
        pass folds the oldest exchange into the rolling marker; the session DB is brought in line
        with Hermes's own micro-commit helpers, or the pass is dropped."""
        if not self._micro_compact_enabled:
            return messages
        # A batch pass Hermes gave up on (its timeout) may still hold the lock: skip this turn's
        # pass rather than keep the turn open until that work ends.
        if not self._lock.acquire(blocking=False):
            logger.info("hermes-mlx context engine: a batch pass is still running; micro pass skipped this turn")
            return messages
        try:
            return self._micro_pass(messages)
        finally:
            self._lock.release()

    def _micro_pass(self, messages):
        if self._session_db is not None and hermes_seams.find("sync_micro_compact_to_db")[0] is None:
            return messages  # no way to commit it as Hermes would: no pass (logged once by the seam)
        micro, _ = self._compactors(messages)
        held = list(messages)
        skip, watermark = self._hermes_start_watermark(held)
        if skip:
            return messages
        result = micro.compact(held)
        if not result.changed:
            return messages
        merged = self._merge_users(micro, result.messages)
        stored = self._archive.before_pass(self._session_id, messages, merged)
        noted = self._archive.noted(stored)
        originals = {id(m) for m in messages}
        out = []
        for m in merged:
            if noted and markers.is_marker(m):
                m = with_note(m)
            if id(m) not in originals:  # new or rewritten: the DB does not hold it yet
                m = {k: v for k, v in m.items() if k not in (DB_PERSISTED, "_row_id")}
            out.append(m)
        if not self._hermes_commit(out, held, watermark):
            micro.reset()  # another compaction won; the transcript is the source of truth again
            return messages
        self._flush_scan_cursor_invalidated = True
        self._record(out, stored)
        return out

    @staticmethod
    def _merge_users(micro: MicroCompactor, messages: list[dict]) -> list[dict]:
        """Adjacent user rows merged, the protected head included, as Hermes's own micro pass does
        (`_merge_adjacent_user_turns`): our compactor leaves the head alone, and Hermes would
        otherwise repair the alternation before every request. The cursor follows the marker."""
        system = 1 if messages and messages[0].get("role") == "system" else 0
        merged = markers.merge_adjacent_users(messages, system)
        if len(merged) != len(messages):
            last = markers.last_marker(merged)
            micro.cursor = last + 1 if last >= 0 else None
        return merged

    def _hermes_start_watermark(self, held):
        watermark, _ = hermes_seams.find("micro_start_watermark")
        if self._session_db is None or watermark is None:
            return None, None  # without it the commit is unbounded, as Hermes's own is on such a store
        return watermark(self, held)

    def _hermes_commit(self, out, held, watermark) -> bool:
        if self._session_db is None:
            return True
        sync, _ = hermes_seams.find("sync_micro_compact_to_db")
        return bool(sync) and sync(self, out, held=held, start_watermark=watermark)

    def bind_session_state(self, session_db: Any = None, session_id: str = "") -> None:
        """Hermes binds its session DB to any engine that has this (agent_init._build_context_engine),
        and binds a new id after a /new, /resume or /branch (reset_session_state): a conversation
        of its own, so the lineage of the one before goes (a rotation comes as on_session_start)."""
        self._session_db = session_db
        if session_id and session_id != self._session_id:
            self._archive.new_conversation()
        self._session_id = session_id or self._session_id

    # ------------------------------------------------------------------ turn and session hooks

    @_fail_open(None)
    def on_turn_complete(self, messages, usage=None, **kwargs) -> None:
        """The finished turn: start the next micro pass's summarizer call in the background (at
        background priority); the pass at the end of the next turn takes it if its input is this."""
        if kwargs.get("interrupted") or kwargs.get("failed") or not self._micro_compact_enabled:
            return
        with self._lock:
            micro, _ = self._compactors(messages)
            micro.look_ahead(list(messages))

    @_fail_open(None)
    def on_session_start(self, session_id: str, **kwargs) -> None:
        old = self._session_id
        self._session_id = session_id or self._session_id
        self._main_model = str(kwargs.get("model") or self._main_model)
        home = kwargs.get("hermes_home") or self._home
        if home and self._archive.store is None:
            self._home = home
            self._archive.open(home)
        # A compaction boundary (boundary_reason="compression") keeps the micro state: in place
        # the id is the same, and a rotation carries the same transcript on under a new id, so
        # recall keeps searching the ids before it. Any other new id is another conversation.
        parent = kwargs.get("old_session_id")
        rotation = kwargs.get("boundary_reason") == "compression"
        if self._session_id != old and not rotation:
            self._archive.new_conversation()
        if rotation and parent and parent != self._session_id:
            self._archive.lineage.append(parent)
        if self._micro is not None and self._session_id != old and kwargs.get("boundary_reason") != "compression":
            self._micro.reset()
        if kwargs.get("boundary_reason") is None:
            threading.Thread(target=self._warm, name="hermes-mlx-engine-warm", daemon=True).start()

    def _warm(self) -> None:
        """Load the summarizer's model while the user types the first messages: the first pass
        counts tokens with it, and a cold load would otherwise keep that turn open (~10 s on a
        busy 2-core CPU, measured)."""
        try:
            self.summarizer.count_tokens("warm")
        except Exception as exc:
            logger.info("hermes-mlx context engine: could not load the summarizer ahead: %s", exc)

    @_fail_open(None)
    def on_session_end(self, session_id: str, messages) -> None:
        discard_ahead(self._session_id)

    @_fail_open(None)
    def on_session_reset(self) -> None:
        """Hermes's /new, /resume and /branch (reset_session_state): the next conversation starts."""
        for attr in ("last_prompt_tokens", "last_completion_tokens", "last_total_tokens", "compression_count"):
            setattr(self, attr, 0)
        if self._micro is not None:
            self._micro.reset()
        self._archive.new_conversation()

    # ------------------------------------------------------------------ recall

    def get_tool_schemas(self) -> list[dict]:
        return [dict(recall.TOOL_SCHEMA)]

    def handle_tool_call(self, name: str, args: Any, **kwargs) -> str:
        if name != recall.TOOL_NAME:
            return json.dumps({"error": f"Unknown context engine tool: {name}"})
        return self._archive.recall(self._session_id, args)

    def _record(self, after: list[dict], stored: bool) -> None:
        """The pass's output into our store, so what it removed is archived (a fault only logs)."""
        self._archive.after_pass(self._session_id, after, stored)

    @property
    def _store(self) -> SessionStore | None:
        return self._archive.store


def build_engine(**options):
    """The engine as a subclass of Hermes's ContextEngine (importable only inside Hermes 0.22+)."""
    from agent.context_engine import ContextEngine

    class HermesMLXContextEngine(EngineCore, ContextEngine):
        __doc__ = EngineCore.__doc__

    return HermesMLXContextEngine(**options)


__all__ = ["STORE_FILE", "EngineCore", "build_engine", "for_store", "open_store", "with_note"]
