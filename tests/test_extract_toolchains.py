"""Error lines from every common toolchain reach the ledger, bounded; no fact comes from cut text.

Each sample is what the tool prints (trimmed to the interesting part, otherwise verbatim in
shape), and must yield its key error line; ordinary prose about errors must yield none.
"""

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_mlx.summarizer.absorb import absorb
from hermes_mlx.summarizer.extract import (
    error_lines,
    error_report,
    find_ids,
    find_paths,
    find_urls,
    uncut,
)
from hermes_mlx.summarizer.ledger import Ledger
from hermes_mlx.summarizer.text import ToolCall, Turn, normalize, trim_middle

HERMES_CUT = "\n...[truncated]...\n"

SAMPLES = {
    "tsc": (
        "$ npx tsc --noEmit\n"
        "src/render.ts(41,7): error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'.\n"
        "src/render.ts(58,3): error TS2322: Type 'undefined' is not assignable to type 'Node'.\n\n"
        "Found 2 errors in the same file, starting at: src/render.ts:41\n",
        [
            "src/render.ts(41,7): error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'."
        ],
    ),
    "msvc": (
        "Microsoft (R) C/C++ Optimizing Compiler Version 19.38.33133 for x64\n"
        "main.cpp\n"
        "C:\\src\\app\\main.cpp(12,5): error C2065: 'undeclared': undeclared identifier\n"
        "Build FAILED.\n",
        ["C:\\src\\app\\main.cpp(12,5): error C2065: 'undeclared': undeclared identifier"],
    ),
    "rustc": (
        "   Compiling demo v0.1.0 (/work/demo)\n"
        "error[E0308]: mismatched types\n"
        " --> src/main.rs:4:5\n"
        "  |\n"
        "3 | fn two() -> i32 {\n"
        "  |             --- expected `i32` because of return type\n"
        '4 |     "2"\n'
        "  |     ^^^ expected `i32`, found `&str`\n\n"
        "For more information about this error, try `rustc --explain E0308`.\n"
        'error: could not compile `demo` (bin "demo") due to 1 previous error\n',
        ["error[E0308]: mismatched types [at src/main.rs:4:5]"],
    ),
    "javac": (
        "Foo.java:12: error: cannot find symbol\n"
        "        Bar b = new Bar();\n"
        "        ^\n"
        "  symbol:   class Bar\n"
        "  location: class Foo\n"
        "1 error\n",
        ["Foo.java:12: error: cannot find symbol"],
    ),
    "maven": (
        "[INFO] BUILD FAILURE\n"
        "[INFO] ------------------------------------------------------------------------\n"
        "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.11.0:compile (default-compile) on project app: Compilation failure\n"
        "[ERROR] /work/app/src/main/java/com/acme/App.java:[14,9] cannot find symbol\n"
        "[ERROR] -> [Help 1]\n"
        "[ERROR] \n"
        "[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.\n",
        ["[ERROR] /work/app/src/main/java/com/acme/App.java:[14,9] cannot find symbol"],
    ),
    "gradle": (
        "> Task :app:compileJava FAILED\n\n"
        "FAILURE: Build failed with an exception.\n\n"
        "* What went wrong:\n"
        "Execution failed for task ':app:compileJava'.\n"
        "> Compilation failed; see the compiler error output for details.\n\n"
        "* Try:\n> Run with --stacktrace option to get the stack trace.\n\n"
        "BUILD FAILED in 3s\n",
        ["* What went wrong: Execution failed for task ':app:compileJava'. > Compilation failed; see the compiler"],
    ),
    # Kotlin's compiler, through Gradle: K2's `e: file:///…:l:c message` (Claude Code's and Gemini CLI's
    # Android sessions), K1's `e: /…: (l, c): message`; the specific lines, not Gradle's wrapper
    "kotlin": (
        "> Task :app:compileDebugKotlin FAILED\n"
        "e: file:///work/app/src/main/java/a/WeeklyWidgetProvider.kt:207:21 Conflicting declarations: val s: Float, val s: Float\n"
        "e: /work/app/src/main/java/a/Main.kt: (12, 5): Unresolved reference: foo\n"
        "w: file:///work/app/src/main/java/a/Main.kt:3:1 Parameter 'x' is never used\n\n"
        "FAILURE: Build failed with an exception.\n\n* What went wrong:\n"
        "Execution failed for task ':app:compileDebugKotlin'.\n> Compilation error. See log for more details\n\n"
        "BUILD FAILED in 1s\n",
        [
            "e: file:///work/app/src/main/java/a/WeeklyWidgetProvider.kt:207:21 Conflicting declarations",
            "e: /work/app/src/main/java/a/Main.kt: (12, 5): Unresolved reference: foo",
        ],
    ),
    "eslint": (
        "\n/work/web/src/app.js\n"
        "  12:5  error  'x' is defined but never used  no-unused-vars\n"
        "  20:1  warning  Unexpected console statement  no-console\n\n"
        "✖ 2 problems (1 error, 1 warning)\n",
        ["12:5 error 'x' is defined but never used no-unused-vars [at /work/web/src/app.js:12:5]"],
    ),
    "ruff": (
        "src/app/cli.py:3:8: F401 [*] `os` imported but unused\n"
        "src/app/cli.py:41:89: E501 Line too long (104 > 88)\n"
        "Found 2 errors.\n[*] 1 fixable with the `--fix` option.\n",
        ["src/app/cli.py:3:8: F401 [*] `os` imported but unused"],
    ),
    "ruff_full": (
        "F401 [*] `os` imported but unused\n --> src/app/cli.py:3:8\n  |\n3 | import os\n  |        ^^\n",
        ["F401 [*] `os` imported but unused [at src/app/cli.py:3:8]"],
    ),
    "mypy": (
        'src/app/cli.py:3: error: Argument 1 to "run" has incompatible type "str"; expected "int"  [arg-type]\n'
        "Found 1 error in 1 file (checked 12 source files)\n",
        ['src/app/cli.py:3: error: Argument 1 to "run" has incompatible type "str"; expected "int" [arg-type]'],
    ),
    "flake8": (
        "./src/app/cli.py:1:1: F401 'os' imported but unused\n./src/app/cli.py:7:80: E501 line too long (93 > 79 characters)\n",
        ["./src/app/cli.py:1:1: F401 'os' imported but unused"],
    ),
    "go_build": (
        "# example.com/demo\n./main.go:12:2: undefined: foo\n./main.go:15:9: cannot use x (variable of type int) as string value in return statement\n",
        ["./main.go:12:2: undefined: foo"],
    ),
    "go_test": (
        "=== RUN   TestAdd\n--- FAIL: TestAdd (0.00s)\n    add_test.go:12: Add(1, 2) = 4; want 3\nFAIL\nFAIL\texample.com/demo\t0.003s\n",
        ["--- FAIL: TestAdd (0.00s)", "add_test.go:12: Add(1, 2) = 4; want 3"],
    ),
    "go_panic": (
        "panic: runtime error: index out of range [5] with length 3\n\ngoroutine 1 [running]:\nmain.main()\n"
        "\t/work/demo/main.go:12 +0x1d\nexit status 2\n",
        ["panic: runtime error: index out of range [5] with length 3"],
    ),
    "swift": (
        "/Users/dev/App/Sources/App/View.swift:10:5: error: cannot find 'titel' in scope\n        titel = \"x\"\n        ^~~~~\n"
        "** BUILD FAILED **\n",
        ["/Users/dev/App/Sources/App/View.swift:10:5: error: cannot find 'titel' in scope"],
    ),
    "node": (
        "/app/x.js:3\n  fn();\n  ^\n\nTypeError: fn is not a function\n    at main (/app/x.js:3:9)\n"
        "    at Object.<anonymous> (/app/x.js:5:1)\n    at node:internal/main/run_main_module:28:49\n\nNode.js v20.11.0\n",
        ["TypeError: fn is not a function [at main (/app/x.js:3:9)]"],
    ),
    "java_trace": (
        'Exception in thread "main" java.lang.NullPointerException: Cannot invoke "String.length()" because "s" is null\n'
        "\tat com.acme.Text.len(Text.java:10)\n\tat com.acme.Main.main(Main.java:4)\n",
        [
            'Exception in thread "main" java.lang.NullPointerException: Cannot invoke "String.length()" because "s" is null [at com.acme.Text.len(Text.java:10)]'
        ],
    ),
    "python": (
        "Traceback (most recent call last):\n"
        '  File "/work/app/cli.py", line 88, in <module>\n    main()\n'
        '  File "/work/app/cart.py", line 41, in total\n    return sum(p["sku"] for p in items)\n'
        "           ~^^^^^^^\nKeyError: 'sku'\n",
        ["KeyError: 'sku' [at /work/app/cart.py:41, in total]"],
    ),
    # the line that ends a traceback names the exception whatever its name ends in
    "python_django": (
        "Traceback (most recent call last):\n"
        '  File "/testbed/manage.py", line 22, in <module>\n    main()\n'
        '  File "/testbed/django/conf/__init__.py", line 197, in __init__\n    raise ImproperlyConfigured(\n'
        "django.core.exceptions.ImproperlyConfigured: PASSWORD_RESET_TIMEOUT_DAYS/PASSWORD_RESET_TIMEOUT are "
        "mutually exclusive.\n",
        [
            "django.core.exceptions.ImproperlyConfigured: PASSWORD_RESET_TIMEOUT_DAYS/PASSWORD_RESET_TIMEOUT are "
            "mutually exclusive. [at /testbed/django/conf/__init__.py:197, in __init__]"
        ],
    ),
    "python_interrupted": (
        'Epoch 3/10\nTraceback (most recent call last):\n  File "train.py", line 10, in <module>\n'
        "    time.sleep(100)\nKeyboardInterrupt\n",
        ["KeyboardInterrupt [at train.py:10, in <module>]"],
    ),
    "pytest": (
        "============ FAILURES ============\n___ test_y ___\n\n    def test_y():\n>       assert total([]) == 1\n"
        "E       assert 0 == 1\n\ntests/x.py:4: AssertionError\n"
        "=========== short test summary info ===========\n"
        "FAILED tests/x.py::test_y - AssertionError: assert 0 == 1\n"
        "1 failed, 3 passed in 0.12s\n",
        ["FAILED tests/x.py::test_y - AssertionError: assert 0 == 1"],
    ),
    "jest": (
        "FAIL src/x.test.ts\n  Cart\n    ✕ adds items (5 ms)\n\n  ● Cart › adds items\n\n"
        "    expect(received).toBe(expected) // Object.is equality\n\n    Expected: 2\n    Received: 1\n\n"
        "      at Object.<anonymous> (src/x.test.ts:5:15)\n\nTests:       1 failed, 3 passed, 4 total\n",
        ["FAIL src/x.test.ts", "● Cart › adds items"],
    ),
    "cargo_test": (
        "running 2 tests\ntest tests::adds ... ok\ntest tests::subtracts ... FAILED\n\nfailures:\n\n"
        "---- tests::subtracts stdout ----\nthread 'tests::subtracts' panicked at src/lib.rs:12:9:\n"
        "assertion `left == right` failed\n  left: 1\n right: 2\n\n"
        "test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n",
        [
            "test tests::subtracts ... FAILED",
            "thread 'tests::subtracts' panicked at src/lib.rs:12:9: assertion `left == right` failed",
        ],
    ),
    "curl": (
        "curl: (7) Failed to connect to localhost port 8080 after 0 ms: Couldn't connect to server\n",
        ["curl: (7) Failed to connect to localhost port 8080 after 0 ms: Couldn't connect to server"],
    ),
    "http_client": (
        'Traceback (most recent call last):\n  File "/work/app/sync.py", line 19, in fetch\n    r.raise_for_status()\n'
        "requests.exceptions.HTTPError: 404 Client Error: Not Found for url: https://api.example.dev/v1/items\n",
        ["requests.exceptions.HTTPError: 404 Client Error: Not Found for url: https://api.example.dev/v1/items"],
    ),
    "http_status": (
        "GET /v1/items -> status 503 (Service Unavailable), retrying in 2s\n",
        ["GET /v1/items -> status 503 (Service Unavailable), retrying in 2s"],
    ),
    "shell": ("bash: foo: command not found\n", ["bash: foo: command not found"]),
    "npm10": (
        "npm error code ERESOLVE\nnpm error ERESOLVE unable to resolve dependency tree\nnpm error\n"
        "npm error While resolving: app@0.1.0\nnpm error Found: react@18.3.1\nnpm error node_modules/react\n",
        ["npm error ERESOLVE unable to resolve dependency tree"],
    ),
    "node_esm": (
        "(node:10979) [DEP0180] DeprecationWarning: fs.Stats constructor is deprecated.\n"
        "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'axios' imported from /app/src/planner.ts\n"
        "    at packageResolve (node:internal/modules/esm/resolve:768:81)\n",
        ["Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'axios'"],
    ),
    "make": ("cc -O2 -c x.c\nmake: *** [Makefile:12: build] Error 1\n", ["make: *** [Makefile:12: build] Error 1"]),
}

PROSE = [
    "no errors found",
    "Found 0 errors in 3 files",
    "0 failed, 12 passed",
    "error handling is described in docs/errors.md",
    "Success: no issues found in 12 source files",
    "test result: ok. 3 passed; 0 failed; 0 ignored",
    "All checks passed!",
    "Tests:       4 passed, 4 total",
    "We should raise a ValueError when the SKU is missing.",
    "✖ 0 problems (0 errors, 0 warnings)",
    "The retry logic handles errors from the API gracefully.",
    "H200 141GB HBM3e detected, driver 550.54",
    "F401 is the rule for unused imports; see docs/rules.md",
]


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_toolchain_yields_its_key_error_line(name):
    out, expected = SAMPLES[name]
    lines = error_lines(out, limit=10)
    for want in expected:
        assert any(want in line for line in lines), (want, lines)


def test_npm_prints_one_error_as_one_block_in_either_spelling():
    # npm 10 prefixes each line of one error with `npm error`, older npm with `npm ERR!`
    new = "npm error code ERESOLVE\nnpm error ERESOLVE unable to resolve dependency tree\nnpm error Found: react@18\n"
    old = "npm ERR! code ELIFECYCLE\nnpm ERR! errno 1\nnpm ERR! app@1.0.0 test: `jest`\nnpm ERR! Exit status 1\n"
    assert error_lines(new) == ["npm error ERESOLVE unable to resolve dependency tree"]
    assert error_lines(old) == ["npm ERR! app@1.0.0 test: `jest`"]


@pytest.mark.parametrize("text", PROSE)
def test_prose_about_errors_yields_no_error(text):
    assert error_lines(text) == []


def test_location_is_carried_with_the_error_into_the_ledger():
    msgs = [
        {"role": "assistant", "content": "", "tool_calls": [_call("a", "terminal", command="cargo build")]},
        {"role": "tool", "tool_call_id": "a", "content": json.dumps({"output": SAMPLES["rustc"][0], "exit_code": 101})},
    ]
    led = Ledger()
    absorb(led, normalize(msgs))
    assert "error[E0308]: mismatched types [at src/main.rs:4:5]" in [e.line for e in led.errors]
    assert led.errors[0].line.startswith("error[E0308]")  # code and location rank first


def test_hundred_errors_keep_the_specific_few_and_count_the_rest():
    out = "\n".join(
        [f"error: build step {i} failed" for i in range(60)]
        + [f"src/m{i % 20}.ts({i},3): error TS2322: Type 'x' is not assignable" for i in range(40)]
        + ["src/m0.ts(0,3): error TS2322: Type 'x' is not assignable"] * 5  # duplicates
    )
    lines, omitted = error_report(out)
    assert len(lines) == 6 and omitted == 94
    assert all("TS2322" in line for line in lines)
    msgs = [
        {"role": "assistant", "content": "", "tool_calls": [_call("a", "terminal", command="npm run build")]},
        {"role": "tool", "tool_call_id": "a", "content": out + "\nexit code: 2"},
    ]
    led = Ledger()
    absorb(led, normalize(msgs))
    assert [e.line for e in led.errors][-1] == "… and 94 more error lines"
    assert len(led.errors) == 7
    # a passing run of the same command resolves them; the count is not kept as an error
    msgs += [
        {"role": "assistant", "content": "", "tool_calls": [_call("b", "terminal", command="npm run build")]},
        {"role": "tool", "tool_call_id": "b", "content": "done\nexit code: 0"},
    ]
    led = Ledger()
    absorb(led, normalize(msgs))
    assert not led.errors and len(led.resolved) == 6


HUGE_LINES = {
    "slashes": "a/" * 100_000 + "#",
    "late_error": "x" * 199_990 + " error: boom",
    "dotted": "error: " + "a.b" * 66_000 + ".py:",
    "brackets": "[" * 200_000,
    "dots": "." * 200_000,
    "ellipses": "…" * 200_000,
    "locations": "src/a.py:1:2: " * 14_000,
    "markers": "x...[truncated]..." * 11_000,
}


@pytest.mark.timeout(20)
@pytest.mark.parametrize("name", sorted(HUGE_LINES))
def test_huge_single_lines_do_not_stall_the_extractors(name):
    line = HUGE_LINES[name]
    turns = [  # built directly: redaction's own cost is not what this measures
        Turn("user", line),
        Turn("assistant", line, [ToolCall("a", "terminal", {"command": "make"}, "make")]),
        Turn("tool", line + "\nexit code: 2", tool_call_id="a"),
    ]
    absorb(Ledger(), turns)
    assert all(len(x) <= 300 for x in find_paths(line) + find_ids(line))
    assert all(len(x) <= 420 for x in error_lines(line))
    find_urls(line)


@pytest.mark.parametrize("name", ["terminal", "ask_question", "todo_write"])
def test_arguments_and_results_nested_past_what_python_parses_are_text_not_a_failed_pass(name):
    # a hostile (or broken) client's tool call: its arguments string and its JSON result nest deeper
    # than json.loads can go; the pass reads them as plain text and succeeds
    from hermes_mlx.summarizer.summarizer import MLXSummarizer

    deep = "[" * 5000 + "]" * 5000
    msgs = [
        {"role": "user", "content": "Run the build and never touch the lockfile."},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": name, "arguments": deep}}],
        },  # fmt: skip
        {"role": "tool", "tool_call_id": "c", "content": '{"a":' * 3000 + "1" + "}" * 3000},
    ]
    result = MLXSummarizer(count_tokens=len).update(None, msgs, budget_tokens=2000)
    assert result.ok, result.error
    assert "never touch the lockfile" in result.text


# ---------------------------------------------------------------- cut text


def test_hermes_cut_yields_no_fragment_path_or_command():
    head = "Ran the migrations, then:\n$ git commit -am 'add migrations' # 8 files changed, 48 insertions(+),"
    tail = "ion_2.py\n and db/migrations/migration_3.py is next."
    text = head + HERMES_CUT + tail
    assert "ion_2.py" not in find_paths(text)
    assert "db/migrations/migration_3.py" in find_paths(text)
    led = Ledger()
    absorb(led, normalize([{"role": "assistant", "content": text}]))
    assert "ion_2.py" not in led.files
    assert not [c for c in led.commands if "insertions(+)," in c.cmd]


def test_fact_whole_elsewhere_is_kept():
    text = "edited db/migrations/migration_2.py" + HERMES_CUT + "ion_2.py and db/migrations/migration_2.py again"
    assert find_paths(text) == ["db/migrations/migration_2.py"]


def test_each_kind_of_marker_cuts():
    markers = [
        HERMES_CUT,
        " ...[truncated]... ",
        "...[TRUNCATED]...",
        "[truncated]",
        "(output truncated)",
        "\n[... 1,234 characters, 12 lines cut ...]\n",
        "\n[... 99 characters omitted ...]\n",
        "[... 500 chars ...]",
        "…",
        "\n…\n",
        # the str_replace_editor of SWE-agent and OpenHands clipping a long view
        "<response clipped><NOTE>To save on context only part of this file has been shown to you.</NOTE>",
    ]
    for marker in markers:
        text = "see src/app/migrat" + marker + "ion_2.py then src/ok.py"
        assert find_paths(text) == ["src/ok.py"], marker
    # our own trimming, at whatever point it falls
    long = " ".join(f"src/pkg{i}/module_{i}.py" for i in range(400))
    for head in range(50, 400, 37):
        trimmed = trim_middle(long, head, 211)
        assert set(find_paths(trimmed)) <= set(find_paths(long))


def test_line_count_markers_keep_whole_lines():
    out = "src/a.py:3:1: F401 `os` imported but unused\n... 40 more lines\nsrc/b.py:9:1: F811 redefinition of `x`\n"
    lines = error_lines(out)
    assert "src/a.py:3:1: F401 `os` imported but unused" in lines and "src/b.py:9:1: F811 redefinition of `x`" in lines


def test_cut_error_line_and_cut_tool_command_are_dropped():
    out = (
        "ok\nsrc/render.ts(41,7): error TS2345: Argument of ty"
        + HERMES_CUT
        + "pe 'number'.\nsrc/x.ts(1,1): error TS1005: ';' expected.\n"
    )
    assert error_lines(out) == ["src/x.ts(1,1): error TS1005: ';' expected."]
    msgs = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [_call("a", "terminal", command="cd app && npm ci\nnpm run bui" + HERMES_CUT + "ld")],
        },
        {"role": "tool", "tool_call_id": "a", "content": out + "exit code: 2"},
    ]
    led = Ledger()
    absorb(led, normalize(msgs))
    assert [c.cmd for c in led.commands] == ["cd app && npm ci"]
    assert [e.line for e in led.errors] == ["src/x.ts(1,1): error TS1005: ';' expected."]


_SEG = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_0123456789", min_size=1, max_size=8)
_REAL_PATH = st.builds(
    lambda segs, name, ext, lead: lead + "/".join(segs + [name + "." + ext]),
    st.lists(_SEG, min_size=0, max_size=4),
    _SEG,
    st.sampled_from(["py", "ts", "rs", "go", "md", "json", "yaml"]),
    st.sampled_from(["", "./", "/", "~/"]),
)
_FILLER = st.sampled_from([" ", "\n", " and ", ", ", " (see ", ") ", "\n$ cat ", ": ", " edited "])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_FILLER, _REAL_PATH), min_size=1, max_size=8), st.data())
def test_cutting_anywhere_never_yields_a_partial_path(parts, data):
    original = "".join(f + p for f, p in parts) + "."
    whole = set(find_paths(original))
    i = data.draw(st.integers(0, len(original)))
    j = data.draw(st.integers(i, len(original)))
    cut = original[:i] + HERMES_CUT + original[j:]
    assert set(find_paths(cut)) <= whole, cut


def test_uncut_leaves_uncut_text_alone():
    text = "src/a.py ... waiting... done; see https://x.dev/a and ../b/c.py"
    assert uncut(text) == text and uncut(text, "line") == text


def _call(cid, name, **args):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def test_no_sample_error_comes_from_elsewhere():
    # every error line a sample yields is made of its own text (plus the location carried)
    for name, (out, _) in SAMPLES.items():
        flat = " ".join(out.split())
        for line in error_lines(out, limit=20):
            core = re.sub(r" \[at .*\]$", "", line)
            assert core.split(" ")[0] in flat, (name, line)


# a line that says only that a run failed, beside the lines that say why, from four toolchains
GENERIC_BESIDE_SPECIFIC = {
    "gradle": "* What went wrong:\nExecution failed for task ':app:compileKotlin'.\n> Compilation error.\n\nBUILD FAILED in 3s\n",
    "cargo": "error[E0425]: cannot find value `x` in this scope\n --> src/lib.rs:2:5\n\n"
    "error: could not compile `demo` (lib) due to 1 previous error\n",
    "make": "main.c:4:5: error: 'y' undeclared (first use in this function)\nmake: *** [Makefile:3: main.o] Error 1\n",
    "npm": "TypeError: fn is not a function\n    at main (/app/x.js:3:9)\nnpm ERR! code ELIFECYCLE\nnpm ERR! errno 1\n",
    "yarn": "src/a.ts(3,1): error TS2304: Cannot find name 'q'.\nerror Command failed with exit code 2.\n",
}


@pytest.mark.parametrize("name", sorted(GENERIC_BESIDE_SPECIFIC))
def test_a_line_saying_only_that_a_run_failed_goes_beside_one_that_says_why(name):
    lines = error_lines(GENERIC_BESIDE_SPECIFIC[name], limit=10)
    assert lines, name
    generic = ("BUILD FAILED", "could not compile", "*** [", "ELIFECYCLE", "errno", "Command failed with exit code")
    assert not any(g in line for line in lines for g in generic), lines


@pytest.mark.parametrize(
    "alone", ["BUILD FAILED in 2s\n", "make: *** [Makefile:7: all] Error 2\n", "** BUILD FAILED **\n"]
)
def test_a_line_saying_only_that_a_run_failed_stays_when_nothing_says_more(alone):
    assert error_lines(alone, limit=10) == [alone.strip()]


def test_gradle_error_carries_its_deepest_cause():
    # Android's and plain Gradle's shapes: the message says where, the last `>` line why
    sdk = (
        "FAILURE: Build failed with an exception.\n\n* What went wrong:\n"
        "Could not determine the dependencies of task ':app:compileDebugJavaWithJavac'.\n"
        "> SDK location not found. Define a valid SDK location with an ANDROID_HOME environment variable.\n\n"
        "* Try:\n> Run with --stacktrace option to get the stack trace.\n\nBUILD FAILED in 5s\n"
    )
    nested = (
        "* What went wrong:\nA problem occurred configuring root project 'app'.\n"
        "> Could not resolve all files for configuration ':classpath'.\n"
        "   > Could not find com.android.tools.build:gradle:9.9.9.\n\n* Try:\n"
    )
    (line,) = error_lines(sdk, limit=10)
    assert line.startswith("* What went wrong: Could not determine the dependencies")
    assert "> SDK location not found." in line
    (line,) = error_lines(nested, limit=10)
    assert "> Could not find com.android.tools.build:gradle:9.9.9." in line


# a log line of a level below error that mentions one is the program's account, not a failure:
# a passing test suite's expected `[WARN] … threw an error` (Cursor's zero-auth session, a node
# logger), Python's logging, log4j; an error label before the level, and verdicts printed at a
# lower level (Maven's `[INFO] BUILD FAILURE`, Go's `WARNING: DATA RACE`), still count
@pytest.mark.parametrize(
    "line",
    [
        "2026-08-06T21:28:01.094Z [easy-auth-jwt] [WARN] refreshHandler: revokeRefreshToken hook threw an error: boom",
        "WARNING:root:retrying after error: timeout",
        "2024-01-01 12:00:00 WARN  [main] c.a.Foo - Connection error: retry in 2s",
        'level=info msg="recovered from error: EOF"',
    ],
)
def test_a_log_line_below_error_level_is_no_error(line):
    assert error_lines(f"starting\n{line}\ndone\n") == []


@pytest.mark.parametrize(
    "line",
    [
        "[ERROR] Failed to execute goal compile",
        "[INFO] BUILD FAILURE",
        "WARNING: DATA RACE",
        "FAILED t.py::x - WARNING: y",
    ],
)
def test_an_error_label_or_verdict_at_a_lower_level_still_counts(line):
    assert error_lines(f"{line}\n") == [line]


def test_a_member_of_a_well_known_object_is_code_not_a_file():
    # OpenCode's "Now update the console.log list in the startup:", a JSX `key={item.key}`, Hermes's
    # `self.env`: an object's member whose name ends like an extension was listed under Files
    text = "Now update the console.log list; read process.env and item.key, res.json(), self.env, import.meta.env"
    assert find_paths(text) == []
    assert find_paths("tail -f server.log; chmod 600 private.key; cat package.json") == [
        "server.log",
        "private.key",
        "package.json",
    ]
    # a file named like a module is a file (`logger.py`, `request.py`, a fixture `response.json`)
    assert find_paths("I edited `logger.py`, `request.py`, `event.rs` and `response.json`.") == [
        "logger.py",
        "request.py",
        "event.rs",
        "response.json",
    ]


def test_a_windows_shell_saying_a_program_is_missing_is_an_error():
    # PowerShell (OpenCode on Windows: `gh pr create`) and cmd.exe say `command not found` their way
    powershell = (
        "gh : The term 'gh' is not recognized as the name of a cmdlet, function, script file, or operable program.\n"
        "At line:1 char:1\n+ gh pr create\n+ ~~\n"
        "    + CategoryInfo          : ObjectNotFound: (gh:String) [], CommandNotFoundException"
    )
    cmd = "'gh' is not recognized as an internal or external command,\noperable program or batch file."
    assert error_report(powershell)[0][0].startswith("gh : The term 'gh' is not recognized as the name of a cmdlet")
    assert error_report(cmd)[0] == ["'gh' is not recognized as an internal or external command,"]


def test_an_error_line_ending_in_a_colon_carries_the_line_that_says_what():
    # Elixir's `** (BadMapError) expected a map, got:` then the value; Claude Code's tool error
    # `InputValidationError: Grep failed due to the following issue:` then the issue
    elixir = (
        "** (BadMapError) expected a map, got:\n    [exporter: {:otel_exporter_stdout, []}]\n    (stdlib) maps.erl:1"
    )
    assert error_report(elixir)[0] == ["** (BadMapError) expected a map, got: [exporter: {:otel_exporter_stdout, []}]"]
    grep = "InputValidationError: Grep failed due to the following issue:\nAn unexpected parameter `file_path` was provided"
    assert error_report(grep)[0] == [
        "InputValidationError: Grep failed due to the following issue: An unexpected parameter `file_path` was provided"
    ]
    # not a line of code that ends in a colon (a numbered grep hit), nor a page of HTML after one
    code = "1139 except (TypeError, ValueError) as error:\n1140 raise self.make_error("
    assert all("1140" not in e for e in error_report(code)[0])
    html = "** (ArgumentError) expected selector to return one element, but got none within:\n" + "<div>" * 100
    assert error_report(html)[0] == ["** (ArgumentError) expected selector to return one element, but got none within:"]


def test_an_error_at_a_line_of_the_project_goes_before_one_in_a_library():
    # unittest's loader wraps the import error it met (OpenDevin's Django run); Node's runtime
    # frames and a package's are no place in the project either
    unittest_run = (
        "ERROR: forms_tests.tests.test_forms (unittest.loader._FailedTest)\n"
        "Traceback (most recent call last):\n"
        '  File "/env/lib/python3.9/unittest/loader.py", line 34, in testFailure\n    raise self._exception\n'
        "ImportError: Failed to import test module: forms_tests.tests.test_forms\n"
        "Traceback (most recent call last):\n"
        '  File "/env/lib/python3.9/unittest/loader.py", line 436, in _find_test_path\n    __import__(name)\n'
        '  File "/workspace/django/tests/forms_tests/tests/test_forms.py", line 26, in <module>\n'
        "    from tests.forms_tests.tests import jinja2_tests\n"
        "ModuleNotFoundError: No module named 'tests'\n"
    )
    assert error_lines(unittest_run)[0].startswith("ModuleNotFoundError: No module named 'tests' [at /workspace/")
    node_run = (
        "Error: read ECONNRESET\n    at TLSWrap.onStreamRead (node:internal/stream_base_commons:217:20)\n"
        "TypeError: Cannot read properties of undefined (reading 'id')\n"
        "    at handler (/app/src/routes/users.ts:42:17)\n"
    )
    assert error_lines(node_run)[0].startswith("TypeError: Cannot read properties of undefined")


def test_a_crash_inside_a_library_still_outranks_log_lines_with_no_place():
    retries = "".join(f"ERROR: retrying connection to db (attempt {i})\n" for i in range(6))
    crash = (
        'Traceback (most recent call last):\n  File "/app/main.py", line 3, in <module>\n    f()\n'
        '  File "/usr/lib64/python3.12/site-packages/simplejson/decoder.py", line 400, in decode\n'
        "    raise JSONDecodeError\nsimplejson.errors.JSONDecodeError: Expecting value: line 1 column 1\n"
    )
    assert error_lines(retries + crash)[0].startswith("simplejson.errors.JSONDecodeError")
    # a project's own `internal/` folder is the project's (Go's and many a repo's), not Node's runtime
    project = "  --> internal/api/handler.py:3:1\nerror[E0308]: mismatched types\n"
    assert error_lines(project) == ["error[E0308]: mismatched types"]
