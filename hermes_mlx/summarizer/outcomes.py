"""What a command came to, read off its output: the line a person would quote as its result.

Real agents rarely see exit codes (Claude Code's Bash tool prints none unless a command fails;
pipes through `tail` hide them), so `exit ?` told the next reader nothing. The outcome is
in the output: `14 doctests, 410 tests, 0 failures`, `[main 3bb8701] feat: ...`, `Found 3
errors`, `command not found`. One pattern per tool family, matched on whole lines; the line is
copied verbatim (whitespace folded), never composed, so it can only be as wrong as the output.
"""

from __future__ import annotations

import re

from .result_lines import (
    CHECKED_COUNT,
    COUNTED_VERDICT,
    DIFFSTAT,
    ERRORS_FOUND,
    GIT_COMMIT_LINE,
    GIT_PUSH_LINE,
    INSTALLED_LINE,
    RESULT_LINES,
    VERDICT_LINE,
    VERDICTS,
    WARNINGS_FOUND,
)
from .run_counts import COUNT_LINE, count_blocks
from .shell_words import blind_step, unquoted
from .text import clip
from .vocabulary import PYTEST_ERROR_MARK

MADE = ("commit", "created")  # the families that say something was made, whichever tool reports them
MAX_OUTCOME = 160  # a result line longer than this is clipped (still verbatim up to the cut)


def _fold(line: str) -> str:
    # pytest's `===== 3 passed in 0.1s =====` rules and runs of padding go, `__format__` stays; a double
    # space a tool prints between fields stays (vitest's `Tests  9 failed`, git's `a1..b2  main -> main`), and
    # so do the spaces that align a label's value (Jest's `Tests:       17 failed, 13 passed`, dotnet's
    # `Failed:     0`): a fact quoting the line matched nothing once they were folded
    line = re.sub(r"(?<![:\s])\s{3,}|\s{13,}", " ", re.sub(r"[\t\r\n\f\v]+", " ", line.strip()))
    ruled = re.sub(r"^[=\-*#]{3,}\s*", "", line)
    closing = re.search(r"[=\-*#]{3,}$", ruled)  # then the spaces before it: a `\s*` in the regex was quadratic
    ruled = ruled[: closing.start()].rstrip() if closing else ruled
    return clip(ruled or line, MAX_OUTCOME)


def is_placeholder(text: str) -> bool:
    """A compactor's one-line stand-in for tool output it pruned (compactor/batch.one_line)."""
    return bool(_OURS.match(text or ""))


# what a compactor's placeholder kept of the output it stands for (compactor/batch.one_line)
_KEPT = re.compile(r"; result: (.+?)(?:; error: .*)?\]\s*$")
_KEPT_ERROR = re.compile(r"; error: (.+)\]\s*$")
_KEPT_FIRST = re.compile(r"; first line: (.*?)(?:; result: .*|; error: .*)?\]\s*$")


def placeholder_lines(text: str, keep_first) -> str:
    """The lines a compactor's placeholder kept, one a line, to read as output: its result line,
    the error it kept, and its first line when `keep_first` says that line tells what the call
    did (an editor's `[File: x (12 lines total)]`)."""
    first, result, error = _KEPT_FIRST.search(text), _KEPT.search(text), _KEPT_ERROR.search(text)
    lines = [first.group(1)] if first and keep_first(first.group(1)) else []
    return "\n".join(lines + [m.group(1) for m in (result, error) if m])


def pruned_lines(text: str) -> int | None:
    """How many lines the output a compactor's placeholder stands for held; None for any other text."""
    said = re.search(r", (\d+) lines,", text) if is_placeholder(text) else None
    return int(said.group(1)) if said else None


# a harness saying it stopped the command before its end, among the output's last lines: OpenCode's `User
# aborted the command` and `Error: Tool execution aborted`, Claude Code's `[Request interrupted by user
# for tool use]` and its rejection, a shell tool's timeout; Cursor's `Cancelled` when it is all there is
_STOPPED = re.compile(
    r"^\s*(?:\[?Request interrupted by user\b|(?:the )?user (?:aborted|interrupted|cancell?ed) (?:the|this) "
    r"(?:command|tool|request|operation|process)\b|The user doesn['’]t want to proceed with this tool use\b|"
    r"(?:Error: )?Tool execution aborted\b|\w+ tool terminated (?:the )?command\b)",
    re.I,
)
_STOPPED_ALONE = re.compile(r"^\s*(?:Cancell?ed|Aborted|Interrupted)\.?\s*$", re.I)


# what a build's run installed, printed shortly before its closing verdict (Gradle's `installDebug`:
# "Installed on 1 device.", then its deprecation notes, then BUILD SUCCESSFUL)
_SHIPPED_LINE = re.compile(INSTALLED_LINE, re.I)
SHIPPED_WITHIN = 20  # lines before the verdict


def outcome_line(output: str, status: int | None = None) -> str:
    """`outcome_of`'s line alone."""
    return outcome_of(output, status)[1]


def outcome_of(output: str, status: int | None = None) -> tuple[str, str]:
    """The line of `output` that states the command's result, verbatim; "" when none does.

    The last test, build, git or tracker report wins (a chained `test && commit` ends on the
    commit), and a build that passed says what it installed just before its verdict;
    failing that, for a failed or unknown status, the last line naming a failure, and for a
    failed one, its first line of output (where a tool says what went wrong). A short
    output of one line is its own result, and so is a script's readout of a few `label: value`
    lines (READOUT_LINES), or its first line when notes follow it in a run that succeeded.
    Returns (family, line); ("", "") when none does."""
    text = output or ""
    if _OURS.match(text):  # a compactor's placeholder for output it pruned: only the result it kept
        kept = _KEPT.search(text)
        return ("kept", kept.group(1)) if kept else ("", "")
    if len(text) > 400_000:  # results sit at the ends; a huge output is read there only
        text = text[:200_000] + "\n" + text[-200_000:]
    lines = [ln for ln in text.splitlines() if ln.strip() and len(ln) <= 2000]
    if not lines:
        return "", ""
    stopped = next((ln for ln in lines[-3:] if _STOPPED.match(ln)), "")  # a harness's metadata block may close it
    if stopped or len(lines) == 1 and _STOPPED_ALONE.match(lines[0]):
        return "failure", _fold(stopped or lines[0])  # the harness's last word: the run did not reach its end
    reports = [(family, p) for family, p in RESULT_LINES if family != "failure"]
    last_failed = None  # where the last line naming a failure is: looked for once, when needed
    blocks = count_blocks(lines)
    errors_at = None  # where a checker first counted errors: read only when a count of warnings is met
    for at in range(len(lines) - 1, -1, -1):
        line = lines[at]
        counts = blocks.get(at, "")
        if counts and COUNT_LINE.match(line):  # node --test's `ℹ pass 9` / `ℹ fail 0`, TAP's `# pass 9`
            return "tests", counts
        for family, p in reports:
            if p.match(line):
                if family == "tests" and _CARGO_RESULT.match(line):  # one a test target; the doc-tests' come last
                    line = _cargo_verdict([ln for ln in lines if _CARGO_RESULT.match(ln)])
                if family == "tests" and counts and not re.search(r"\d", line):  # `ALL TESTS PASSED!` under its counts
                    return family, clip(f"{counts}; {_fold(line)}", 2 * MAX_OUTCOME)
                if family == "tests" and VERDICT_LINE.match(
                    line
                ):  # a script checking several cases: each verdict tells
                    verdicts = list(dict.fromkeys(" ".join(ln.split()) for ln in lines if VERDICT_LINE.match(ln)))
                    if 1 < len(verdicts) <= VERDICTS:
                        return family, clip("; ".join(verdicts), 2 * MAX_OUTCOME)
                if WARNINGS_FOUND.match(line):
                    if at and ERRORS_FOUND.match(lines[at - 1]):  # Biome's errors, then its warnings
                        return family, _fold(f"{lines[at - 1].strip()} {line.strip()}")
                    if errors_at is None:
                        errors_at = next((k for k, ln in enumerate(lines) if ERRORS_FOUND.match(ln)), len(lines))
                    if errors_at < at:
                        break  # `tsc; biome lint`: the errors an earlier checker counted are the result, not these
                if family == "build" and says_passed(line):  # Gradle's `installDebug`: what it installed
                    shipped = [ln for ln in lines[max(0, at - SHIPPED_WITHIN) : at] if _SHIPPED_LINE.match(ln)]
                    if shipped:  # the verdict first: read back, the line is still a passing build's
                        return family, clip(f"{_fold(line)}; {_fold(shipped[-1])}", 2 * MAX_OUTCOME)
                if family == "install" and line.lstrip().startswith("+ "):  # uv: each package a line, up to VERDICTS
                    line = _first_few([ln for ln in lines if p.match(ln) and ln.lstrip().startswith("+ ")])
                if (
                    family == "install"
                    and status != 0
                    or says_passed(line)
                    and (status != 0 or not _DIGIT.search(line))
                ):
                    last_failed = _last_failure(lines) if last_failed is None else last_failed
                    if last_failed > at:
                        break  # `pip install -e . && python t.py`, a script's `Planning test OK` then a crash:
                        # what failed after says how the run went; a runner's count at exit 0 stands (pytest's
                        # `8 passed` before asyncio's `RuntimeError: Event loop is closed` at shutdown)
                # where a merge or rebase stopped: each conflict, up to VERDICTS (before a rebase's `error:`)
                conflicts = [ln for ln in lines if ln.startswith("CONFLICT (")] if family == "git" else []
                if conflicts and line.startswith(("CONFLICT (", "error:", "fatal:")):
                    return family, clip(_first_few(conflicts), 2 * MAX_OUTCOME)
                if family == "git" and GIT_PUSH_LINE.match(line):  # `commit && push`: what, then where it went
                    made = next((ln for ln in reversed(lines[:at]) if GIT_COMMIT_LINE.match(ln)), "")
                    if made:
                        return family, clip(f"{_fold(made)}; {_fold(line)}", 2 * MAX_OUTCOME)
                if family == "commit":  # `Removed: <hash> <subject>` then `Now at: <hash> ...`: both tell
                    both = [ln for ln in lines if p.match(ln)][:2]
                    return family, clip("; ".join(" ".join(ln.split()) for ln in both), 2 * MAX_OUTCOME)
                return family, _fold(line)
    checked = next((ln for ln in reversed(lines) if CHECKED_COUNT.match(ln)), "")
    if not checked and status in (0, None):  # a merge stopped on a conflict (exit 1) prints its stat too
        checked = next((ln for ln in lines if DIFFSTAT.match(ln)), "")  # the pull's, not a `git log --stat` after it
    last_failed = _last_failure(lines) if last_failed is None else last_failed
    if checked and (status in (0, None) or last_failed < 0):  # a crash, then `0 issues found`: the crash
        return "git" if DIFFSTAT.match(checked) else "build", _fold(checked)
    if last_failed >= 0:  # also for exit 0: `cmd | head` reports head's status
        return "failure", _fold(PYTEST_ERROR_MARK.sub("", lines[last_failed].strip()))
    if status not in (0, None):  # npm's `> pkg@1.0.0 script` echo of what it runs says nothing yet
        said = [ln for ln in lines if not _EXIT_LINE.match(ln) and not ln.startswith("> ")]
        if said:
            return "failure", _fold(said[0])
    if len(lines) == 1 and len(lines[0]) <= 160 and status is not None and not _EXIT_LINE.match(lines[0]):
        return "output", _fold(lines[0])
    said = [ln for ln in lines if not _EXIT_LINE.match(ln)]
    marked = list(dict.fromkeys(" ".join(ln.split()) for ln in said if _CHECKED.match(ln)))
    if marked and len(marked) <= VERDICTS and status in (0, None):  # `✓ Gateway is running`, `✓ List(DateTime) works`
        return "output", clip("; ".join(marked), 2 * MAX_OUTCOME)
    if 0 < len(said) <= READOUT_LINES and status in (0, None) and all(_READOUT.match(ln) for ln in said):
        return "output", clip("; ".join(" ".join(ln.split()) for ln in said), 2 * MAX_OUTCOME)
    if 0 < len(said) <= READOUT_LINES and status == 0 and _READOUT.match(said[0]):
        return "output", _fold(said[0])  # a status report leads with its readout; notes follow
    return "", ""


# cargo prints a `test result:` line for each test target, the doc-tests' last (`0 passed` for a binary)
_CARGO_RESULT = re.compile(r"^\s*test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed")


def _cargo_verdict(results: list[str]) -> str:
    """Of cargo's `test result:` lines, the one that says most: the first that failed, else the one that
    passed the most tests (the unit tests' `25 passed`, not the doc-tests' `0 passed` after them)."""
    failed = [ln for ln in results if int(_CARGO_RESULT.match(ln).group(2))]
    return failed[0] if failed else max(results, key=lambda ln: int(_CARGO_RESULT.match(ln).group(1)))


def _last_failure(lines: list[str]) -> int:
    """The index of the last line naming a failure (the "failure" family), -1 when none does."""
    failed = RESULT_LINES[-1][1]
    return next((k for k in range(len(lines) - 1, -1, -1) if failed.match(lines[k])), -1)


# a line a tool or script marks done or not (`✓ Sync from main complete`, `✗ DateTime inside Tuple`):
# its verdict, what came of the run, whatever else it printed
_CHECKED = re.compile(r"^\s*[✓✔✅✗✘❌✖]\ufe0f?\s*\w")
# a script's readout: a few `label: value` lines it printed, nothing else (SWE-agent's reproduction
# script's `Test identity: False`, Cursor's `venv torch: 2.8.0+cu128` / `venv cuda available: False`),
# whatever the exit status was not said to be: what it printed is what came of it
READOUT_LINES = 4
# a value of at most three words (`True`, `2.8.0+cu128`, `not loaded`): "Note: it cannot fail here" is prose
_READOUT = re.compile(r"^\s*[\w\[\]().\- ]{1,60}[:=](?!//)[ \t]*\S+(?:[ \t]+\S+){0,2}[ \t]*$")  # not a URL's `https:`


def all_passed(family: str, line: str, cmd: str = "") -> bool:
    """A test or build result line that says the run passed and failed nothing: jest's
    `Tests: 72 passed, 72 total`, cargo's `test result: ok. 5 passed; 0 failed`, dotnet's
    `Passed! - Failed: 0, Passed: 87`, `BUILD SUCCESSFUL`, tsc's `Found 0 errors`. What the run
    logged on the way (a test's expected `[WARN] … threw an error`) is then no failure of it,
    unless `cmd` has a blind step before it (`a; b`: b's pass says nothing of a)."""
    return (
        family in ("tests", "build")
        and bool(_PASS_WORD.search(line))
        and not _FAILED_SOME.search(line)
        and not any(a != b for a, b in _COUNT_OF.findall(line))  # `75/76 PASS`: one did not
        and not blind_step(cmd)
    )


_DIGIT = re.compile(r"\d")
_COUNT_OF = re.compile(r"\b(\d+)\s*(?:/|of)\s*(\d+)\b")


def may_hide(cmd: str) -> bool:
    """A command whose output may not show a step's failure: a blind step (`a; b`) or a pipe into
    another program (`npm test | tail -5`). Where a harness reports no status on a success (Claude
    Code prints `Exit code 1` only on a failure), a run with no error line passed unless it may hide."""
    return blind_step(cmd) or bool(re.search(r"(?<!\|)\|(?!\|)", unquoted(cmd)))  # not `grep 'a|b'`


# a diff summed up (`git diff --stat`, `--shortstat`, `--cached --stat`): what it prints last is git's count
_DIFF_STAT = re.compile(r"\bgit\s+diff\b[^|;&\n]*\s--(?:short)?stat\b")


def counted_by_read(cmd: str, outcome: str) -> bool:
    """A read's result that no file holds: the diffstat sum git counted for `git diff --stat`
    (`1933 files changed, 342383 insertions(+), 3145 deletions(-)`: what a merge into a fork brought,
    held out; five corpus sessions run it before a commit). A read's lines are otherwise file text."""
    return bool(_DIFF_STAT.search(cmd) and DIFFSTAT.match(outcome))


def _first_few(lines: list[str]) -> str:
    """Up to VERDICTS `lines`, each on one line, joined, and how many more there were."""
    said = [" ".join(ln.split()) for ln in lines]
    return "; ".join(said[:VERDICTS]) + (f" (+{len(said) - VERDICTS} more)" if len(said) > VERDICTS else "")


def says_passed(line: str, cmd: str = "") -> bool:
    """`all_passed` for a result line of either family, read off the line itself (a Commands
    entry keeps the line, not its family)."""
    return any(all_passed(family, line, cmd) and p.match(line) for family, p in _RUN_RESULTS)


def says_made(line: str) -> bool:
    """A result line that says something was made: a commit, a PR or a release (MADE), or git's own
    line for a commit or a push that went through (`[main a1b2c3d] subject`, `a1..b2  main -> main`)."""
    family, _ = outcome_of(line)
    return family in MADE or bool(GIT_COMMIT_LINE.match(line) or GIT_PUSH_LINE.match(line.rsplit("; ", 1)[-1]))


def is_run_verdict(line: str) -> bool:
    """A test or build run's result line (`1 failed`, go's `FAIL pkg 0.2s`, `Found 3 errors`): it
    says how the run went, not what went wrong (git's `error: …` is no such line)."""
    return any(p.match(line) for _, p in _RUN_RESULTS)


_RUN_RESULTS = [(family, p) for family, p in RESULT_LINES if family in ("tests", "build")]
_PASS_WORD = re.compile(
    r"\b(?:pass(?:ed|es|ing)?|ok|success(?:ful)?|succeeded|no issues|0 (?:errors?|failures?))\b", re.I
)
# a failure counted or said, not `0 failed` / `Failed: 0`
_FAILED_SOME = re.compile(
    r"\b[1-9]\d*\s+(?:fail(?:ed|ures?|ing|s)?|errors?|problems?)\b"
    r"|(?<!\b0 )\b(?:fail(?:ed|ures?|ing|s)?|errors?|cancell?ed)\b(?!\s*[:=]?\s*0\b)",
    re.I,
)


def is_report(line: str) -> bool:
    """A line in the shape of a result (tests, build, commit, tracker, a verdict), wherever it
    stands: tool output or the agent's own report ("`npm test` passed: 72/72")."""
    if any(p.search(line) for family, p in RESULT_LINES if family != "failure") or _REPORTED.search(line):
        return True
    m = _PROSE_VERDICT.search(line)
    if not m or _UNSURE.search(line[max(0, m.start() - 40) : m.start()]):
        return False
    start = max(line.rfind(x, 0, m.start()) for x in (". ", "; ", "! ", "? ", "。", "；", "！")) + 1
    end = _SENTENCE_END.search(line, m.end())
    sentence = line[start : end.start() if end else len(line)]
    return bool(re.search(r"[\d`]", sentence))  # with what it counted or ran: "with 66 routes", "(`npm run build` ✓)"


# a run's verdict in prose that says what it counted or ran ("The build passed with 66 routes.",
# "Build passes clean (`npm run build` ✓)"), unless it is what the agent means to find out ("to
# confirm all tests pass", "if the build succeeds")
_PROSE_VERDICT = re.compile(
    r"\b(?:build|tests?|test suite|typecheck|type check|lint|linter|compilation|deploy(?:ment)?|CI)\s+"
    r"(?:now\s+|still\s+)?(?:pass(?:es|ed)?|succeed(?:s|ed)|fail(?:s|ed)|is (?:green|red|clean))\b"
    # something made or shipped ("has been successfully installed on ... 'SM-F936U1 - 16'", "deployed successfully to …")
    r"|\bsuccessfully (?:installed|deployed|built|created|pushed|published|merged|uploaded|migrated|released)\b"
    r"|\b(?:installed|deployed|built|pushed|published|merged|uploaded|migrated|released) successfully\b"
    # the common CJK and Russian verdicts ("`flash-attn==2.8.3` 构建失败", "ビルドに成功", "тесты прошли")
    r"|(?:构建|编译|测试|安装|部署|推送|提交)(?:已经?|都)?(?:失败|成功|通过)|(?:ビルド|テスト|インストール|デプロイ)(?:に|が)?(?:成功|失敗)"
    r"|\b(?:сборка|тесты|установка|деплой)\s+(?:прошл[аи]|упал[аи]?|успешн[аы])",
    re.I,
)
_UNSURE = re.compile(
    r"\b(?:if|whether|ensure|confirm|make sure|see|until|should|will|would|expect|verify|check|as)\b|\[ \]"
    r"|如果|是否|确认|检查|应该|看看|もし|確認|если|проверить",
    re.I,
)
_SENTENCE_END = re.compile(r"[.;!?](?:\s|$)|[。；！]")


# a count with pass/fail words, in any order ("72/72 tests pass", "passed: 12/12", "3 of 5 failed"),
# and a verdict after a label ("64KB (65,594 bytes): FAILS")
_REPORTED = re.compile(
    COUNTED_VERDICT + r"|:\s+(?:WORKS|FAILS|OK|PASS(?:ED)?|FAIL(?:ED)?|SUCCESS|BROKEN)\b[!.]?\s*$"
    # a count that moved ("down from 12 crons to **2**", "failures went from 11 to 0", "12 → 2 errors")
    r"|\bfrom \**\d[\d,.]*\**\s+(?:[\w-]+\s+){0,2}to \**\d|\b\d[\d,.]*\s*(?:→|->)\s*\d"
    # a count of tests and that all passed ("**Total: 33 tests**, all passing", "61 total tests (including doc
    # tests) - all passing": Copilot's reports; Claude Code's "87 tests, all green")
    r"|\b\d+\**\s+(?:[\w-]+\s+){0,2}tests?\b[^.\n]{0,60}?\ball\s+(?:pass(?:ing|ed|es)?|green|succeed(?:ed|ing)?)\b"
    r"(?!\s+(?:cases?|tests?|scenarios?|paths?|inputs?|ones?)\b)",
    re.I,
)
_OURS = re.compile(r"^\s*\[(?:tool output pruned|duplicate tool output):")
_EXIT_LINE = re.compile(r"^\s*(?:Exit code|exit status|\[exit(?: code)?)\s*:?\s*-?\d+\]?\s*$", re.I)
