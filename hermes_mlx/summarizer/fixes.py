"""Which later run fixed an error: the same command passing, a broader run of its tool, every step
of a chain that failed passing in a later one, the same run with another trim of its output, an
install of what the error said was missing, or a named test said passed. `Ledger.resolve` moves what
a passing command covers to Errors and Fixes, with that command as its fix.
"""

from __future__ import annotations

import re

from .shell_words import installs_missing
from .vocabulary import RUNNERS


def cleared_by(passing: str, output: str, errors: list) -> list:
    """The errors (ledger.ErrorItem) a command that passed clears: its own, a named test's (its
    id in the command, or `<test> PASSED` in the output), what was missing that it installed, and a narrower run's of the same tool
    (`pytest` passing covers what `pytest tests/a.py` failed; a `-k` selection covers nothing)."""
    return [
        e
        for e in errors
        if _covers(passing, e)
        or (e.test and re.search(re.escape(e.test) + r"\s+PASSED", output))
        or installs_missing(passing, e.line)  # `pip install asgiref` after `No module named 'asgiref'`
    ]


def chain_steps(cmd: str) -> frozenset[str]:
    """The steps a chain of commands ran (`a && b`, `a; b`), in any order, less a `cd` and
    `2>&1`, and less a last step clipped by `…`. None for a chain with `||`, where a step may
    fail unseen."""
    if "||" in cmd:
        return frozenset()
    steps = [" ".join(untrimmed(step.replace("2>&1", "")).split()) for step in re.split(r"&&|;", cmd)]
    if steps[-1].endswith("…"):
        steps.pop()
    return frozenset(s for s in steps if s and not s.startswith("cd "))


def untrimmed(step: str) -> str:
    """`step` less the filters that only trim its output to read (`| tail -4`, `| head -40`, `| grep FAIL`),
    up to TRIMS of them from its end: a rerun with another trim is the same run (Codex's `python manage.py
    test … | tail -4`, then `| tail -25`). One at a time, each anchored at the end: linear on any text."""
    for _ in range(TRIMS):
        m = _LAST_TRIM.search(step)
        if not m:
            break
        step = step[: m.start()]
    return step


TRIMS = 3
_LAST_TRIM = re.compile(r"\s*\|\s*(?:tail|head|grep|egrep|rg|less|more|cat|tee|sed -n)\b[^|]*$")
_MORE_LINES = re.compile(r"\s*\(\+\d+ more lines?\)\s*$")


def _covers(passing: str, err) -> bool:
    if not err.cmd and not err.test:
        return False
    if err.cmd == passing:
        return True
    if not err.cmd.endswith("…") and (steps := chain_steps(err.cmd)) and steps <= chain_steps(passing):
        return True  # every step it ran passed in a later chain (`a && b`, `b; a`)
    if err.test and (err.test in passing or err.test.split("::")[0] in passing.split()):
        return True
    if err.cmd:  # the lines a multi-line command hides (`(+6 more lines)`) are no word of it
        a, b = (untrimmed(_MORE_LINES.sub("", x).replace("2>&1", "")).split() for x in (passing, err.cmd))
        head = 2 if len(a) > 1 and a[0] in RUNNERS else 1
        if a[:head] == b[:head] and set(a[head:]) <= set(b[head:]) and not any(x.startswith("-k") for x in a):
            return True  # a broader run of the same tool passed
    return False
