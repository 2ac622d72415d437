"""A batch pass converges when the protected head is what holds the tokens (issue 27 class 8).

A Cursor session opened with an 81,558-character spec as its first user message: the head (the
first messages, protected) held 24,277 of a 26,214-token threshold, so every pass ended
`over_threshold` however hard the user row was clipped. Now a head too big to leave the pass room
yields to the system prompt (Hermes's head after its first compaction): its user turn joins the
user row, whose view is clipped while the original stays whole, and the rest is summarized.
"""

from fakes import ScriptedSummarizer, assistant, tool, tool_pairs_valid, user

from hermes_mlx.compactor import markers
from hermes_mlx.compactor.batch import BatchCompactor
from hermes_mlx.compactor.replay import replay
from hermes_mlx.compactor.store import SessionStore
from hermes_mlx.compactor.transcript import head_end, transcript_tokens

COUNT = ScriptedSummarizer().count_tokens
LIMIT = 8192
THRESHOLD = int(LIMIT * 0.8)


def spec(chars: int) -> str:
    lines, n = [], 0
    while sum(len(x) + 1 for x in lines) < chars:
        lines.append(f"Requirement R{n}: the ranking page shows item {n} with its score and trend arrow.")
        n += 1
    return "Rebuild it from scratch; keep the old logo.\n" + "\n".join(lines)


def cursor_shaped() -> list[dict]:
    """A huge first user message, then hundreds of tiny tool calls and a few long user turns."""
    messages = [{"role": "system", "content": "Cursor IDE agent session."}, user(spec(24_000))]
    messages += [assistant("Starting the rebuild.", calls=[("s0", "search_files")]), tool("s0", "32 files")]
    for n in range(700):
        if n % 140 == 70:
            messages.append(user(f"Part {n}: also port the admin view. " + "Keep the colours as they were. " * 40))
        messages += [assistant(None, calls=[(f"t{n}", "read_file")]), tool(f"t{n}", f"line {n}: ok")]
    messages.append(assistant("Done: the ranking page is rebuilt."))
    return messages


def aider_shaped() -> list[dict]:
    """Aider's shape: many short user-typed slash commands; the first one (`/web`) brought a page
    into the chat, so the head held a huge tool output that pruning never reaches there."""
    messages = [{"role": "system", "content": "Aider chat log."}, user("/web https://docs.example.org/chart-api")]
    messages += [assistant(None, calls=[("w", "aider_command")])]
    messages += [
        tool("w", "Scraping https://docs.example.org/chart-api...\n" + "Chart option: tooltip callbacks.\n" * 700)
    ]
    commands = ["/undo", "/clear", "/add src/blame.md", "/ask why do the tooltips show 0?", "do that", "/drop x.js"]
    for n in range(400):
        command = commands[n % len(commands)]
        messages += [user(command), assistant(None, calls=[(f"c{n}", "aider_command")])]
        messages += [
            tool(f"c{n}", f"{command}: step {n} applied\nCommit {n:07x} fix: step {n}"),
            assistant(f"Step {n}."),
        ]
    return messages


def check_converges(messages: list[dict], store: SessionStore | None = None):
    result = replay(messages, ScriptedSummarizer(), mode="batch", context_limit=LIMIT, store=store, session_id="s")
    batch = [r for r in result.records if r.mode == "batch"]
    assert batch and batch[-1].outcome == "compacted", [r.outcome for r in batch]  # was over_threshold to the end
    assert [r.outcome for r in batch].count("over_threshold") == 0
    assert transcript_tokens(result.messages, COUNT) <= THRESHOLD
    # nothing lost: every user message, the huge first one included, is in the transcript whole
    assert markers.user_messages(result.messages) == markers.user_messages(result.original)
    assert tool_pairs_valid(result.messages)
    return result


def test_a_huge_first_user_message_joins_the_user_row_and_the_pass_converges():
    messages = cursor_shaped()
    assert transcript_tokens(messages[:3], COUNT) > THRESHOLD * 0.8  # the head alone: most of the threshold
    result = check_converges(messages)
    assert result.messages[0] == messages[0]  # the system prompt stays where it was
    row = result.messages[1]
    assert row[markers.MERGED_FROM_KEY][0] == messages[1]  # the original, whole
    assert row["content"].startswith("Rebuild it from scratch; keep the old logo.")  # its view, clipped
    assert "more chars]" in row["content"] and len(row["content"]) < len(messages[1]["content"]) // 4
    assert markers.is_marker(result.messages[2])


def test_aider_slash_commands_with_a_big_output_in_the_head_converge():
    result = check_converges(aider_shaped())
    kept_commands = markers.user_messages(result.messages)
    assert len(kept_commands) == 401 and kept_commands[0]["content"] == "/web https://docs.example.org/chart-api"
    assert all(len(m.get("content") or "") < 4000 for m in result.messages if m.get("role") == "tool")


def test_a_yielded_head_is_kept_whole_in_the_store():
    with SessionStore(":memory:") as store:
        check_converges(cursor_shaped(), store)
        assert store.search("s", "Requirement R250:")  # deep inside the spec that left the view


def test_a_head_that_leaves_room_stays_protected():
    messages = [{"role": "system", "content": "You are a coding agent."}, user("Fix the login bug. " * 50)]
    messages.append(assistant("On it."))
    for n in range(300):
        messages += [user(f"next {n}"), assistant(f"done {n}")]
    result = BatchCompactor(ScriptedSummarizer(), context_limit=4096).compact(messages)
    assert result.outcome == "compacted"
    assert result.messages[:3] == messages[:3]


def test_the_head_ends_before_compaction_rows_so_a_yielded_head_stays_yielded():
    system = {"role": "system", "content": "You are a coding agent."}
    marker = markers.build("## Goal\nship it", micro=False)
    row = markers.merge_users(user("first"), user("second"))
    tail = [assistant("ok"), user("go on"), assistant("done")]
    assert head_end([system, row, marker, *tail], 3) == 1
    assert head_end([system, marker, *tail], 3) == 1  # Hermes's own transcript after its compaction
    assert head_end([marker, *tail], 3) == 0
    # a merged row with no marker after it is a head like any other (adjacent user turns at the start)
    assert head_end([system, row, assistant("ok"), *tail], 3) == 3
    assert head_end([system, user("task"), assistant("ok"), marker, *tail], 3) == 3


def test_a_head_too_big_for_any_summary_is_let_go_before_the_summarizer_runs():
    """What the pass must keep is over the threshold already: no summary first, one call in all."""
    fake = ScriptedSummarizer()
    messages = [{"role": "system", "content": "Agent."}, user(spec(30_000)), assistant("Reading.")]
    for n in range(40):
        messages += [user(f"step {n}"), assistant(f"done {n}")]
    result = BatchCompactor(fake, context_limit=LIMIT).compact(messages)
    assert result.outcome == "compacted" and fake.methods() == ["update"]
    assert transcript_tokens(result.messages, COUNT) <= THRESHOLD
    assert result.messages[1][markers.MERGED_FROM_KEY][0] == messages[1]


def test_a_pass_over_for_its_tail_keeps_its_head():
    """Letting the head go cannot help when the tail holds the tokens (a newest reply of 100,000
    characters): the head stays, and the pass says it is over."""
    messages = [{"role": "system", "content": "Agent."}, user("Find the bug."), assistant("Looking.")]
    for n in range(40):
        messages += [user(f"step {n}"), assistant(f"done {n}")]
    messages += [user("why?"), assistant("Because " + "it loops " * 12_000)]
    result = BatchCompactor(ScriptedSummarizer(), context_limit=LIMIT).compact(messages)
    assert result.outcome == "over_threshold" and result.messages[:3] == messages[:3]
