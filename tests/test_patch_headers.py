"""What a patch does to each file is read off its own headers, the path whole: Codex's apply_patch
grammar (`*** Delete File: x`) and its export's rendering (`**Delete: `x`**`, with the tool's
`paths` list), and a unified diff's /dev/null side. Folders whose names have spaces (a book's
`Single Agent Pattern/`, Windows's `Program Files (x86)/`) stay one path, never a fragment such as
`Pattern/autogen/agent.ts`. The first shape follows the shipped Codex session
`codex_gpt-5.5_agentic-patterns-modernize` (call 72), clipped."""

import json

from hermes_mlx.summarizer.budget import hermes_tokens
from hermes_mlx.summarizer.extract import find_paths, whole_path
from hermes_mlx.summarizer.shell_words import patch_file_actions
from hermes_mlx.summarizer.summarizer import MLXSummarizer
from hermes_mlx.summarizer.summary import parse


def _files(messages: list[dict]) -> dict[str, str]:
    """Files of the summary one batch pass writes, as its next pass reads them back."""
    result = MLXSummarizer(count_tokens=hermes_tokens).update(None, messages, budget_tokens=2000)
    assert result.ok, result.error
    return parse(result.text).ledger.files


def _turns(name: str, args: dict, output: str) -> list[dict]:
    call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
    return [
        {"role": "user", "content": "Remove the old title-case folders; keep the kebab-case ones."},
        {"role": "assistant", "content": "Removing the duplicates.", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "name": name, "content": output},
        {"role": "assistant", "content": "The old folders are gone; the canonical README is updated."},
    ]


OLD = ["Single Agent Pattern/autogen_typescript_example/single_agent.ts", "ReAct Pattern (Reason + Act)/react_agent.py"]


def test_a_codex_patch_deletes_and_updates_the_files_its_headers_name_with_spaces_kept():
    body = "".join(f"**Delete: `{p}`**\n\n" for p in OLD) + "**Update: `README.md`**\n\n```diff\n@@\n-old\n+new\n```"
    output = "Exit code: 0\nOutput:\nSuccess. Updated the following files:\nM README.md\n" + "".join(
        f"D {p}\n" for p in OLD
    )
    files = _files(_turns("patch", {"paths": [*OLD, "README.md"], "patch": body}, output))
    assert {p: files.get(p) for p in OLD} == dict.fromkeys(OLD, "deleted")
    assert files.get("README.md") == "edited"
    assert not [p for p in files if p.startswith(("Pattern/", "/react_agent", "Act)"))]


def test_the_apply_patch_grammar_run_in_a_shell_says_created_edited_and_deleted():
    patch = (
        "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: src/limits.py\n+MAX = 3\n"
        "*** Update File: src/app.py\n@@\n-x = 1\n+x = 2\n*** Delete File: src/old_limits.py\n*** End Patch\nEOF"
    )
    files = _files(_turns("terminal", {"command": patch}, "Success. Updated the following files:"))
    assert (files.get("src/limits.py"), files.get("src/app.py"), files.get("src/old_limits.py")) == (
        "created",
        "edited",
        "deleted",
    )


def test_a_unified_diffs_dev_null_side_is_a_file_created_or_deleted():
    diff = "--- /dev/null\n+++ b/docs/new guide.md\n@@ -0,0 +1 @@\n+# Guide\n--- a/docs/old.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-# Old\n"
    assert patch_file_actions(diff) == [("created", "docs/new guide.md"), ("deleted", "docs/old.md")]


def test_a_path_through_spaced_folders_is_whole_when_quoted_and_prose_before_a_path_is_not():
    assert find_paths('git diff -- "Single Agent Pattern/autogen/single_agent.ts" src/x.ts') == [
        "Single Agent Pattern/autogen/single_agent.ts",
        "src/x.ts",
    ]
    assert find_paths("`C:/Program Files (x86)/App/app.exe` failed") == ["C:/Program Files (x86)/App/app.exe"]
    assert whole_path("see src/x.py") == "" and whole_path("Run tests/test_x.py") == ""
    assert find_paths('"see src/x.py"') == ["src/x.py"]
