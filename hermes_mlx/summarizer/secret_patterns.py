"""What redact() looks for, kept apart from how it looks (redact.py) so the list can grow alone.

Provider formats follow gitleaks' default rule set (config/gitleaks.toml) and detect-secrets'
plugins; rules that gitleaks only fires next to a provider's name (`twitter... = <40 chars>`)
are left to the assignment rule in redact.py, which catches any high-entropy value given a name.
Every provider regex is matched behind a boundary and then widened to its whole token run, so
each one only has to recognise the start of a key, not its exact length.
"""

from __future__ import annotations

# (rule id, regex). Each list becomes one alternation; keep every alternative starting with a
# literal character (no group, no class) so the regex engine can skip ahead on its first
# characters: one class-first alternative makes the whole alternation ~20x slower. Rules that
# must start with a class live in CLASS_FIRST_PATTERNS.
PROVIDER_PATTERNS: list[tuple[str, str]] = [
    # AI providers
    ("anthropic", r"sk-ant-[A-Za-z0-9_\-]{16,}"),
    # a distinctive prefix needs no random-looking body; plain `sk-` (a loose rule below) does
    ("openai-scoped", r"sk-(?:proj|svcacct|admin|or-v1)-[A-Za-z0-9_\-]{20,}"),
    ("openai", r"sk-[A-Za-z0-9_\-]{20,}"),
    ("groq", r"gsk_[A-Za-z0-9]{20,}"),
    ("replicate", r"r8_[A-Za-z0-9]{20,}"),
    ("huggingface", r"hf_[A-Za-z0-9]{30,}"),
    ("huggingface-org", r"api_org_[A-Za-z0-9]{30,}"),
    ("perplexity", r"pplx-[A-Za-z0-9]{40,}"),
    ("xai", r"xai-[A-Za-z0-9]{40,}"),
    ("tavily", r"tvly-(?:dev-)?[A-Za-z0-9]{20,}"),
    ("langsmith", r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}"),
    ("google-api", r"AIza[0-9A-Za-z_\-]{35}"),
    ("google-oauth-access", r"ya29\.[0-9A-Za-z_\-]{20,}"),
    ("google-oauth-secret", r"GOCSPX-[A-Za-z0-9_\-]{20,}"),
    # Code hosts and package registries
    ("github", r"gh[pousr]_[A-Za-z0-9]{30,}"),
    ("github-fine-grained", r"github_pat_[A-Za-z0-9_]{22,}"),
    ("gitlab", r"gl(?:pat|dt|ft|soat|rt|ffct|cbt|imt|ptt|agent|oas)-[A-Za-z0-9_\-]{20,}"),
    ("gitlab-runner-registration", r"GR1348941[A-Za-z0-9_\-]{20,}"),
    ("gitlab-session", r"_gitlab_session=[0-9a-z]{32}"),
    ("npm", r"npm_[A-Za-z0-9]{36,}"),
    ("pypi", r"pypi-Ag(?:EIcHlwaS5vcmc|ENdGVzdC5weXBpLm9yZw)[A-Za-z0-9_\-]{50,}"),
    ("rubygems", r"rubygems_[a-f0-9]{48}"),
    ("clojars", r"CLOJARS_[A-Za-z0-9]{60}"),
    ("artifactory", r"AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59}"),
    ("atlassian", r"ATATT3[A-Za-z0-9_\-=]{100,}"),
    ("readme", r"rdme_[a-z0-9]{70}"),
    # Cloud
    ("aws-access-key-id", r"A(?:3T[A-Z0-9]|KIA|SIA|BIA|CCA)[A-Z0-9]{16}"),
    ("alibaba", r"LTAI[A-Za-z0-9]{20}"),
    ("digitalocean", r"do[opr]_v1_[a-f0-9]{64}"),
    ("heroku-v2", r"HRKU-AA[0-9A-Za-z_\-]{58}"),
    ("databricks", r"dapi[a-f0-9]{32}(?:-\d)?"),
    ("doppler", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}"),
    ("vault", r"hv[sb]\.[A-Za-z0-9_\-]{90,}"),
    ("pulumi", r"pul-[a-f0-9]{40}"),
    ("flyio", r"fo1_[A-Za-z0-9_\-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}"),
    ("planetscale", r"pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.\-]{32,}"),
    ("openshift", r"sha256~[A-Za-z0-9_\-]{43}"),
    ("cloudflare-origin-ca", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}"),
    ("dynatrace", r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}"),
    ("grafana", r"glc_[A-Za-z0-9+/]{32,}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|eyJrIjoi[A-Za-z0-9]{70,}"),
    ("harness", r"pat\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}|sat\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}"),
    ("sentry", r"sntry[us]_[A-Za-z0-9+/=_]{40,}"),
    ("newrelic", r"NR(?:AK|JS|II)-[A-Za-z0-9\-]{19,}"),
    ("octopus-deploy", r"API-[A-Z0-9]{26}"),
    ("prefect", r"pnu_[A-Za-z0-9]{36}"),
    ("infracost", r"ico-[A-Za-z0-9]{32}"),
    ("scalingo", r"tk-us-[A-Za-z0-9_\-]{48}"),
    ("age", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    ("1password", r"ops_eyJ[A-Za-z0-9+/]{100,}|A3-[A-Z0-9]{6}-[A-Z0-9]{5,11}-[A-Z0-9\-]{17,}"),
    # Messaging
    ("slack-token", r"xox[abposre]-[A-Za-z0-9\-]{10,}|xoxe\.xox[bp]-\d-[A-Za-z0-9]{100,}|xapp-\d-[A-Za-z0-9\-]{20,}"),
    ("slack-webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_]{20,}"),
    ("discord-webhook", r"discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]{40,}"),
    ("twilio", r"AC[a-fA-F0-9]{32}|SK[a-fA-F0-9]{32}"),
    ("sendgrid", r"SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{20,}"),
    ("sendinblue", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    ("mailgun", r"key-[a-f0-9]{32}|pubkey-[a-f0-9]{32}"),
    # Payments and commerce
    ("stripe", r"sk_(?:live|test|prod)_[A-Za-z0-9]{10,}|rk_(?:live|test|prod)_[A-Za-z0-9]{10,}|pk_(?:live|test|prod)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{24,}"),
    ("square", r"sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,}|EAAA[A-Za-z0-9_\-]{40,}"),
    ("shopify", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    ("shippo", r"shippo_(?:live|test)_[a-fA-F0-9]{40}"),
    ("flutterwave", r"FLW(?:SECK|PUBK)_TEST-[a-hA-H0-9]{12,}(?:-X)?"),
    ("duffel", r"duffel_(?:test|live)_[A-Za-z0-9_\-=]{43}"),
    ("easypost", r"EZ[AT]K[A-Za-z0-9]{54}"),
    ("facebook-page", r"EAA[MC][A-Za-z0-9]{100,}"),
    ("postman", r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}"),
    ("linear", r"lin_api_[A-Za-z0-9]{40}"),
    ("notion", r"ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43}"),
    ("typeform", r"tfp_[A-Za-z0-9_.=\-]{59}"),
    ("frameio", r"fio-u-[A-Za-z0-9_=\-]{64}"),
    ("adobe", r"p8e-[A-Za-z0-9]{32}"),
    ("intra42", r"s-s4t2(?:ud|af)-[a-fA-F0-9]{64}"),
    ("settlemint", r"sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}"),
    ("yandex", r"AQVN[A-Za-z0-9_\-]{35,38}|t1\.[A-Za-z0-9_\-]+=*\.[A-Za-z0-9_\-]{86}=*"),
    # Generic token shapes
    ("jwt", r"ey[A-Za-z0-9_\-]{10,}\.ey[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-+/=]*"),
    ("jwt-base64", r"ZXlK[A-Za-z0-9+/]{60,}={0,2}"),
]

# Rules that start with a class (digits, hex, a host name); matched by their own regex.
CLASS_FIRST_PATTERNS: list[tuple[str, str]] = [
    ("terraform", r"[a-z0-9]{14}\.atlasv1\.[a-z0-9_\-=]{60,}"),
    ("teams-webhook", r"[a-z0-9]+\.webhook\.office\.com/webhookb2/[A-Za-z0-9@/\-]{60,}"),
    ("discord-bot", r"[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}"),
    ("telegram-bot", r"\d{8,10}:A[A-Za-z0-9_\-]{34}"),
    ("mailchimp", r"[0-9a-f]{32}-us\d{1,2}"),
    ("maxmind", r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk"),
]

# Rules whose prefix is short or common (`sk-`, `API-`, `AC`): their match must also look random.
LOOSE_RULES = frozenset({
    "openai", "octopus-deploy", "discord-bot", "telegram-bot", "twilio", "mailgun", "mailchimp",
    "maxmind", "terraform", "square", "facebook-page", "notion", "yandex", "sendgrid",
    "artifactory", "grafana", "1password", "aws-access-key-id", "jwt",
})

# Shapes that are not one token run: matched as they are, never widened.
AZURE_AD_SECRET = r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}"

# Name words. A name (split at _ - . and camelCase) holds a secret when its last part ends with
# one of SECRET_ENDINGS or is one of SECRET_PARTS, or it is `<qualifier>_key`, or it ends in a
# neutral part (VALUE_PARTS: `password_hash`, `token_b64`) right after one of those.
SECRET_ENDINGS = (
    "password", "passwd", "passphrase", "secret", "secrets", "token", "apikey", "accesskey",
    "secretkey", "privatekey", "authkey", "sshpass", "pgpass", "sessionid", "sessid",
)
SECRET_PARTS = frozenset({
    "pwd", "pw", "auth", "credential", "credentials", "creds", "cookie", "session",
    "sig", "signature", "dsn", "pin", "otp", "totp", "mfa", "salt",
})
KEY_QUALIFIERS = frozenset({
    "api", "access", "secret", "private", "priv", "auth", "client", "account", "master",
    "signing", "sign", "encryption", "enc", "crypt", "cipher", "service", "license", "app",
    "storage", "shared", "consumer", "webhook", "deploy", "ssh", "gpg", "pgp", "session", "admin",
    "root", "write", "read", "ingest", "sdk", "server", "project", "personal", "user",
    "subscription", "hmac", "jwt", "aes", "rsa", "tls", "ssl", "db", "database", "bot", "x",
})
VALUE_PARTS = frozenset({
    "value", "val", "str", "string", "b64", "base64", "hex", "raw", "plain", "plaintext",
    "cleartext", "hash", "hashed", "enc", "encrypted", "data", "text", "old", "new", "prod",
    "dev", "test", "staging", "live", "base", "1", "2", "3", "v1", "v2",
})
# `pass` alone is too common in code (`on_pass`, `first_pass`): only `pass` or `<qualifier>_pass`.
PASS_QUALIFIERS = frozenset({
    "db", "database", "user", "admin", "root", "smtp", "ftp", "sftp", "mail", "email", "redis",
    "mysql", "pg", "postgres", "mongo", "ldap", "proxy", "http", "ssh", "wifi", "vnc", "rdp", "app",
    "api", "login", "basic", "sql", "keystore", "key", "store", "truststore", "master", "vault",
})
# Names that never hold a secret, whatever they end with.
NOT_SECRET_NAMES = frozenset({"pwd", "oldpwd", "keypass_file"})

# Names whose long hex/base64 values are checksums or ids, not credentials (`commit=3f9a...`).
HASH_NAMES = frozenset({
    "sha", "sha1", "sha224", "sha256", "sha384", "sha512", "md5", "hash", "digest", "checksum",
    "commit", "rev", "revision", "ref", "oid", "tree", "parent", "head", "etag", "integrity",
    "id", "ids", "uuid", "guid", "nonce", "fingerprint", "blob", "object", "version", "build",
    "sum", "crc", "crc32", "image", "layer", "container", "tag", "run", "trace", "span", "request",
})

# Values that are types, booleans or prose after `password:` / `token:`, never credentials.
SAFE_WORDS = frozenset({
    "none", "null", "nil", "undefined", "true", "false", "yes", "no", "on", "off", "str", "string",
    "bytes", "int", "bool", "any", "object", "required", "optional", "missing", "invalid",
    "expired", "revoked", "set", "unset", "not", "empty", "provided", "present", "configured",
    "supplied", "hidden", "masked", "redacted", "enabled", "disabled", "ok", "valid", "found",
    "needed", "default", "is", "was", "the", "a", "an", "for", "of", "to", "and", "or", "in",
    "with", "from", "your", "this", "that", "see", "float", "dict", "list", "tuple", "path",
    "callable", "sequence", "mapping", "secretstr", "lambda", "self", "cls",
})
