"""Summarizer layer: turns a rolling summary plus new turns into an updated summary. Code carries
the facts and writes every line (ledger, redaction, verifier); a small model at most chooses which
of the assistant's own sentences to copy, read off the logits of one prefill."""

from .api import Message, Summarizer, SummaryResult
from .summarizer import MLXSummarizer

__all__ = ["MLXSummarizer", "Message", "Summarizer", "SummaryResult"]
