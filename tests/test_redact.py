"""Redaction on realistic text: provider keys, bearer tokens, private keys, URL passwords and
env-style assignments go; ordinary words that look similar stay."""

from hermes_mlx.summarizer.redact import REDACTED, has_secret, redact

SECRETS = {
    "openai": "sk-proj-Zq8T4fakeKEYdoNotUse9XvB2mL7pR3sW6yH1cJ5nK0a",
    "anthropic": "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "github": "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB",
    "github_oauth": "gho_1234567890abcdefghijklmnopqrstuvwxyzAB",
    "github_pat": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
    "aws": "AKIAFAKE7TIDEWATCH0Q",
    "slack": "xoxb-123456789012-abcdefghijkl",
    "google": "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "hf": "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
    "stripe": "sk_test_51Hx9LedgerlyFAKEkeyQ8wZ2pV7mN4bT6yR1cX3",
}


def test_provider_keys_in_prose_and_json():
    for name, key in SECRETS.items():
        for text in (f"the key is {key} ok", f'{{"api": "{key}"}}', f"export X={key}"):
            out = redact(text)
            assert key not in out, (name, out)
            assert REDACTED in out


def test_bearer_private_key_url_password():
    text = (
        "curl -H 'Authorization: Bearer eyJhbGciOi.abcdefghijklmnop.qrstuv' https://api.x.dev\n"
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n"
        "DATABASE_URL=postgres://app:hunter2secret@db.internal:5432/app\n"
    )
    out = redact(text)
    assert "eyJhbGciOi.abcdefghijklmnop" not in out and "Bearer [REDACTED]" in out
    assert "b3BlbnNzaC1rZXktdjEAAAAA" not in out
    assert "hunter2secret" not in out and "postgres://app:[REDACTED]@db.internal:5432/app" in out


def test_env_assignments():
    text = (
        "TIDEWATCH_API_KEY=tw_live_4f9aFAKEc2d1e8b7a6f5KEY0e9d8c7b6\n"
        'AWS_SECRET_ACCESS_KEY = "wJalrFAKEtidewatchSECRET/K7MDENG/bPxRfiCY9q"\n'
        "GITHUB_TOKEN: abcdef123456\npassword=correcthorse\n"
    )
    out = redact(text)
    for s in ("tw_live_4f9a", "wJalrFAKE", "abcdef123456", "correcthorse"):
        assert s not in out
    assert 'AWS_SECRET_ACCESS_KEY = "[REDACTED]"' in out
    assert "TIDEWATCH_API_KEY=[REDACTED]" in out


def test_innocent_text_survives():
    text = (
        "max_tokens=64 and num_tokens: 12; the token expired on 2026-11-27 (HTTP 401).\n"
        "api_key = os.environ['OPENAI_API_KEY']; SECRET_KEY=None; commit 3f9a2c1; task-force sk-8"
    )
    assert redact(text) == text
    assert not has_secret(text)


def test_idempotent_and_safe_on_odd_input():
    once = redact("OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwxyz1234")
    assert redact(once) == once
    assert redact("") == "" and redact(None) == ""
    assert "x" * 10 in redact("x" * 100_000)
