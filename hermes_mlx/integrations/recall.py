"""Recall: search what compaction removed from this session and give the lines back verbatim.

Why it exists: a summary built by code keeps the facts code can see (paths, commands,
errors, ids), not every line, and a fact a summary lost is gone for the main model unless it can
look. Our session store (compactor/store.py) never deletes: every row a pass replaced stays,
archived (active=0, compacted=1). recall_index.py indexes those archived rows, and only those,
and this module is the tool the context engine offers the main model (`hermes_mlx_recall`): the
lines that match a query, exactly as they were written, bounded in size and with secrets
redacted (summarizer.redact, the pass `compact` uses, on the whole row; then the summary
verifier's check on every line).

A malformed call gets one JSON error string naming what is wrong, never an exception and no
logged traceback: Hermes hands our answer to the model as the tool result. When the archive
cannot be opened the answer says so, and why.
"""

from __future__ import annotations

import json
import logging
import sqlite3

from hermes_mlx.compactor.store import StoreError
from hermes_mlx.compactor.store_rows import encodable

from .recall_index import (
    DEFAULT_MATCHES,
    MAX_LINE_CHARS,
    MAX_MATCHES,
    MAX_RESULT_CHARS,
    MAX_TERMS,
    RecallError,
    RecallIndex,
    row_text,
    terms_of,
)

logger = logging.getLogger("hermes_mlx.integrations")

TOOL_NAME = "hermes_mlx_recall"
MAX_QUERY_CHARS = 500
MAX_ARGUMENT_CHARS = 20_000  # the raw arguments string; a query is at most MAX_QUERY_CHARS

TOOL_SCHEMA = {
    "name": TOOL_NAME,
    "description": (
        "Search the earlier messages of this conversation that context compaction removed (the"
        " summary marker says when that happened) and get the matching lines back word for word:"
        " exact file paths, commands, error messages, ids, numbers. Use it when the summary mentions"
        " something without the detail you need. Query with a few distinctive words."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "A few distinctive words or an exact fragment to find."},
            "limit": {
                "type": "integer",
                "description": f"Most lines to return (1-{MAX_MATCHES}, default {DEFAULT_MATCHES}).",
            },
        },
        "required": ["query"],
    },
}

MARKER_NOTE = (
    f"Messages folded into this summary are kept: call the `{TOOL_NAME}` tool with a few distinctive"
    " words to get their exact lines back."
)


# What a query may not hold, each with the message that names it (rules as data).
_QUERY_RULES = [
    (lambda q: not q.strip(), "'query' must be a non-empty string"),
    (lambda q: "\x00" in q, "'query' contains a NUL character"),
    (lambda q: not encodable(q), "'query' contains a lone surrogate (half of a UTF-16 pair), which is not text"),
    (
        lambda q: len(q) > MAX_QUERY_CHARS,
        f"'query' is longer than {MAX_QUERY_CHARS} characters; use a few distinctive words",
    ),
]


def _arguments(args: object) -> dict:
    if isinstance(args, str):  # some hosts pass the raw arguments string
        if len(args) > MAX_ARGUMENT_CHARS:
            raise RecallError(f"arguments are longer than {MAX_ARGUMENT_CHARS} characters")
        try:
            args = json.loads(args) if args.strip() else {}
        except RecursionError:
            raise RecallError("arguments are nested too deeply to read") from None
        except ValueError as exc:
            raise RecallError(f"arguments are not valid JSON: {exc}") from None
    if not isinstance(args, dict):
        raise RecallError("arguments must be an object with a 'query' string")
    return args


def _query(args: dict) -> str:
    query = args.get("query")
    if not isinstance(query, str):
        raise RecallError("'query' must be a non-empty string")
    for broken, message in _QUERY_RULES:
        if broken(query):
            raise RecallError(message)
    return query


def _limit(args: dict) -> int:
    value = args.get("limit")
    if value is None:
        return DEFAULT_MATCHES
    whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())  # NaN, inf: not whole
    if isinstance(value, bool) or not whole or not 1 <= value <= MAX_MATCHES:
        raise RecallError(f"'limit' must be a whole number from 1 to {MAX_MATCHES}, got {repr(value)[:40]}")
    return int(value)


def handle_call(
    index: RecallIndex | None, session_id: str | list[str], args: object, unavailable: str | None = None
) -> str:
    """One tool call's JSON answer; every bad input is a JSON error, nothing raises. `unavailable`
    says why there is no index (the store could not be opened), when that is the case."""
    try:
        args = _arguments(args)
        query, limit = _query(args), _limit(args)
        if index is None:
            raise RecallError(
                f"the archive is unavailable: {unavailable}"
                if unavailable
                else "nothing has been compacted in this session yet"
            )
        if not session_id:
            raise RecallError("nothing has been compacted in this session yet")
        return json.dumps(index.search(session_id, query, limit), ensure_ascii=False)
    except RecallError as exc:
        return json.dumps({"error": f"{TOOL_NAME}: {exc}"}, ensure_ascii=False)
    except (StoreError, sqlite3.Error) as exc:  # the archive's file: a reason, not a traceback
        logger.warning("hermes-mlx recall: the archive is unavailable: %s", exc)
        return json.dumps({"error": f"{TOOL_NAME}: the archive is unavailable: {exc}"}, ensure_ascii=False)
    except Exception as exc:  # a bug: the model is told, the turn goes on, the log has the traceback
        logger.warning("hermes-mlx recall failed: %s", exc, exc_info=True)
        return json.dumps({"error": f"{TOOL_NAME} failed: {type(exc).__name__}: {exc}"})


__all__ = [
    "DEFAULT_MATCHES",
    "MARKER_NOTE",
    "MAX_LINE_CHARS",
    "MAX_MATCHES",
    "MAX_RESULT_CHARS",
    "MAX_TERMS",
    "TOOL_NAME",
    "TOOL_SCHEMA",
    "RecallError",
    "RecallIndex",
    "handle_call",
    "row_text",
    "terms_of",
]
