"""Summarizer layer: turns a rolling summary plus new turns into an updated summary, with the
facts carried by code (ledger, redaction, verifier) and a small model writing short deltas."""

from .api import Message, Summarizer, SummaryResult
from .summarizer import MLXSummarizer

__all__ = ["MLXSummarizer", "Message", "Summarizer", "SummaryResult"]
