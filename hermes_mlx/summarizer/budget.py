"""Keeping a summary inside a token budget, counted the way Hermes counts.

Hermes defrags its rolling summary once it reaches `micro_compact_defrag_threshold_tokens`
(2,000 by default) by its own rough count, and a summary that stays above that is defragged on
every later turn, so no exchange is absorbed again. The ledger never lets the model drop a fact,
so code must: whole entries go, the one worth least per token first (ENTRY_VALUE, measured on
real sessions; findings by their ranker's score), until the rendered summary fits. Every dropped
fact came from a message that the compaction archived, so it stays findable in the session store
(Hermes searches its archive); the counts say what went.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from .findings import Finding, features, near_duplicate, weigh
from .ledger import OUTCOME_SEP
from .outcomes import MADE, outcome_of
from .spare_lines import is_announced_change
from .summary import Summary, render, said_in_goal
from .vocabulary import is_go_ahead

CHARS_PER_TOKEN = 4
# Codepoints Hermes counts as a token each (CJK ideographs, kana, Hangul): agent/model_metadata.py
_CJK_DENSE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f]")

# Longer texts are not handed to the tokenizer whole: 50 MB of tool output took 12.8 GB and
# 262 s to tokenize (issue 20), for a count that only decides thresholds and budgets.
EXACT_COUNT_CHARS = 32_000

# A rolling summary is kept to this share of Hermes's defrag threshold, on every merge and defrag.
# It was cut back to 60% each time it reached 90% (room before anything went again), but code
# decides what goes, so dropping a little on every pass costs nothing; the cut lost what the room
# could keep (micro 126/172 facts at stake at 60%, 128 at 75%, 129 at 90%: Codex 8 → 11).
MICRO_SHARE = 0.9


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


# Hermes's own target for a batch summary (agent/context_compressor.py `_compute_summary_budget`):
# a fifth of the span, at least 2,000 tokens, at most 5% of the main model's window and 10,000
HERMES_SUMMARY_RATIO = 0.2
HERMES_SUMMARY_MIN = 2000
HERMES_SUMMARY_WINDOW_SHARE = 0.05
HERMES_SUMMARY_CEILING = 10_000


def hermes_summary_budget(span_tokens: int, context_window: int) -> int:
    """The summary size Hermes asks for a span of `span_tokens` in a `context_window` window: our
    batch summaries stay within it, so a Hermes user gets what their compressor would budget."""
    ceiling = min(int(context_window * HERMES_SUMMARY_WINDOW_SHARE), HERMES_SUMMARY_CEILING)
    return max(HERMES_SUMMARY_MIN, min(int(span_tokens * HERMES_SUMMARY_RATIO), ceiling))


def micro_budget(threshold_tokens: int) -> int:
    """The size a merged or defragged rolling summary may have: under Hermes's defrag threshold
    with a margin, so Hermes never defrags it on every turn and no exchange is left unabsorbed."""
    return int(threshold_tokens * MICRO_SHARE)


# What an entry of each kind is worth to a reader: the share of such entries that held a fact a
# reader needed, measured on both real-session corpora by benchmarks/entry_values.py (unbudgeted
# batch summaries, each session at half its tokens; its "any fact" column). Its "at stake" column
# (facts the kept turns no longer hold) rates files and identifiers lower still, but fitting by it
# lost identifiers planted in the synthetic sessions, and the user's words, never at stake in our
# batch pass, are in Hermes's, whose compressor drops them. Findings are worth what their ranker
# says (findings.FEATURE_WEIGHTS). Fitting drops the entry worth least per token first, so
# near-identical lines go before a result line.
ENTRY_VALUE = {
    "goal": 0.67,
    "user_message": 0.36,
    # a message that only lets the agent go on ("continue", "да", "y": vocabulary.GO_AHEAD): none of the
    # corpora's 26 held a fact, and a Russian user's twenty of them outlived the findings of a course
    "go_ahead": 0.01,
    "constraint": 0.24,
    "remaining": 0.13,
    "state": 0.39,
    "decision": 0.2,  # decision, question, other_section: no such entries in the corpora, priors
    "question": 0.13,
    "command": 0.15,  # with no result line
    "command_outcome": 0.33,  # with its result line
    "error_in_commands": 0.01,  # Commands shows it as that command's result line: said twice
    "error": 0.14,
    # 4 of 24 measured (0.17), kept at the earlier 0.34: at 0.17 a tight batch summary lets its
    # Errors and Fixes go before bare commands, and a reader carrying on needs "X failed because
    # Y, fixed by Z" (issue 27); the corpora's figures are the same either way
    "resolved_error": 0.34,
    # the results before a command's latest (`11 failures ⇒` before `0 failures`): 2 of 23 held a
    # fact, as "a count that dropped from one number to another" does. They had all gone before
    # anything else did, and a resolved error in a full summary took the one that said 11 had failed.
    # A command that makes something (a commit each run: Aider's edits) has no such history: each
    # earlier result is its own commit, worth what the latest is ("command_outcome")
    "outcome_history": 0.087,
    # A file another entry names again (a command, an error, a finding: `file_kind`) held a fact
    # five times as often as one only Files lists (0.18 against 0.035 for changed files; Cursor's
    # list of 159 edited files carried two), so a long list no longer outbids the findings. An
    # unnamed changed file keeps 0.05: at 0.035 Gemini's `SettingsStateManager.kt` went, whose path
    # is the one place the summary names that class. Mentioned files keep 0.051 either way
    # (measured 0.045 named, 0.028 not): lower, a planted file of the synthetic sessions went.
    "named_changed_file": 0.18,
    "changed_file": 0.05,
    "named_mentioned_file": 0.051,
    "mentioned_file": 0.051,
    "identifier": 0.026,  # one name of the Identifiers line
    "url": 0.026,  # none of the corpora's facts is a URL: an identifier's share (it names a resource)
    "other_section": 0.1,
}
# a change the agent announced, kept with room to spare (`spare_lines.announced_changes`): 6 of 281 held a
# fact on the corpora against 1 in 16 findings, so it goes before a finding scored alike
ANNOUNCED_SHARE = 0.35
MADE_HISTORY = 0.9  # a made thing's earlier results (commits), against its latest's worth
# the weights were fitted with positives balanced against the 1 in 22 findings that hold a fact:
# this shifts their log-odds back to a share comparable with ENTRY_VALUE's
FINDING_PRIOR_LOGIT = math.log(21)
# what a section keeps whatever it costs: the request, the user's latest words, the error still open
KEEP_LAST = {"user_message": 2, "constraint": 2, "error": 1, "state": 1, "progress": 1}
# An entry the turns kept verbatim beside the summary spell out (a file, command, name or error
# line the tail still shows) tells its reader nothing they lack: measured on both real corpora
# (benchmarks/entry_values.py), none of them held a fact that only the summary could carry. It
# keeps this share of its worth, so among such entries the better still go last. The user's own
# words (the goal, constraints, user messages) keep their whole worth: the summary is where each
# is kept whole (a batch pass's row of user turns may show them clipped; Hermes's compressor drops them).
SAID_IN_KEPT = 0.1
# a command a later one runs again with other flags or numbers, to the same result (`jb inspectcode`
# with `--severity=WARNING` for `SUGGESTION`): worth this share of its own line (`_run_again`)
SAID_LATER = 0.3
_NEVER_SAID_IN_KEPT = ("goal", "user_message", "constraint", "progress")


@dataclass
class _Entry:
    kind: str
    value: float  # per token
    tokens: int
    drop: Callable[[], bool]


def _finding_value(text: str) -> float:
    z = weigh(features(text, reaction=False, before_action=False, report=False, recency=1.0))
    return 1 / (1 + math.exp(-(z - FINDING_PRIOR_LOGIT)))


def _remover(items: list, item) -> Callable[[], bool]:
    def drop() -> bool:
        if item in items:
            items.remove(item)
            return True
        return False

    return drop


def _file_remover(files: dict, path: str) -> Callable[[], bool]:
    return lambda: files.pop(path, None) is not None


def _entries(s: Summary, count: Callable[[str], int], kept: str = "") -> list[_Entry]:
    """Every entry `fit_summary` may drop, with what it is worth per token (less when `kept`, the
    text of the turns that stay verbatim, spells out what it names: `said`)."""
    led = s.ledger
    out: list[_Entry] = []

    def add(kind: str, value: float, text: str, drop: Callable[[], bool], said: tuple[str, ...] = ()) -> None:
        tokens = max(1, count(text) + 2)
        said = tuple(x.strip().rstrip("…").strip() for x in said or (text,))
        if kept and kind not in _NEVER_SAID_IN_KEPT and all(len(x) > 2 and x in kept for x in said):
            value *= SAID_IN_KEPT
        out.append(_Entry(kind, value / tokens, tokens, drop))

    lists = [
        ("user_message", led.asks),
        ("constraint", led.constraints),
        ("remaining", s.remaining),
        ("decision", s.decisions),
        ("question", s.questions),
        ("error", led.errors),
        ("resolved_error", led.resolved),
        ("identifier", led.ids),
        ("url", led.urls),
    ]
    for kind, items in lists:
        keep = KEEP_LAST.get(kind, 0)
        droppable = items[: max(0, len(items) - keep)]
        for i, item in enumerate(droppable):
            text = getattr(item, "line", item)
            if kind in ("user_message", "constraint") and said_in_goal(text, s.goal):
                continue  # not rendered while the Goal shows it: dropping it saves nothing
            # identifiers come best first (digest.rank_ids): the last ranked go first; other lists
            # run oldest first, and among equals the oldest goes first
            rank = 1 - i / (2 * len(droppable)) if kind == "identifier" else 1
            if kind == "error" and _in_commands(item, led.commands):
                kind_here = "error_in_commands"
            elif kind == "user_message" and is_go_ahead(str(text)):
                kind_here = "go_ahead"
            elif kind == "url" and item in led.fetched:
                kind_here = "mentioned_file"  # a page the agent fetched is one it read, as a file
            else:
                kind_here = kind
            add(kind_here, ENTRY_VALUE[kind_here] * rank, str(text), _remover(items, item))
    progress = s.progress[: max(0, len(s.progress) - KEEP_LAST["progress"])]
    for item in progress:
        worth = _finding_value(item) * (ANNOUNCED_SHARE if is_announced_change(item) else 1)
        add("progress", worth, item, _remover(s.progress, item))
    for item in [x for x in s.state if x.startswith("Open error:")]:
        add("open_error_line", ENTRY_VALUE["error"] / 2, item, _remover(s.state, item))  # listed under Errors too
    runs = [(_run_words(c.cmd), c.latest_outcome()) for c in led.commands]
    for i, c in enumerate(led.commands):
        shown = f"{c.cmd} {c.status_text()}"
        if OUTCOME_SEP in c.outcome:  # `A ⇒ B`: B says where it stands, A how it got there
            history = c.outcome.rsplit(OUTCOME_SEP, 1)[0]
            worth = ENTRY_VALUE["outcome_history"]  # a rerun's history goes by its own measured worth
            if outcome_of(c.latest_outcome())[0] in MADE:  # each run made its own commit: no rerun's
                # history, worth nearly what the latest is, and it goes before the command that holds
                # the latest (priced without it)
                worth = MADE_HISTORY * ENTRY_VALUE["command_outcome"]
                shown = shown.replace(history + OUTCOME_SEP, "", 1)
            parts = history.split(OUTCOME_SEP)  # each earlier result its own entry, oldest first, the
            for part in parts:  # history's worth shared among them: one at a time goes, never all at once
                add("outcome_history", worth / len(parts), part + OUTCOME_SEP, _history_trimmer(led.commands, c, part))
        kind = "command_outcome" if c.outcome else "command"
        said = (c.cmd, c.latest_outcome()) if c.outcome else (c.cmd,)  # what it ran, and what came of it
        value = ENTRY_VALUE[kind] * (SAID_LATER if _run_again(runs[i], runs[i + 1 :], c.outcome) else 1)
        add(kind, value, shown, _remover(led.commands, c), said=said)
    named = named_text(s)
    shapes: set[str] = set()
    for path, action in list(led.files.items()):
        kind = file_kind(path, action, named)
        shape = re.sub(r"\d+", "N", path)  # `patch_test_10k.txt`, `patch_test_30k.txt`, …: one probe, its sizes
        alike = SAID_LATER if shape in shapes and shape != path else 1
        shapes.add(shape)
        add(kind, ENTRY_VALUE[kind] * alike, path, _file_remover(led.files, path))
    for title, body in s.extras:
        add("other_section", ENTRY_VALUE["other_section"], body, lambda title=title: _trim_extra_titled(s, title))
    return out


def named_text(s: Summary) -> str:
    """What the summary's other entries say (all but Files): where a file named again is told apart."""
    led = s.ledger
    commands = (f"{c.cmd} {c.outcome}" for c in led.commands)
    return "\n".join(
        [s.goal, *s.state, *s.remaining, *s.decisions, *s.questions, *s.progress, *led.asks, *led.constraints]
        + [*commands, *(e.line for e in led.errors), *led.resolved, *led.ids]
    )


def file_kind(path: str, action: str, named: str) -> str:
    """A Files entry's ENTRY_VALUE kind: changed (edited, created, deleted) or only mentioned, and
    `named_` when another entry of the summary (`named`: `named_text`) names the file again."""
    kind = "changed_file" if action in ("edited", "created", "deleted") else "mentioned_file"
    base = re.escape(path.rstrip("/").rsplit("/", 1)[-1])
    return f"named_{kind}" if re.search(rf"(?<![\w.\-]){base}(?![\w\-])", named) else kind  # not test_x.py for x.py


def _run_again(run: tuple[list[str], str], later: list[tuple[list[str], str]], outcome: str) -> bool:
    """A command (its `_run_words` and latest result) a later one repeats with other flags or
    numbers (`--severity=WARNING` for `SUGGESTION`, `--case 2` for `--case 1`) to the same result,
    or this one had none (`outcome` empty): the later line says where it stands. Another file or
    target is another run (`pytest tests/test_a.py`)."""
    words, result = run
    return any(words == w and (not outcome or result == r) for w, r in later)


def _run_words(cmd: str) -> list[str]:
    """A command's words less its flags and bare numbers: what it runs, on what."""
    return [w for w in cmd.split() if not w.startswith("-") and not w.strip("'\"").isdigit()]


def _in_commands(error, commands: list) -> bool:
    """An error line that Commands already shows as the result of the command it came after."""
    for c in commands:
        head = c.outcome.rstrip("…")
        if head and c.cmd == error.cmd and (head in error.line or error.line in c.outcome):
            return True
    return False


def _trim_extra_titled(s: Summary, title: str) -> bool:
    for i, (t, _) in enumerate(s.extras):
        if t == title:
            del s.extras[i]
            return True
    return False


def _history_trimmer(commands: list, command, part: str) -> Callable[[], bool]:
    """Drops one earlier result (`part`) from a command's `A ⇒ B ⇒ C`, never its latest."""

    def drop() -> bool:
        parts = command.outcome.split(OUTCOME_SEP)
        if command not in commands or part not in parts[:-1]:
            return False
        del parts[parts.index(part)]
        command.outcome = OUTCOME_SEP.join(parts)
        return True

    return drop


def _clip_goal(s: Summary) -> bool:
    if len(s.goal) > 160:
        s.goal = s.goal[:159].rsplit(" ", 1)[0] + "…"
        return True
    return False


def with_room(
    s: Summary, ranked: list[Finding], budget_tokens: int, count: Callable[[str], int] = hermes_tokens
) -> list[Finding]:
    """Of `ranked` (findings a pass's keep left out, best first), those the summary has room for
    under its budget: a pass whose ledger and findings leave room spends it on the next best
    finding (a code review's 117 findings kept 22 in 1,600 of 2,000 tokens), never on one that says
    what a progress line says."""
    left = (
        budget_tokens - count(render(s)) - (0 if s.progress else count("## Progress\n\n"))
    )  # a first line adds its heading
    out: list[Finding] = []
    said = [*s.progress, *s.remaining, *s.decisions, *s.questions]  # and each finding taken, as it is
    for f in ranked if left > 3 else ():  # no room: no finding is counted
        cost = count(f.text) + 3  # "- " and the newline
        if cost <= left and not any(near_duplicate(f.text, p) for p in said):
            out.append(f)
            said.append(f.text)
            left -= cost
    return out


def fit_summary(
    s: Summary,
    budget_tokens: int,
    count: Callable[[str], int] = hermes_tokens,
    kept: str | Callable[[], str] = "",
) -> dict[str, int]:
    """Drop whole entries from `s`, the one worth least per token first (ENTRY_VALUE; SAID_IN_KEPT
    of it for what `kept`, the text of the turns that stay verbatim, spells out), until it renders
    within the budget. Returns how many entries of each kind went (empty when it fitted). `kept`
    may be a function giving that text: it is read only when something must go (a micro pass's
    transcript is not read back on every turn that fits)."""
    dropped: dict[str, int] = {}
    total = count(render(s))
    if total <= budget_tokens:
        return dropped
    kept = kept() if callable(kept) else kept
    for entry in sorted(_entries(s, count, kept), key=lambda e: e.value):
        if total <= budget_tokens:
            break
        if entry.drop():
            dropped[entry.kind] = dropped.get(entry.kind, 0) + 1
            total -= entry.tokens
            if total <= budget_tokens:  # the estimate says it fits: the rendering decides
                total = count(render(s))
    last_resort = [
        ("goal", lambda: _clip_goal(s)),
        ("error", lambda: bool(s.ledger.errors) and s.ledger.errors.pop(0) is not None),
        ("user_message", lambda: bool(s.ledger.asks) and s.ledger.asks.pop(0) is not None),
        ("constraint", lambda: bool(s.ledger.constraints) and s.ledger.constraints.pop(0) is not None),
        ("progress", lambda: bool(s.progress) and s.progress.pop(0) is not None),
        ("state", lambda: bool(s.state) and s.state.pop(0) is not None),
    ]
    total = count(render(s))
    for kind, drop in last_resort:
        while total > budget_tokens and drop():
            dropped[kind] = dropped.get(kind, 0) + 1
            total = count(render(s))
    return dropped
