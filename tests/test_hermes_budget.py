"""What keeps a real Hermes session going: the summary budget Hermes's defrag threshold implies,
prompts recognised however Hermes words them, progress on long streams, and async callers."""

import asyncio
import json

from fakes import ScriptedSummarizer, assistant, tool, user  # noqa: F401
from summarizer_fakes import FakeModel, call, count
from test_adapter import EXCHANGE, batch_prompt, complete, stream

from hermes_mlx.compactor.micro import MicroCompactor
from hermes_mlx.integrations import adapter, hermes_prompts, hermes_settings, provider
from hermes_mlx.integrations.hermes_prompts import recognise
from hermes_mlx.integrations.hermes_wire import hermes_serialize
from hermes_mlx.integrations.openai_shapes import parse_request
from hermes_mlx.summarizer.budget import MICRO_SHARE, fit_summary, hermes_tokens, micro_budget
from hermes_mlx.summarizer.ledger import Ledger
from hermes_mlx.summarizer.requested_layout import read_layout, skeleton
from hermes_mlx.summarizer.summarizer import MLXSummarizer
from hermes_mlx.summarizer.summary import Summary, parse, render


def test_hermes_token_count_matches_its_rough_estimate():
    assert hermes_tokens("") == 0 and hermes_tokens("abc") == 1 and hermes_tokens("abcde") == 2
    assert hermes_tokens("日本語") == 3  # dense CJK: one a codepoint
    assert hermes_tokens("héllo") == 2  # other non-ASCII: UTF-8 bytes / 4, rounded up


def test_micro_budget_stays_under_the_defrag_threshold():
    assert micro_budget(2000) == int(2000 * MICRO_SHARE) < 2000


def big_summary() -> Summary:
    led = Ledger()
    for i in range(60):
        led.add_file(f"src/pkg/module_{i}.py", "mentioned")
        led.add_file(f"src/pkg/edited_{i}.py", "edited")
        led.add_command(f"pytest tests/test_{i}.py -q", 0)
        led.add_list("ids", [f"step_{i}_helper"])
        led.resolved.append(f"AssertionError: old failure {i}")
    led.add_error("src/render.ts(41,7): error TS2345: Argument of type 'string' is not assignable", "npx tsc")
    led.add_list("constraints", ["Don't touch the public API.", "Never run against the production database."])
    return Summary(goal="Make the retry tests pass", progress=[f"step {i} done" for i in range(20)], ledger=led)


def test_fit_drops_least_useful_first_and_keeps_what_matters():
    s = big_summary()
    assert hermes_tokens(render(s)) > 1200
    dropped = fit_summary(s, 1200)
    text = render(s)
    assert hermes_tokens(text) <= 1200
    # worth least per token first (budget.ENTRY_VALUE): names only mentioned before errors and their fixes
    assert dropped["identifier"] == 60 and dropped["mentioned_file"] == 60 and "resolved_error" not in dropped
    # the open error, the constraints and the goal survive; recent progress too
    assert "error TS2345" in text and "Don't touch the public API." in text and "Make the retry tests pass" in text
    assert "step 19 done" in text
    assert parse(text).ledger.errors  # still parses back as a summary


# Cursor's rebuild edited 159 files and the fit kept 110 of them (1,159 of its 2,000 tokens) while
# "The build passed with 66 routes." went: a file only Files lists is rarely what a reader needs
# (3.5% held a fact, across both corpora), one another entry names again is (18%): Cursor's
# `supabase/00_reset.sql`, Codex's test the agent ran, mini-swe-agent's patched module.
def test_a_long_list_of_files_nothing_else_names_goes_before_the_findings_and_a_named_file_stays():
    led = Ledger()
    led.add_file("supabase/00_reset.sql", "edited")
    for i in range(60):
        led.add_file(f"src/app/section_{i}/page.tsx", "edited")
    led.add_command("psql -f supabase/00_reset.sql", 0, "DROP TABLE")
    build = "The build passed with 66 routes. I am updating the task list and preparing a full summary."
    s = Summary(goal="Rebuild the site on Next.js", progress=[build, "Updated the tasks."], ledger=led)
    dropped = fit_summary(s, 400)
    text = render(s)
    assert hermes_tokens(text) <= 400 and dropped["changed_file"] >= 30 and "progress" not in dropped
    assert build in text and "`supabase/00_reset.sql` (edited)" in text


def test_a_commands_earlier_result_is_worth_its_measure_not_the_first_to_go():
    # `11 failures ⇒ 0 failures`: the earlier count had gone before anything else whenever a
    # summary was over (Claude Code's `mix test` lost it to an edit error fixed long before); it
    # now goes by its worth per token (ENTRY_VALUE["outcome_history"]), after names only mentioned
    led = Ledger()
    led.add_command("mix test --seed 0", 1, "14 doctests, 297 tests, 11 failures")
    led.add_command("mix test --seed 0", 0, "14 doctests, 297 tests, 0 failures")
    for i in range(40):
        led.add_file(f"lib/app/mentioned_{i}.ex", "mentioned")
    s = Summary(goal="Instrument the hooks with trace spans", ledger=led)
    assert "11 failures ⇒ 14 doctests, 297 tests, 0 failures" in render(s)
    budget = hermes_tokens(render(s)) - 100
    dropped = fit_summary(s, budget)
    assert "11 failures ⇒" in render(s) and "outcome_history" not in dropped and dropped["mentioned_file"] >= 8
    fit_summary(s, 36)  # when it must, it goes, and the latest result stays
    assert "11 failures" not in render(s) and "0 failures" in render(s)


def test_each_commit_a_tool_made_is_worth_what_its_latest_is():
    # an edit tool that commits on every edit (Aider's `Commit 8145bab …`): each run made its own
    # commit, so the earlier ones are no rerun's history and stay while bare commands go
    led = Ledger()
    for sha, subject in (("8145bab", "remove auth check"), ("1f3ff0f", "add basic auth"), ("7611ef0", "bypass local")):
        led.add_command("patch", None, f"Commit {sha} fix: {subject}")
    for i in range(12):
        led.add_file(f"nginx/conf.d/site_{i}.conf", "mentioned")
    s = Summary(goal="Serve qBittorrent behind nginx", ledger=led)
    dropped = fit_summary(s, hermes_tokens(render(s)) - 40)
    text = render(s)
    assert "Commit 8145bab" in text and "Commit 1f3ff0f" in text and "Commit 7611ef0" in text
    assert dropped.get("mentioned_file", 0) >= 3 and "command_outcome" not in dropped
    # when they must go, the earlier commits go before the command that holds the latest
    tight = Ledger()
    for sha in ("8145bab", "1f3ff0f", "7611ef0"):
        tight.add_command("patch", None, f"Commit {sha} fix: one step")
    tight.add_command("pytest -q", 0, "3 passed in 0.1s")
    s = Summary(goal="Serve qBittorrent behind nginx", ledger=tight)
    assert fit_summary(s, hermes_tokens(render(s)) - 5) == {"outcome_history": 1}
    assert "Commit 7611ef0" in render(s) and "Commit 8145bab" not in render(s)
    assert "Commit 1f3ff0f" in render(s)  # one earlier result at a time, the oldest first
    # a dozen `/undo`s each undid its own commit (Aider's chart session: the fifth one back had gone
    # when four were kept): all are listed while the budget has room
    undone = Ledger()
    for i in range(12):
        undone.add_command("/undo", None, f"Removed: {i:07x} feat: step {i}; Now at: {i + 1:07x} base")
    shown = render(Summary(goal="Chart the blame", ledger=undone))
    assert all(f"Removed: {i:07x} feat: step {i}" in shown for i in range(12))


def test_fit_leaves_a_small_summary_alone():
    s = Summary(goal="x", progress=["a"])
    assert fit_summary(s, 1000) == {} and render(s) == render(Summary(goal="x", progress=["a"]))


def test_fit_always_reaches_the_budget_even_with_foreign_sections():
    s = big_summary()
    s.extras.append(("Detailed Session Log (oldest first)", "\n".join(f"- line {i} " * 8 for i in range(400))))
    fit_summary(s, 300)
    assert hermes_tokens(render(s)) <= 300


def exchange(i: int) -> list:
    return [
        {
            "role": "assistant",
            "content": f"Checked src/module_{i}.py; the bound was off by one.",
            "tool_calls": [call(f"c{i}", "terminal", command=f"pytest tests/test_{i}.py -q")],
        },
        tool(f"c{i}", json.dumps({"output": f"FAILED tests/test_{i}.py::test_bound - AssertionError", "exit_code": 1})),
        assistant(f"Fixed the bound in src/module_{i}.py and the test passes now."),
    ]


def test_merges_never_leave_the_rolling_summary_at_the_defrag_threshold():
    """The stall Hermes users hit: a summary over the threshold is defragged every turn and no
    exchange is absorbed again. Ours stays under it however many passes run."""
    threshold = 400
    s = MLXSummarizer(score=FakeModel(*["Fixed a bound."] * 200).score, count_tokens=count)
    summary = None
    for i in range(40):
        budget = micro_budget(threshold)
        r = s.merge(summary, exchange(i), budget_tokens=budget)
        assert r.ok, r.error
        summary = r.text
        assert hermes_tokens(summary) < threshold
    assert "src/module_39.py" in summary  # the newest facts are there
    r = s.defrag(summary, budget_tokens=micro_budget(threshold))
    assert r.ok and hermes_tokens(r.text) <= micro_budget(threshold)


def test_our_compactor_absorbs_every_turn_once_the_summary_is_big():
    threshold = 300
    s = MLXSummarizer(score=FakeModel(*["Fixed a bound."] * 400).score, count_tokens=count)
    compactor = MicroCompactor(
        s, defrag_threshold_tokens=threshold, context_limit=4096, tail_tokens=200, protect_first_n=1, protect_last_n=2
    )
    messages = [user("Fix the bounds, please.")]
    outcomes = []
    for i in range(25):
        messages = messages + exchange(i) + [user(f"next {i}")]
        result = compactor.compact(messages)
        messages = result.messages
        outcomes.append(result.outcome)
        assert hermes_tokens(compactor.rolling_summary) < threshold
    assert outcomes.count("absorbed") >= 0.9 * len([o for o in outcomes if o != "idle"])


# --------------------------------------------------------------------- Hermes's prompts, drifted


def test_focus_with_quotes_and_a_reworded_sentence_after_it():
    messages = batch_prompt(EXCHANGE)
    messages[0]["content"] += '\n\nFOCUS TOPIC: "the "CSV" export"\nKeep everything about it (rewritten line).'
    assert recognise(messages).focus == 'the "CSV" export'


def test_recent_user_focus_carries_user_words_missing_from_the_turns():
    turns = [user("Please fix the export."), *EXCHANGE]
    messages = batch_prompt(turns)
    lost = "Also never email the customer list"
    messages[0]["content"] += (
        f'\n\nFOCUS TOPIC: "Recent user focus:\n- Please fix the export.\n- {lost}"\n'
        "This compaction should PRIORITISE preserving all information."
    )
    prompt = recognise(messages)
    assert prompt.kind == "batch" and prompt.focus.startswith("Recent user focus:")
    assert prompt.user_notes == [lost]
    s = MLXSummarizer(score=FakeModel("Fixed the export.").score, count_tokens=count)
    done = complete(parse_request({"messages": messages}), summarizer=s)
    assert lost in done.text  # verbatim, in the user's section
    # in the structure the prompt asked for, never under its task snapshot (Hermes overwrites that one)
    assert ("\n" + done.text).split(lost)[0].rsplit("\n## ", 1)[-1].startswith("Critical Context")


def test_lean_session_log_allowance_is_not_our_budget():
    messages = batch_prompt(EXCHANGE, budget=5276)
    messages[0]["content"] = messages[0]["content"].replace(
        "Target ~5276 tokens",
        "## Detailed Session Log (oldest first)\n[A dense log.\nSpend up to ~4000 tokens "
        "here — this section is the detailed record.]\n\nTarget ~5276 tokens",
    )
    assert recognise(messages).budget_tokens == 1276


def test_micro_prompt_recognised_by_its_headings_when_the_wording_changes():
    messages = hermes_prompts.micro_prompt(None, hermes_serialize(EXCHANGE))
    messages[1]["content"] = (
        "Fold the next exchange into the record." + messages[1]["content"].split("open questions.", 1)[1]
    )
    assert recognise(messages).kind == "micro"


def test_a_defrag_with_its_own_prompt():
    summary = "## Goal\nFix export\n\n## Files\n- `a.py`"
    messages = [
        {
            "role": "user",
            "content": f"Condense this running summary; keep every path.\n\n{summary}\n\n"
            "Return ONLY the shorter summary.",
        }
    ]
    prompt = recognise(messages)
    assert prompt.kind == "micro_defrag" and prompt.text == summary


def test_budgets_follow_hermes_config(monkeypatch):
    monkeypatch.setattr(
        adapter,
        "hermes_settings",
        lambda: hermes_settings.HermesSettings(micro=True, defrag_threshold_tokens=1000),
    )
    fake = ScriptedSummarizer()
    complete(
        parse_request({"messages": hermes_prompts.micro_prompt(None, hermes_serialize(EXCHANGE))}), summarizer=fake
    )
    complete(parse_request({"messages": batch_prompt(EXCHANGE, budget=3000)}), summarizer=fake)
    merge, update = fake.calls[0][1], fake.calls[1][1]
    headings = hermes_tokens(skeleton(read_layout(batch_prompt(EXCHANGE)[0]["content"])))  # the layout's own cost
    assert merge["budget_tokens"] == 900 and update["budget_tokens"] == 900 - headings  # micro on: the defrag bound


def test_settings_read_from_a_hermes_config():
    settings = hermes_settings.from_config(
        {"compression": {"micro_compact": True, "micro_compact_defrag_threshold_tokens": "3000"}}
    )
    assert settings.micro and settings.defrag_threshold_tokens == 3000
    assert hermes_settings.from_config(
        {"compression": {"micro_compact_defrag_threshold_tokens": -1}}
    ) == hermes_settings.HermesSettings(source="config.yaml")


# --------------------------------------------------------------------- progress and async callers


class SlowSummarizer(ScriptedSummarizer):
    """Folds `chunks` chunks, each taking `pause` seconds, reporting each one."""

    def __init__(self, chunks: int, pause: float):
        super().__init__()
        self.chunks, self.pause, self.on_chunk = chunks, pause, None

    def update(self, summary, turns, focus=None, budget_tokens=None, user_notes=None, kept=None):
        import time

        for _ in range(self.chunks):
            time.sleep(self.pause)
            if self.on_chunk:
                self.on_chunk()
        return super().update(summary, turns, focus, budget_tokens, user_notes)


def test_stream_sends_progress_per_chunk_and_keepalives(monkeypatch):
    monkeypatch.setattr(adapter, "KEEPALIVE_S", 0.05)
    pieces = list(
        stream(
            parse_request({"messages": batch_prompt(EXCHANGE), "stream": True}),
            summarizer=SlowSummarizer(chunks=4, pause=0.12),
        )
    )
    texts = [t for t, done in pieces if done is None]
    assert texts.count(adapter.KEEPALIVE) >= 4 + 4  # a newline per chunk, and between them
    final = "".join(texts)
    assert final.strip().startswith("## Historical Task Snapshot")  # Hermes strips the leading newlines
    assert pieces[-1][1] is not None and pieces[-1][1].text == final.strip()


def test_closing_a_stream_stops_the_summarizer_at_its_next_chunk(monkeypatch):
    monkeypatch.setattr(adapter, "KEEPALIVE_S", 0.02)
    slow = SlowSummarizer(chunks=50, pause=0.05)
    gen = stream(parse_request({"messages": batch_prompt(EXCHANGE), "stream": True}), summarizer=slow)
    next(gen)
    gen.close()
    import time

    time.sleep(0.3)
    assert slow.calls == []  # it never got to return a summary


def test_async_callers_await_the_provider(monkeypatch):
    """Hermes hands this client unwrapped to its async path (the gateway's async_call_llm):
    `await create(...)` and `async for` over a stream must work and not block the loop."""
    fake = ScriptedSummarizer(["## Goal\nFix rounding"] * 2)
    monkeypatch.setattr(adapter, "make_summarizer", lambda model, timeout: fake)
    client = provider.MLXClient()
    messages = hermes_prompts.micro_prompt(None, hermes_serialize(EXCHANGE))

    async def main():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.001)

        t = asyncio.create_task(ticker())
        response = await client.chat.completions.create(model="hermes-mlx-default", messages=messages)
        stream = await client.chat.completions.create(model="hermes-mlx-default", messages=messages, stream=True)
        text = ""
        async for chunk in stream:
            text += chunk.choices[0].delta.get("content") or "" if chunk.choices else ""
        t.cancel()
        return response, text, ticks

    response, text, ticks = asyncio.run(main())
    assert response.choices[0].message.content == "## Goal\nFix rounding"
    assert text.strip() == "## Goal\nFix rounding" and ticks > 0


def test_hermes_plans_with_the_folding_context_not_the_model_window():
    assert hermes_settings.PLANNING_CONTEXT_TOKENS >= 64_000  # Hermes's floor for a compression model


def test_batch_keeps_every_user_message_of_the_span_verbatim():
    """Hermes folds user turns into a batch summary (0.19 with protect_first_n: 0 summarizes the
    first ones too); user messages are never summarized, so their words stay in the summary."""
    asks = [
        "Please fix the rounding in the export.",
        "What does step_3_2 do exactly?",
        "Use tabs, not spaces,\n in the generated config files.",
    ]
    turns = [
        user(asks[0]),
        *EXCHANGE,
        user(asks[1]),
        assistant("It reads the settings."),
        user(asks[2]),
        assistant("Done."),
    ]
    s = MLXSummarizer(score=FakeModel("Fixed the export.").score, count_tokens=count)
    r = s.update(None, turns, budget_tokens=3000)
    assert r.ok, r.error
    again = render(parse(r.text))  # and they come back when the summary is continued
    for ask in asks:
        assert " ".join(ask.split()) in r.text and " ".join(ask.split()) in again


def test_serve_holds_compaction_prompts_to_the_planning_context_not_the_passthrough_limit():
    """Hermes 0.19 sent an 18,580-token batch prompt and got 413 from the 16,384-token passthrough
    limit, so every compaction fell back to Hermes's deterministic summary."""
    from hermes_mlx.integrations.server import Limits, prompt_limit

    limits = Limits(max_prompt_tokens=16384)
    batch = recognise(batch_prompt(EXCHANGE))
    plain = recognise([{"role": "user", "content": "hello"}])
    assert prompt_limit(batch, limits) == hermes_settings.PLANNING_CONTEXT_TOKENS
    assert prompt_limit(plain, limits) == 16384


def test_no_fact_from_hermes_019_cut_shapes():
    """Hermes 0.19 also cuts with "text ...[truncated]" and text[:420] + " ... " + text[-160:];
    a session over loopback had `logs/run_` and `gs/run_8.log` in its Files section."""
    from hermes_mlx.summarizer.extract import find_paths

    head = "Detail 8.1: the helper reads config/settings_8.yaml and logs the outcome to logs/run_8.log. " * 5
    tail = " checks the retry budget and logs the outcome to logs/run_9.log. Detail 9.2 reads config/settings_9.yaml."
    paths = find_paths(head + "logs/run_ ...[truncated]") + find_paths(head[:-1] + " ... " + "gs/run_8.log." + tail * 2)
    assert "logs/run_" not in paths and "gs/run_8.log" not in paths
    assert "logs/run_8.log" in paths and "logs/run_9.log" in paths


def test_a_question_is_not_a_constraint():
    from hermes_mlx.summarizer.directives import user_constraints

    assert user_constraints("What does step_3_2 do exactly?") == []
    assert user_constraints("Don't touch the public API; keep the signatures.") == [
        "Don't touch the public API; keep the signatures."
    ]


def test_what_a_user_pasted_is_no_constraint_and_a_list_keeps_its_bold():
    # a Cursor user's spec and console, an Aider user's error: "not" and "no" there are the program's
    from hermes_mlx.summarizer.directives import user_constraints

    pasted = (
        "start fresh:\n- **Fun** — it feels like a game, not a website\n## TECH STACK (use exactly this)\n"
        "create table profiles (\n  username text unique not null,\n  resolves_at timestamptz not null\n);\n"
        "  - keep the old favicon\n"
        "app.js:37 GET https://x.supabase.co/rest/v1/profiles?select=credits 406 (Not Acceptable)\n"
        "litellm.AuthenticationError: Incorrect API key provided: no key\nNever commit .env files."
    )
    assert user_constraints(pasted) == [
        "start fresh: **Fun** — it feels like a game, not a website",  # with its lead-in (directives._with_items)
        "keep the old favicon",
        "Never commit .env files.",
    ]


def test_a_programs_prompt_the_user_answered_is_no_constraint():
    # aider's confirmation echoed into the user's turn (its "(D)on't" and "[Yes]" are aider's),
    # apt's and pip's prompts pasted with the answer; the user's own "yes, ..." still directs
    from hermes_mlx.summarizer.directives import user_constraints

    aider = "src/app.ts\nAdd file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: all"
    assert user_constraints(aider) == []
    assert user_constraints("Do you want to continue? [Y/n] y") == []
    assert user_constraints("Proceed (Y/n)? y") == []
    assert user_constraints("Yes, keep the old API and only add the flag.") == [
        "Yes, keep the old API and only add the flag."
    ]


def test_no_fact_from_hermes_022_elision_markers():
    from hermes_mlx.summarizer.extract import find_paths

    text = (
        "and logs the outcome to logs/run_3.lo⟪HERMES-CONTEXT-COMPRESSION: 1,234 of 5,678 chars omitted here "
        "by Hermes's context compressor.⟫g. Then src/module_4.py was fixed.\n\n...[summary input truncated: omitted 91,234 "
        "chars from the middle to keep compression prompt bounded]...\n\nun_5.log and logs/run_6.log"
    )
    paths = find_paths(text)
    assert "logs/run_3.lo" not in paths and "un_5.log" not in paths
    assert "src/module_4.py" in paths and "logs/run_6.log" in paths


def test_v1_models_reports_no_context_length_on_purpose(tiny_model):
    """Hermes 0.19 finds no window in /v1/models and assumes 256,000, so its 64,000-token floor
    for a compression model passes. Were the model's own window reported under the name Hermes
    asks for (the default, or its main model's id), 0.19 would refuse the summarizer at its
    first compaction."""
    from starlette.testclient import TestClient

    from hermes_mlx.integrations.server import build_app

    with TestClient(build_app(tiny_model), base_url="http://127.0.0.1") as c:
        body = c.get("/v1/models").json()
    text = json.dumps(body).lower()
    for key in ("context_length", "context_window", "max_model_len", "max_context", "n_ctx", "max_tokens"):
        assert key not in text, key


def test_paths_cut_short_in_a_summary_we_did_not_write_are_dropped():
    summary = (
        "## Relevant Files\n- logs/run_\n- logs/run_2\n- logs/run_2.log\n- src/app/\n- src/app/main.py\n- Makefile"
    )
    files = list(parse(summary).ledger.files)
    assert files == ["logs/run_2.log", "src/app/", "src/app/main.py", "Makefile"]


def test_a_019_batch_prompt_of_long_truncated_replies_summarizes():
    """What Hermes 0.19 sends at its first compaction: six turns of ~50,000-character replies,
    each cut to head + '...[truncated]...' + tail. The summary must verify (a parse-back check
    once rejected it, and Hermes fell back to its deterministic summary)."""
    from hermes_session import USER_TURNS
    from stub_main_model import reply_for

    turns = []
    for ask in USER_TURNS[:6]:
        turns.append(user(ask))
        reply = reply_for(turns, 50000)
        turns.append(assistant(reply[:4000] + "\n...[truncated]...\n" + reply[-1500:]))
    s = MLXSummarizer(score=FakeModel(*["Fixed the bound."] * 20).score, count_tokens=count)
    done = complete(parse_request({"messages": batch_prompt(turns, budget=3276)}), summarizer=s)
    assert done.error is None and done.text
    assert all(" ".join(ask.split()) in done.text for ask in USER_TURNS[:6])


def test_a_command_run_again_to_the_same_result_goes_before_one_run_once():
    """A near-repeat of a later command with the same result says nothing the later line does not
    (Cursor's `jb inspectcode` with one flag changed; mini-swe-agent's reproduction script run
    again with an argument), so the fit lets it go before a command run once, whatever its age."""
    led = Ledger()
    led.add_command("cd /repo && python reproduce.py --case 1", 0, "Result: None")
    led.add_command("jb inspectcode App.sln --format=Sarif --severity=SUGGESTION -o out.sarif", 1, "Invalid option 'o'")
    led.add_command("git log --oneline -3", 0)
    led.add_command("jb inspectcode App.sln --format=Sarif --severity=WARNING -o out.sarif", 1, "Invalid option 'o'")
    led.add_command("cd /repo && python reproduce.py --case 2", 0, "Result: None")
    for i in range(12):
        led.add_command(f"make target_{i} VERBOSE=1", 0, f"built target_{i}")
    s = Summary(goal="Fix the inspection warnings", ledger=led)
    fit_summary(s, hermes_tokens(render(s)) - 40)
    cmds = [c.cmd for c in s.ledger.commands]
    assert "jb inspectcode App.sln --format=Sarif --severity=SUGGESTION -o out.sarif" not in cmds
    assert "cd /repo && python reproduce.py --case 1" not in cmds
    assert "jb inspectcode App.sln --format=Sarif --severity=WARNING -o out.sarif" in cmds
    assert "cd /repo && python reproduce.py --case 2" in cmds and "git log --oneline -3" in cmds


# A code review's 117 findings kept the best 22 in 1,600 of its 2,000 tokens (Cursor), a port's
# 40-turn log the best of its notes in 1,950 (Codex): with room under Hermes's budget a batch pass
# keeps the next best findings, in the session's order, and never goes over the budget for them.
_FINDINGS = {
    "review": [
        "`signToken` spreads the payload into the JWT, so a caller's `exp` overrides ours.",
        "`parseExpiryToSeconds` returns 0 for 500ms, so the cookie expires at once.",
        "The rotation test never wires `isRevoked`, so a revoked token still refreshes.",
        "`extractToken` prefers the Authorization header over the refresh cookie.",
        "Permissions are declared in `types.ts` but no middleware checks them.",
        "`clearCookie` ignores the configured domain and sameSite values.",
        "Custom claims are dropped on refresh because only id, email and role are copied.",
        "The zod dependency is unused and adds 50 kB to the bundle.",
        "`Math.random()` is the jti fallback when crypto is missing.",
        "Missing `aud` and `iss` claims prevent audience validation across tenants.",
        "The logger reads NODE_ENV at import time, so tests cannot switch it.",
        "README links to an examples folder that was deleted in v0.3.",
        "Reuse detection does not revoke the whole token family.",
        "`authorize` compares roles case-sensitively: Admin is not admin.",
    ],
    "port": [
        "The quick test failed because the dependencies are not installed.",
        "Pinning numpy 1.26 fixed the ABI error in the compiled extension.",
        "CUDA_HOME pointed at 11.8 while torch was built for 12.1.",
        "flash_attn 2.5.8 is the last wheel built for this torch version.",
        "The dataloader hangs with 8 workers; 2 workers finish in 40 s.",
        "`setup.py develop` left a stale egg-link in site-packages.",
        "The GPU driver reports 535, which supports CUDA up to 12.2.",
        "Half precision overflows in the attention softmax at length 4096.",
        "The reflog shows the lost commit as HEAD@{3}.",
        "Gradle 8.2 needs JDK 17; the runner had JDK 11.",
        "The widget ignores app: attributes, so the layout uses android: only.",
        "Memory grows by 2 GB per epoch until the cache is cleared.",
        "The benchmark took 41 minutes on the CPU and 3 on the GPU.",
        "Rolling back to pydantic 1.10 brought back the import error.",
    ],
}


def _findings_session(shape: str) -> list[dict]:
    turns = [{"role": "user", "content": "Review the auth package and list what is wrong."}]
    return turns + [{"role": "assistant", "content": text} for text in _FINDINGS[shape]]


def test_a_batch_summary_with_room_keeps_more_findings_within_its_budget():
    for shape in ("review", "port"):
        turns = _findings_session(shape)
        roomy = MLXSummarizer(findings_keep=3).update(None, turns, budget_tokens=2000)
        tight = MLXSummarizer(findings_keep=3).update(None, turns, budget_tokens=200)
        alone = MLXSummarizer(findings_keep=3).update(None, turns)  # no budget: the keep alone
        assert roomy.ok and tight.ok and alone.ok, (roomy.error, tight.error, alone.error)
        kept, few = parse(roomy.text).progress, parse(tight.text).progress
        assert len(kept) == len(_FINDINGS[shape]) and hermes_tokens(roomy.text) <= 2000, (shape, kept)
        assert len(few) < len(kept) and hermes_tokens(tight.text) <= 200, (shape, few)
        assert kept == [x for x in _FINDINGS[shape] if x in kept]  # the session's order
        assert len(parse(alone.text).progress) <= 6


# Micro: an exchange too long for its ten added findings (Cursor's code review, 24 assistant turns
# of findings in one exchange, left its rolling summary at 945 of 1,800 tokens; a debugging run
# of forty turns alike) spends the room the summary has left on its next best findings.
def _long_findings(shape: str) -> list[str]:
    other = _FINDINGS["port" if shape == "review" else "review"][::-1]
    return [f"{a} {b}" for a, b in zip(_FINDINGS[shape], other, strict=True)]  # 14 of some 150 characters


def _long_exchange(shape: str) -> list[dict]:
    turns = [user("Review the auth package and list what is wrong.")]
    for i in range(42):
        text = _long_findings(shape)[i] if i < 14 else ""
        turns += [assistant(text, [(f"c{i}", "read_file")]), tool(f"c{i}", "ok")]
    return turns


def test_a_long_micro_exchange_spends_the_room_the_summary_has_left():
    for shape in _FINDINGS:
        turns = _long_exchange(shape)
        roomy = MLXSummarizer().merge(None, turns, budget_tokens=1800)
        tight = MLXSummarizer().merge(None, turns, budget_tokens=200)
        alone = MLXSummarizer().merge(None, turns)  # no budget: one and the ten added
        assert roomy.ok and tight.ok and alone.ok, (roomy.error, tight.error, alone.error)
        kept = parse(roomy.text).progress
        assert len(kept) == 14 > len(parse(alone.text).progress), (shape, kept)
        assert hermes_tokens(roomy.text) <= 1800 and hermes_tokens(tight.text) <= 200


def test_the_room_a_summary_spends_counts_the_heading_its_first_finding_adds():
    from hermes_mlx.summarizer.budget import with_room
    from hermes_mlx.summarizer.findings import Finding

    s = Summary(goal="Fix the export.")
    found = [Finding(text, i, 1.0) for i, text in enumerate(_FINDINGS["review"])]
    for budget in range(12, 120, 3):
        trial = Summary(goal=s.goal)
        trial.progress = [f.text for f in with_room(trial, found, budget)]
        assert hermes_tokens(render(trial)) <= budget, budget
