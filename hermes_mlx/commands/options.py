"""Argument types for numeric options, shared by the subcommands.

Why: `type=int` and `type=float` accept 70000 as a port, -5 as a token count, and nan or inf as
a size or a deadline (nan compares false with everything, so `timeout <= 0` lets it through and
the deadline silently disappears). These types refuse such values while argparse parses, so the
user gets one usage line naming the option, exit 2, before any work.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def port(text: str) -> int:
    """A TCP port, 0 (pick a free one) to 65535."""
    value = _int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text} is not a port (0 to 65535)")
    return value


def int_at_least(low: int, high: int | None = None) -> Callable[[str], int]:
    """An integer in [low, high]."""

    def parse(text: str) -> int:
        value = _int(text)
        if value < low or (high is not None and value > high):
            bound = f"at least {low}" if high is None else f"from {low} to {high}"
            raise argparse.ArgumentTypeError(f"{text} is out of range (must be {bound})")
        return value

    parse.__name__ = "integer"  # argparse names the type in its message
    return parse


def positive_float(text: str) -> float:
    """A finite number above 0 (nan and inf refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text} must be a finite number above 0")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
