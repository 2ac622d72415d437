"""The shapes of a result line, one pattern per tool family, in priority order (rules as data):
`outcomes.outcome_of` is the engine that reads a command's output by them. Kept apart so the table can
grow alone: a test runner's summary, a build's verdict, git's, a commit made, an install, a PR or
release, a tracker's change, a failure said.
"""

from __future__ import annotations

import re

from .vocabulary import PROGRAM_FAILED

# a check's verdict a script prints, one per case (`✓ Result: Uninferable`, `✓ Pushed commits to ...`):
# a few of them each tell (up to VERDICTS), where a long run's last one stands for it
VERDICT_LINE = re.compile(r"^\s*[✓✔✗✘❌✅]\s*\w[^:\n]{0,40}:\s*\S.*$")  # ✓ Fixed: no crash
VERDICTS = 3

# a checker's count of its errors and of its warnings (tsc, mypy, ruff: `Found 3 errors.`; Biome: `Found 1
# error.` then `Found 2 warnings.`): each a result line of the build family
ERRORS_FOUND = re.compile(r"^\s*Found \d+ errors?\b")
WARNINGS_FOUND = re.compile(r"^\s*Found \d+ warnings?\b")
INSTALLED_LINE = r"^\s*Installed on \d+ devices?\.?\s*$"
# a checker's count of what it found (sqlfluff's `10 fixable linting violations found`, RuboCop's `12 files
# inspected, 3 offenses detected`, `no offenses detected`) or its score (pylint's rating): the result when no
# run says more (`pytest; pylint x`: the tests' verdict, what failed, comes before a checker's count)
CHECKED_COUNT = re.compile(
    r"^\s*\[?(?:\d+ files? inspected, )?(?:\d+|no) (?:[\w-]+ ){0,2}(?:violations?|offen[cs]es?|problems?|issues?) "
    r"(?:found|detected)(?:[.!\])]*\s*$|, \d+ .*$)|^\s*Your code has been rated at -?[\d.]+/10\b.*$",
    re.I,
)
# what a merge or pull brought, as git's diffstat sums it (`492 files changed, 61608 insertions(+), 8694
# deletions(-)`; Hermes Agent's `git pull`, a `git merge`): read, like a checker's count, the first of them
# only when no line of the main families says more (a commit's `[main abc1234] subject` above its stat)
DIFFSTAT = re.compile(r"^\s*\d+ files? changed(?:, \d+ insertions?\(\+\))?(?:, \d+ deletions?\(-\))?\s*$")
# git's own lines for a commit made (`[main a1b2c3d] subject`) and a branch pushed (`a1b2c3d..e4f5a6b  main -> main`):
# a `commit && push` says both, what was committed and that it is on the remote
GIT_COMMIT_LINE = re.compile(r"^\[[\w./\-]+(?: \(root-commit\))? [0-9a-f]{7,40}\] .+$")
GIT_PUSH_LINE = re.compile(r"^\s*[0-9a-f]{7,40}\.\.[0-9a-f]{7,40}\s+\S+ -> \S+.*$")
# a count with pass/fail words, in any order ("72/72 tests pass", "passed: 12/12", "3 of 5 failed", a
# script's `CITADEL Test Suite: 76/76 PASS`): a verdict in tool output and in the agent's own report
COUNTED_VERDICT = (
    r"\b\d+\s*(?:/|of)\s*\d+\s+(?:\w+\s+)?(?:pass(?:ed|es|ing)?|fail(?:ed|s|ing)?|succeeded|ok)\b"
    r"|\b(?:pass(?:ed)?|fail(?:ed)?|ok)\b:?\s*\d+\s*/\s*\d+\b"
)
# (family, pattern) in priority order: a test summary says more than a compile line above it
RESULT_LINES: list[tuple[str, re.Pattern]] = [
    (
        "tests",
        re.compile(
            r"^\s*=*\s*(?:\d+ (?:passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?)[, ]*)+(?:in [\d.]+s)?\s*=*\s*$"  # pytest
            r"|^\s*(?:\d+ doctests?, )?\d+ (?:tests?|properties), \d+ failures?\b.*$"  # ExUnit
            r"|^\s*\d+ examples?, \d+ failures?\b.*$"  # rspec
            r"|^\s*Ran \d+ tests? in [\d.]+s\s*$|^\s*(?-i:OK|FAILED)(?: \([^)]*\))?\s*$"  # unittest (a CLI's bare `ok` is no test run)
            r"|^\s*Tests?:?\s+(?:\d+ (?:passed|failed|skipped|todo|total)[, |]*)+.*$"  # jest, vitest
            r"|^\s*Test (?:Files|Suites):?\s+.*\d+ (?:passed|failed).*$"
            r"|^\s*test result: (?:ok|FAILED)\. \d+ passed.*$"  # cargo test
            r"|^(?:ok|FAIL|---\s*FAIL:?)\s+\S+\s+(?:[\d.]+s|\(cached\)|\[.*\])\s*$"  # go test
            r"|^\s*Tests run: \d+, Failures: \d+.*$"  # maven surefire
            r"|^\s*(?:Passed|Failed)!\s+-\s+Failed:\s+\d+.*$|^\s*Total tests: \d+.*$"  # dotnet
            # counts as `Label: N`, one of failures and one of passes or of all: dotnet's terminal logger
            # (`Test summary: total: 52, failed: 0, succeeded: 52`), NUnit (`Test Count: 4, Passed: 4,
            # Failed: 0`), PHPUnit (`Tests: 5, Assertions: 9, Failures: 1.`)
            # (a test's word in it: an upload's `total: 120, failed: 0` is none; possessive, as a line of many
            # counts had backtracked for 43 s)
            r"|^(?=.*\btest)(?=.*\b(?:fail(?:ed|ures?)?|errors?):\s*\d)(?=.*\b(?:pass(?:ed)?|succeeded|total|tests|test count):\s*\d)"
            r"\s*(?:[A-Za-z][\w ]{0,30}:\s+)?(?:[A-Za-z][\w ]{0,20}:\s*\d[\w.]*+,\s*)++[A-Za-z][\w ]{0,20}:\s*\d[\w.]*+\s*$"
            r"|^\s*\d+ (?:passing|failing|pending)\b.*$"  # mocha
            r"|^\s*All \d+ tests? pass(?:ed)?\b.*$"
            # a script's own verdict on its checks (`All tests passed.`, `CodeAct tests passed`, `Modern Tool Use
            # test OK`: mini-swe-agent's reproduction scripts, Codex's npm test scripts)
            # (never one that says some did not: `Not all tests passed.`, `3 of 5 tests passed`, `No tests passed`)
            r"|^\s*(?![^\n]*\b(?:not|no|none|only|some|few|partially|most|half|several|many|whether|if|checking|majority|certain)\b)(?:all\s+)?(?:[A-Za-z_.-]+\s+){0,5}tests?\s+"
            r"(?:passed|ok|succeeded)[.!]?\s*$"
            # a block of counts joined (_count_blocks): a pass count and a fail, total or tests count in it
            r"|^\s*+(?:[ℹ#][ \t]*+)?(?:tests?|total|pass(?:ed|es)?|fail(?:ed|ures?|s)?)(?=[ \t:])[ \t]*+:?[ \t]*+\d[\d.,]*+[ \t]*+;"
            r"(?=.*\bpass)(?=.*\b(?:fail|total|tests?)\b).*$"
            r"|^\s*(?:[✓✔✗✘]\s*)?(?:SUCCESS|PASS(?:ED)?|FAIL(?:ED|URE)?|OK|DONE|RESULT)\b\s*[:!-].*$"  # a script's verdict
            r"|"
            + VERDICT_LINE.pattern
            # a script's verdict in capitals: DEADLOCK CONFIRMED after 25 polls!, BUG REPRODUCED, FIX VERIFIED
            + r"|^\s*(?-i:(?:[A-Z]{3,} ){1,3}(?:CONFIRMED|REPRODUCED|VERIFIED|FIXED|WORKS|SUCCEEDED|PASSED|FAILED))\b.*$"
            + rf"|^[^\n]{{0,80}}?(?:{COUNTED_VERDICT})[^\n]*$",
            re.I,
        ),
    ),
    (
        "build",
        re.compile(
            r"^\s*(?:\[INFO\] )?BUILD (?:SUCCESS(?:FUL)?|FAIL(?:URE|ED))\b.*$"  # maven, gradle
            rf"|{ERRORS_FOUND.pattern}.*$|{WARNINGS_FOUND.pattern}.*$|^\s*Success: no issues found.*$"  # tsc, mypy, ruff, biome
            r"|^\s*All checks passed!?\s*$"  # ruff
            r"|^\s*\d+ issues?\.?\s*$"  # golangci-lint
            r"|^\s*✖ \d+ problems?\b.*$"  # eslint
            r"|^\s*\d+ mods/funs, found .*$|^.*\bfound no issues\b.*$"  # credo
            r"|^\s*(?:done \(passed successfully\)|Total errors: \d+.*)$"  # dialyzer
            r"|^\s*Finished `?\w+`? profile.*$|^\s*error: could not compile\b.*$"  # cargo
            r"|^\s*\d+ (?:errors?|warnings?)(?: and \d+ warnings?)? generated\.\s*$"  # clang
            r"|^\s*Generated \S+ app\s*$|^\s*Compiling \d+ files? \(.*\)\s*$",  # mix
            re.I,
        ),
    ),
    (
        "git",
        re.compile(
            GIT_COMMIT_LINE.pattern  # git commit
            + r"|"
            + GIT_PUSH_LINE.pattern
            + r"|^\s*\* \[new (?:branch|tag)\]\s+.*$"  # git push
            r"|^Everything up-to-date$|^branch '.+' set up to track .+$"
            r"|^(?:fatal|error): .+$"
            r"|^Switched to (?:a new )?branch .+$|^Already up to date\.$"
            r"|^CONFLICT \([\w/ -]+\): .+$"  # a merge, rebase, cherry-pick or pull that stopped on a conflict
        ),
    ),
    (
        "commit",  # a commit made or undone, by any tool: aider's `Commit <hash> <subject>`, `/undo`'s `Removed: <hash> ...`
        re.compile(
            r"^\s*(?:Commit(?:ted)?|Removed|Now at|Reverted|Created commit)\b:?\s+`?[0-9a-f]{7,40}`?\b.+$"
            r"|^.*\b(?:committed|pushed)\b.*\(`?[0-9a-f]{7,40}`?\).*$",  # "Plan committed (`<hash>`)", 已 committed (<hash>)
            re.I,
        ),
    ),
    (
        "created",  # a pull request, repository, release or deploy made
        re.compile(
            r"^.*\b(?:Created|Opened|Merged) (?:pull request|PR|merge request|repository|release|tag)\b.*$"
            r"|^\s*https://\S+/(?:pull|merge_requests)/\d+\s*$"
            r"|^.*\b(?:Deployed|Published|Released) (?:to|at|as|v?\d)\S*.*$"
            r"|" + INSTALLED_LINE,  # Gradle's installDebug onto a phone
            re.I,
        ),
    ),
    (
        "install",  # what a package manager installed, by name: pip's, Homebrew's, cargo's (npm's
        # "added 124 packages" names none: in Codex's Commands it took a finding's room)
        re.compile(
            r"^\s*Successfully installed \S.*$"  # pip
            r"|^\s*\+ [\w.\-\[\],]+==\S+.*$"  # uv's `+ hermes-agent==0.9.0 (from file:///…)`, after `Installed 1 package in 2ms`
            r"|^\s*(?:Warning: \S+(?: \S+)?|Ignored package `[^`\n]+`) is already installed\b.*$",  # Homebrew, cargo
            re.I,
        ),
    ),
    (
        "tracker",
        re.compile(r"^\s*[✓✔]\s*(?:Closed|Created|Updated|Reopened)\b.*$|^Created issue: .+$"),
    ),
    (
        "failure",
        re.compile(
            r"^.*(?:command not found|No such file or directory|No module named \S+|Permission denied).*$"
            # the shell's own complaint about the command line: zsh's `zsh:1: unmatched "`, bash's `bash: line 1: …`
            r"|^(?:-?(?:/(?:usr/)?bin/)?(?:ba|z|da|k)?sh):[ \t]?(?:line )?\d+: \S.*$"
            # a timeout said, not a `timeout: 0,` option or an `httpx.Timeout` in code
            r"|^.*\b(?:timed out|(?-i:Timeout(?:Error|Exception))|timeout (?:after|exceeded|expired|reached|of \d)|"
            r"deadline exceeded)\b.*$"
            # TypeError [ERR_X]: ..., `requests.exceptions.ConnectionError: …`, `socket.gaierror: …`; a class's
            # name in capitals or under its module, not an object's key in a dump (axios's `clarifyTimeoutError: false`);
            # pytest marks it `E   ` in a traceback (error_lines reads that mark too)
            r"|^\s*(?:(?-i:E)\s{2,})?(?-i:(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)|(?:[A-Za-z_]\w*\.)+[a-z]\w*error)(?: \[\w+\])?(?::.*)?$"
            r"|^\s*\*\* \(\w+(?:\.\w+)*\).*$"  # Elixir raise
            r"|^.*\[ERROR\].*$|^\s*error(?: ?\[\w+\])?: .+$|^.*: error: .+$"
            r"|^.*?(?:" + PROGRAM_FAILED.pattern + ").*$",  # rm: cannot remove 'x': Device or resource busy
            re.I,
        ),
    ),
]
