"""bench.hygiene: issue 27's zero figures, each class caught, and a clean summary scores zero."""

import json

from hermes_mlx.bench.hygiene import HYGIENE, hygiene


def _call(i: int, name: str, **args) -> dict:
    return {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


SOURCE = "export function parse(x) {\n" + "  // checks\n" * 60 + "  throw new Error('bad input: ' + x)\n}\n"
SESSION = [
    {"role": "user", "content": "Fix the parser."},
    {"role": "assistant", "content": "", "tool_calls": [_call(0, "read_file", path="src/parse.js")]},
    {"role": "tool", "tool_call_id": "c0", "content": SOURCE},
    {"role": "assistant", "content": "", "tool_calls": [_call(1, "terminal", command="npm test")]},
    {"role": "tool", "tool_call_id": "c1", "content": "Error: Cannot find module 'zod'\n"},
]

CLEAN = """## Goal
Fix the parser.

## Progress
- The parser throws on empty input because `x.trim()` runs before the null check.

## Commands
- `npm test` (exit 1) → Error: Cannot find module 'zod'

## Errors
- after `npm test`:
  - `Error: Cannot find module 'zod'`
"""


def test_a_clean_summary_scores_zero_on_every_figure():
    assert hygiene(CLEAN, SESSION) == {k: [] for k in HYGIENE}


def test_each_class_of_line_that_must_not_be_there_is_caught():
    dirty = CLEAN.replace(
        "## Commands\n",
        "## Commands\n- `sed -n '1,80p' src/parse.js` (exit 0) → throw new Error('bad input: ' + x)\n"
        # a read that failed says so in its own words (PowerShell's `rg` with no right to run): its result
        "- `rg --files -g '*.toml'` (exit 1) → Program 'rg.exe' failed to run: Access is denied\n",
    )
    dirty = dirty.replace(
        "## Errors\n",
        "## Errors\n- after `read_file`:\n  - `throw new Error('bad input: ' + x)`\n",
    )
    dirty = dirty.replace(
        "## Progress\n",
        "## Progress\n- /add src/parse.js\n- Ran aider_command: `/undo`\n- Reviewing module 3 of the API now\n- Reviewing module 4 of the API now\n"
        "- The fix is in `parse(x) and ...\n- the **same return values**\n",
    )
    dirty += "\n## Next Steps\n\n## Files\n- `src/parse.js` (edited)\n"
    got = hygiene(dirty, SESSION)
    assert got["read_results"] == ["sed -n '1,80p' src/parse.js → throw new Error('bad input: ' + x)"]
    assert got["source_errors"] == ["throw new Error('bad input: ' + x)"]
    assert got["agent_commands"] == ["/add src/parse.js", "Ran aider_command: `/undo`"]
    assert got["duplicates"] == ["Reviewing module 4 of the API now"]
    assert got["fragments"] == ["The fix is in `parse(x) and ...", "the **same return values**"]
    assert got["empty_sections"] == ["## Next Steps"]


def test_bold_inside_a_code_span_is_no_fragment():
    summary = CLEAN.replace(
        "## Commands", "## Progress\n- It fails at `format(*pos_values, **keyword_values)` on None.\n\n## Commands"
    )
    assert hygiene(summary, SESSION)["fragments"] == []


def test_an_agents_wrapper_taken_for_a_result_is_caught():
    wrapped = "Chunk ID: 6d2ab3\nWall time: 0.2 seconds\nProcess exited with code 1\nOutput:\n\nzip not found: x.zip"
    session = [
        {"role": "user", "content": "Build the release."},
        {"role": "assistant", "content": "", "tool_calls": [_call(0, "terminal", command="npm run release")]},
        {"role": "tool", "tool_call_id": "c0", "content": wrapped},
    ]
    dirty = "## Goal\nBuild the release.\n\n## Commands\n- `npm run release` (exit 1) → Chunk ID: 6d2ab3\n"
    assert hygiene(dirty, session)["wrapper_results"] == ["npm run release → Chunk ID: 6d2ab3"]
    clean = dirty.replace("Chunk ID: 6d2ab3", "zip not found: x.zip")
    assert hygiene(clean, session) == {k: [] for k in HYGIENE}


def test_a_users_sentence_the_goal_shows_listed_again_is_a_duplicate():
    said_twice = CLEAN.replace(
        "## Progress\n", "## Constraints & Preferences\n- Fix the parser in src/parse.js.\n\n## Progress\n"
    ).replace("Fix the parser.\n", "Fix the parser in src/parse.js. Keep the API.\n")
    assert hygiene(said_twice, SESSION)["duplicates"] == ["Fix the parser in src/parse.js."]
