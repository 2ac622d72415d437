"""Secret redaction, done by code before any text reaches the model and again on what it returns.

The model is also asked to redact, but a 135M model cannot be trusted with that; these patterns
are the guarantee. They aim at provider key formats and assignment shapes, so ordinary words
such as "token expired" or `max_tokens=64` survive.
"""

from __future__ import annotations

import re

REDACTED = "[REDACTED]"

# Provider key formats: replaced whole.
_KEY_PATTERNS = [
    r"sk-ant-[A-Za-z0-9_\-]{16,}",  # Anthropic
    r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",  # OpenAI
    r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",  # Stripe
    r"github_pat_[A-Za-z0-9_]{22,}",  # GitHub fine-grained
    r"gh[pousr]_[A-Za-z0-9]{30,}",  # GitHub classic / oauth / app
    r"glpat-[A-Za-z0-9_\-]{20,}",  # GitLab
    r"(?:AKIA|ASIA)[0-9A-Z]{16}",  # AWS access key id
    r"xox[abposr]-[A-Za-z0-9\-]{10,}",  # Slack
    r"AIza[0-9A-Za-z_\-]{35}",  # Google
    r"hf_[A-Za-z0-9]{30,}",  # Hugging Face
    r"npm_[A-Za-z0-9]{36}",  # npm
    r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",  # JWT
]
_KEYS = re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join(_KEY_PATTERNS) + r")")

_PRIVATE_KEY = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)",
    re.S,
)
_BEARER = re.compile(r"\b(Bearer|Basic|Token)(\s+)(?!\[REDACTED\])[A-Za-z0-9._~+/=\-]{12,}")
_URL_PASSWORD = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@\[\]]+):(?!\[REDACTED\])[^\s@/]+@")

# NAME=value / "name": "value" / name: value, where the name says it holds a secret.
_SECRET_NAME = (
    r"[A-Za-z0-9_.\-]*(?:api[_\-]?key|secret[A-Za-z0-9_]*|passw(?:or)?d|passwd|pwd|"
    r"_key|_token|access[_\-]?token|auth[_\-]?token|credentials?|private[_\-]?key)"
)
_ASSIGN = re.compile(
    r"(?i)(?<![A-Za-z0-9])(" + _SECRET_NAME + r")(?![A-Za-z0-9])"
    r"([\"']?\s*(?::|=|:=)\s*)"
    r"(\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',;}{)]+)"
)
_SAFE_VALUES = {"", "none", "null", "true", "false", "redacted", "[redacted]", "***", "..."}


def _assign(match: re.Match) -> str:
    name, sep, value = match.group(1), match.group(2), match.group(3)
    bare = value.strip("\"'")
    if (
        bare.lower() in _SAFE_VALUES
        or bare.startswith(("$", "os.environ", "env(", "getenv", "<"))
        or REDACTED in bare
        or len(bare) < 4
    ):
        return match.group(0)
    quote = value[0] if value[:1] in "\"'" else ""
    return f"{name}{sep}{quote}{REDACTED}{quote}"


def redact(text: str) -> str:
    """Replace credentials with [REDACTED]. Idempotent; never raises on odd input."""
    if not text:
        return text or ""
    text = _PRIVATE_KEY.sub(REDACTED, text)
    text = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}:{REDACTED}@", text)
    text = _BEARER.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    text = _KEYS.sub(REDACTED, text)
    text = _ASSIGN.sub(_assign, text)
    return text


def has_secret(text: str) -> bool:
    """True when redact() would change the text (for the verifier)."""
    return bool(text) and redact(text) != text
