"""Noise in the summary's lists (issue 27, class 9), each rule shown on two agents' shapes:
paths relative to a working folder stated once, no URLs from a document, no version only a
file read back holds."""

from summarizer_fakes import call, count

from hermes_mlx.summarizer import MLXSummarizer
from hermes_mlx.summarizer.absorb import absorb
from hermes_mlx.summarizer.budget import fit_summary, hermes_tokens
from hermes_mlx.summarizer.digest import rank_ids
from hermes_mlx.summarizer.findings import near_duplicate
from hermes_mlx.summarizer.ledger import Ledger
from hermes_mlx.summarizer.summary import Summary, parse, render
from hermes_mlx.summarizer.text import normalize
from hermes_mlx.summarizer.tidy import tidy_files
from hermes_mlx.summarizer.workfolder import working_folder


def _exchange(*pairs, before=()) -> list[dict]:
    """Messages of (tool, arguments, result) triples, each an assistant call answered by its result."""
    msgs = list(before)
    for i, (name, args, result) in enumerate(pairs):
        msgs.append({"role": "assistant", "content": "", "tool_calls": [call(f"c{i}", name, **args)]})
        msgs.append({"role": "tool", "tool_call_id": f"c{i}", "name": name, "content": result})
    return msgs


def _folder(*pairs, before=(), known="") -> str:
    return working_folder(normalize(_exchange(*pairs, before=before)), known)


# ---------------------------------------------------------------- the working folder, as each agent shows it


def test_a_stated_working_folder_is_read_from_a_prompt_or_an_envelope_not_from_a_file():
    claude = {"role": "system", "content": "<env>\nWorking directory: /Users/d/github/widget\nPlatform: darwin\n</env>"}
    codex = {"role": "user", "content": "<environment_context>\n  <cwd>/Users/i/Development/emailbuddy</cwd>\n"}
    edit = ("read_file", {"path": "/Users/d/github/other/x.kt"}, "ok")
    assert _folder(edit, before=[claude]) == "/Users/d/github/widget"
    assert _folder(before=[codex]) == "/Users/i/Development/emailbuddy"
    # a file read back that holds such a line says nothing about the agent's folder
    fixture = ("read_file", {"path": "test/a_test.exs"}, 'cwd: "/home/USER/project"\nWorking directory: /srv/x\n')
    assert _folder(fixture) == ""


def test_a_shell_tools_folder_argument_or_cd_prefix_is_the_working_folder():
    hermes = ("terminal", {"command": "git status", "workdir": "/home/teknium/.hermes/hermes-agent"}, "clean")
    assert _folder(hermes) == "/home/teknium/.hermes/hermes-agent"
    cd = ("terminal", {"command": "cd ~/.hermes/hermes-agent && grep -n x tools/a.py"}, "1:x")
    assert _folder(cd, cd) == "~/.hermes/hermes-agent"
    quoted = ("terminal", {"command": 'cd "/Users/i/Development/email buddy"; npm test'}, "ok")
    assert _folder(quoted) == "/Users/i/Development/email buddy"


def test_one_path_below_a_home_folder_tells_the_folder_up_to_the_projects_root():
    claude = ("read_file", {"path": "/home/marco/projects/spotter/mix.exs"}, "defmodule Spotter.MixProject do")
    gemini = ("write_file", {"path": "/Users/d/github/cal-date-widget/app/src/main/java/ai/W.kt", "content": "x"}, "")
    assert _folder(claude) == "/home/marco/projects/spotter"
    assert _folder(gemini) == "/Users/d/github/cal-date-widget"
    # a plan in a hidden folder, a scratch file: no project; an earlier pass's folder stands
    assert _folder(("write_file", {"path": "/home/u/.claude/plans/p.md", "content": "x"}, "")) == ""
    assert _folder(("write_file", {"path": "/tmp/fix.py", "content": "x"}, "")) == ""
    assert _folder(claude, known="/home/marco/projects/other") == ""


def test_windows_paths_find_their_folder_and_are_made_relative_in_their_own_spelling():
    cursor = [("read_file", {"path": f"c:\\auth-package\\{p}"}, "x") for p in ("src\\index.ts", "tests\\a.test.ts")]
    assert _folder(*cursor) == "c:\\auth-package"
    assert list(tidy_files({"c:\\auth-package\\src\\index.ts": "read"}, "c:\\auth-package")) == ["src\\index.ts"]
    copilot = [("read_file", {"path": f"/c:/Users/dn/GitHub/Houdoku/{p}"}, "x") for p in ("src/a.tsx", "src/b/c.ts")]
    assert _folder(*copilot) == "/c:/Users/dn/GitHub/Houdoku"
    # Copilot on Windows runs `cd "c:\..." && pnpm lint` beside file tools given `/c:/...` paths: the
    # folder is spelled as the files are, so they are made relative to it (they had stayed whole)
    cd = ("run_in_terminal", {"command": 'cd "c:\\Users\\dn\\GitHub\\Houdoku" && pnpm lint'}, "ok")
    assert _folder(cd, cd, *copilot) == "/c:/Users/dn/GitHub/Houdoku"
    # any other folder stays as the shell named it: `C:/` paths, Git Bash's `/c/`, a posix folder
    forward = [("read_file", {"path": f"C:/Users/me/proj/src/{p}"}, "x") for p in ("a.ts", "b.ts")]
    cd = ("terminal", {"command": 'cd "C:/Users/me/proj" && npm test'}, "ok")
    assert _folder(cd, cd, *forward) == "C:/Users/me/proj"
    back = [("read_file", {"path": f"C:\\Users\\me\\proj\\src\\{p}"}, "x") for p in ("a.ts", "b.ts")]
    assert _folder(cd, cd, *back) == "C:\\Users\\me\\proj"  # the paths' own spelling, so they are made relative
    upper = ("run_in_terminal", {"command": 'cd "C:\\Users\\dn\\GitHub\\Houdoku" && pnpm lint'}, "ok")
    assert _folder(upper, upper, *copilot) == "/c:/Users/dn/GitHub/Houdoku"
    cd = ("terminal", {"command": "cd /home/u/proj && make"}, "ok")
    mixed = [("read_file", {"path": p}, "x") for p in ("D:\\scratch\\notes.txt", "/home/u/proj/src/main.c")]
    assert _folder(cd, cd, *mixed) == "/home/u/proj"


def test_files_state_the_working_folder_once_and_later_passes_keep_it():
    s = MLXSummarizer(score=None, count_tokens=count, context_window=8192)
    root = "/home/marco/projects/spotter"
    first = s.update(None, _exchange(("read_file", {"path": f"{root}/mix.exs"}, "defmodule X do"))).text
    assert f"Working folder: `{root}`" in first and "- `mix.exs` (read)" in first and f"{root}/mix.exs" not in first
    # the next span names one path: the stated folder is the one it is relative to
    second = s.update(first, _exchange(("write_file", {"path": f"{root}/plan.md", "content": "# Plan"}, "ok"))).text
    led = parse(second).ledger
    assert led.root == root and set(led.files) == {"mix.exs", "plan.md"}
    assert second.count("Working folder:") == 1
    # the agent moves to another project: what was relative to the old folder is made whole again
    other = [("patch", {"path": f"/home/marco/projects/web/{p}", "old_string": "a", "new_string": "b"}, "ok") for p in ("lib/a.ex", "test/a_test.exs")]  # fmt: skip
    led = parse(s.update(second, _exchange(*other)).text).ledger
    assert led.root == "/home/marco/projects/web"
    assert {f"{root}/mix.exs", f"{root}/plan.md", "lib/a.ex", "test/a_test.exs"} <= set(led.files)


def test_a_bare_name_only_mentioned_is_not_placed_in_a_folder_when_the_folder_moves():
    # Copilot's prose names `updater.ts`; a later pass finds the project's root above the folder an
    # earlier pass used: the name is no file in that earlier folder (it became `apps/desktop/updater.ts`)
    led = Ledger(files={"updater.ts": "mentioned", "package.json": "read"}, root="/c:/u/Houdoku/apps/desktop")
    led.tidy("/c:/u/Houdoku")
    assert set(led.files) == {"updater.ts", "apps/desktop/package.json"}


def test_no_working_folder_line_when_every_path_is_whole():
    led = Ledger(files={"/etc/hosts": "read"}, root="/home/u/p")
    assert "Working folder" not in render(Summary(ledger=led))


# ---------------------------------------------------------------- URLs of documents are not what was used


def _urls(*pairs) -> list[str]:
    led = Ledger()
    absorb(led, normalize(_exchange(*pairs)))
    return led.urls


def test_a_files_links_read_back_are_no_urls_of_the_work():
    mix = (
        "defmodule X do\n" + "  # filler line of the file\n" * 20 + '  # {:d, git: "https://github.com/e/my_dep.git"}\n'
    )
    assert _urls(("read_file", {"path": "mix.exs"}, mix)) == []  # Claude Code's read tool
    assert _urls(("bash", {"command": "cat pyproject.toml"}, mix.replace("mix", "py"))) == []  # a shell-only agent
    # a command's own output still tells: the PR it opened, the registry it could not reach
    assert _urls(("terminal", {"command": "gh pr create --fill"}, "https://github.com/o/r/pull/219\n")) == [
        "https://github.com/o/r/pull/219"
    ]
    assert _urls(("read_file", {"path": "x"}, "Error: could not fetch https://nexus.acme.test/x")) == [
        "https://nexus.acme.test/x"
    ]  # a short answer of a read is no file


def test_a_link_a_program_prints_to_point_to_its_help_is_no_url_of_the_work():
    # credo, pip, pytest, Gradle and a deprecation warning each point their reader somewhere; a
    # deploy's URL and a PR's are what the command made
    said = [
        (
            "mix credo",
            "Checking 87 source files ...\n\nPlease report incorrect results: https://github.com/rrrene/credo/issues",
        ),
        (
            "pip install -q x",
            "WARNING: Running pip as the 'root' user ... It is recommended to use a virtual environment instead: https://pip.pypa.io/warnings/venv",
        ),  # fmt: skip
        ("pytest -q", "2 passed, 1 warning\n\n-- Docs: https://docs.pytest.org/en/stable/how-to/capture-warnings.html"),
        ("./gradlew build", "BUILD FAILED in 3s\n> Get more help at https://help.gradle.org."),
        (
            "npx vitest run",
            "The CJS build of Vite's Node API is deprecated. See https://vite.dev/guide/troubleshooting.html for more details.",
        ),  # fmt: skip
    ]
    for cmd, output in said:
        assert _urls(("terminal", {"command": cmd}, output)) == [], cmd
    assert _urls(("terminal", {"command": "vercel --prod"}, "Deployed to https://shop-x.vercel.app [3s]")) == [
        "https://shop-x.vercel.app"
    ]
    assert _urls(("terminal", {"command": "gh pr create"}, "https://github.com/o/r/pull/12")) == [
        "https://github.com/o/r/pull/12"
    ]


def test_no_url_is_an_xml_namespace_or_cut_open_by_a_tools_clipped_arguments():
    # an Android layout and an SVG written by an edit tool name namespaces, never fetched; a long
    # argument is read clipped, and a URL the clip cut is no URL (`http://127.0.0.1:${PORT`)
    layout = '<LinearLayout xmlns:android="http://schemas.android.com/apk/res/android" xmlns:tools="http://schemas.android.com/tools">'
    svg = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 8"><a href="https://example.org/icons">i</a></svg>'
    assert _urls(("write_file", {"path": "res/layout/w.xml", "content": layout}, "ok")) == []
    assert _urls(("write_file", {"path": "icon.svg", "content": svg}, "ok")) == ["https://example.org/icons"]
    long = 'const base = "padding padding padding padding padding padding padding padding padding padding"; fetch(`http://127.0.0.1:${PORT}/api/search`)'
    assert _urls(("edit_file", {"path": "a.ts", "new_string": long}, "ok")) == []
    short = 'fetch("https://api.example.org/v2/items")'
    assert _urls(("edit_file", {"path": "a.ts", "new_string": short}, "ok")) == ["https://api.example.org/v2/items"]


def test_a_subagents_list_of_sources_is_no_urls_but_one_link_it_reports_is():
    sources = "Source references:\n- Credo: https://github.com/rrrene/credo\n- Dialyxir: https://github.com/j/dialyxir\n- mix_audit: https://github.com/mirego/mix_audit\n"  # fmt: skip
    assert _urls(("delegate_task", {"prompt": "Draft beads"}, sources)) == []  # Hermes's (and the corpus's) name
    assert _urls(("Task", {"prompt": "Research"}, sources)) == []  # Claude Code's own name
    assert _urls(("Task", {"prompt": "Open a PR"}, "Opened https://github.com/o/r/pull/7")) == [
        "https://github.com/o/r/pull/7"
    ]


def test_a_page_the_agent_fetched_is_one_it_read_and_outlasts_a_link_it_only_saw():
    # Hermes's web_extract takes a list, Claude Code's WebFetch one url: either way the agent read the page
    changelog, docs = "https://github.com/o/r/blob/main/CHANGELOG.md", "https://docs.example.dev/v2/invoices"
    pairs = [
        ("web_extract", {"urls": [changelog]}, "4.2.0: removed Invoice.tax_lines"),
        ("WebFetch", {"url": docs, "prompt": "the v2 invoice fields"}, "InvoiceV2 fields: taxes"),
        ("terminal", {"command": "cat .env.example"}, "STRIPE_URL=https://sandbox.example.dev\n"),
    ]
    led = Ledger()
    absorb(led, normalize(_exchange(*pairs)))
    assert led.fetched == [changelog, docs] and "https://sandbox.example.dev" in led.urls
    text = render(Summary(ledger=led))
    assert f"- {changelog} (read)" in text and "- https://sandbox.example.dev\n" in text
    again = parse(text).ledger  # a later pass reads the mark back
    assert again.urls == led.urls and again.fetched == led.fetched
    # a budget that cannot keep every link keeps the pages read before a link merely seen
    again.ids = [f"name_{i}" for i in range(60)]
    s = Summary(ledger=again)
    fit_summary(s, hermes_tokens(render(s)) - 20)
    assert s.ledger.urls == [changelog, docs]


# ---------------------------------------------------------------- versions only a file read back holds


def test_a_version_only_a_file_read_back_holds_is_no_identifier():
    mix = 'defmodule X do\n  def project, do: [version: "0.1.0"]\n' + "  # filler\n" * 40
    cargo = '[package]\nname = "pool"\nversion = "0.9.3"\n' + "# filler\n" * 40
    reads = normalize(
        _exchange(("read_file", {"path": "mix.exs"}, mix), ("terminal", {"command": "cat Cargo.toml"}, cargo))
    )
    assert rank_ids(["0.1.0", "0.9.3"], reads) == []
    # a run that prints it, the agent's words, or an edit: a version the work used
    runs = normalize(
        _exchange(
            ("terminal", {"command": "cargo build --locked"}, "   Compiling pool 0.9.3\n"),
            ("terminal", {"command": "pip show httpx"}, "Name: httpx\nVersion: 0.27.2\n"),
            ("read_file", {"path": "mix.exs"}, mix),
        )
        + [{"role": "assistant", "content": "The project is at 0.1.0."}]
    )
    assert set(rank_ids(["0.1.0", "0.9.3", "0.27.2"], runs)) == {"0.1.0", "0.9.3", "0.27.2"}


# ---------------------------------------------------------------- near-duplicates: only when one adds nothing


def test_two_findings_on_the_same_subject_that_state_different_facts_both_stay():
    # the README example's two "None of these tools ..." lines: one says they are absent, the other
    # that none has an installer; a merge would lose a fact, so near_duplicate must not join them
    a = "None of these tools (credo, dialyxir, mix_audit, sobelow) are currently in the project. Igniter is already a dependency."  # fmt: skip
    b = "None of these tools (credo, dialyxir, mix_audit, sobelow) have specific Igniter installers - they're simple deps that just need to be added to mix.exs."  # fmt: skip
    assert not near_duplicate(a, b)
    assert near_duplicate("Reviewing module 3 of the API", "Reviewing module 4 of the API")


def test_past_the_cap_every_other_file_that_fits_stays():
    # 1 changed file and 3 read ones under a cap of 5: all stay (a negative slice kept only the last)
    files = {"a.py": "edited", "b.py": "read", "c.py": "read", "d.py": "read"}
    assert tidy_files(files, "", keep=5) == files
    assert list(tidy_files(files, "", keep=2)) == ["a.py", "d.py"]


def test_a_fact_naming_a_whole_path_is_kept_by_the_folder_and_the_relative_path():
    from hermes_mlx.bench.fidelity import as_read

    claude = "## Files\nWorking folder: `/home/marco/projects/spotter`\n- `plan.md` (created)\n"
    cursor = "## Files\nWorking folder: `c:\\auth-package`\n- `src\\index.ts` (read)\n"
    assert "/home/marco/projects/spotter/plan.md" in as_read(claude)
    assert "c:\\auth-package\\src\\index.ts" in as_read(cursor)
    assert as_read("## Files\n- `plan.md`\n") == "## Files\n- `plan.md`\n"  # no folder stated, nothing added


def test_the_readme_examples_summary_lists_no_noise():
    """The README's first run (Claude Code, `claudecode_opus_spotter_create_beads`) replayed in
    batch at its 8,192-token window, code alone: paths relative to the folder stated once, no
    URLs out of a read file or a subagent's sources, no version out of a file read back."""
    from hermes_mlx.bench.fidelity import run_session
    from hermes_mlx.bench.shipped import example_session, load_with_facts

    session = load_with_facts(example_session("claudecode_opus_spotter_create_beads"))
    summarizer = MLXSummarizer(score=None, count_tokens=count, context_window=8192)
    run = run_session(session.messages, summarizer, mode="batch", context_limit=8192, session_id="readme")
    s = parse(run.summary)
    assert s.ledger.root == "/home/marco/projects/spotter"
    assert "mix.exs" in s.ledger.files and not any(p.startswith("/home") for p in s.ledger.files)
    assert not any(u.endswith(("my_dep.git", "/credo", "/dialyxir", "/mix_audit")) for u in s.ledger.urls)
    assert "0.1.0" not in s.ledger.ids


def test_a_windows_path_names_its_file_once():
    # Cursor on Windows: the agent's prose names `refresh.ts`, its tools `src\refresh\refresh.ts`
    files = {"src\\refresh\\refresh.ts": "edited", "refresh.ts": "mentioned", "..\\lib\\a.ex": "read"}
    files["lib\\a.ex"] = "read"
    assert list(tidy_files(files, "")) == ["src\\refresh\\refresh.ts", "lib\\a.ex"]


def test_a_bare_name_folds_into_its_path_with_the_stronger_action():
    # an edit tool given the bare name or a tail (Cursor on Windows: `refresh.ts`; Claude Code:
    # `spotter/lib/a.ex` for `../spotter/lib/a.ex`) edited the file another tool listed in full:
    # the full path had stayed "read" and the edit went with the bare name
    windows = {"src\\refresh\\refresh.ts": "read", "refresh.ts": "edited", "Interfaces/ILlmProvider.cs": "read"}
    assert tidy_files(windows, "") == {"src\\refresh\\refresh.ts": "edited", "Interfaces/ILlmProvider.cs": "read"}
    claude = {"lib/a.ex": "edited", "apps/spotter/lib/a.ex": "read", "lib/b.ex": "read"}
    assert tidy_files(claude, "") == {"apps/spotter/lib/a.ex": "edited", "lib/b.ex": "read"}
    # one path spelled two ways is one file, listed without its `../` steps
    assert tidy_files({"a.ex": "edited", "../lib/a.ex": "read", "lib/a.ex": "read"}, "") == {"lib/a.ex": "edited"}
    # or without the `@` a user mentions it with (Cursor's, Claude Code's `@src/Case.cs`); an npm
    # scope's path named alone stays as it is
    mentioned = {"@src/Domain/Case.cs": "mentioned", "src/Domain/Case.cs": "edited", "@babel/core/lib/x.js": "read"}
    assert tidy_files(mentioned, "") == {"src/Domain/Case.cs": "edited", "@babel/core/lib/x.js": "read"}
    scoped = {"node_modules/@scope/pkg/a.js": "read", "@scope/pkg/a.js": "mentioned", "src/types/node/i.ts": "read"}
    assert tidy_files({**scoped, "@types/node/i.ts": "mentioned"}, "") == {
        "node_modules/@scope/pkg/a.js": "read",
        "src/types/node/i.ts": "read",
        "@types/node/i.ts": "mentioned",
    }
    # a name two listed paths end in is neither: it goes, unless it says more than they do
    assert tidy_files({"a/x.py": "read", "b/x.py": "edited", "x.py": "read"}, "") == {
        "a/x.py": "read",
        "b/x.py": "edited",
    }
    assert tidy_files({"a/x.py": "read", "b/x.py": "read", "x.py": "edited"}, "") == {
        "a/x.py": "read",
        "b/x.py": "read",
        "x.py": "edited",
    }


def test_an_attribute_named_in_prose_is_no_file_and_a_file_named_like_one_still_is():
    # `self.env` (Python) and `this.state` (JavaScript) have a file's shape; `state.json` is a file
    files = {"self.env": "mentioned", "this.state": "mentioned", "state.json": "mentioned", "src/self.py": "read"}
    assert list(tidy_files(files, "")) == ["state.json", "src/self.py"]


# ---------------------------------------------------------------- what the agent saved to its memory


def _memory_session(name: str, args: dict, filler: int = 30) -> list[dict]:
    """A user request, then many reads with chatty findings, the memory write among them."""
    msgs = [{"role": "user", "content": "Tour the codebase and remember what matters."}]
    pairs = [("terminal", {"command": f"wc -l src/m{i}.py"}, f"{100 + i} src/m{i}.py") for i in range(filler)]
    body = _exchange(*pairs[: filler // 2], (name, args, '{"success": true}'), *pairs[filler // 2 :])
    for i, m in enumerate(body):
        if m["role"] == "assistant":
            m["content"] = f"Module m{i} has {100 + i} lines."
    return msgs + body


def test_what_the_agent_saved_to_memory_is_a_finding_in_each_memory_tools_shape():
    from hermes_mlx.summarizer.findings import candidates
    from hermes_mlx.summarizer.written import memory_notes

    shapes = [
        (
            "memory",
            {"action": "add", "target": "user", "content": "The user deploys only from the release/2.x branch."},
        ),
        # the MCP memory server, as Claude Code names its tools
        (
            "mcp__memory__add_observations",
            {
                "observations": [
                    {"entityName": "deploy", "contents": ["The user deploys only from the release/2.x branch."]}
                ]
            },
        ),  # fmt: skip
        (
            "update_memory",
            {"title": "Deploys", "knowledge_to_store": "The user deploys only from the release/2.x branch."},
        ),
    ]
    for name, args in shapes:
        turns = normalize(_memory_session(name, args))
        noted = [t for t, _, f in candidates(turns) if f["noted"]]
        assert noted == ["The user deploys only from the release/2.x branch."], name
    # a removal and a search save nothing
    for name, args in [
        ("memory", {"action": "remove", "old_text": "x y z w"}),
        ("search_memory", {"content": "a b c d"}),
    ]:
        turn = normalize(_exchange((name, args, "ok")))[0]
        assert memory_notes(turn) == [], name


def test_a_batch_summary_keeps_what_the_agent_saved_to_memory_among_many_findings():
    s = MLXSummarizer(score=None, count_tokens=count, context_window=8192)
    note = "The user deploys only from the release/2.x branch."
    for name, args in [("memory", {"action": "add", "target": "memory", "content": note}),
                       ("mcp__memory__add_observations", {"observations": [{"entityName": "d", "contents": [note]}]})]:  # fmt: skip
        text = s.update(None, _memory_session(name, args, filler=60), budget_tokens=2000).text
        assert note in parse(text).progress, (name, text)


# ---------------------------------------------------------------- a harness's context blocks

_CLINE_ENV = (
    "<environment_details>\n# VSCode Visible Files\nsrc/app.py\n\n# VSCode Open Tabs\nsrc/app.py,README.md\n\n"
    "# Current Time\nCurrent time in ISO 8601 UTC format: 2026-05-16T19:57:40.260Z\nUser time zone: UTC-6:00\n\n"
    "# Current Workspace Directory (/home/ana/habits) Files\nREADME.md\nsrc/\nsrc/app.py\nsrc/models.py\n"
    "docs/PLAN.md\nscripts/seed.py\n\nREMINDERS\n- You have not created a todo list yet.\n</environment_details>"
)


def test_a_harness_context_block_is_no_ones_words_and_lists_no_files():
    # Cline, Roo Code and Kilo Code wrap the task in <task> and append <environment_details> (open
    # tabs, the time, the workspace's listing) to the user's turn and to tool output; Claude Code
    # appends <system-reminder> blocks. Only the folder the block states is read.
    cline = [
        {"role": "user", "content": f"<task>\nAdd a streak counter to the habit API\n</task>\n{_CLINE_ENV}"},
        *_exchange(
            (
                "read_file",
                {"args": {"file": [{"path": "src/app.py"}, {"path": "src/models.py"}]}},
                f"1 | x\n{_CLINE_ENV}",
            ),
            ("execute_command", {"command": "pytest -q"}, "Command executed.\nOutput:\n3 passed in 0.2s"),
        ),
    ]
    reminder = "<system-reminder>\nThe TodoWrite tool hasn't been used recently. Never mention this reminder.\n</system-reminder>"
    claude = [
        {"role": "user", "content": f"Only touch lib/streaks.ex, keep the API as is.\n{reminder}"},
        *_exchange(("Read", {"file_path": "/home/ana/habits/lib/streaks.ex"}, f"1\tdefmodule Streaks do\n{reminder}")),
    ]
    for messages, goal in ((cline, "Add a streak counter to the habit API"), (claude, "Only touch lib/streaks.ex")):
        summary = MLXSummarizer(score=None, count_tokens=count, context_window=8192).update(None, messages).text
        s = parse(summary)
        assert s.goal.startswith(goal) or s.ledger.constraints == ["Only touch lib/streaks.ex, keep the API as is."]
        assert "<task>" not in summary and "environment_details" not in summary and "system-reminder" not in summary
        assert "todo list" not in summary.lower() and "TodoWrite" not in summary and "UTC-6" not in summary
        assert not {"docs/PLAN.md", "scripts/seed.py", "README.md"} & set(s.ledger.files)
    assert s.ledger.root == "/home/ana/habits" and s.ledger.files == {"lib/streaks.ex": "read"}
    cline_files = parse(MLXSummarizer(score=None, count_tokens=count, context_window=8192).update(None, cline).text)
    assert cline_files.ledger.root == "/home/ana/habits"
    assert cline_files.ledger.files == {"src/app.py": "read", "src/models.py": "read"}


def test_codexs_notice_of_an_interrupted_turn_is_not_the_users_words():
    aborted = (
        "<turn_aborted>\nThe user interrupted the previous turn on purpose. Any running unified exec processes may "
        "still be running in the background.\n</turn_aborted>"
    )
    messages = [
        {"role": "user", "content": "Write a booth guide for the arcade game."},
        {"role": "assistant", "content": "I wrote BOOTH_GUIDE.md with the setup steps."},
        {"role": "user", "content": aborted},
        {"role": "user", "content": f"{aborted}\n\nkeep it short: the arcade screen goes to /play"},
    ]
    summary = MLXSummarizer(score=None, count_tokens=count, context_window=8192).update(None, messages).text
    assert "interrupted the previous turn" not in summary and "turn_aborted" not in summary
    assert "keep it short: the arcade screen goes to /play" in summary


def test_a_checklist_tool_and_a_reply_inside_a_tool_output_are_read_as_the_plan_and_the_users_words():
    # Roo Code's update_todo_list takes a checklist as text, Cline's tools a `task_progress`; the
    # user's reply to a report comes back inside attempt_completion's output (<feedback>), an
    # answer to ask_followup_question inside <answer>
    roo = {"todos": "[x] Write the README section\n[-] Write the summary section\n[ ] Check both agree"}
    cline = {"command": "npm test", "task_progress": "- [x] Write the README section\n- [-] Write the summary section\n- [ ] Check both agree"}  # fmt: skip
    # Codex's update_plan takes steps with their status, and its export writes them as a checklist
    steps = ("Write the README section", "Write the summary section", "Check both agree")
    codex = {"plan": [{"step": t, "status": st} for t, st in zip(steps, ("completed", "in_progress", "pending"))]}
    exported = {"plan": "**Agent task list:**\n- [X] Write the README section\n- [⚡] Write the summary section\n- [ ] Check both agree"}  # fmt: skip
    shapes = [("update_todo_list", roo, "Todo list updated"), ("execute_command", cline, "ok")]
    shapes += [("update_plan", codex, "Plan updated"), ("update_plan", exported, "Plan updated")]
    for tool, args, result in shapes:
        messages = [
            {"role": "user", "content": "<task>\nDocument the alignment in both files\n</task>"},
            *_exchange(
                (tool, args, result),
                ("ask_followup_question", {"question": "Which tone?"}, "<answer>\nFormal, no emoji\n</answer>"),
                ("attempt_completion", {"result": "Both sections are written."},
                 "The user has provided feedback on the results.\n<feedback>\nAlso mention the Gemini provider\n</feedback>"),
            ),
        ]  # fmt: skip
        s = parse(MLXSummarizer(score=None, count_tokens=count, context_window=8192).update(None, messages).text)
        assert s.remaining == ["Check both agree"]
        assert any("Write the summary section" in x for x in s.state)
        assert "Formal, no emoji" in s.ledger.asks and "Also mention the Gemini provider" in s.ledger.asks
        assert not any("<" in x for x in s.ledger.asks)


def test_a_long_request_is_shown_once_whole_not_cut_twice():
    # the Goal keeps 300 characters of a request, User Messages 600: a long first request had
    # been shown twice, cut at two places (Claude Code's numbered subagent prompt, Codex's request)
    claude = (
        "I need to understand: 1. How Tmux.list_panes/0 works and what happens if tmux is not running "
        "(will it crash or return {:error, _}?) 2. How SessionRegistry.get_pane_id/1 works (ETS or "
        "GenServer?) 3. Check if there's a conn_case helper for LiveView tests. 4. Which of these the "
        "dashboard calls on mount, and how often. 5. Whether any of them log at error level."
    )
    codex = (
        "Let's update the patterns, remove any pattern that doesn't make sense anymore, go deeper in the "
        "content, and modernize the code with new frameworks like Mastra and Crew. Don't touch the book "
        "chapters. Some of the patterns I want to add are Skills, A2A, loops, goals and self-improving "
        "agents; add the ones you consider still missing, each with a runnable example and a short test."
    )
    for request in (claude, codex):
        messages = [{"role": "user", "content": request}, *_exchange(("terminal", {"command": "ls"}, "a.md"))]
        text = MLXSummarizer(score=None, count_tokens=count, context_window=8192).update(None, messages).text
        assert len(request) > 300 and text.count(request[:120]) == 1 and parse(text).goal == request
        assert "## User Messages" not in text and "Don't touch the book chapters." not in text.split("## Goal")[0]
