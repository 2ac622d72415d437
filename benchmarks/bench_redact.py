"""Is detect-secrets fast enough to run beside our redactor? Time both on one 50,000-character
tool output (build logs, JSON, env dumps, a few planted credentials) and count what each finds.

    python benchmarks/bench_redact.py [--chars 50000] [--repeat 5]

detect-secrets is optional and not a dependency of hermes-mlx. To include it without touching
the project's environment: `pip download --no-deps detect-secrets -d /tmp/ds`, unzip the wheel
into /tmp/ds/x, and run with PYTHONPATH=/tmp/ds/x (it needs pyyaml and requests, both present).
Its `scan_line` runs every plugin and filter on each line, as an ad-hoc scan must.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from secrets_corpus import Gen, provider_keys

from hermes_mlx.summarizer.redact import REDACTED, redact


def tool_output(chars: int) -> str:
    """A long, mostly innocent tool output with a credential every ~40 lines."""
    g = Gen(3)
    keys = list(provider_keys(g).values())
    filler = [
        "Collecting numpy>=2.0 (from hermes-mlx==0.3.0)\n  Using cached numpy-2.1.3-cp311-cp311-manylinux_2_17_x86_64.whl (16.3 MB)",
        '{"id": "run_8f1c", "status": "ok", "tokens": 1532, "max_tokens": 4096, "path": "/home/u/proj/src/app.py"}',
        'src/app.py:42: error: Argument 1 to "load" has incompatible type "str"; expected "Path"  [arg-type]',
        "commit 3f9a2b1c4d5e6f708192a3b4c5d6e7f8091a2b3c\nAuthor: Dev <dev@example.com>\n    fix: token expiry check",
        "PATH=/usr/local/bin:/usr/bin HOME=/home/u LANG=C.UTF-8 PWD=/home/u/proj SHLVL=1",
        '  File "/usr/lib/python3.11/site-packages/requests/adapters.py", line 519, in send',
        "test_redact.py::test_every_planted_credential_is_gone PASSED                     [ 42%]",
    ]
    lines, i = [], 0
    while sum(len(x) + 1 for x in lines) < chars:
        lines.append(filler[i % len(filler)])
        if i % 40 == 39:
            lines.append(f"export SERVICE_KEY={keys[(i // 40) % len(keys)]}")
        i += 1
    return "\n".join(lines)[:chars]


def timed(fn, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chars", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    text = tool_output(args.chars)
    planted = text.count("export SERVICE_KEY=")
    ours_s, out = timed(lambda: redact(text), args.repeat)
    print(f"tool output: {len(text):,} chars, {text.count(chr(10)) + 1} lines, {planted} planted credentials")
    kept = sum(1 for line in out.splitlines() if "SERVICE_KEY=" in line and REDACTED not in line)
    print(f"ours (redact):   {ours_s * 1000:8.1f} ms   redacted spans: {out.count(REDACTED)}, planted left: {kept}")
    try:
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import default_settings
    except ImportError:
        print("detect-secrets: not importable (see the docstring for PYTHONPATH)")
        return

    def scan() -> list[str]:
        with default_settings():
            return [line for line in text.splitlines() if any(True for _ in scan_line(line))]

    ds_s, flagged = timed(scan, max(1, args.repeat // 2))
    hits = sum(1 for line in flagged if "SERVICE_KEY=" in line)
    print(
        f"detect-secrets:  {ds_s * 1000:8.1f} ms   flagged lines: {hits}/{planted} planted, "
        f"{len(flagged) - hits} innocent   ({ds_s / ours_s:.0f}x ours)"
    )


if __name__ == "__main__":
    main()
