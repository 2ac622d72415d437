"""A test run's counts printed one a line (node's test runner, TAP, many a script): the block of
them says what the run came to, where no single line does. `outcomes.outcome_of` reads them."""

from __future__ import annotations

import re

from .text import clip

MAX_COUNTS = 320  # the block's kept lines joined are clipped here (twice outcomes.MAX_OUTCOME)

# a test run's counts, one a line, as node's test runner, TAP and many a script print them (`ℹ tests 9`,
# `ℹ pass 9`, `ℹ fail 0`, `# pass 9`, `Passed: 41`, `Failed: 0`; a benchmark script's `Total tests: 12`,
# `Successful: 12`, `Failed: 0`, its passes worded as dotnet's are, `succeeded`): the block says what the run came to.
# The labels a reader needs are kept (_COUNT_KEPT, the latest of each), and a cancelled or skipped
# count that is not 0 (`ℹ cancelled 1`: a run stopped part-way passed nothing); `ℹ todo 0` and the
# duration go
COUNT_LINE = re.compile(
    r"^\s*(?:[ℹ#][ \t]*)?(?P<label>tests?|total(?:[ \t]+tests)?|suites|pass(?:ed|es)?|succe(?:ss(?:ful|es)?|eded)|"
    r"fail(?:ed|ures?|s)?|errors?|skipped|"
    r"cancell?ed|todo|pending|duration(?:_ms)?)(?=[ \t:])[ \t]*+:?[ \t]*+(?P<n>\d[\d.,]*+)[ \t]*+(?:ms|s)?[ \t]*+$",
    re.I,
)
_COUNT_KEPT = re.compile(r"tests?|total|pass|succe|fail|error", re.I)
_COUNT_SAID = re.compile(r"cancel|skip", re.I)  # kept unless 0
# labels that count the same thing, as one key: a pass is a success, `Total tests` a total
_COUNT_KEYS = (("pass", "pass"), ("succe", "pass"), ("fail", "fail"), ("total", "total"))
_COUNT_GAP = 3  # lines at most between a verdict and the counts above it


def count_blocks(lines: list[str]) -> dict[int, str]:
    """Each line a block of a test run's counts stands for (its own lines, and the _COUNT_GAP lines
    after its last), mapped to the block's kept lines joined (its pass and its fail or total count
    at least); one pass over the lines, each matched once."""
    matched = [COUNT_LINE.match(ln) if len(ln) <= 200 else None for ln in lines]
    out: dict[int, str] = {}
    i = 0
    while i < len(lines):
        if not matched[i]:
            i += 1
            continue
        start = i
        while i < len(lines) and matched[i]:
            i += 1
        latest: dict[str, str] = {}
        for m in matched[start:i]:
            label = m["label"].lower()
            key = next((k for lead, k in _COUNT_KEYS if label.startswith(lead)), label.rstrip("s"))
            if _COUNT_KEPT.match(label) or _COUNT_SAID.match(label) and m["n"].strip("0.,"):
                latest.pop(key, None)
                latest[key] = " ".join(m.group(0).split())
        if "pass" in latest and latest.keys() & {"fail", "total", "test"}:
            joined = clip("; ".join(latest.values()), MAX_COUNTS)
            for at in range(start, min(len(lines), i + _COUNT_GAP)):
                out.setdefault(at, joined)
    return out
