"""Where the work stands, folded into a summary after each pass: the task in progress, the
error still open, the plan's open items, files relative to the working folder, identifiers
ranked. Code's job in every pass, micro and batch; the model has no part in it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .budget import hermes_tokens, with_room
from .digest import agreed_plan, plan_state, rank_ids
from .faithful import directive_shaped
from .findings import Finding, findings, in_session_order, is_announcement, near_duplicate, rank
from .ledger import MORE_ERRORS
from .narrative import add_progress
from .outcomes import says_made, says_passed
from .shell_words import read_only
from .spare_lines import spare_lines
from .summary import Summary, code, render
from .text import Turn, clip
from .vocabulary import USER_REFUSED, tool_action
from .workfolder import above_given, relative_label, settle, stated_folder, working_folder


def fold_state(s: Summary, turns: list[Turn], source: str, caps: bool = True) -> None:
    """Where the work stands after `turns`: the task in progress (not closed since), the
    latest error still open, the plan's open items; files made relative and identifiers
    ranked (code's job in every pass, micro and batch)."""
    plan = plan_state(turns, listed=[*s.state, *s.remaining])
    agreed = agreed_plan(turns)  # a plan put to the user replaces the one before it
    plan_lines = ("Plan:", "Plan (approved):") if agreed else ()
    state = [x for x in s.state if not x.startswith(("In progress:", "Open error:", *plan_lines))]
    state += [agreed] if agreed else []
    current = plan.in_progress or next((x[len("In progress: ") :] for x in s.state if x.startswith("In progress:")), "")
    if current and current.split(":")[0] not in plan.closed:
        state.append(f"In progress: {current}")
    s.state = state
    last = next((e for e in reversed(s.ledger.errors) if _to_act_on(e)), None)
    last = None if last is None or _moot(s.ledger, last) else last  # before tidy lets a command go
    if plan.listed:  # the plan as these turns left it: once all of it is done, nothing is next
        s.remaining = list(plan.next_steps)
    # a step still to do is no progress: a report's "Next steps" list had been picked as findings too (its
    # very words: "Fixed the redirect in auth.py" is done work beside "Fix the redirect in signup.py")
    s.progress = [p for p in s.progress if p not in s.remaining]
    known = s.ledger.root or _known_root(s.ledger.files)
    stated = stated_folder(turns)
    root = settle(known, working_folder(turns, known, stated), stated=bool(stated))
    if root and not known:  # a first root: the relative paths the agent gave so far are relative to it
        root = above_given(root, [p for p, action in s.ledger.files.items() if action != "mentioned"])
    # a batch pass caps what one span adds; a micro pass adds one exchange to a rolling
    # summary, whose size the budget keeps (capping there would drop what earlier passes kept)
    if caps:
        s.ledger.tidy(root)
    else:
        s.ledger.tidy(root, keep_commands=None, keep_files=None)
    if last is not None:  # its label's path as Files says it, once the working folder is known
        line, label = clip(last.line, 100), relative_label(last.cmd, s.ledger.root)  # whole under Errors
        s.state.append(f"Open error: {code(line)}" + (f" after {code(label)}" if last.cmd else ""))
    carried = [i for i in s.ledger.ids if i not in source]  # from the earlier summary
    fresh = rank_ids([i for i in s.ledger.ids if i not in carried], turns)
    s.ledger.ids = carried + [i for i in fresh if i not in carried]


# a tool refusing a call for its arguments (Claude Code's `<tool_use_error>InputValidationError: Grep
# failed due to the following issue: An unexpected parameter `file_path` was provided`), never the work
_CALL_REFUSED = re.compile(r"\bInputValidationError\b|^(?:<tool_use_error>)?Invalid (?:tool )?arguments\b", re.I)


def _to_act_on(error) -> bool:
    """An error a reader may have to act on. A failed read (`ls: cannot access 'lib/ai'`, a grep that
    found nothing) tells what is not there, a call the tool refused for its arguments was fixed by
    the next call, a call the user turned down is their decision (USER_REFUSED), and `… and 1 more error
    lines` says no error: they stay under Errors only."""
    return not (
        read_only(error.cmd)
        or _not_there(error)
        or MORE_ERRORS.match(error.line)
        or _CALL_REFUSED.search(error.line)
        or USER_REFUSED.match(error.line)
    )


def _not_there(error) -> bool:
    """A read tool's call that found nothing at the path it was given (an MCP `get_file_contents` of
    `clinerules` answering `Not Found`, `read_file` of a file not there): it tells what is not there, as a
    failed `ls` does; a read tool's other errors (Copilot's `get_errors` listing CS1061) are to act on."""
    name = error.cmd.split(" ", 1)[0]
    tool = "_" in name or bool(re.search(r"[a-z][A-Z]", name))  # a tool's name, not a shell's `wget` or `open`
    return tool and tool_action(name, {}) == "read" and bool(_NOT_THERE.search(error.line))


_NOT_THERE = re.compile(r"\bnot found\b|no such file|does ?n[o']t exist|\bENOENT\b|\b404\b|cannot find", re.I)


def _moot(led, error) -> bool:
    """An error later work went past: a command that changes things succeeded after the one that
    failed (the ledger keeps commands most recent last), or passed with no status (its output
    non-empty, no error, no failing verdict: `Ledger.passed_unseen`). It stays under Errors, but is
    no longer the Open error a reader should act on."""
    cmds = [c.cmd for c in led.commands]
    if error.cmd not in cmds:
        return False
    later = led.commands[cmds.index(error.cmd) + 1 :]
    return any((_succeeded(c) or c.cmd in led.passed_unseen) and not read_only(c.cmd) for c in later)


def _succeeded(c) -> bool:
    """Its latest run exited 0, or, where the export gives no status, said all passed (the ledger's
    own rule: a blind step before it could have failed unseen) or made what it set out to (a commit, a
    push, a PR: `outcomes.MADE` and git's own lines; a Claude Code chain ending `git rebase --continue &&
    git push` had left its rebase conflict the Open error). A command an earlier summary listed with
    no exit status (none was known) has no statuses once parsed back: unknown too."""
    latest = c.statuses[-1] if c.statuses else None
    said = c.latest_outcome()
    return latest == 0 or latest is None and (says_passed(said, c.cmd) or says_made(said) and _VCS.search(c.cmd))


# a command of a version-control tool: what it makes (a commit, a push, a PR) is what it set out to do; an edit
# tool's automatic commit (Aider's `Applied edit to x / Commit 3e1f0a2 …`) says nothing of a test that failed
_VCS = re.compile(r"(?:^|&&|\|\||;)\s*(?:git|gh|glab|hg|jj|svn)\b")


def _known_root(files: dict) -> str:
    """The working folder an earlier pass made paths relative to, found again from a new
    absolute path that ends in one of them (this span alone may name too few to tell). Only a
    file a tool touched tells it: a path named in prose may be written from any folder (a plan's
    `projects/app/src/a.ts` in a monorepo made its root the working folder)."""
    relative = [q for q, action in files.items() if action != "mentioned" and not q.startswith(("/", "~"))]
    for p in files:
        if p.startswith("/"):
            for q in relative:
                if "/" in q and p.endswith("/" + q):
                    return p[: -len(q) - 1]
    return ""


def fresh_findings(s: Summary, turns: list[Turn], exclude: list[str] | tuple = ()) -> list[Finding]:
    """The span's findings, best first: never an announcement, nor an order restated (the
    user's own are in the constraints), nor one the summary already has, nor one saying what an
    `exclude` line says (the gate trims "Found it." off a pick: the untrimmed finding is no other)."""
    said = [f for f in rank(findings(turns)) if not is_announcement(f.text) and not directive_shaped(f.text)]
    return unsaid(s, said, exclude)


def unsaid(s: Summary, ranked: list[Finding], exclude: list[str] | tuple = ()) -> list[Finding]:
    """Of `ranked`, those the summary's Progress does not list and no `exclude` line, nor a line of
    its other narrative sections (Next Steps, Decisions, Questions), says: a plan's "we might need to:
    A; B" beside Next Steps' A and B is said twice."""
    listed = set(s.progress)
    said = [*exclude, *s.remaining, *s.decisions, *s.questions]
    return [f for f in ranked if f.text not in listed and not any(near_duplicate(f.text, e) for e in said)]


def best_that_fit(ranked: list[Finding], keep: int, room_per_pick: int) -> list[Finding]:
    """Of `ranked` (best first), the best that fit in `keep` findings' worth of characters:
    short ones leave room for more ("64KB (65,594 bytes): FAILS" costs a fifth of a long one),
    never more than twice `keep`, and the best one whatever its length (a micro exchange's room
    for one extra finding is less than a long one: the best finding is never skipped for it)."""
    chosen, room = [], keep * room_per_pick
    for f in ranked:
        if len(chosen) < 2 * keep and (len(f.text) <= room or not chosen):
            chosen.append(f)
            room -= len(f.text)
    return chosen


def spend_room(
    s: Summary,
    chosen: list[Finding],
    rest: list[Finding],
    budget_tokens: int | None,
    spare: Callable[[], list[Finding]] | None = None,
) -> list[str]:
    """This pass's `chosen` findings (in `s.progress` already) and, while the summary has room
    under `budget_tokens`, the best of `rest` (`budget.with_room`), then of what `spare` gives (the
    changes the agent announced and what it wrote into documents, `spare_lines`: found only if room
    is left), all in the session's order: a pass whose entries leave room spends it on findings, and
    what room is still left on what was done next. Returns their texts."""
    taken = list(chosen)
    notes = [f.text for f in in_session_order(taken)]

    def take(found: list[Finding]) -> None:  # this pass's lines, placed again in the session's order
        nonlocal notes
        taken.extend(found)
        s.progress = [p for p in s.progress if p not in notes]
        notes = [f.text for f in in_session_order(taken)]
        add_progress(s, notes)

    if more := with_room(s, rest, budget_tokens) if budget_tokens else []:
        take(more)
    room = budget_tokens and spare and hermes_tokens(render(s)) < budget_tokens - 8  # read only with room left
    if told := with_room(s, unsaid(s, spare()), budget_tokens) if room else []:
        take(told)
    return notes


# a micro exchange's added findings: one per four assistant turns, ten at most (one per six kept
# 144/172 facts at stake; one per four or five, at most 10 to 20, 145: Gemini's report of the
# sizes it changed; one per three or two lost as many as they gained)
EXTRA_MAX, TURNS_PER_EXTRA = 10, 4


def add_exchange_findings(
    s: Summary,
    turns: list[Turn],
    notes: list[str],
    room_per_pick: int,
    budget_tokens: int | None = None,
    found: list[Finding] | None = None,
) -> None:
    """A micro exchange's findings past the lines it picked (`notes`, in `s.progress` already): a
    real agent's exchange can run to dozens of tool calls and one sentence cannot carry it, so its
    best findings join, one finding's room per TURNS_PER_EXTRA assistant turns (short ones leave
    room for more), at most EXTRA_MAX. Then any exchange, short or long, spends the room the rolling
    summary has left under its budget on its next best (`spend_room`): a three-turn exchange's
    reasons had gone while the summary stood at a third of its budget (28 outside sessions: +8 facts
    at stake; the corpora +1). The budget's fit drops what is worth least when later ones need room.
    `found`: the exchange's `fresh_findings` as the pick ranked them (not ranked twice). The
    exchange's lines, `notes` too, end in the session's order."""
    extra = min(EXTRA_MAX, sum(t.role == "assistant" for t in turns) // TURNS_PER_EXTRA)
    ranked = fresh_findings(s, turns, exclude=notes) if found is None else unsaid(s, found, notes)
    more = best_that_fit(ranked, extra, room_per_pick) if extra else []
    add_progress(s, [f.text for f in in_session_order(more)])
    spared: list[Finding] = []

    def spare() -> list[Finding]:
        spared.extend(spare_lines(turns))
        return spared

    added = spend_room(s, more, [f for f in ranked if f not in more], budget_tokens, spare)
    place = {f.text: (f.turn, f.order) for f in [*spared, *(found or ranked)]}
    this_exchange = set(notes) | set(added)
    block = [p for p in s.progress if p in this_exchange]
    if len(block) > 1:  # a picked conclusion after the finding that led to it, as the exchange said them
        later = sorted(block, key=lambda p: place.get(p, (len(turns), 0)))
        s.progress = [p for p in s.progress if p not in block] + later
