"""What a batch pass keeps of the user's turns in the live transcript, within a token budget.

Why: user turns are never summarized away, and batch kept every one of them verbatim in one
merged row. With many turns (short ones over a long session, or machine-written ones such as
`<task-notification>` envelopes) that row alone outgrew the threshold, so every later turn ran
another batch pass that saved ~2% and the transcript still grew (issues 19 and 20).

So the merged row's *content*, the model's view, is rebuilt from the originals each pass and
clipped until it fits: machine-written turns first (to their human words or first line), then
older human turns, and last the oldest turns are left out of the view with a note saying how
many. Nothing is lost: the row keeps every original whole under `markers.MERGED_FROM_KEY` (what
`markers.user_messages` and the display view read, and what the session store keeps with the
row), each original was stored as its own row when its turn came, and the summarizer gets the
originals whole (the summary's `## User Messages`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from hermes_mlx.compactor import markers
from hermes_mlx.compactor.transcript import MESSAGE_OVERHEAD_TOKENS, content_text
from hermes_mlx.summarizer.api import Message
from hermes_mlx.summarizer.digest import human_words, machine_written  # one rule for who wrote a turn

__all__ = ["clip_noted", "fit_users", "machine_written"]

MACHINE_CHARS = 160  # a machine-written turn: its first line (or its human words), clipped
OLD_CHARS = 400  # an older human turn, once the budget is tight
RECENT_WHOLE = 2  # the newest human turns stay whole while anything else can give
SEPARATOR = "\n\n"

_SUMMARY = re.compile(r"<summary>(.*?)</summary>", re.S)
_TAG = re.compile(r"</?[A-Za-z][\w-]*>")


def clip_noted(text: str, chars: int) -> str:
    """`text` cut to about `chars` characters at a word, saying how much was cut."""
    if len(text) <= chars:
        return text
    cut = text[:chars].rsplit(None, 1)[0] if " " in text[:chars] else text[:chars]
    return f"{cut.rstrip()} […{len(text) - len(cut):,} more chars]"


def _short(text: str, chars: int) -> str:
    """A machine-written turn's shortest useful form: the human words of a slash command, else
    what a notification says (its <summary>), else its text without the envelope's tags."""
    args = human_words(text)
    said = _SUMMARY.search(text)
    short = args or (said and " ".join(said.group(1).split())) or " ".join(_TAG.sub(" ", text).split())
    short = clip_noted(short, chars)
    return short if short == text else f"{short} […]"


def fit_users(originals: list[Message], budget: int, count: Callable[[str], int]) -> tuple[Message | None, dict]:
    """One merged row for `originals` whose content fits `budget` tokens if it can, and what was
    clipped: {"clipped": n, "left_out": n} (both 0 when every turn is kept verbatim)."""
    if not originals:
        return None, {"clipped": 0, "left_out": 0}
    row = originals[0]
    for message in originals[1:]:
        row = markers.merge_users(row, message)
    texts = [content_text(m) for m in originals]
    if _cost(texts, count) <= budget:
        return row, {"clipped": 0, "left_out": 0}
    machine = [machine_written(t) for t in texts]
    humans = [i for i, is_machine in enumerate(machine) if not is_machine]
    recent = set(humans[-RECENT_WHOLE:])
    views = list(texts)
    steps = [
        [(i, lambda t: _short(t, MACHINE_CHARS)) for i in range(len(texts)) if machine[i]],
        [(i, lambda t: clip_noted(t, OLD_CHARS)) for i in humans if i not in recent],
        [(i, lambda t: clip_noted(t, OLD_CHARS)) for i in sorted(recent)],
    ]
    for step in steps:
        for i, shorten in step:
            views[i] = shorten(texts[i])
        if _cost(views, count) <= budget:
            return _as_row(row, originals, views, 0), {"clipped": _changed(views, texts), "left_out": 0}
    # Leave the oldest turns out of the view, machine-written ones first; the newest stays.
    order = [i for i in range(len(texts)) if machine[i]] + humans
    left_out: set[int] = set()
    total = _cost(views, count) + 40  # the note saying how many were left out
    for i in order[:-1]:
        if total <= budget:
            break
        left_out.add(i)
        total -= count(views[i]) + 1
    views = [None if i in left_out else v for i, v in enumerate(views)]
    kept = [v for v in views if v is not None]
    if len(kept) == 1 and _cost(kept, count) > budget:  # the newest alone is over: clip it to the budget
        i = next(i for i, v in enumerate(views) if v is not None)
        views[i] = clip_noted(texts[i], max(80, budget * 3))
    stats = {
        "clipped": _changed([v for v in views if v is not None], [t for v, t in zip(views, texts) if v is not None])
    }
    return _as_row(row, originals, views, len(left_out)), {**stats, "left_out": len(left_out)}


def _cost(views: list[str], count: Callable[[str], int]) -> int:
    return sum(count(v) for v in views) + len(views) + MESSAGE_OVERHEAD_TOKENS


def _changed(views: list[str], texts: list[str]) -> int:
    return sum(v != t for v, t in zip(views, texts))


def _as_row(row: Message, originals: list[Message], views: list[str | None], left_out: int) -> Message:
    """The merged row with `views` as its content; the originals ride along whole."""
    parts = [v for v in views if v is not None]
    if left_out:
        parts.insert(
            0,
            f"[{left_out} earlier user message{'s' if left_out > 1 else ''} left out of this view to fit the"
            " context; the session keeps them whole]",
        )
    display = {**(row.get("display_metadata") or {}), markers.MODEL_ONLY_KEY: True}
    return {
        "role": "user",
        "content": SEPARATOR.join(parts),
        "display_metadata": display,
        markers.MERGED_FROM_KEY: markers.originals(row) if len(originals) > 1 else [originals[0]],
    }
