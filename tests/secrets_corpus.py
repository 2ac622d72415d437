"""A corpus of planted credentials for the redaction tests, built at test time from a seeded RNG.

Sources: gitleaks' default rules (config/gitleaks.toml, rule ids kept below) and detect-secrets
1.5 plugins (plugins/*.py), plus the leaks found in our own summaries (Azure connection string,
`TOKEN=<hex> ./deploy.sh`, `mysql -p...`, the last character of an `npm_` token). No value is
written out literally: each is a provider prefix plus random characters of the right alphabet
and length, so no real secret is committed and no secret scanner trips on this file.
"""

from __future__ import annotations

import base64
import random
import string
from dataclasses import dataclass

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
DIGITS = string.digits
ALNUM = LOWER + UPPER + DIGITS
LOWER_ALNUM = LOWER + DIGITS
UPPER_ALNUM = UPPER + DIGITS
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"


@dataclass(frozen=True)
class Case:
    rule: str  # gitleaks or detect-secrets rule id, or ours
    text: str  # what a tool or a file would show
    secrets: tuple[str, ...]  # values of which no 8-character run may survive redaction


class Gen:
    """Random strings from a fixed seed, so a failure names the same value on every run."""

    def __init__(self, seed: int = 20260127):
        self.rng = random.Random(seed)

    def s(self, alphabet: str, n: int) -> str:
        # Force a digit and both cases in where the alphabet has them, as generated keys do.
        out = [self.rng.choice(alphabet) for _ in range(n)]
        for i, pool in enumerate((DIGITS, LOWER, UPPER)):
            if n > 8 and any(c in alphabet for c in pool):
                out[1 + 3 * i] = self.rng.choice([c for c in pool if c in alphabet])
        return "".join(out)

    def uuid(self) -> str:
        h = self.s(HEX, 32)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"

    def b64(self, nbytes: int) -> str:
        return base64.b64encode(bytes(self.rng.randrange(256) for _ in range(nbytes))).decode()

    def password(self) -> str:
        return self.s(ALNUM, 10) + self.rng.choice("!#%*+-.@^~") + self.s(ALNUM, 3)


def provider_keys(g: Gen) -> dict[str, str]:
    """Rule id -> a value in that provider's format (gitleaks / detect-secrets shapes)."""
    return {
        "anthropic-api-key": "sk-ant-api03-" + g.s(B64URL, 93) + "AA",
        "anthropic-admin-api-key": "sk-ant-admin01-" + g.s(B64URL, 93) + "AA",
        "openai-api-key": "sk-proj-" + g.s(B64URL, 58) + "T3BlbkFJ" + g.s(B64URL, 58),
        "openai-legacy": "sk-" + g.s(ALNUM, 20) + "T3BlbkFJ" + g.s(ALNUM, 20),
        "openrouter": "sk-or-v1-" + g.s(HEX, 64),
        "groq": "gsk_" + g.s(ALNUM, 52),
        "replicate": "r8_" + g.s(ALNUM, 37),
        "huggingface-access-token": "hf_" + g.s(LOWER + UPPER, 34),
        "huggingface-organization-api-token": "api_org_" + g.s(LOWER + UPPER, 34),
        "perplexity-api-key": "pplx-" + g.s(ALNUM, 48),
        "xai": "xai-" + g.s(ALNUM, 80),
        "gcp-api-key": "AIza" + g.s(B64URL, 35),
        "google-oauth-access-token": "ya29." + g.s(B64URL, 120),
        "google-oauth-client-secret": "GOCSPX-" + g.s(B64URL, 28),
        "github-pat": "ghp_" + g.s(ALNUM, 36),
        "github-oauth": "gho_" + g.s(ALNUM, 36),
        "github-app-token-user": "ghu_" + g.s(ALNUM, 36),
        "github-app-token-server": "ghs_" + g.s(ALNUM, 36),
        "github-refresh-token": "ghr_" + g.s(ALNUM, 36),
        "github-fine-grained-pat": "github_pat_" + g.s(ALNUM, 22) + "_" + g.s(ALNUM, 59),
        "gitlab-pat": "glpat-" + g.s(B64URL, 20),
        "gitlab-pat-routable": "glpat-" + g.s(ALNUM, 40) + ".01." + g.s(LOWER_ALNUM, 7),
        "gitlab-deploy-token": "gldt-" + g.s(B64URL, 20),
        "gitlab-feed-token": "glft-" + g.s(B64URL, 20),
        "gitlab-scim-token": "glsoat-" + g.s(B64URL, 20),
        "gitlab-runner-authentication-token": "glrt-" + g.s(B64URL, 20),
        "gitlab-feature-flag-client-token": "glffct-" + g.s(B64URL, 20),
        "gitlab-cicd-job-token": "glcbt-" + g.s(ALNUM, 2) + "_" + g.s(B64URL, 20),
        "gitlab-incoming-mail-token": "glimt-" + g.s(B64URL, 25),
        "gitlab-ptt": "glptt-" + g.s(HEX, 40),
        "gitlab-kubernetes-agent-token": "glagent-" + g.s(B64URL, 50),
        "gitlab-oauth-app-secret": "gloas-" + g.s(B64URL, 64),
        "gitlab-rrt": "GR1348941" + g.s(B64URL, 20),
        "npm-access-token": "npm_" + g.s(ALNUM, 36),
        "pypi-upload-token": "pypi-AgEIcHlwaS5vcmc" + g.s(B64URL, 150),
        "pypi-test-upload-token": "pypi-AgENdGVzdC5weXBpLm9yZw" + g.s(B64URL, 120),
        "rubygems-api-token": "rubygems_" + g.s(HEX, 48),
        "clojars-api-token": "CLOJARS_" + g.s(LOWER_ALNUM, 60),
        "artifactory-api-key": "AKCp" + g.s(ALNUM, 69),
        "artifactory-reference-token": "cmVmd" + g.s(ALNUM, 59),
        "atlassian-api-token": "ATATT3" + g.s(B64URL, 186),
        "readme-api-token": "rdme_" + g.s(LOWER_ALNUM, 70),
        "aws-access-token": "AKIA" + g.s(UPPER_ALNUM, 16),
        "aws-sts-token": "ASIA" + g.s(UPPER_ALNUM, 16),
        "alibaba-access-key-id": "LTAI" + g.s(ALNUM, 20),
        "digitalocean-pat": "dop_v1_" + g.s(HEX, 64),
        "digitalocean-access-token": "doo_v1_" + g.s(HEX, 64),
        "digitalocean-refresh-token": "dor_v1_" + g.s(HEX, 64),
        "heroku-api-key-v2": "HRKU-AA" + g.s(B64URL, 58),
        "databricks-api-token": "dapi" + g.s(HEX, 32),
        "doppler-api-token": "dp.pt." + g.s(ALNUM, 43),
        "vault-service-token": "hvs." + g.s(B64URL, 95),
        "vault-batch-token": "hvb." + g.s(B64URL, 140),
        "pulumi-api-token": "pul-" + g.s(HEX, 40),
        "hashicorp-tf-api-token": g.s(LOWER_ALNUM, 14) + ".atlasv1." + g.s(LOWER_ALNUM + "-_", 64),
        "flyio-access-token": "fo1_" + g.s(B64URL, 43),
        "planetscale-api-token": "pscale_tkn_" + g.s(B64URL, 43),
        "planetscale-password": "pscale_pw_" + g.s(B64URL, 43),
        "openshift-user-token": "sha256~" + g.s(B64URL, 43),
        "dynatrace-api-token": "dt0c01." + g.s(UPPER_ALNUM, 24) + "." + g.s(UPPER_ALNUM, 64),
        "grafana-cloud-api-token": "glc_" + g.s(B64, 60),
        "grafana-service-account-token": "glsa_" + g.s(ALNUM, 32) + "_" + g.s(HEX, 8),
        "grafana-api-key": "eyJrIjoi" + g.s(ALNUM, 80),
        "harness-api-key": "pat." + g.s(B64URL, 22) + "." + g.s(ALNUM, 24) + "." + g.s(ALNUM, 20),
        "sentry-user-token": "sntryu_" + g.s(HEX, 64),
        "new-relic-user-api-key": "NRAK-" + g.s(UPPER_ALNUM, 27),
        "octopus-deploy-api-key": "API-" + g.s(UPPER_ALNUM, 26),
        "prefect-api-token": "pnu_" + g.s(ALNUM, 36),
        "infracost-api-token": "ico-" + g.s(ALNUM, 32),
        "scalingo-api-token": "tk-us-" + g.s(B64URL, 48),
        "age-secret-key": "AGE-SECRET-KEY-1"
        + "".join(g.rng.choice("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L") for _ in range(58)),
        "slack-bot-token": "xoxb-" + g.s(DIGITS, 12) + "-" + g.s(DIGITS, 13) + "-" + g.s(ALNUM, 24),
        "slack-user-token": "xoxp-" + "-".join(g.s(DIGITS, 12) for _ in range(3)) + "-" + g.s(HEX, 32),
        "slack-legacy-workspace-token": "xoxa-2-" + g.s(ALNUM, 40),
        "slack-app-token": "xapp-1-A" + g.s(UPPER_ALNUM, 10) + "-" + g.s(DIGITS, 13) + "-" + g.s(HEX, 64),
        "slack-config-access-token": "xoxe.xoxp-1-" + g.s(UPPER_ALNUM, 164),
        "slack-webhook-url": "https://hooks.slack.com/services/T"
        + g.s(UPPER_ALNUM, 10)
        + "/B"
        + g.s(UPPER_ALNUM, 10)
        + "/"
        + g.s(ALNUM, 24),
        "discord-bot-token": "M" + g.s(B64URL, 25) + "." + g.s(B64URL, 6) + "." + g.s(B64URL, 38),
        "discord-webhook": "https://discord.com/api/webhooks/" + g.s(DIGITS, 18) + "/" + g.s(B64URL, 68),
        "telegram-bot-api-token": g.s(DIGITS, 10) + ":AA" + g.s(B64URL, 33),
        "twilio-api-key": "SK" + g.s(HEX, 32),
        "twilio-account-sid": "AC" + g.s(HEX, 32),
        "sendgrid-api-token": "SG." + g.s(B64URL, 22) + "." + g.s(B64URL, 43),
        "sendinblue-api-token": "xkeysib-" + g.s(HEX, 64) + "-" + g.s(ALNUM, 16),
        "mailgun-private-api-token": "key-" + g.s(HEX, 32),
        "mailchimp-api-key": g.s(HEX, 32) + "-us" + g.s(DIGITS, 2),
        "stripe-access-token": "sk_live_" + g.s(ALNUM, 99),
        "stripe-restricted": "rk_test_" + g.s(ALNUM, 24),
        "stripe-webhook-secret": "whsec_" + g.s(ALNUM, 32),
        "square-access-token": "sq0atp-" + g.s(B64URL, 22),
        "square-oauth-secret": "sq0csp-" + g.s(B64URL, 43),
        "shopify-access-token": "shpat_" + g.s(HEX, 32),
        "shopify-custom-access-token": "shpca_" + g.s(HEX, 32),
        "shopify-private-app-access-token": "shppa_" + g.s(HEX, 32),
        "shopify-shared-secret": "shpss_" + g.s(HEX, 32),
        "shippo-api-token": "shippo_live_" + g.s(HEX, 40),
        "flutterwave-secret-key": "FLWSECK_TEST-" + g.s("abcdefgh0123456789", 32) + "-X",
        "duffel-api-token": "duffel_live_" + g.s(B64URL, 43),
        "easypost-api-token": "EZAK" + g.s(ALNUM, 54),
        "facebook-page-access-token": "EAAM" + g.s(ALNUM, 120),
        "postman-api-token": "PMAK-" + g.s(HEX, 24) + "-" + g.s(HEX, 34),
        "linear-api-key": "lin_api_" + g.s(ALNUM, 40),
        "notion-api-token": "ntn_" + g.s(DIGITS, 11) + g.s(ALNUM, 35),
        "typeform-api-token": "tfp_" + g.s(B64URL, 59),
        "frameio-api-token": "fio-u-" + g.s(B64URL, 64),
        "adobe-client-secret": "p8e-" + g.s(ALNUM, 32),
        "settlemint-personal-access-token": "sm_pat_" + g.s(ALNUM, 16),
        "maxmind-license-key": g.s(ALNUM, 6) + "_" + g.s(ALNUM, 29) + "_mmk",
        "langsmith": "lsv2_pt_" + g.s(HEX, 32) + "_" + g.s(HEX, 10),
        "azure-ad-client-secret": g.s(ALNUM, 3) + "8Q~" + g.s(ALNUM + "_~.", 34),
        "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ" + g.s(B64URL, 60) + "." + g.s(B64URL, 43),
    }


# gitleaks rules that only fire next to the provider's name: (rule id, name word, alphabet, length).
NAMED_RULES = [
    ("adafruit-api-key", "adafruit", LOWER_ALNUM + "_-", 32),
    ("airtable-api-key", "airtable", LOWER_ALNUM, 17),
    ("algolia-api-key", "algolia", LOWER_ALNUM, 32),
    ("asana-client-secret", "asana", LOWER_ALNUM, 32),
    ("bitbucket-client-secret", "bitbucket", B64URL, 64),
    ("cloudflare-api-key", "cloudflare", LOWER_ALNUM + "_-", 40),
    ("codecov-access-token", "codecov", LOWER_ALNUM, 32),
    ("cohere-api-token", "cohere", ALNUM, 40),
    ("coinbase-access-token", "coinbase", LOWER_ALNUM + "_-", 64),
    ("confluent-secret-key", "confluent", LOWER_ALNUM, 64),
    ("contentful-delivery-api-token", "contentful", B64URL, 43),
    ("datadog-access-token", "datadog", LOWER_ALNUM, 40),
    ("discord-client-secret", "discord", B64URL, 32),
    ("dropbox-api-token", "dropbox", LOWER_ALNUM, 15),
    ("etsy-access-token", "etsy", LOWER_ALNUM, 24),
    ("facebook-secret", "facebook", HEX, 32),
    ("fastly-api-token", "fastly", B64URL, 32),
    ("finicity-client-secret", "finicity", LOWER_ALNUM, 20),
    ("flickr-access-token", "flickr", LOWER_ALNUM, 32),
    ("freshbooks-access-token", "freshbooks", LOWER_ALNUM, 64),
    ("gitter-access-token", "gitter", LOWER_ALNUM + "_-", 40),
    ("intercom-api-key", "intercom", B64URL, 60),
    ("jfrog-api-key", "jfrog", LOWER_ALNUM, 73),
    ("kraken-access-token", "kraken", B64, 86),
    ("kucoin-access-token", "kucoin", HEX, 24),
    ("launchdarkly-access-token", "launchdarkly", B64URL, 40),
    ("linear-client-secret", "linear", HEX, 32),
    ("linkedin-client-secret", "linkedin", LOWER_ALNUM, 16),
    ("mattermost-access-token", "mattermost", LOWER_ALNUM, 26),
    ("messagebird-api-token", "messagebird", LOWER_ALNUM, 25),
    ("netlify-access-token", "netlify", B64URL, 40),
    ("new-relic-user-api-id", "newrelic", LOWER_ALNUM, 64),
    ("nytimes-access-token", "nytimes", B64URL, 32),
    ("plaid-secret-key", "plaid", LOWER_ALNUM, 30),
    ("rapidapi-access-token", "rapidapi", B64URL, 50),
    ("sendbird-access-token", "sendbird", HEX, 40),
    ("sentry-access-token", "sentry", HEX, 64),
    ("sonar-api-token", "sonar", B64URL, 40),
    ("sumologic-access-token", "sumo", LOWER_ALNUM, 64),
    ("travisci-access-token", "travis", LOWER_ALNUM, 22),
    ("twitch-api-token", "twitch", LOWER_ALNUM, 30),
    ("twitter-api-secret", "twitter", LOWER_ALNUM, 50),
    ("twitter-access-secret", "twitter", LOWER_ALNUM, 45),
    ("yandex-api-key", "yandex", B64URL, 39),
    ("mistral", "mistral", ALNUM, 32),
    ("deepseek", "deepseek", HEX, 32),
    ("together", "together", HEX, 64),
]
NAMED_SUFFIXES = ["_API_KEY", "_TOKEN", "_SECRET", "_ACCESS_TOKEN", "_CLIENT_SECRET", "ApiKey", ".api.key", "-secret"]


def _contexts(g: Gen, value: str) -> list[str]:
    """A bare provider key as agents meet it: prose, env, JSON, YAML, URLs, headers, code."""
    return [
        f"the key is {value} ok",
        f"export SERVICE_CONFIG={value}",
        f'{{"value": "{value}", "n": 1}}',
        f"  setting: {value}",
        f"`{value}`.",
        f"https://api.example.com/v1/items?key={value}&page=2",
        f"Authorization: Bearer {value}",
        f"client = Client('{value}')",
        f'"{{\\"cfg\\": \\"{value}\\"}}"',
    ]


def _pem(g: Gen, kind: str) -> str:
    body = "\n".join(g.s(B64, 64) for _ in range(6))
    return f"-----BEGIN {kind}-----\n{body}\n{g.s(B64, 20)}==\n-----END {kind}-----"


def context_cases(g: Gen) -> list[Case]:
    """Credentials recognised by where they sit, not by a prefix; the issue's leaks come first."""
    acct_key = g.b64(64)
    hex64, hex32 = g.s(HEX, 64), g.s(HEX, 32)
    pw = [g.password() for _ in range(31)]
    r = [
        g.s(B64URL, 40),
        g.s(ALNUM, 40),
        g.s(ALNUM, 32),
        g.s(LOWER_ALNUM, 32),
        g.s(ALNUM, 32),
        g.s(B64URL, 40),
        g.s(LOWER_ALNUM, 32),
    ]
    sb_key, uuid, k8s = g.b64(32), g.uuid(), base64.b64encode(pw[29].encode()).decode()
    npm_long = "npm_" + g.s(ALNUM, 37)
    sa_key = g.s(B64, 64) + "\\n" + g.s(B64, 64) + "\\n" + g.s(B64, 40)
    basic = base64.b64encode(f"deploy:{pw[12]}".encode()).decode()
    docker_auth = base64.b64encode(f"me:{pw[13]}".encode()).decode()
    aws_secret = g.s(B64, 40)
    sas_sig = g.s(ALNUM, 40) + "%2B" + g.s(ALNUM, 6) + "%3D"
    cases = [
        Case(
            "azure-storage-connection-string",
            f"DefaultEndpointsProtocol=https;AccountName=x;AccountKey={acct_key};EndpointSuffix=core.windows.net",
            (acct_key,),
        ),
        Case("azure-sas", f"https://acct.blob.core.windows.net/c?sv=2022-11-02&ss=b&sig={sas_sig}", (sas_sig,)),
        Case(
            "azure-servicebus",
            f"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey={sb_key}",
            (sb_key,),
        ),
        Case("env-prefix-hex", f"TOKEN={hex64} ./deploy.sh --prod", (hex64,)),
        Case("env-prefix-any-name", f"X={hex32} make release", (hex32,)),
        Case("flag-token", f"deploy --token {pw[0]} --env prod", (pw[0],)),
        Case("mysql-p-attached", f"mysql -p{pw[1]}", (pw[1],)),
        Case("mysql-u-root", f"mysql -u root -p{pw[2]} db", (pw[2],)),
        Case("mysql-password-flag", f"mysqldump --password={pw[3]} --all-databases > dump.sql", (pw[3],)),
        Case("pgpassword", f"PGPASSWORD={pw[4]} psql -h db -U app", (pw[4],)),
        Case("mysql-pwd", f"MYSQL_PWD='{pw[5]}' mysql -h db", (pw[5],)),
        Case("sshpass", f"sshpass -p '{pw[6]}' ssh deploy@10.0.0.5", (pw[6],)),
        Case("sshpass-env", f"SSHPASS={pw[7]} sshpass -e ssh host", (pw[7],)),
        Case("npm-partial-match", f"NPM_TOKEN={npm_long}", (npm_long,)),
        Case(
            "gcp-service-account",
            '{"type": "service_account", "private_key_id": "abc", "private_key": '
            f'"-----BEGIN PRIVATE KEY-----\\n{sa_key}\\n-----END PRIVATE KEY-----\\n", "client_email": "x@p.iam.gserviceaccount.com"}}',
            (sa_key[:60], sa_key[-40:]),
        ),
        Case("docker-config-auths", f'{{"auths": {{"ghcr.io": {{"auth": "{docker_auth}"}}}}}}', (docker_auth,)),
        Case("docker-identitytoken", f'{{"auths": {{"x.azurecr.io": {{"identitytoken": "{r[0]}"}}}}}}', (r[0],)),
        Case("docker-login", f"docker login -u me -p {pw[8]} registry.example.com", (pw[8],)),
        Case("npmrc", f"//registry.npmjs.org/:_authToken={uuid}", (uuid,)),
        Case("pypirc", f"[pypi]\nusername = __token__\npassword = {pw[9]}\n", (pw[9],)),
        Case("netrc", f"machine api.heroku.com login me@example.com password {pw[10]}", (pw[10],)),
        Case("env-password", f"DB_PASSWORD={pw[11]}", (pw[11],)),
        Case("yaml-secret", f'auth:\n  client_secret: {pw[14]}\n  secret: "{pw[15]}"\n', (pw[14], pw[15])),
        Case("json-password", f'{{"username": "app", "password": "{pw[16]}"}}', (pw[16],)),
        Case("ini-password", f"[database]\npassword = {pw[17]}\nhost = db\n", (pw[17],)),
        Case("toml-api-key", f'api_key = "{pw[18]}"', (pw[18],)),
        Case("xml-password", f"<config><password>{pw[19]}</password></config>", (pw[19],)),
        Case("url-userinfo", f"DATABASE_URL=postgres://app:{pw[20]}@db.internal:5432/app", (pw[20],)),
        Case("url-redis-no-user", f"redis://:{pw[21]}@cache:6379/0", (pw[21],)),
        Case("url-mongodb-srv", f"mongodb+srv://admin:{pw[22]}@cluster0.x.mongodb.net/test", (pw[22],)),
        Case("authorization-basic", f"Authorization: Basic {basic}", (basic,)),
        Case("authorization-raw", f'headers = {{"Authorization": "{r[1]}"}}', (r[1],)),
        Case("curl-auth-user", f"curl -u admin:{pw[23]} https://x.example.com", (pw[23],)),
        Case("curl-api-key-header", f"curl -H 'X-Api-Key: {r[2]}' https://api.example.com", (r[2],)),
        Case("curl-auth-header", f'curl -s -H "X-Auth-Token: {pw[24]}" https://api.example.com', (pw[24],)),
        Case("cookie-header", f"Cookie: sessionid={r[3]}; csrftoken={r[4]}", (r[3], r[4])),
        Case("set-cookie", f"Set-Cookie: session={r[5]}; Path=/; HttpOnly", (r[5],)),
        Case("session-cookie-json", f'{{"name": "sessionid", "sessionid": "{r[6]}"}}', (r[6],)),
        Case("curl-cookie", f"curl -b 'sessionid={pw[25]}' https://x.example.com", (pw[25],)),
        Case("python-kwarg", f'client = OpenAI(api_key="{pw[26]}")', (pw[26],)),
        Case("requests-auth-tuple", f'requests.get(url, auth=("user", "{pw[27]}"))', (pw[27],)),
        Case("aws-secret-env-prefix", f"AWS_SECRET_ACCESS_KEY={aws_secret} aws s3 ls", (aws_secret,)),
        Case("powershell-env", f'$env:OPENAI_API_KEY = "{pw[28]}"', (pw[28],)),
        Case("k8s-secret", f"kind: Secret\ndata:\n  password: {k8s}\n", (k8s,)),
        Case("redis-cli", f"redis-cli -h cache -a {pw[30]} ping", (pw[30],)),
    ]
    for kind in (
        "RSA PRIVATE KEY",
        "EC PRIVATE KEY",
        "OPENSSH PRIVATE KEY",
        "PRIVATE KEY",
        "ENCRYPTED PRIVATE KEY",
        "DSA PRIVATE KEY",
    ):
        pem = _pem(g, kind)
        cases.append(
            Case(f"private-key-{kind.split()[0].lower()}", f"$ cat id\n{pem}\n$ ls", tuple(pem.splitlines()[1:-1]))
        )
    pgp = _pem(g, "PGP PRIVATE KEY BLOCK")
    cases.append(Case("private-key-pgp", pgp, tuple(pgp.splitlines()[1:-1])))
    return cases


def build_corpus(seed: int = 20260127) -> list[Case]:
    g = Gen(seed)
    cases = []
    for rule, value in provider_keys(g).items():
        secret = value.split("://")[-1]  # a webhook's scheme is not the secret
        for i, text in enumerate(_contexts(g, value)):
            cases.append(Case(f"{rule}#{i}", text, (secret,)))
        longer = value + g.s(ALNUM, 3)  # longer than its pattern: no tail may survive
        cases.append(Case(f"{rule}#longer", f"KEY_VALUE={longer} next", (longer.split("://")[-1],)))
    for rule, word, alphabet, n in NAMED_RULES:
        for i, suffix in enumerate(NAMED_SUFFIXES):
            value = g.s(alphabet, n)
            name = word.upper() + suffix if suffix.isupper() or suffix[0] == "_" else word + suffix
            sep = (" = ", ": ", "=", '": "')[i % 4]
            text = f'"{name}{sep}{value}"' if sep.startswith('"') else f"{name}{sep}{value}"
            cases.append(Case(f"{rule}#{suffix}", text, (value,)))
    return cases + context_cases(g) + hostile_cases(g) + round_three_cases(Gen(seed + 28))


def _hostile_password(g: Gen) -> str:
    """A typed password: letters and digits with symbols anywhere, `&`, `;` and `/` included."""
    chars = [g.rng.choice(ALNUM) for _ in range(g.rng.randrange(9, 16))]
    for _ in range(g.rng.randrange(1, 4)):
        chars.insert(g.rng.randrange(1, len(chars)), g.rng.choice("!#%&*+-.@^~/=?;_"))
    chars[0], chars[-1] = g.rng.choice(ALNUM), g.rng.choice(DIGITS)
    return "".join(chars)


def _jwt(g: Gen) -> str:
    header = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    claims = f'{{"sub":"{g.s(ALNUM, 12)}","iat":{g.rng.randrange(10**9, 2 * 10**9)},"role":"admin"}}'
    payload = base64.urlsafe_b64encode(claims.encode()).decode().rstrip("=")
    return f"{header}.{payload}.{g.s(B64URL, 43)}"


def _wrap(g: Gen, value: str, sep: str = "\n") -> str:
    """The value cut in two to four pieces at random places, one per line."""
    cuts = sorted(g.rng.sample(range(8, len(value) - 8), g.rng.randrange(1, 4)))
    return sep.join(value[a:b] for a, b in zip([0, *cuts], [*cuts, len(value)]))


PROSE = [
    "the password is {}",
    "The password for the staging db is {}.",
    "my passphrase is {} (do not share)",
    "Use password {} for the admin account",
    "the root password was changed to {} yesterday",
    'The new password will be "{}" from Monday',
    "your password has been reset to {}",
    "admin password -> {}",
    "Password (prod): {}",
    "passwd is {} btw",
    "the password is\n{}",
    "here's the password: {}",
    "PASSWORD {}",
    "the passphrase for deploy_key is '{}'",
    "The API key is {} and it expires in May",
    "my access token is now {}",
]
CLI = [
    ("ssh-keygen", "ssh-keygen -t ed25519 -N '{}' -f ~/.ssh/deploy_ed25519"),
    ("ssh-keygen", 'ssh-keygen -q -N "{}" -C ops@example.com -f key'),
    ("ssh-keygen", "ssh-keygen -p -P {} -N {} -f ~/.ssh/id_rsa"),
    ("htpasswd", "htpasswd -b .htpasswd admin {}"),
    ("htpasswd", "sudo htpasswd -bc /etc/nginx/.htpasswd deploy '{}'"),
    ("htpasswd", "htpasswd -nbB bob {}"),
    ("htpasswd", "htpasswd -b -C 12 /etc/apache2/.htpasswd alice {}"),
    ("mysql", "mysql -uroot -p{} app_db"),
    ("mysql", "mysqladmin -u root --password={} status"),
    ("sshpass", "sshpass -p{} ssh deploy@10.1.2.3"),
    ("openssl", "openssl pkcs12 -export -in c.pem -passout pass:{} -out c.p12"),
    ("openssl", "openssl rsa -in key.pem -passin pass:{} -out plain.pem"),
    ("curl", "curl -u deploy:{} https://ci.example.org/job/build/json"),
    ("keytool", "keytool -importkeystore -srcstorepass {} -deststorepass {} -srckeystore a.jks"),
    ("zip", "zip -P {} backup.zip db.sql"),
    ("7z", "7z a -p{} -mhe=on archive.7z secrets/"),
    ("ldap", "ldapsearch -x -D cn=admin,dc=example,dc=org -w {} -b dc=example,dc=org"),
    ("wget", "wget --user=deploy --password={} https://files.example.com/a.tgz"),
    ("sudo-S", "echo '{}' | sudo -S systemctl restart app"),
    ("net-user", "net user svc_backup {} /add"),
    ("mosquitto", "mosquitto_pub -h broker -u iot -P {} -t a/b -m on"),
    ("rdp", "xfreerdp /u:Administrator /p:{} /v:10.0.0.7"),
    ("gpg", "gpg --batch --passphrase {} -c notes.txt"),
    ("config-set", "aws configure set aws_secret_access_key {}"),
    ("config-set", "npm config set //registry.npmjs.org/:_authToken {}"),
    ("config-set", "git config --global github.token {}"),
    ("code-pair", "define('DB_PASSWORD', '{}');"),
    ("code-pair", 'os.environ.setdefault("API_TOKEN", "{}")'),
    ("wpa", "wpa_passphrase HomeNet {}"),
    ("sqlplus", "sqlplus scott/{}@orcl"),
    ("httpie", "http -a admin:{} GET https://api.example.org/v1/me"),
    ("ipmitool", "ipmitool -I lanplus -H 10.0.0.9 -U admin -P {} power status"),
]


def hostile_cases(g: Gen) -> list[Case]:
    """The classes a second hostile round found passing (issue 20): passwords in prose and on
    command lines, tokens in a URL's user part, URL passwords holding `/`, AWS key ids without
    digits, `aws_*` config lines, tokens wrapped over lines, private key bodies without BEGIN."""
    cases = []
    for i, text in enumerate(PROSE):
        pw = _hostile_password(g) if "key" not in text and "token" not in text else g.s(ALNUM, 32)
        cases.append(Case(f"prose-password#{i}", text.format(pw), (pw,)))
    for i, (rule, text) in enumerate(CLI):
        pws = [_hostile_password(g) for _ in range(text.count("{}"))]
        cases.append(Case(f"cli-password-{rule}#{i}", text.format(*pws), tuple(pws)))
    for i in range(2):
        token = g.s(HEX, 40)
        text = (
            f"https://{token}:x-oauth-basic@github.com/o/r.git",
            f"[credential]\n\thelper = !echo https://{token}:@gh.io",
        )[i]
        cases.append(Case(f"url-token-user-colon#{i}", text, (token,)))
    for i in range(4):
        token = (g.s(HEX, 40), g.s(ALNUM, 32), g.s(HEX, 40), g.s(B64URL, 36))[i]
        host = ("github.com/acme/api.git", "gitlab.example.com/x/y.git", "github.com/o/r", "bitbucket.org/t/r")[i]
        how = ("git clone https://{}@{}", "git remote set-url origin https://{}@{}", "url = https://{}@{}", "{}@{}")[i]
        text = how.format(token, host) if i < 3 else f"pip install git+https://{token}@{host}"
        cases.append(Case(f"url-token-user#{i}", text, (token,)))
    for i, scheme in enumerate(("postgres", "mongodb", "amqp", "https", "redis")):
        pw = g.s(ALNUM, 6) + "/" + g.s(ALNUM, 5) + g.rng.choice(["", "/", "+/"]) + g.s(ALNUM, 4)
        cases.append(Case(f"url-password-slash#{i}", f"{scheme}://app:{pw}@db.internal:5432/app", (pw,)))
    example = "AKIA" + "IOSFODNN7" + "EXAMPLE"  # AWS's documented example id, not written whole
    ids = [example] + ["AKIA" + g.s(UPPER, 16) for _ in range(6)] + ["ASIA" + g.s(UPPER, 16) for _ in range(2)]
    ids += ["AKIA" + "".join(g.rng.choice(UPPER_ALNUM) for _ in range(16)) for _ in range(40)]
    where = [
        "aws_access_key_id = {}",
        "export AWS_ACCESS_KEY_ID={}",
        '{{"AccessKeyId": "{}", "Expiration": "2026-12-01T10:00:00Z"}}',
        "the key id {} belongs to ci-user",
        "[default]\naws_access_key_id={}\nregion = eu-west-1",
    ]
    for i, key_id in enumerate(ids):
        cases.append(Case(f"aws-access-key-id-letters#{i}", where[i % len(where)].format(key_id), (key_id,)))
    for i, name in enumerate(("aws_secret_access_key", "aws_session_token", "AWS_SECRET_ACCESS_KEY")):
        secret = g.s(B64, 40) if i != 1 else g.s(B64, 300)
        cases.append(Case(f"aws-config-line#{i}", f"[prod]\n{name} = {secret}\noutput = json", (secret,)))
    for i in range(6):
        jwt = _jwt(g)
        sep = ("\n", "\n  ", "\\n", "\r\n", "\n", "\n")[i]
        head = ("token:\n", "Authorization token\n", '{"t": "', "jwt=", "", "token: ")[i]
        cases.append(Case(f"jwt-wrapped#{i}", head + _wrap(g, jwt, sep), (jwt[:30], jwt[-30:])))
    for i in range(3):
        body = [("b3BlbnNzaC1rZXktdjE" + g.s(B64, 51))] + [g.s(B64, 70) for _ in range(5)] + [g.s(B64, 12) + "="]
        end = "\n-----END OPENSSH PRIVATE KEY-----" if i != 1 else ""
        cases.append(Case(f"private-key-body#{i}", "$ tail -n 7 key\n" + "\n".join(body) + end, tuple(body)))
    for i, start in enumerate(("MIIEpAIBAAKCAQEA", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", g.s(B64, 16))):
        body = [start + g.s(B64, 48)] + [g.s(B64, 64) for _ in range(4)] + [g.s(B64, 20) + "=="]
        text = "\n".join(body) + "\n-----END PRIVATE KEY-----\n$ ls"
        cases.append(Case(f"private-key-body-pem#{i}", text, tuple(body)))
    for i in range(2):  # a summary folds the lines: the body's words on one line
        body = [("b3BlbnNzaC1rZXktdjE" if i else g.s(B64, 19)) + g.s(B64, 51)] + [g.s(B64, 70) for _ in range(4)]
        end = " -----END OPENSSH PRIVATE KEY-----" if not i else ""
        cases.append(Case(f"private-key-body-folded#{i}", "- key: " + " ".join(body) + end + " then ls", tuple(body)))
    for i, name in enumerate(("token", "API_KEY", "password", "client_secret")):
        value = g.s(ALNUM, 32) if i != 2 else _hostile_password(g)
        cases.append(Case(f"name-then-value-on-next-line#{i}", f"{name}:\n  {value}\nthanks", (value,)))
    return cases


def round_three_keys(g: Gen) -> dict[str, str]:
    """Provider prefixes added in issue 28, from the providers' own documentation."""
    return {
        "docker-hub-pat": "dckr_pat_" + g.s(B64URL, 27),
        "docker-hub-oat": "dckr_oat_" + g.s(B64URL, 32),
        "slack-d-cookie": "xoxd-" + g.s(ALNUM, 40) + "%2F" + g.s(ALNUM, 30) + "%3D",
        "slack-client-token": "xoxc-" + "-".join(g.s(DIGITS, 12) for _ in range(3)) + "-" + g.s(HEX, 64),
        "vault-legacy-service": "s." + g.s(ALNUM, 24),
        "vault-legacy-batch": "b." + g.s(ALNUM, 24),
        "vault-service-short": "hvs." + g.s(B64URL, 24),
        "vault-recovery": "hvr." + g.s(B64URL, 40),
        "pypi-other-index": "pypi-" + g.s(B64URL, 60),
        "azure-devops-pat-84": g.s(ALNUM, 52) + g.s(ALNUM, 24) + "AZDO" + g.s(ALNUM, 4),
        "supabase-pat": "sbp_" + g.s(HEX, 40),
        "supabase-secret": "sb_secret_" + g.s(B64URL, 31),
        "neon-api-key": "napi_" + g.s(LOWER_ALNUM, 64),
        "netlify-pat": "nfp_" + g.s(ALNUM, 36),
        "render-api-key": "rnd_" + g.s(ALNUM, 28),
        "tailscale-auth-key": "tskey-auth-" + g.s(ALNUM, 10) + "-" + g.s(ALNUM, 30),
        "figma-pat": "figd_" + g.s(B64URL, 40),
        "airtable-pat": "pat" + g.s(ALNUM, 14) + "." + g.s(HEX, 64),
        "pinecone-api-key": "pcsk_" + g.s(ALNUM, 6) + "_" + g.s(ALNUM, 60),
        "resend-api-key": "re_" + g.s(ALNUM, 8) + "_" + g.s(ALNUM, 24),
        "cerebras-api-key": "csk-" + g.s(LOWER_ALNUM, 48),
        "bitbucket-api-token": "ATBB" + g.s(ALNUM, 32),
        "buildkite-token": "bkua_" + g.s(HEX, 40),
        "circleci-pat": "CCIPAT_" + g.s(ALNUM, 22) + "_" + g.s(HEX, 40),
        "contentful-pat": "CFPAT-" + g.s(B64URL, 43),
        "dropbox-short-lived": "sl." + g.s(B64URL, 140),
        "mapbox-secret": "sk.eyJ1Ijoi" + g.s(B64URL, 30) + "." + g.s(B64URL, 22),
    }


def _wide(s: str) -> str:
    """The full-width form a CJK keyboard types (ｐａｓｓｗｏｒｄ)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else "\u3000" if c == " " else c for c in s)


def _url_password(g: Gen) -> str:
    """A password typed into a URL unencoded: `@`, `/` and `#` in it."""
    chars = list(g.s(ALNUM, 12))
    for c in "@/#":
        chars.insert(g.rng.randrange(1, len(chars)), c)
    return "".join(chars) + g.rng.choice(DIGITS)


ROUND_THREE = [  # (class, template); {pw} a typed password, {tok} a random token
    ("azure-devops-pat", "My Azure DevOps PAT is {pat} (expires in 30 days)"),
    ("azure-devops-pat", "ADO token for the pipeline: {pat}"),
    ("azure-devops-pat", "use this PAT {pat} to push to dev.azure.com/acme"),
    ("azure-devops-pat", "git clone https://{pat}@dev.azure.com/acme/app/_git/app"),
    ("docker-hub", "docker login -u acme -p {dckr}"),
    ("docker-hub", "Docker Hub access token: {dckr}"),
    ("docker-hub", "echo {dckr} | docker login --username acme --password-stdin"),
    ("password-zh", "密码是{pw}"),
    ("password-zh", "数据库密码：{pw}，请不要外传"),
    ("password-zh", "root的密码为 {pw}"),
    ("password-zh", "服务器登录密碼是「{pw}」"),
    ("token-zh", "访问令牌是{tok}"),
    ("password-ja", "パスワードは {pw} です"),
    ("password-ja", "本番のパスワード：{pw}"),
    ("password-ja", "管理者のパスワードは「{pw}」です"),
    ("token-ja", "APIトークンは {tok} です"),
    ("password-ko", "비밀번호는 {pw} 입니다"),
    ("password-de", "Das Passwort für den Server lautet {pw}"),
    ("password-de", "Passwort: {pw}"),
    ("password-de", "Das neue Kennwort ist {pw}."),
    ("password-fr", "le mot de passe est {pw}"),
    ("password-es", "la contraseña es {pw}"),
    ("password-pt", "a senha do banco é {pw}"),
    ("password-ru", "пароль от сервера: {pw}"),
    ("password-pl", "hasło to {pw}"),
    ("password-wide", "ｐａｓｓｗｏｒｄ：{wpw}"),
    ("password-wide", "ＤＢ＿ＰＡＳＳＷＯＲＤ＝{wpw}"),
    ("password-wide", "ｔｈｅ ｐａｓｓｗｏｒｄ ｉｓ {wpw}"),
    ("password-wide", "ｐａｓｓｗｏｒｄ：{pw}"),
    ("password-wide", "密码：{wpw}"),
    ("credential-pair", "Default credentials are admin / {pw}"),
    ("credential-pair", "login: root / {pw}"),
    ("credential-pair", "Grafana is up, log in with admin/{pw}"),
    ("credential-pair", "username / password: deploy / {pw}"),
    ("twine", "twine upload -u __token__ -p {pw} dist/*"),
    ("twine", "twine upload --repository-url https://pypi.example.org -u bob -p '{pw}' dist/*"),
    ("twine", "twine upload --password {pw} dist/*"),
    ("vault-login", "vault login {vault}"),
    ("vault-login", "vault login -no-print {vault}"),
    ("vault-login", "VAULT_TOKEN={vault} vault kv get secret/app"),
    ("vault-login", "vault login {tok}"),
    ("slack-cookie", "Cookie: d={xoxd}; d-s=1700000000"),
    ("slack-cookie", "curl -b 'd={xoxd}' https://acme.slack.test/auth"),
    ("slack-cookie", "the Slack session cookie is d={xoxd}"),
    ("hex-in-identifier", "deploy_token_{hex}"),
    ("hex-in-identifier", "set API_KEY_{hex}_PROD in CI"),
    ("hex-in-identifier", "myApiKey{hex}"),
    ("hex-in-identifier", "secret-{hex}.txt was committed"),
    ("url-password-at-slash-hash", "mongodb+srv://admin:{upw}@cluster0.ab1cd.mongodb.net/db?retryWrites=true"),
    ("url-password-at-slash-hash", "postgres://app:{upw}@db.internal:5432/app"),
    ("url-password-at-slash-hash", "DATABASE_URL=mysql://root:{upw}@127.0.0.1:3306/shop"),
    ("url-password-at-slash-hash", "amqp://guest:{upw}@rabbit/vhost"),
]


def round_three_cases(g: Gen) -> list[Case]:
    """Issue 28's twelve shapes and more of each class, then the new provider prefixes in the
    usual contexts."""
    cases = []
    for i, (rule, template) in enumerate(ROUND_THREE):
        values = {
            "pat": "".join(g.rng.choice(LOWER + "234567") for _ in range(50)) + g.rng.choice("234567") + "a",
            "dckr": "dckr_pat_" + g.s(B64URL, 27),
            "pw": _hostile_password(g),
            "tok": g.s(ALNUM, 32),
            "vault": "s." + g.s(ALNUM, 24) if i % 2 else "hvs." + g.s(B64URL, 90),
            "xoxd": "xoxd-" + g.s(ALNUM, 40) + "%2F" + g.s(ALNUM, 30) + "%3D",
            "hex": g.s(HEX, 40),
            "upw": _url_password(g),
        }
        values["wpw"] = _wide(values["pw"])
        used = [k for k in values if "{" + k + "}" in template]
        secrets = tuple(values[k].replace("%2F", "/").split("/")[0] if k == "xoxd" else values[k] for k in used)
        cases.append(Case(f"{rule}#{i}", template.format(**values), secrets))
    for rule, value in round_three_keys(g).items():
        for i, text in enumerate(_contexts(g, value)):
            cases.append(Case(f"{rule}#{i}", text, (value,)))
    return cases


# Ordinary text that must come back unchanged.
def innocent_texts(seed: int = 7) -> list[str]:
    g = Gen(seed)
    sha, sha2, digest = g.s(HEX, 40), g.s(HEX, 40), g.s(HEX, 64)
    return [
        "token expired",
        "The token expired on 2026-11-27 (HTTP 401).",
        "max_tokens=64",
        "num_tokens: 12",
        "password reset link sent",
        "Password reset link sent to your email.",
        "api_key_env: OPENAI_API_KEY",
        "api_key = os.environ['OPENAI_API_KEY']",
        "SECRET_KEY=None",
        "token = os.getenv('HF_TOKEN')",
        "password: str",
        "def login(username: str, password: str) -> Token:",
        "token: Optional[str] = None",
        "Token authentication failed",
        "Bearer authentication is required",
        "token_type: bearer",
        '"token_count": 1532',
        "tokenizer=gpt2",
        "--max-tokens 512",
        "echo $TOKEN | docker login --password-stdin",
        f"commit {sha}",
        "commit 3f9a2b1",
        f"Merge: {sha[:7]} {sha2[:7]}",
        f"git checkout {sha2}",
        f"GIT_COMMIT={sha}",
        f"image@sha256:{digest}",
        f"pip install x --hash=sha256:{digest}",
        f'"sha": "{sha}"',
        f'"request_id": "{g.s(HEX, 32)}"',
        f"container {digest[:12]} exited",
        "/usr/local/lib/python3.12/site-packages/hermes_mlx/summarizer/redact.py",
        "PWD=/home/user/project",
        "C:\\Users\\me\\AppData\\Local\\hermes",
        "run id 550e8400-e29b-41d4-a716-446655440000 finished",
        "request_id=550e8400-e29b-41d4-a716-446655440000",
        "version 1.2.3, v2.0.0-rc1, torch-2.3.1+cu121",
        "Successfully installed numpy-2.1.3 tokenizers-0.23.3",
        "model: HuggingFaceTB/SmolLM2-135M-Instruct",
        "docker run -u 1000:1000 -p 8080:80 img",
        "docker compose -p myproj up -d",
        "mongod --port 27017",
        "mkdir -p /tmp/x && ssh -p 2222 host",
        "mysql -h db -P 3306 -u root -p",
        "task-force sk-8 and sk-learn-preprocessing-pipeline",
        "disk-usage-report-for-all-servers-2024",
        "class_name=MyVeryLongClassNameForTesting2",
        "sort_key=name",
        "key: app.kubernetes.io/name",
        "https://github.com/NousResearch/hermes-agent",
        "http://localhost:8080/v1/chat?page=2&limit=50",
        "https://user@example.com/repo.git",
        "Error: token invalid",
        "secret: true",
        "password: required",
        "passwords: 3 rotated",
        "redis-cli -h cache ping",
        "pytest -k test_token_expired -q",
        "The session was saved.",
        "    session: list[Message] | str | Path,",
        "    on_pass: Callable[[PassRecord], object] | None = None,",
        "first_pass=first_pass",
        "session = requests.Session()",
        "sig = inspect.signature(fn)",
        "token = tokenizer.encode(text)",
        "credentials = service_account.Credentials.from_service_account_file(path)",
        "see README#secrets for how to set OPENAI_API_KEY",
        # near the hostile classes (issue 20), and must stay: prose about passwords, commands
        # without one, URLs with a user name or a port, ids and hashes in commands
        "The password is incorrect.",
        "the password is stored in 1Password, not in the repo",
        "password is required (min 12 chars)",
        "The password policy is 12 characters",
        "token usage is 53% of the window",
        "the token count is 1532",
        "The first token is 'Hello' and the EOS token is '</s>'",
        "The token is valid for 3600 seconds",
        "api key is set via OPENAI_API_KEY",
        "the secret is in ~/.config/app/secret.json",
        "pin numpy to 2.1.3",
        "Password reset for user bob42 is done",
        "set the password to something long",
        "ssh-keygen -t ed25519 -N '' -f ~/.ssh/deploy",
        "ssh-keygen -lf ~/.ssh/id_ed25519.pub",
        "htpasswd -c .htpasswd admin",
        "htpasswd -v .htpasswd admin",
        "openssl rsa -in key.pem -passin env:KEY_PASS -out plain.pem",
        "openssl req -new -key k.pem -passin file:pass.txt",
        'curl -u "$USER:$TOKEN" https://api.example.com',
        "echo hello | tee /tmp/x",
        "net user bob /domain",
        "git clone https://github.com/org/repo.git",
        "git clone git@github.com:org/repo.git",
        "https://firstname.lastname@bitbucket.org/team/repo.git",
        "http://localhost:8080/api/v1/users/@me",
        "https://registry.npmjs.org:443/@types/node",
        "AKIA prefixes mark long-term keys, ASIA temporary ones",
        f"kubectl delete pod worker-{g.uuid()}",
        f"git show {sha} && git revert --no-edit {sha2[:12]}",
        "tests/test_auth.py::test_password_is_hashed PASSED",
        "test_token_is_refreshed_after_expiry FAILED",
        "-----END PRIVATE KEY----- marks the end of a PEM block",
        "MIT License",
    ]
