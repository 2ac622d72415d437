"""Keeping a summary inside a token budget, counted the way Hermes counts.

Hermes defrags its rolling summary once it reaches `micro_compact_defrag_threshold_tokens`
(2,000 by default) by its own rough count, and a summary that stays above that is defragged on
every later turn, so no exchange is absorbed again. The ledger never lets the model drop a fact,
so code must: whole entries go, least useful first (resolved errors, passed read-only commands,
identifiers other entries spell out, files only mentioned, older progress), until the rendered
summary fits. Every dropped fact came from a message that the compaction archived, so it stays
findable in the session store (Hermes searches its archive); the counts say what went.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .ledger import OUTCOME_SEP
from .summary import Summary, render

CHARS_PER_TOKEN = 4
# Codepoints Hermes counts as a token each (CJK ideographs, kana, Hangul): agent/model_metadata.py
_CJK_DENSE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f]")

# Longer texts are not handed to the tokenizer whole: 50 MB of tool output took 12.8 GB and
# 262 s to tokenize (issue 20), for a count that only decides thresholds and budgets.
EXACT_COUNT_CHARS = 32_000

MICRO_HIGH = 0.9  # a merge may grow the summary up to this share of Hermes's defrag threshold
MICRO_LOW = 0.6  # past it (and on every defrag) it is cut back to this share


def hermes_tokens(text: str) -> int:
    """Hermes's `estimate_tokens_rough`: ASCII ceil(chars/4); dense CJK one token a codepoint,
    the rest ceil(UTF-8 bytes/4)."""
    if not text:
        return 0
    if text.isascii():
        return (len(text) + 3) // CHARS_PER_TOKEN
    stripped = _CJK_DENSE.sub("", text)
    dense = len(text) - len(stripped)
    return dense + (len(stripped.encode("utf-8", "replace")) + 3) // CHARS_PER_TOKEN


def bounded_count(count: Callable[[str], int], text: str, limit: int = EXACT_COUNT_CHARS) -> int:
    """Tokens in `text`, handing `count` at most `limit` characters of it in all.

    Up to `limit` characters are counted exactly. Past that, the head and tail (what a clipped
    copy keeps) are counted and the middle is estimated at the denser of their measured rate and
    Hermes's own estimate, so a long text is not undercounted against a threshold.
    """
    if len(text) <= limit:
        return count(text)
    half = limit // 2
    head, tail = text[:half], text[-half:]
    exact = count(head) + count(tail)
    rate = max(exact, hermes_tokens(head) + hermes_tokens(tail)) / (2 * half)
    return exact + int((len(text) - 2 * half) * rate + 0.999)


def micro_budget(threshold_tokens: int, current_tokens: int) -> int:
    """The size a merged rolling summary may have: up to 90% of the defrag threshold, and once it
    gets there, back to 60% so the next passes have room before anything is dropped again."""
    high = int(threshold_tokens * MICRO_HIGH)
    return high if current_tokens < high else int(threshold_tokens * MICRO_LOW)


def _drop_first(items: list, keep_last: int = 0) -> bool:
    if len(items) > keep_last:
        del items[0]
        return True
    return False


def _drop_file(files: dict, actions: tuple[str, ...]) -> bool:
    for path, action in files.items():
        if action in actions:
            del files[path]
            return True
    return False


def _drop_command(commands: list, passed: bool) -> bool:
    for c in commands:
        if not passed or (c.statuses and c.statuses[-1] == 0):
            commands.remove(c)
            return True
    return False


def _trim_history(commands: list) -> bool:
    for c in commands:
        if OUTCOME_SEP in c.outcome:
            c.outcome = c.outcome.rsplit(OUTCOME_SEP, 1)[-1]
            return True
    return False


def _drop_open_error(s: Summary) -> bool:
    kept = [x for x in s.state if not x.startswith("Open error:")]
    if len(kept) == len(s.state):
        return False
    s.state = kept
    return True


def _trim_extra(s: Summary) -> bool:
    """Shorten the longest section we carry verbatim (another writer's) by its last line."""
    if not s.extras:
        return False
    i = max(range(len(s.extras)), key=lambda k: len(s.extras[k][1]))
    title, body = s.extras[i]
    lines = body.strip().splitlines()
    if len(lines) > 1:
        s.extras[i] = (title, "\n".join(lines[:-1]))
    elif len(body) > 200:
        s.extras[i] = (title, body[: len(body) * 2 // 3].rstrip() + "…")
    else:
        del s.extras[i]
    return True


def _clip_goal(s: Summary) -> bool:
    if len(s.goal) > 160:
        s.goal = s.goal[:159].rsplit(" ", 1)[0] + "…"
        return True
    return False


def _steps(s: Summary) -> list[tuple[str, Callable[[], bool]]]:
    """(kind, drop one entry of that kind) in the order entries are given up."""
    led = s.ledger
    return [
        ("outcome_history", lambda: _trim_history(led.commands)),  # `A ⇒ B`: B says where it stands
        ("open_error_line", lambda: _drop_open_error(s)),  # the same error is listed under Errors
        ("progress", lambda: _drop_first(s.progress, keep_last=8)),  # old narrative before any ledger fact
        ("resolved_error", lambda: _drop_first(led.resolved)),
        ("passed_command", lambda: _drop_command(led.commands, passed=True)),
        ("identifier", lambda: _drop_first(led.ids)),
        ("mentioned_file", lambda: _drop_file(led.files, ("mentioned", "read"))),
        ("url", lambda: _drop_first(led.urls)),
        ("progress", lambda: _drop_first(s.progress, keep_last=3)),
        ("question", lambda: _drop_first(s.questions, keep_last=1)),
        ("decision", lambda: _drop_first(s.decisions, keep_last=1)),
        ("remaining", lambda: _drop_first(s.remaining, keep_last=1)),
        ("other_section", lambda: _trim_extra(s)),
        ("command", lambda: _drop_command(led.commands, passed=False)),
        ("error", lambda: _drop_first(led.errors, keep_last=1)),
        ("changed_file", lambda: _drop_file(led.files, ("edited", "created", "deleted"))),
        ("progress", lambda: _drop_first(s.progress, keep_last=1)),
        ("user_message", lambda: _drop_first(led.asks, keep_last=2)),
        ("constraint", lambda: _drop_first(led.constraints, keep_last=2)),
        ("goal", lambda: _clip_goal(s)),
        ("error", lambda: _drop_first(led.errors)),
        ("user_message", lambda: _drop_first(led.asks)),
        ("constraint", lambda: _drop_first(led.constraints)),
        ("progress", lambda: _drop_first(s.progress)),
    ]


def fit_summary(s: Summary, budget_tokens: int, count: Callable[[str], int] = hermes_tokens) -> dict[str, int]:
    """Drop whole entries from `s`, least useful first, until it renders within the budget.
    Returns how many entries of each kind went (empty when it already fitted)."""
    dropped: dict[str, int] = {}
    if count(render(s)) <= budget_tokens:
        return dropped
    for kind, drop in _steps(s):
        while drop():
            dropped[kind] = dropped.get(kind, 0) + 1
            if count(render(s)) <= budget_tokens:
                return dropped
    return dropped
