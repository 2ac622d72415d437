"""MLXSummarizer: merge, update and defrag on a small local model, with code carrying the facts.

Division of labour: code parses the previous summary, extracts the fact ledger from the full
redacted input (commands with their outcome line, errors, files, ids), reads where the work
stands (the task in progress, the open error, the plan's open items: state.py) and assembles
the result. The model writes nothing.

- A micro pass (merge) folds one exchange: the findings ranker (findings.py) picks the
  sentences of the agent's own that state its outcome, and code copies them verbatim;
  announcements ("Now let me check the API.") are never picked.
- A batch pass (update) folds a whole span: its findings are ranked by code and the best that
  fit Hermes's budget are kept.

On real sessions of seven agents the model kept no more facts than code and cost seconds a
pass (a micro pass p50 of 2.6 s against 0.02 s), so it is opt-in: `ranking="model"` lets it choose which of the
assistant's sentences states a micro exchange's outcome (numbered in the prompt, the answer
read off the logits of one prefill, no decode) and order a batch span's findings just past the
cut. See README "Checking summaries" for the figures.

The faithfulness gate checks every chosen line. Any error becomes `SummaryResult(ok=False)`:
the caller keeps its previous summary.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable

from .absorb import absorb
from .api import Message, SummaryResult
from .budget import hermes_tokens
from .chunk import chunk_turns, fit_text
from .faithful import Source, gated, line_verdict, statements
from .findings import in_session_order, is_announcement
from .ledger import user_message
from .narrative import add_progress, dedupe, fallback_notes, paragraph_lines, set_goal, template_language
from .prompts import MAX_CHOICES, Template, labels, load_template
from .redact import redact
from .spare_lines import spare_lines
from .state import add_exchange_findings, best_that_fit, fold_state, fresh_findings, spend_room
from .summary import EARLIER, Summary, parse, render
from .text import Turn, normalize, source_text, to_text
from .verify import finished, main_script

DEFAULT_WINDOW = 8192
FINDING_ROOM = 140  # characters of findings a batch pass keeps per `findings_keep`
MODEL_CHUNKS = 3  # chunks of one micro exchange the model reads at most (the last ones)
LISTING_TOKENS = 640  # room kept in each prompt for the numbered sentences


class MLXSummarizer:
    """Implements the `Summarizer` protocol. `score`/`count_tokens` default to the engine's and
    may be injected (tests pass a scripted model's, the bench a recorder's)."""

    def __init__(
        self,
        model: str | None = None,
        *,
        count_tokens: Callable | None = None,
        context_window: int | None = None,
        chunk_tokens: int = 1536,
        keep_recent: int = 6,
        resolved_keep: int = 30,
        tool_head: int = 300,
        tool_tail: int = 150,
        timeout: float | None = None,
        deadline_s: float | None = None,
        score: Callable | None = None,
        ranking: str = "code",
        findings_keep: int = 24,
    ):
        self.model = model
        self._score = score
        self._count = count_tokens
        self._window = context_window
        self.chunk_tokens = chunk_tokens
        self.keep_recent = keep_recent
        self.resolved_keep = resolved_keep
        self.tool_head, self.tool_tail = tool_head, tool_tail
        self.timeout = timeout
        # whole-job budget: once spent, remaining chunks get the code-written narrative, so a
        # slow machine still returns every fact in time (Hermes waits 300 s at least)
        self.deadline_s = deadline_s
        # "code": the findings ranker picks what a pass keeps, no model call; "model": in a batch
        # pass the model orders the findings just past the cut (one prefill), in a micro pass it
        # picks the exchange's outcome sentences (a prefill per chunk, at most MODEL_CHUNKS).
        # Measured on real sessions of seven agents, the model kept no more facts than code and
        # made a micro pass over 100 times slower: see README "Checking summaries"
        if ranking not in ("code", "model"):
            raise ValueError(f"ranking must be 'code' or 'model', not {ranking!r}")
        self.ranking = ranking
        self.findings_keep = findings_keep
        self.on_chunk: Callable[[], None] | None = None  # hears each chunk start (streams' progress)

    # ------------------------------------------------------------ engine access

    def _engine_score(self) -> Callable:
        if self._score is None:
            from hermes_mlx.engine.score import score

            self._score = score
        return self._score

    def count_tokens(self, text: str) -> int:
        try:
            if self._count is None:
                from hermes_mlx.engine.generate import count_tokens

                self._count = count_tokens
            return int(self._count(text or "", model=self.model))
        except Exception:
            return hermes_tokens(text or "")  # Hermes's own estimate: never fails, budgets only

    def context_window(self) -> int:
        if self._window is None:
            try:
                from hermes_mlx.engine.generate import model_info

                self._window = int(model_info(self.model).context_window)
            except Exception:
                self._window = DEFAULT_WINDOW
        return self._window

    def _budget(self, tpl: Template) -> int:
        """Prompt tokens left for content: window minus instructions and the numbered sentences."""
        overhead = self.count_tokens(tpl.system + tpl.user) + min(LISTING_TOKENS, self.context_window() // 4) + 48
        return max(128, min(self.chunk_tokens, self.context_window() - overhead))

    def _choose(
        self,
        tpl: Template,
        content: str,
        pool: list[str],
        source: str,
        stats: dict,
        turns: list[Turn] | None = None,
    ) -> list[str]:
        """One chunk's narrative: the `tpl.pick` sentences of `pool` the model finds most likely
        to state the outcome, copied verbatim, in source order, through the faithfulness gate
        (against `source`; a dropped one is replaced by the closest assistant sentence of
        `turns`). A pool no bigger than the pick needs no model call."""
        if self.on_chunk is not None:
            self.on_chunk()
        # offer only sentences the gate would keep ("Running the tests again." carries no fact)
        src, script = Source.of(source), main_script(source)
        pool = [c for c in pool if not line_verdict(c, src, script)] or pool
        cands = pool[-MAX_CHOICES:]
        window = self.context_window()
        while len(cands) > tpl.pick and self.count_tokens(tpl.messages("", cands)) > window * 3 // 4:
            cands = cands[1:]  # a small window: fewer sentences to choose from, the latest kept
        chosen = cands
        if len(cands) > tpl.pick:
            timeout = self.timeout
            if self.deadline_s is not None:
                left = self.deadline_s - (time.perf_counter() - stats["started"])
                if left < 1.0:
                    stats["skipped"] += 1
                    return []
                timeout = min(timeout, left) if timeout else left
            room = window - self.count_tokens(tpl.messages("", cands)) - 16
            if self.count_tokens(content) > room:
                content = fit_text(content, room, self.count_tokens) if room >= 64 else ""
                if self.count_tokens(tpl.messages(content, cands)) > window - 8:
                    content = ""  # trimming could not make it fit: the sentences alone
            try:
                result = self._engine_score()(
                    labels(len(cands)), tpl.messages(content, cands), model=self.model, timeout=timeout
                )
            except TimeoutError:  # the engine's DeadlineExceeded: code picks this chunk's sentence
                stats["skipped"] += 1
                return []
            for key in ("prompt_tokens", "cached_tokens"):
                stats[key] += int(getattr(result, key, 0) or 0)
            stats["model"] = getattr(result, "model", "") or stats["model"]
            scores = list(result.scores)
            ranked = sorted(range(len(cands)), key=lambda i: (scores[i], i), reverse=True)[: tpl.pick]
            chosen = [cands[i] for i in sorted(ranked)]
            stats["picks"].append(sorted(i + 1 for i in ranked))
        return gated(chosen, source, turns, stats, script)

    def _digest(
        self, s: Summary, turns: list[Turn], source: str, stats: dict, details: dict, keep: int, budget_tokens=None
    ) -> list[str]:
        """Fold what `turns` established into `s` and return the new progress lines: the `keep`
        best findings (code ranks them; with `ranking="model"` the model orders the ones just
        past the cut in one prefill), and the next best while the summary has room under
        `budget_tokens` (`budget.with_room`), the task in progress, the plan's open items, tidy
        files and ranked identifiers. Announcements never become progress."""
        if self.on_chunk is not None:  # streams hear the pass start (their keep-alive)
            self.on_chunk()
        ranked = fresh_findings(s, turns)
        chosen = best_that_fit(ranked, keep, FINDING_ROOM)
        ranked = chosen + [f for f in ranked if f not in chosen]
        keep = len(chosen)
        if self.ranking == "model" and len(ranked) > keep > 0:
            m = min(3, max(1, keep // 3))
            window = ranked[keep - m : keep - m + MAX_CHOICES]
            tpl = load_template("rank", template_language(s, turns))
            picked = self._choose(tpl, "", [f.text for f in in_session_order(window)], source, stats)
            if len(stats["picks"]):
                details["narrative"] = "model"
                chosen = ranked[: keep - m] + [f for f in window if f.text in picked][:m]
        add_progress(s, [f.text for f in in_session_order(chosen)])
        fold_state(s, turns, source)
        rest = [f for f in ranked if f not in chosen]
        return spend_room(s, chosen, rest, budget_tokens, lambda: spare_lines(turns))

    # ------------------------------------------------------------ the three jobs

    def merge(
        self,
        summary: str | None,
        exchange: list[Message],
        budget_tokens: int | None = None,
        kept: list[Message] | None = None,
    ) -> SummaryResult:
        return self._run(self._merge, summary, exchange, budget_tokens, kept)

    def update(self, *args, **kwargs) -> SummaryResult:
        """Summarizer.update's arguments (api.py, where the three jobs are documented)."""
        return self._run(self._update, *args, **kwargs)

    def defrag(
        self, summary: str, budget_tokens: int | None = None, kept: list[Message] | None = None
    ) -> SummaryResult:
        return self._run(self._defrag, summary, budget_tokens, kept)

    def _run(self, job, *args, **kwargs) -> SummaryResult:
        # A wrong argument is the caller's bug: raised at the call, not reported as a failed pass.
        inspect.signature(job).bind(None, *args, **kwargs)
        started = time.perf_counter()
        stats = {
            "prompt_tokens": 0,
            "cached_tokens": 0,
            "model": self.model or "",
            "picks": [],
            "rejected": [],
            "chunks": 0,
            "skipped": 0,
            "gate": {},
            "started": started,
        }
        try:
            text, details = job(stats, *args, **kwargs)
            ok, error = True, None
        except Exception as exc:  # nothing leaks: the caller keeps its previous summary
            text, details, ok = "", {}, False
            error = f"{type(exc).__name__}: {exc}".strip()
        # picks: per model call, the numbers chosen (1 = the first sentence listed)
        details.update(picks=stats["picks"], rejected=stats["rejected"])
        if stats["gate"]:
            details["gate"] = stats["gate"]  # chosen lines kept, dropped by reason, replaced
        if stats["skipped"]:
            details["model_calls_skipped"] = stats["skipped"]  # deadline reached
        return SummaryResult(
            ok=ok,
            text=text,
            error=error,
            prompt_tokens=stats["prompt_tokens"],
            cached_tokens=stats["cached_tokens"],
            duration_s=time.perf_counter() - started,
            chunks=max(1, stats["chunks"]),
            model=str(stats["model"]),
            details=details,
        )

    def _merge(self, stats: dict, summary: str | None, exchange: list[Message], budget_tokens: int | None, kept=None):
        summary = _summary_text(summary)
        prev = parse(summary)
        turns = normalize(exchange if isinstance(exchange, list) else [exchange] if isinstance(exchange, dict) else [])
        if not any(t.text.strip() or t.tool_calls for t in turns):
            return render(prev), {"empty_exchange": True}
        source = source_text(turns)
        sources = (summary or "") + "\n" + source
        absorb(prev.ledger, turns)
        tpl = load_template("merge", template_language(prev, turns))
        chunks = chunk_turns(
            [turns], self._budget(tpl), self.count_tokens, tool_head=self.tool_head, tool_tail=self.tool_tail
        )
        notes: list[str] = []
        found = None
        if self.ranking == "code":  # the findings ranker picks as many as the model would, gated alike
            stats["chunks"] += min(len(chunks), MODEL_CHUNKS)
            found = fresh_findings(prev, turns)
            best = found[: min(len(chunks), MODEL_CHUNKS) * tpl.pick]
            picked = gated([f.text for f in in_session_order(best)], source, turns, stats)
            notes = [n for n in picked if n not in prev.progress]
        # the assistant's statements, never its announcements ("Now let me check the API.")
        pool = (
            [x for x in statements(turns) if x not in prev.progress and not is_announcement(x)]
            if self.ranking == "model"
            else []
        )
        # at most MODEL_CHUNKS model calls, on the exchange's end, where its outcome is stated:
        # every chunk chose from the same latest sentences, so a 100-call exchange cost minutes
        # for no more facts (code's findings below carry the rest of a long exchange)
        for chunk in chunks[-MODEL_CHUNKS:] if self.ranking == "model" else []:
            stats["chunks"] += 1
            notes += [
                n
                for n in self._choose(tpl, chunk, [x for x in pool if x not in notes], source, stats, turns=turns)
                if n not in notes and n not in prev.progress
            ]
        # model: it chose among the sentences; verbatim: one sentence, nothing to choose; code:
        # the ranker chose; fallback: no sentence to copy (or no time left): the last command tells it
        narrative = "model" if stats["picks"] else "code" if self.ranking == "code" else "verbatim"
        details = {"narrative": narrative if notes else "fallback"}
        if not notes:
            notes = fallback_notes(turns)
        fold_state(prev, turns, source, caps=False)
        set_goal(prev, turns)
        add_progress(prev, notes)
        add_exchange_findings(prev, turns, notes, FINDING_ROOM, budget_tokens, found)
        return finished(prev, sources, stats, details, budget_tokens, kept)

    def _update(self, stats: dict, summary, turns, focus=None, budget_tokens=None, user_notes=None, kept=None):
        summary = _summary_text(summary)
        prev = parse(summary)
        norm = normalize(turns if isinstance(turns, list) else [])
        sources = (summary or "") + "\n" + source_text(norm)
        details: dict = {"narrative": "code", "focus": focus or None}
        if not any(t.text.strip() or t.tool_calls for t in norm):
            return render(prev), {**details, "empty_input": True}
        absorb(prev.ledger, norm)
        # user words that reached us only outside the turns (Hermes's focus block): verbatim
        prev.ledger.add_list("asks", [user_message(redact(n)) for n in user_notes or [] if n.strip()])
        set_goal(prev, norm)
        stats["chunks"] += 1
        self._digest(
            prev, norm, source_text(norm), stats, details, keep=self.findings_keep, budget_tokens=budget_tokens
        )
        if budget_tokens and hermes_tokens(render(prev)) > budget_tokens:
            # what other entries spell out goes first; the budget fit then drops the entries worth
            # least per token, findings included (condensing older ones to three threw good ones away)
            details["ledger_entries_dropped"] = prev.ledger.compact(self.resolved_keep)
            dedupe(prev)
        return finished(prev, sources, stats, details, budget_tokens, kept)

    def _defrag(self, stats: dict, summary: str, budget_tokens: int | None, kept=None):
        summary = _summary_text(summary)
        if not summary.strip():
            raise ValueError("defrag needs a non-empty summary")
        prev = parse(summary)
        before = self.count_tokens(summary)
        details: dict = {"tokens_before": before}
        # an unknown-format summary: its facts go to the ledger before its text is shortened
        for i, (title, body) in enumerate(prev.extras):
            if title == EARLIER:
                absorb(prev.ledger, normalize([{"role": "assistant", "content": body}]))
                prev.progress = [f"(earlier) {x}" for x in paragraph_lines(body)] + prev.progress
                prev.extras[i] = (title, "")
        self._condense(prev, summary, stats, details)
        text, details = finished(prev, summary, stats, details, budget_tokens, kept)
        details["tokens_after"] = self.count_tokens(text)
        return text, details

    # ------------------------------------------------------------ helpers

    def _condense(self, s: Summary, sources: str, stats: dict, details: dict) -> None:
        """Older progress bullets become at most 3: a count of the rest and the two the model
        finds most worth keeping, verbatim (else code keeps the ends)."""
        details["ledger_entries_dropped"] = s.ledger.compact(self.resolved_keep)
        dedupe(s)
        if len(s.progress) <= self.keep_recent:
            return
        older, recent = s.progress[: -self.keep_recent], s.progress[-self.keep_recent :]
        tpl = load_template("defrag", template_language(s, []))
        stats["chunks"] += 1
        picks_before = len(stats["picks"])
        # the opening step and the latest ones: what a reader of a long log needs first
        pool = older if len(older) <= MAX_CHOICES else [older[0], *older[-(MAX_CHOICES - 1) :]]
        try:
            short = self._choose(tpl, "", pool, sources, stats)
        except Exception as exc:
            short, details["defrag_model_error"] = [], f"{type(exc).__name__}: {exc}"
        if short and len(stats["picks"]) > picks_before and len(older) > len(short):
            short = [f"({len(older) - len(short)} more earlier steps condensed)", *short]
            details["condensed"] = "model"
        else:
            short = (
                [older[0], f"({len(older) - 2} more earlier steps condensed)", older[-1]] if len(older) > 3 else older
            )
            details["condensed"] = "code"
        s.progress = short + recent


def _summary_text(summary) -> str:
    """The previous summary as text. Anything that is not text is refused (the pass fails and
    the caller keeps what it has) rather than read as "no summary" and silently replaced."""
    if summary is None:
        return ""
    if isinstance(summary, (bytes, bytearray)):
        return to_text(summary)
    if not isinstance(summary, str):
        raise TypeError(f"summary must be str or None, not {type(summary).__name__}")
    return summary
