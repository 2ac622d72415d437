"""The repetition guard: end a generation once its output repeats itself verbatim.

A 135M model asked to summarize one line will often print that line again and again until
max_tokens (issue 23: sixteen copies of one sentence). Greedy decoding cannot leave such a loop,
so every token after the second copy is wasted. The guard stops there and keeps one copy.

It only ever ends a generation, it never changes a token, so a reply that does not loop is
the same with it or without it; unlike a repetition penalty, which would also push a summarizer
away from copying the paths and commands it must keep verbatim. A loop is the last `SPAN` or
more tokens being one unit of at most `MAX_PERIOD` tokens said at least twice in a row: two
identical 16-token sentences, or 32 identical single tokens. Output that legitimately repeats
a 32-token stretch back to back is rare enough in a summary to give up.
"""

from __future__ import annotations

SPAN = 32  # tokens the repeated stretch must cover before the guard stops
MAX_PERIOD = 64  # the longest repeated unit looked for, in tokens


class RepetitionGuard:
    """Fed each generated token with the text length after it; says when the output loops.

    For every period p it keeps how many tokens in a row equal the token p before them, so a
    step costs MAX_PERIOD comparisons, nothing next to a forward pass.
    """

    def __init__(self, span: int = SPAN, max_period: int = MAX_PERIOD) -> None:
        self.span, self.max_period = span, max_period
        self.tokens: list[int] = []
        self.ends: list[int] = []  # len(text) after each token
        self.runs = [0] * (max_period + 1)  # runs[p]: trailing tokens equal to the one p before
        self.period = 0  # the loop's unit in tokens, once found

    def push(self, token: int, text_len: int) -> bool:
        """Take one token (EOS excluded); True when the output now ends in a loop."""
        toks = self.tokens
        toks.append(token)
        self.ends.append(text_len)
        n = len(toks)
        for p in range(1, min(self.max_period, n - 1) + 1):
            run = self.runs[p] + 1 if toks[n - 1 - p] == token else 0
            self.runs[p] = run
            if run >= p and run + p >= self.span and not self.period:
                self.period = p
        return bool(self.period)

    def trim(self, text: str, keep_at_least: int = 0) -> str:
        """The text with the loop's copies after the first dropped (and trailing spaces).

        The cut is made in the text, not at a token: the repeated stretch is extended back as
        far as the text repeats, so the copy kept starts where the loop did ("A. A. A." keeps
        "A.", not "A. A"). Text already streamed (`keep_at_least` characters) is kept.
        """
        p = self.period
        if not p or len(self.ends) <= p:
            return text
        unit = self.ends[-1] - self.ends[-1 - p]  # the unit's length in characters
        if unit <= 0 or unit > len(text):
            return text
        start = len(text) - unit
        while start > 0 and text[start - 1] == text[start - 1 + unit]:
            start -= 1
        cut = start + unit
        kept = text[:cut].rstrip()
        return text[: max(len(kept), keep_at_least)]
