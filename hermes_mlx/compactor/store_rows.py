"""How a message dict becomes the session store's columns and back, losing nothing.

Why a module of its own: SQLite cannot hold every Python string (a lone surrogate such as
`\\ud800`, which JSON can carry, makes the driver raise), and a store that refuses a row leaves
the originals unarchived. So text a column cannot hold is kept exactly in `flags` (JSON with
`\\u` escapes) while the column gets a searchable copy with U+FFFD in its place; a non-text
value where text belongs (an integer id) is kept in `flags` too.
"""

from __future__ import annotations

import json

from hermes_mlx.compactor.markers import MERGED_FROM_KEY, MICRO_KEY, is_marker

Message = dict

# Columns of their own; every other key of a message dict (the `_compressed_summary` and
# `_micro_compact_marker` flags, display_metadata, reasoning, ...) goes into `flags` as JSON.
COLUMNS = ("role", "content", "tool_calls", "tool_call_id", "name")
RAW_KEY = "_store_raw"  # flags key: exact text of columns SQLite cannot hold (lone surrogates)


def encodable(text: str) -> bool:
    if text.isascii():  # O(1) in CPython: no copy of a 50 MB tool output to learn it is plain
        return True
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def clean(text: str) -> str:
    """`text` as SQLite can hold it: lone surrogates become U+FFFD (the exact text goes to flags)."""
    return text if encodable(text) else "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)


def session_key(session_id: str) -> str:
    """A session id SQLite can bind (file names may carry undecodable bytes as surrogates)."""
    if isinstance(session_id, str) and not encodable(session_id):
        return session_id.encode("utf-8", "backslashreplace").decode("utf-8")
    return session_id


def dumps(value: object, sort_keys: bool = False) -> str:
    """JSON, non-ASCII kept readable; escaped (losslessly) when it holds lone surrogates."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=sort_keys)
    return text if encodable(text) else json.dumps(value, ensure_ascii=True, sort_keys=sort_keys)


def encode(message: Message, position: int) -> tuple:
    """Message dict -> (role, content, tool_calls, tool_call_id, name, flags) column values."""
    if not isinstance(message, dict):
        raise TypeError(f"message at position {position} is a {type(message).__name__}, not a dict")
    role = message.get("role")
    if not isinstance(role, str):
        raise ValueError(f"message at position {position} has no string role")
    extra = {k: v for k, v in message.items() if k not in COLUMNS}
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        extra["content"] = content  # a list of parts, kept whole
        content = None
    elif "content" not in message:
        extra["_no_content"] = True
    for key in ("tool_calls", "tool_call_id", "name"):
        if key in message and message[key] is None:
            extra[key] = None  # an explicit None reads back as one
    columns = {
        "role": role,
        "content": content,
        "tool_call_id": message.get("tool_call_id"),
        "name": message.get("name"),
    }
    raw = {}
    for key, value in columns.items():
        if value is not None and not isinstance(value, str):
            extra[key] = value  # a non-text id or name, kept as it was
            columns[key] = None
        elif isinstance(value, str) and not encodable(value):
            raw[key] = value
            columns[key] = clean(value)  # searchable; the exact text is in flags
    if raw:
        extra[RAW_KEY] = raw
    tool_calls = message.get("tool_calls")
    return (
        columns["role"],
        columns["content"],
        dumps(tool_calls) if tool_calls is not None else None,
        columns["tool_call_id"],
        columns["name"],
        dumps(extra, sort_keys=True) if extra else None,
    )


def row_to_message(role: str, content, tool_calls, tool_call_id, name, flags) -> Message:
    """Column values -> the message dict that was stored (also used to read a store file as a session)."""
    extra = json.loads(flags) if flags else {}
    if not isinstance(extra, dict):
        raise ValueError("flags is not a JSON object")
    raw = extra.pop(RAW_KEY, {})
    message: Message = {"role": raw.get("role", role)}
    if not extra.pop("_no_content", False):
        message["content"] = raw.get("content", content)
    if tool_calls is not None:
        message["tool_calls"] = json.loads(tool_calls)
    for key, value in (("tool_call_id", tool_call_id), ("name", name)):
        value = raw.get(key, value)
        if value is not None:
            message[key] = value
    message.update(extra)
    return message


# Rows a pass rewrites in place


def rewritten_rows(rows: list[tuple], messages: list[Message], opcodes) -> dict[int, int]:
    """Active rows that a new transcript row supersedes, paired with it (row index -> transcript
    index), so the write updates them in place instead of archiving one copy a pass.

    Only rows whose whole content the new row carries: a rolling (micro) summary marker replaced
    by the next summary (made from it), and a merged user row whose original messages begin the
    new merged row's originals. Every original user message was stored as its own row when its
    turn came and archived when merged, so it stays searchable.
    """
    pairs: dict[int, int] = {}
    for tag, i1, i2, j1, j2 in opcodes:
        if tag != "replace":
            continue
        j = j1
        for i in range(i1, i2):
            old = _flags(rows[i][2])
            for k in range(j, j2):
                if _supersedes(old, messages[k]):
                    pairs[i] = k
                    j = k + 1
                    break
    return pairs


def equal_rows(
    rows: list[tuple], encoded: list[tuple], kept: dict[int, int], rewritten: dict[int, int]
) -> dict[int, int]:
    """More active rows a new transcript keeps (row index -> transcript index): those the
    matcher's blocks left unpaired that hold exactly what an unpaired message holds. The matcher
    aligns blocks in order, so of two equal rows around a moved one it may keep the wrong pair
    (`[A, B, C, A]` -> `[B, A]` kept A and stored B a second time); a row's active_order follows
    it wherever it was."""
    spare: dict[tuple, list[int]] = {}
    for i, row in enumerate(rows):
        if i not in kept and i not in rewritten:
            spare.setdefault(row[2], []).append(i)
    paired = set(kept.values()) | set(rewritten.values())
    out: dict[int, int] = {}
    for j, columns in enumerate(encoded):
        if j not in paired and spare.get(columns):
            out[spare[columns].pop(0)] = j
    return out


def _flags(columns: tuple) -> dict:
    flags = columns[5]
    if not flags or not (MICRO_KEY in flags or MERGED_FROM_KEY in flags):
        return {}
    try:
        value = json.loads(flags)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _supersedes(old: dict, new: Message) -> bool:
    if old.get(MICRO_KEY):
        return is_marker(new)
    before = old.get(MERGED_FROM_KEY)
    after = new.get(MERGED_FROM_KEY)
    return bool(before) and isinstance(after, list) and len(after) >= len(before) and after[: len(before)] == before
