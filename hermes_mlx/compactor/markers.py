"""Summary markers in Hermes's own format, and the merged-user-turn projection.

Markers must be readable by Hermes (and Hermes's by us) so micro and batch compaction, ours and
theirs, interoperate on one transcript. Hermes's session store drops `_`-keys, so a marker is
recognised by its content as well as by its flags.
"""

from __future__ import annotations

from hermes_mlx.summarizer.api import Message

MARKER_TAG = "[CONTEXT COMPACTION — REFERENCE ONLY]"
MARKER_START = MARKER_TAG + " Earlier turns were compacted into the summary below."
LEGACY_MARKER_START = "[CONTEXT SUMMARY]:"
MARKER_PREFIX = (
    MARKER_START + " It carries background from an earlier part of this session, not instructions: the questions"
    " and requests it mentions were already handled, so do not answer or redo them. Act on the latest"
    " user message after this summary. If your own tool calls or tool results follow it, you are in"
    " the middle of a turn: carry on with that work. Your tools remain fully available."
)
HISTORICAL_TASK_HEADING = "## Historical Task Snapshot"
END_MARKER = "--- END OF CONTEXT SUMMARY — respond to the message below, not the summary above ---"

SUMMARY_KEY = "_compressed_summary"
HAS_USER_TURN_KEY = "_compressed_summary_has_user_turn"
MICRO_KEY = "_micro_compact_marker"
MODEL_ONLY_KEY = "model_only"  # inside display_metadata
MERGED_FROM_KEY = "_merged_user_turns"  # the original user messages a merged row stands for


def render(summary: str) -> str:
    """Marker content around a summary body."""
    return f"{MARKER_PREFIX}\n\n{HISTORICAL_TASK_HEADING}\n{summary.strip()}\n\n{END_MARKER}"


def build(summary: str, micro: bool) -> Message:
    """A summary marker message. Only micro markers may later be superseded or defragged."""
    marker = {"role": "assistant", "content": render(summary), SUMMARY_KEY: True, HAS_USER_TURN_KEY: False}
    if micro:
        marker[MICRO_KEY] = True
    return marker


def is_marker(message: Message) -> bool:
    if message.get(SUMMARY_KEY):
        return True
    content = message.get("content")
    return (
        message.get("role") in ("assistant", "user")
        and isinstance(content, str)
        and (content.startswith(MARKER_TAG) or content.startswith(LEGACY_MARKER_START))
    )


def is_micro_marker(message: Message) -> bool:
    return is_marker(message) and bool(message.get(MICRO_KEY))


def parse(content: object) -> str:
    """The summary body inside a marker (ours or Hermes's); empty when there is none."""
    if not isinstance(content, str) or not content.strip():
        return ""
    if content.startswith(MARKER_PREFIX):
        body = content[len(MARKER_PREFIX) :].lstrip()
        if body.startswith(HISTORICAL_TASK_HEADING):
            body = body[len(HISTORICAL_TASK_HEADING) :]
    else:
        # Hermes's own prefix names the heading, so the last occurrence starts the body.
        idx = content.rfind(HISTORICAL_TASK_HEADING)
        if idx != -1:
            body = content[idx + len(HISTORICAL_TASK_HEADING) :]
        elif content.startswith(LEGACY_MARKER_START):
            body = content[len(LEGACY_MARKER_START) :]
        else:
            body = content
    end = body.rfind(END_MARKER)
    return (body[:end] if end != -1 else body).strip()


def last_marker(messages: list[Message], start: int = 0, end: int | None = None) -> int:
    """Index of the last marker in messages[start:end], or -1."""
    stop = len(messages) if end is None else min(end, len(messages))
    for i in range(stop - 1, start - 1, -1):
        if is_marker(messages[i]):
            return i
    return -1


# ---------------------------------------------------------------------------------------------
# Merged user turns (seed 003: display_metadata.model_only)


def originals(message: Message) -> list[Message]:
    """The user messages a row stands for: itself, or the originals kept in a merged row."""
    return list(message.get(MERGED_FROM_KEY) or [message])


def is_plain_user(message: Message | None) -> bool:
    return bool(message) and message.get("role") == "user" and not is_marker(message)


def _as_parts(content: object) -> list:
    if isinstance(content, list):
        return list(content)
    return [{"type": "text", "text": content or ""}]


def merge_users(first: Message, second: Message) -> Message:
    """One model-view row for two adjacent user turns; the originals ride along for display.

    A new dict: the originals are kept byte for byte and never modified.
    """
    a, b = first.get("content"), second.get("content")
    if (a is None or isinstance(a, str)) and (b is None or isinstance(b, str)):
        content: object = "\n\n".join(c for c in (a, b) if c)
    else:
        content = _as_parts(a) + [{"type": "text", "text": "\n\n"}] + _as_parts(b)
    display = {**(first.get("display_metadata") or {}), MODEL_ONLY_KEY: True}
    return {
        "role": "user",
        "content": content,
        "display_metadata": display,
        MERGED_FROM_KEY: originals(first) + originals(second),
    }


def merge_adjacent_users(messages: list[Message], start: int = 0) -> list[Message]:
    """Merge runs of adjacent user turns at or after `start` (the head stays as it is)."""
    out = list(messages[:start])
    for message in messages[start:]:
        if len(out) > start and is_plain_user(message) and is_plain_user(out[-1]):
            out[-1] = merge_users(out[-1], message)
        else:
            out.append(message)
    return out


def display_view(messages: list[Message]) -> list[Message]:
    """The transcript as the user saw it typed: merged rows give way to their originals."""
    out: list[Message] = []
    for message in messages:
        if message.get(MERGED_FROM_KEY):
            out.extend(message[MERGED_FROM_KEY])
        else:
            out.append(message)
    return out


def user_messages(messages: list[Message]) -> list[Message]:
    """Every original user message, in order (markers excluded)."""
    return [m for m in display_view(messages) if is_plain_user(m)]
