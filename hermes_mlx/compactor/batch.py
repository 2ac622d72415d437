"""Batch compaction: when the transcript crosses its threshold, fold the middle into one summary.

Compaction here is state rewriting so the agent can carry on working, in four stages: choose
boundaries that never split a tool call from its result, prune old tool output in the middle
(cheap, no model; enough on its own when it gets well under the threshold), fold the middle into
the structured summary (code carries its facts; over the previous summary; from the unpruned
output, so no error line is lost to pruning; within Hermes's own budget for the span), and
reassemble a valid message list. User messages are
kept byte for byte (merged into one model-view row), and the marker is the same one
micro-compaction writes, so the two interoperate.
"""

from __future__ import annotations

import logging
import re

from hermes_mlx.compactor import markers, telemetry
from hermes_mlx.compactor.passes import Compactor, call_summarizer, notify
from hermes_mlx.compactor.telemetry import PassResult
from hermes_mlx.compactor.transcript import (
    clip_for_summary,
    content_text,
    head_end,
    kept_for_summary,
    message_tokens,
    observes,
    repair,
    tail_start,
    transcript_tokens,
)
from hermes_mlx.compactor.users import fit_users
from hermes_mlx.summarizer.api import Message
from hermes_mlx.summarizer.budget import hermes_summary_budget, hermes_tokens
from hermes_mlx.summarizer.extract import error_report
from hermes_mlx.summarizer.outcomes import is_run_verdict, outcome_of, says_passed
from hermes_mlx.summarizer.shell_words import EDIT_NOT_APPLIED
from hermes_mlx.summarizer.tool_results import exit_status, failed_field, tool_output
from hermes_mlx.summarizer.vocabulary import DELEGATE_TOOL, PROGRAM_OUTPUT_TOOL, READ_ANSWER_CHARS, reads_contents

logger = logging.getLogger(telemetry.LOGGER_NAME)

PRUNED_TAG = "[tool output pruned:"
DUPLICATE_TAG = "[duplicate tool output:"
PRUNE_MIN_CHARS = 400  # shorter results cost less than their one-line summary saves
PRUNE_TARGET_RATIO = 0.75  # pruning alone must reach this share of the threshold to suffice
SUMMARY_MIN_TOKENS = 512  # a forced pass over a short span: 256 made the budget drop its errors
# nor more than this share of the threshold, so a small window can converge. At 0.3 it undercut
# Hermes's own 2,000-token floor in every window under ~8K (1,816 at 7,571 tokens): a session
# there lost what the floor holds, three Cursor results and a Copilot call among them (batch
# 136/175 -> 143/178 facts at stake at 0.5, the same at 0.6; no pass more fails to converge)
SUMMARY_CAP_RATIO = 0.5
CONVERGE_RATIO = 0.6  # a pass aims the transcript here, so the next one is many turns away
MIN_USER_TOKENS = 128  # the user turns' view never gets less, whatever the rest takes
REGROW_SHARE = 0.1  # a pass that ended above PRUNE_TARGET_RATIO: none until it grows this share of the threshold
NO_PRUNING = {"pruned_tool_results": 0, "duplicates_removed": 0}


def _call_names(messages: list[Message]) -> dict[str, str]:
    names = {}
    for message in messages:
        for call in message.get("tool_calls") or []:
            names[call.get("id")] = (call.get("function") or {}).get("name", "")
    return names


def one_line(name: str, text: str) -> str:
    """A tool result reduced to what a later reader needs to know it happened: its first line
    (past the shell's echo of a here-document, `> …`), its result line, and the error it reports
    when it says it failed, all read from what the tool printed (a JSON result's output fields,
    not its JSON); a later summary reads them here, and its exit status."""
    status = exit_status(text)
    body = tool_output(text) if len(text) <= 4_000_000 else text  # a JSON result is parsed whole
    stripped = _HEREDOC_ECHO.sub("", body[:8192], count=1).lstrip() if body.startswith(">") else body.lstrip()
    first = stripped[: stripped.find("\n") if "\n" in stripped[:4096] else 4096].strip()
    if first in ("{", "["):  # pretty-printed JSON: its head on one line (`{"success": true, "job": ...`)
        first = " ".join(stripped[:400].split())
    if len(first) > 120:
        first = first[:117] + "..."
    # the lines it printed (a JSON result's output, not its one escaped line): a read of 258 lines counted
    # as 1 was read back as a failed short read, its file's "Permission denied →" line its result
    lines = body.count("\n") + (0 if body.endswith("\n") or not body else 1)  # no list of 50 MB of lines
    # the result line stays (`14 passed in 0.19s`, a commit line), and so does the error of a call
    # that says it failed (its exit status, a failed run's verdict, a rejected edit, an error field)
    family, result = outcome_of(body, status)
    # a line of the file a reading tool printed (`error: Optional[str] = None`), no failure; nor any line of
    # a long read (Gemini CLI's read_file of a Go file: `result := "…terminated…"`, `// Handle error: …`)
    read = status in (0, None) and reads_contents(name, "", {})
    file_read = read and not PROGRAM_OUTPUT_TOOL.search(name.lower())  # not Copilot's get_terminal_output
    long_read = file_read and len(body) > READ_ANSWER_CHARS
    if read and family == "failure" and status is None or long_read:
        result = ""
    said = f"; result: {result}" if result and result != first else ""
    failed_run = bool(result) and is_run_verdict(result) and not says_passed(result)  # `FAILED (errors=6)`
    if (
        status not in (0, None)
        or failed_run
        or not long_read
        and EDIT_NOT_APPLIED.search(body[:4096])
        or failed_field(text)
    ):
        ends = body if len(body) <= 200_000 else body[:100_000] + "\n" + body[-100_000:]
        error = next((e for e in error_report(ends)[0] if e not in (first, result)), "")
        said += f"; error: {error}" if error else ""
    exit_said = f", exit {status}" if status is not None else ""  # read back as the call's status
    return f"{PRUNED_TAG} {name or 'tool'}, {lines} lines, {len(text):,} chars{exit_said}; first line: {first}{said}]"


_HEREDOC_ECHO = re.compile(r"\A(?:>[^\n]*\r?\n)+")  # the shell's `> ` echo of a here-document's lines


def prune_tool_results(
    middle: list[Message], later: list[Message] = (), *, keep_reports: bool = False
) -> tuple[list[Message], int, int]:
    """Old tool results as one-line summaries; a result repeated later says so instead. With
    `keep_reports`, another agent's report (DELEGATE_TOOL: Claude Code's Task, Hermes's
    delegate_task) stays whole: it is the session's own findings in prose, which the next summary
    reads as the agent's text, where a pass that only pruned had left its first line (a Claude Code
    Explore report's "Perfect!").

    Returns (pruned copy, results pruned, duplicates removed). The pairing of calls and results
    is untouched: only the content of tool messages changes.
    """
    names = _call_names(list(middle) + list(later))
    seen_later = {content_text(m) for m in later if m.get("role") == "tool"}
    last_at = {content_text(m): i for i, m in enumerate(middle) if m.get("role") == "tool"}
    out: list[Message] = []
    pruned = duplicates = 0
    for i, message in enumerate(middle):
        if message.get("role") != "tool":
            out.append(message)
            continue
        text = content_text(message)
        name = names.get(message.get("tool_call_id")) or message.get("name") or "tool"
        if text.startswith((PRUNED_TAG, DUPLICATE_TAG)):
            out.append(message)
            continue
        again = text in seen_later or last_at[text] > i
        if again and len(text) >= 40:
            out.append({**message, "content": f"{DUPLICATE_TAG} {name}, identical to a later result]"})
            duplicates += 1
        elif len(text) >= PRUNE_MIN_CHARS and not (keep_reports and DELEGATE_TOOL.search(name.lower())):
            out.append({**message, "content": one_line(name, text)})
            pruned += 1
        else:
            out.append(message)
    return out, pruned, duplicates


class BatchCompactor(Compactor):
    """Threshold-triggered compaction over one session (the `/compress` path when forced)."""

    event = "batch_compaction"
    label = "batch compaction"
    hold_until = 0  # tokens the transcript must reach before the next (unforced) pass ...
    held_kept = 0  # ... unless head and tail, which a pass keeps, shrink (a huge output left the tail)

    def state_figures(self) -> dict:
        return {"extra": NO_PRUNING}

    def compact(self, messages: list[Message], *, focus: str | None = None, force: bool = False) -> PassResult:
        """One pass if over the threshold (or forced). Never raises; failure returns the input."""
        return self.guarded(messages, lambda prepared, started: self._pass(messages, prepared, focus, force, started))

    def _pass(self, messages, prepared, focus, force, started, head: int | None = None) -> PassResult:
        s = self.settings
        tokens_before = transcript_tokens(prepared, self.count)
        if not force and tokens_before < s.threshold:
            return PassResult(messages, "below_threshold")
        # Stage 1: boundaries. The head and the token-budgeted tail are kept; neither splits a tool
        # call from its result. (`head` given: the head this pass let go, `_let_go`.)
        head = head_end(prepared, s.protect_first_n) if head is None else head
        tail = tail_start(prepared, head, s.tail, s.protect_last_n, self.count)
        kept = transcript_tokens(prepared[:head] + prepared[tail:], self.count)
        if not force and tokens_before < self.hold_until and kept > self.held_kept - s.threshold * REGROW_SHARE:
            return PassResult(messages, "held")  # no growth, and what a pass must keep is no smaller
        if (lead := self._let_go(prepared, head, kept)) < head:  # what it keeps is over already: no summary first
            return self._pass(messages, prepared, focus, force, started, head=lead)
        if head >= tail:
            return PassResult(messages, "idle")
        middle, later = prepared[head:tail], prepared[tail:]
        middle_tokens = tokens_before - kept  # a transcript's tokens are its messages' sum

        # Stage 2: cheap pruning. When it alone gets well under the threshold, no model is needed.
        # Other agents' reports stay whole (`prune_tool_results`); when only pruning them too would
        # get there, the summary reads them first, and that pruning is what a failed summary leaves.
        fallback = None
        reports = any(DELEGATE_TOOL.search((name or "").lower()) for name in _call_names(middle).values())
        for keep_reports in (True, False) if reports else (True,):
            pruned, n_pruned, n_dups = prune_tool_results(middle, later, keep_reports=keep_reports)
            tried = {"pruned_tool_results": n_pruned, "duplicates_removed": n_dups}
            if keep_reports:  # what a summary pass reports: the pruning that keeps reports whole
                counts = tried
                figures = {"tokens_before": tokens_before, "exchange_tokens": middle_tokens, "extra": counts}
            if force:
                break
            if not n_pruned + n_dups:
                continue
            candidate = prepared[:head] + pruned + later
            tokens = transcript_tokens(candidate, self.count)
            if tokens <= s.threshold * PRUNE_TARGET_RATIO:
                if keep_reports:
                    return self._pruned(messages, candidate, tokens, figures, counts, started)
                extra = {**figures, "extra": tried}
                fallback = (candidate, tokens, extra, tried)

        # Stage 3: summarize the middle, iteratively over the last summary found there. The
        # summarizer gets the tool output unpruned: its ledger reads every error, path and
        # command there (a pruned result kept only its first line), while the model never sees
        # raw output beside prose anyway (one "Ran: cmd (exit N)" line and its first errors).
        last = markers.last_marker(middle)
        previous = markers.parse(middle[last].get("content")) if last >= 0 else ""
        turns = [m for m in markers.display_view(middle) if not markers.is_marker(m)]
        if observes(prepared, head):  # what a text action in the head printed: read with its action
            turns.insert(0, prepared[head - 1])
        # Hermes's own target for the span (a fifth of it, 2,000 to 5% of the window), never over
        # the cap below that lets a small window converge
        carried = self.count(previous) if previous else 0
        # ... but a summary that carries its predecessor whole only grows: in a small window (a long
        # session of short turns at 4,096) it alone outgrew the threshold, so it is capped too.
        # The summarizer fits its budget by Hermes's count; the cap is in ours (a tokenizer reads
        # "step 1207" as more tokens than chars/4), so it is scaled by the previous summary's ratio.
        cap = int(s.threshold * SUMMARY_CAP_RATIO * min(1.0, hermes_tokens(previous) / carried if carried else 1.0))
        cap = max(SUMMARY_MIN_TOKENS, cap)
        budget = s.summary_budget_tokens or max(
            SUMMARY_MIN_TOKENS, min(cap, hermes_summary_budget(middle_tokens, s.context_limit))
        )
        clipped = clip_for_summary(turns, s.max_chars_per_message)
        verbatim = kept_for_summary(prepared[:head] + later, s.max_chars_per_message)
        result = call_summarizer(
            lambda: self.summarizer.update(
                previous or None, clipped, focus=focus or None, budget_tokens=budget, kept=verbatim
            )
        )
        if not result.ok and fallback:
            logger.info("batch summarization failed, old tool output pruned instead: %s", result.error)
            return self._pruned(messages, *fallback, started)
        if not result.ok:
            logger.info("batch summarization failed, transcript unchanged: %s", result.error)
            data = self.emit(
                "summarize_failed",
                messages,
                messages,
                started,
                tokens_after=tokens_before,
                aux_model=result.model,
                **figures,
            )
            return PassResult(messages, "summarize_failed", telemetry=data, error=result.error, details=counts)

        # Stage 4: reassemble: the user turns (one model-view row, verbatim when it fits the room
        # the rest leaves under CONVERGE_RATIO, else clipped there with the originals kept whole
        # in the row: compactor/users.py), then the marker, then the tail.
        marker = markers.build(result.text, micro=False)
        fixed = kept + message_tokens(marker, self.count)  # head, marker and tail
        room = max(MIN_USER_TOKENS, int(s.threshold * CONVERGE_RATIO) - fixed)
        users = [
            m for k, m in enumerate(middle) if not observes(prepared, head + k)
        ]  # a text action's output is no user's
        row, clipped = fit_users(markers.user_messages(users), room, self.count)
        out, _ = repair(prepared[:head] + ([row] if row else []) + [marker] + later)
        cursor = next(i for i, m in enumerate(out) if m is marker) + 1
        tokens_after = transcript_tokens(out, self.count)
        if (lead := self._let_go(prepared, head, tokens_after)) < head:  # the head keeps it over: again without
            return self._pass(messages, prepared, focus, force, started, head=lead)
        summary_tokens = self.count(result.text)
        logger.info(
            "Batch compaction: %d -> %d messages, %d -> %d tokens", len(messages), len(out), tokens_before, tokens_after
        )
        outcome = "compacted" if force else self._converged(tokens_after, kept)  # /compress asked for one
        notify(s.on_compacted, out)
        data = self.emit(
            outcome,
            messages,
            out,
            started,
            tokens_after=tokens_after,
            rolling_summary_tokens=summary_tokens,
            cursor=cursor,
            aux_model=result.model,
            **figures,
        )
        details = {**counts, "summary": result, "iterative": bool(previous), "focus": focus, "users": clipped}
        return PassResult(out, outcome, changed=True, telemetry=data, details=details)

    def _pruned(self, messages, candidate, tokens, figures, counts, started) -> PassResult:
        """A pass that only pruned old tool output (stage 2): no summary."""
        self.hold_until = 0
        notify(self.settings.on_compacted, candidate)
        data = self.emit("pruned", messages, candidate, started, tokens_after=tokens, **figures)
        return PassResult(candidate, "pruned", changed=True, telemetry=data, details=counts)

    def _let_go(self, prepared: list[Message], head: int, tokens_after: int) -> int:
        """Where the head ends if this pass must let it go: only the leading system messages stay
        when the pass would end over its threshold and the rest of the head is what keeps it there
        (a spec pasted as the first message held 24,277 of a 26,214-token threshold; a `/web` page
        in the head's tool output). That is Hermes's head after its first compaction: its user
        turns join the user row (their view clipped, the originals whole), its tool output is
        pruned, the rest summarized, and `head_end` keeps it so at later passes. Else `head`."""
        lead = 0
        while lead < head and prepared[lead].get("role") in ("system", "developer"):
            lead += 1
        threshold = self.settings.threshold
        if lead == head or tokens_after <= threshold:
            return head
        held = transcript_tokens(prepared[lead:head], self.count)
        return lead if tokens_after - held + MIN_USER_TOKENS <= threshold else head

    def _converged(self, tokens_after: int, kept: int) -> str:
        """The outcome: "compacted", or "over_threshold" when even clipped user turns leave the transcript over
        the threshold (a huge tail, head or summary). Either way, a pass that ends above
        PRUNE_TARGET_RATIO holds the next until the transcript grows by REGROW_SHARE of the threshold
        (otherwise every turn would run a pass that saves a few percent), or until what a pass must
        keep (head and tail, `kept`) shrinks by as much: a 50 MB tool output in the tail cannot be
        pruned, but one turn later it has left the tail and can be."""
        threshold = self.settings.threshold
        over = tokens_after > threshold * PRUNE_TARGET_RATIO
        self.hold_until = tokens_after + int(threshold * REGROW_SHARE) if over else 0
        self.held_kept = kept
        if tokens_after <= threshold:
            return "compacted"
        logger.warning(
            "Batch compaction cannot bring the transcript under its threshold (%d > %d tokens); no other pass"
            " until it reaches %d",
            tokens_after,
            threshold,
            self.hold_until,
        )
        return "over_threshold"
