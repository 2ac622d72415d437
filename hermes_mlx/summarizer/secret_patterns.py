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
    ("pypi-any", r"pypi-[A-Za-z0-9_\-]{40,}"),  # a token from another index, or a hand-made one
    ("docker-hub", r"dckr_(?:pat|oat)_[A-Za-z0-9_\-]{20,}"),
    ("bitbucket", r"ATBB[A-Za-z0-9_=.\-]{28,}"),
    ("buildkite", r"bkua_[A-Za-z0-9]{32,}"),
    ("circleci", r"CCIPAT_[A-Za-z0-9_]{20,}"),
    ("rubygems", r"rubygems_[a-f0-9]{48}"),
    ("clojars", r"CLOJARS_[A-Za-z0-9]{60}"),
    ("artifactory", r"AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59}"),
    ("atlassian", r"ATATT3[A-Za-z0-9_\-=]{100,}"),
    ("readme", r"rdme_[a-z0-9]{70}"),
    # Cloud
    ("aws-access-key-id", r"A(?:3T[A-Z0-9]|KIA|SIA|BIA|CCA)[A-Z0-9]{16}"),
    ("aws-access-key-id-exact", r"A(?:3T[A-Z0-9]|KIA|SIA|BIA|CCA)[A-Z0-9]{16}(?![A-Za-z0-9])"),  # no digit needed
    ("alibaba", r"LTAI[A-Za-z0-9]{20}"),
    ("digitalocean", r"do[opr]_v1_[a-f0-9]{64}"),
    ("heroku-v2", r"HRKU-AA[0-9A-Za-z_\-]{58}"),
    ("databricks", r"dapi[a-f0-9]{32}(?:-\d)?"),
    ("doppler", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}"),
    ("vault", r"hv[sbr]\.[A-Za-z0-9_\-]{24,}"),
    # Vault before 1.10: s. (service), b. (batch), r. (recovery) and ~24 characters; loose (`s.` is common)
    (
        "vault-legacy",
        r"s\.[A-Za-z0-9]{20,30}(?![A-Za-z0-9_\-])|b\.[A-Za-z0-9]{20,30}(?![A-Za-z0-9_\-])|r\.[A-Za-z0-9]{20,30}(?![A-Za-z0-9_\-])",
    ),
    ("supabase", r"sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_\-]{20,}"),
    ("neon", r"napi_[A-Za-z0-9]{40,}"),
    ("netlify", r"nfp_[A-Za-z0-9]{36,}"),
    ("render", r"rnd_[A-Za-z0-9]{24,}"),
    ("tailscale", r"tskey-[a-z]{3,8}-[A-Za-z0-9_\-]{20,}"),
    ("dropbox", r"sl\.[A-Za-z0-9_\-]{130,}"),
    ("mapbox-secret", r"sk\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{10,}"),
    ("pulumi", r"pul-[a-f0-9]{40}"),
    ("flyio", r"fo1_[A-Za-z0-9_\-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}"),
    ("planetscale", r"pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.\-]{32,}"),
    ("openshift", r"sha256~[A-Za-z0-9_\-]{43}"),
    ("cloudflare-origin-ca", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}"),
    ("dynatrace", r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}"),
    ("grafana", r"glc_[A-Za-z0-9+/]{32,}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|eyJrIjoi[A-Za-z0-9]{70,}"),
    (
        "harness",
        r"pat\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}|sat\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}",
    ),
    ("sentry", r"sntry[us]_[A-Za-z0-9+/=_]{40,}"),
    ("newrelic", r"NR(?:AK|JS|II)-[A-Za-z0-9\-]{19,}"),
    ("octopus-deploy", r"API-[A-Z0-9]{26}"),
    ("prefect", r"pnu_[A-Za-z0-9]{36}"),
    ("infracost", r"ico-[A-Za-z0-9]{32}"),
    ("scalingo", r"tk-us-[A-Za-z0-9_\-]{48}"),
    ("age", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    ("1password", r"ops_eyJ[A-Za-z0-9+/]{100,}|A3-[A-Z0-9]{6}-[A-Z0-9]{5,11}-[A-Z0-9\-]{17,}"),
    # Messaging
    ("slack-token", r"xox[abposredc]-[A-Za-z0-9\-]{10,}|xoxe\.xox[bp]-\d-[A-Za-z0-9]{100,}|xapp-\d-[A-Za-z0-9\-]{20,}"),
    ("slack-webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_]{20,}"),
    ("discord-webhook", r"discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]{40,}"),
    ("twilio", r"AC[a-fA-F0-9]{32}|SK[a-fA-F0-9]{32}"),
    ("sendgrid", r"SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{20,}"),
    ("sendinblue", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    ("mailgun", r"key-[a-f0-9]{32}|pubkey-[a-f0-9]{32}"),
    # Payments and commerce
    (
        "stripe",
        r"sk_(?:live|test|prod)_[A-Za-z0-9]{10,}|rk_(?:live|test|prod)_[A-Za-z0-9]{10,}|pk_(?:live|test|prod)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{24,}",
    ),
    ("square", r"sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,}|EAAA[A-Za-z0-9_\-]{40,}"),
    ("shopify", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    ("shippo", r"shippo_(?:live|test)_[a-fA-F0-9]{40}"),
    ("flutterwave", r"FLW(?:SECK|PUBK)_TEST-[a-hA-H0-9]{12,}(?:-X)?"),
    ("duffel", r"duffel_(?:test|live)_[A-Za-z0-9_\-=]{43}"),
    ("easypost", r"EZ[AT]K[A-Za-z0-9]{54}"),
    ("facebook-page", r"EAA[MC][A-Za-z0-9]{100,}"),
    ("postman", r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}"),
    ("linear", r"lin_api_[A-Za-z0-9]{40}"),
    ("figma", r"figd_[A-Za-z0-9_\-]{30,}"),
    ("airtable", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}"),
    ("contentful", r"CFPAT-[A-Za-z0-9_\-]{40,}"),
    ("pinecone", r"pcsk_[A-Za-z0-9_]{30,}"),
    ("resend", r"re_[A-Za-z0-9]{8}_[A-Za-z0-9]{24}"),
    ("cerebras", r"csk-[a-z0-9]{40,}"),
    ("notion", r"ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43}"),
    ("typeform", r"tfp_[A-Za-z0-9_.=\-]{59}"),
    ("frameio", r"fio-u-[A-Za-z0-9_=\-]{64}"),
    ("adobe", r"p8e-[A-Za-z0-9]{32}"),
    ("intra42", r"s-s4t2(?:ud|af)-[a-fA-F0-9]{64}"),
    ("settlemint", r"sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}"),
    ("yandex", r"AQVN[A-Za-z0-9_\-]{35,38}|t1\.[A-Za-z0-9_\-]+=*\.[A-Za-z0-9_\-]{86}=*"),
    # Generic token shapes
    # the signature is optional: a JWT wrapped over lines leaves `header.payload...` on one line
    ("jwt", r"ey[A-Za-z0-9_\-]{10,}\.ey[A-Za-z0-9_\-]{10,}(?:\.[A-Za-z0-9_\-+/=]*)?"),
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
LOOSE_RULES = frozenset(
    {
        "openai",
        "octopus-deploy",
        "discord-bot",
        "telegram-bot",
        "twilio",
        "mailgun",
        "mailchimp",
        "maxmind",
        "terraform",
        "square",
        "facebook-page",
        "notion",
        "yandex",
        "sendgrid",
        "artifactory",
        "grafana",
        "1password",
        "aws-access-key-id",
        "jwt",
        "vault-legacy",
        "pypi-any",
    }
)

# Shapes that are not one token run: matched as they are, never widened.
AZURE_AD_SECRET = r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}"

# Command lines (redact_commands.py): (gate words in the lowered text, command, flag with its
# separator); each such flag's value on that command's line goes.
CLI_PASSWORD_FLAGS = [
    (("ssh-keygen",), r"ssh-keygen", r"-[NP](?:[ \t]+|(?=\S))"),  # new / old passphrase
    (("keytool", "jarsigner"), r"keytool|jarsigner", r"-(?:src|dest)?(?:store|key)?pass(?:[ \t]+)|-new[ \t]+"),
    (("openssl",), r"openssl", r"-(?:passin|passout|pass|k|kfile)[ \t]+"),
    (("zip ",), r"(?:un)?zip(?:cloak)?", r"-P[ \t]+|--password[ \t]+"),
    (("7z ", "7za ", "rar "), r"7z[ar]?|(?:un)?rar", r"-p(?=[^\s\-])"),
    (("ldap",), r"ldap\w+", r"-w[ \t]+"),
    (("mosquitto",), r"mosquitto_\w+", r"-P[ \t]+"),
    (("freerdp", "rdesktop"), r"\w*freerdp|rdesktop", r"/p:|-p[ \t]+"),
    (("snmp",), r"snmp\w+", r"-[AX][ \t]+"),
    (("twine",), r"twine", r"-p[ \t]+|--password[ \t]+"),
]

# A private key body by its first bytes, when its BEGIN line was cut off: OpenSSH
# (`openssh-key-v1`), PKCS#1 RSA/DSA, PKCS#8 (plain and encrypted), SEC1 EC, Ed25519 PKCS#8.
# A private key's END line, as PEM and its variants write it (redact.py, redact_context.py).
KEY_END = r"-{4,5} ?END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)? ?-{4,5}"
# The characters of a token run: what a secret value is made of, for growing a match to its run.
TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/=.")
KEY_BODY_STARTS = (
    r"b3BlbnNzaC1rZXktdjE|MII[A-Za-z0-9+/]{3}IBAAK|MII[A-Za-z0-9+/]{3}IBADANBgkqhkiG9w0BAQEFAAS"
    r"|MII[A-Za-z0-9+/]{3}DBOBgkqhkiG9w0BBQ0w|MHcCAQEE|MIGkAgEBBD|MIG[A-Za-z0-9+/]AgEAMBMGByqGSM49AgEGCC"
    r"|MC4CAQAwBQYDK2VwBCIEI"
)
KEY_BODY_WORDS = ("b3BlbnNzaC1rZXktdjE", "IBAAK", "BgkqhkiG9w0B", "MHcCAQEE", "MIGkAgEBBD", "GSM49AgEGCC", "MC4CAQAw")
