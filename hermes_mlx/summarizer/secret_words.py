"""Which names and values hold credentials: the word lists and the judges that read them.

Kept apart from the regexes (secret_patterns.py) and from how text is rewritten (redact.py,
redact_context.py) because every rule consults them: an assignment's name, a prose sentence's
subject, a CLI flag. The judges are deliberately cheap (no regex per character) since they run on
every candidate in 50 MB tool outputs.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections import Counter

REDACTED = "[REDACTED]"

# Name words. A name (split at _ - . and camelCase) holds a secret when its last part ends with
# one of SECRET_ENDINGS or is one of SECRET_PARTS, or it is `<qualifier>_key`, or it ends in a
# neutral part (VALUE_PARTS: `password_hash`, `token_b64`) right after one of those.
# accesskeyid: aws_access_key_id, half of the pair, and its value need not look random
SECRET_ENDINGS = tuple(
    "password passwd passphrase secret secrets token apikey accesskey accesskeyid secretkey "
    "privatekey authkey sshpass pgpass sessionid sessid".split()
)
SECRET_PARTS = frozenset(
    "pwd pw auth credential credentials creds cookie session sig signature dsn pin otp totp mfa salt".split()
)
KEY_QUALIFIERS = frozenset(
    "api access secret private priv auth client account master signing sign encryption enc crypt "
    "cipher service license app storage shared consumer webhook deploy ssh gpg pgp session admin root "
    "write read ingest sdk server project personal user subscription hmac jwt aes rsa tls ssl db "
    "database bot x".split()
)
VALUE_PARTS = frozenset(
    "value val str string b64 base64 hex raw plain plaintext cleartext hash hashed enc encrypted data "
    "text old new prod dev test staging live base 1 2 3 v1 v2".split()
)
# `pass` alone is too common in code (`on_pass`, `first_pass`): only `pass` or `<qualifier>_pass`.
PASS_QUALIFIERS = frozenset(
    "db database user admin root smtp ftp sftp mail email redis mysql pg postgres mongo ldap proxy "
    "http ssh wifi vnc rdp app api login basic sql keystore key store truststore master vault".split()
)
# Names that never hold a secret, whatever they end with.
NOT_SECRET_NAMES = frozenset({"pwd", "oldpwd", "keypass_file"})

# Names whose long hex/base64 values are checksums or ids, not credentials (`commit=3f9a...`).
HASH_NAMES = frozenset(
    "sha sha1 sha224 sha256 sha384 sha512 md5 hash digest checksum commit rev revision ref oid tree "
    "parent head etag integrity id ids uuid guid nonce fingerprint blob object version build sum crc "
    "crc32 image layer container tag run trace span request".split()
)

# Values that are types, booleans or prose after `password:` / `token:`, never credentials.
SAFE_WORDS = frozenset(
    "none null nil undefined true false yes no on off str string bytes int bool any object required "
    "optional missing invalid expired revoked set unset not empty provided present configured "
    "supplied hidden masked redacted enabled disabled ok valid found needed default is was the a an "
    "for of to and or in with from your this that see float dict list tuple path callable sequence "
    "mapping secretstr lambda self cls".split()
)

_NAME_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


@functools.lru_cache(maxsize=4096)
def _name_parts(name: str) -> tuple[str, ...]:
    return tuple(p.lower() for chunk in re.split(r"[_\-.\s:]+", name) for p in _NAME_PARTS.findall(chunk))


@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """True when a variable, key or flag name says its value is a credential."""
    parts = _name_parts(name)
    joined = "".join(parts)
    if not parts or joined in NOT_SECRET_NAMES:
        return False
    if joined.endswith(SECRET_ENDINGS) or parts[-1] in SECRET_PARTS:
        return True
    if parts[-1] == "key" and len(parts) > 1 and parts[-2] in KEY_QUALIFIERS:
        return True
    if parts[-1] == "pass" and (len(parts) == 1 or parts[-2] in PASS_QUALIFIERS):  # not `on_pass`
        return True
    return parts[-1] in VALUE_PARTS and len(parts) > 1 and is_secret_name("_".join(parts[:-1]))


def _entropy(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


def _switches(s: str) -> float:
    """Share of neighbour pairs that go lower->upper or between digit and letter.

    Random keys switch far more often than CamelCase or kebab-case names do (`MyVeryLongName2`):
    measured on 2,000 random strings of 24-40 characters, the 1st percentile is 0.17-0.28 for
    base64/alphanumeric and 0.13-0.21 for one-case-plus-digits; such names score 0.11-0.25."""
    pairs = itertools.pairwise(s)
    hits = sum(
        1
        for a, b in pairs
        if (a.islower() and b.isupper()) or (a.isalnum() and b.isalnum() and a.isdigit() != b.isdigit())
    )
    return hits / max(1, len(s) - 1)


def _key_like(s: str) -> bool:
    """A distinctive provider prefix only needs a body with digits or mixed case (not `xxxx`)."""
    has_digit = any(c.isdigit() for c in s)
    return (has_digit or (any(c.islower() for c in s) and any(c.isupper() for c in s))) and max(
        (len(r) for r in re.findall(r"[A-Za-z0-9]+", s)), default=0
    ) >= 8


def looks_random(s: str) -> bool:
    """A token-like string with the character mix of a generated key, not of words or names."""
    return len(s) >= 16 and _key_like(s) and _switches(s) >= 0.15 and _entropy(s) >= 3.3


# --- values ---------------------------------------------------------------------------------
_REFERENCE = re.compile(
    r"\$(?:[A-Z_]+|[a-z_]+|\{[^}]*\}|\([^)]*\)|\{\{.*\}\})|%[A-Za-z_]+%|\{\{.*\}\}|<[^<>]*>|\*+|x+|X+|•+|\.{3}|…"
    r"|[A-Za-z_][\w.]*\[.*"  # list[str], Optional[str], os.environ["X"], ENV["X"]
    r"|(?:process\.env|ENV|env|getenv|os\.getenv|os\.environ)\b.*"
)
# Dotted names in code (args.token, requests.Session, service_account.Credentials); each part is
# snake_case, CamelCase (each word after the first of two letters or more: `OpenAI`, `HTTPServer`)
# or CONSTANT, so neither `H4hZc6eIPd.t1i` nor `UjEPpAe.v8` is one. Possessive: no backtracking.
_PART = r"(?:[a-z_][a-z0-9_]*+|[A-Z]++[a-z]*+(?:[A-Z]++[a-z]{2,}+)*+[A-Z]*+\d*+|[A-Z_][A-Z0-9_]*+)"
_DOTTED = re.compile(_PART + r"(?:\." + _PART + r")++")
_PATH = re.compile(r"(?:~?/|\.{1,2}/|[A-Za-z]:\\)")


def _safe_value(bare: str, name: str) -> bool:
    """Values that are references, types, placeholders or plain words, not credentials."""
    low = bare.lower()
    return (
        len(bare) < 3
        or low in SAFE_WORDS
        or low == name.lstrip("-").lower()
        or _REFERENCE.fullmatch(bare) is not None
        or ((_PATH.match(bare) or _DOTTED.fullmatch(bare)) is not None and not looks_random(bare))
    )


def _unquote(value: str) -> tuple[str, str, str]:
    """(opening, inner, closing) for a captured value."""
    for q in ('\\"', '"', "'", "`"):
        if len(value) >= 2 * len(q) and value.startswith(q) and value.endswith(q):
            return q, value[len(q) : -len(q)], q
    if value[:1] in "\"'`":
        return value[0], value[1:], ""
    return "", value, ""


# --- cue words in the languages users write (redact_cues.py) ----------------------------------
# Lowercase, matched on text whose full-width forms are folded (ｐａｓｓｗｏｒｄ is password).
# English is the prose rule's own (redact_context.py). Latin and Cyrillic words stand alone
# (no letter either side); CJK words are glued to their neighbours, so they match anywhere.
PASSWORD_CUES = (
    "passwort|kennwort|zugangspasswort|wachtwoord|contraseña|contrasena|senha|mot de passe|mdp|hasło|haslo|"
    "heslo|lösenord|lösenordet|passord|passordet|adgangskode|salasana|jelszó|jelszo|şifre|şifresi|parola|"
    "пароль|пароля|паролем|κωδικός|mật khẩu|kata sandi"
).split("|")
PASSWORD_CUES_CJK = (
    "密码|密碼|口令|パスワード|暗証番号|パスフレーズ|비밀번호|암호|패스워드|รหัสผ่าน|كلمة المرور|كلمة السر|סיסמה|סיסמא|पासवर्ड"
).split("|")
KEY_CUES = "schlüssel|zugangsschlüssel|jeton|clé|chave|токен|ключ|klucz|nyckel|sleutel|anahtar".split("|")
KEY_CUES_CJK = "令牌|密钥|密鑰|秘钥|私钥|访问令牌|トークン|秘密鍵|アクセスキー|토큰|액세스 키|비밀 키".split("|")
# What joins the cue to its value: standalone words (`Passwort … lautet X`, `hasło to X`) and
# glued particles or marks (`密码是X`, `パスワードは X`, `비밀번호는 X`, `пароль — X`).
CONNECT_WORDS = "ist|lautet|lautete|war|lauten|est|était|es|era|é|è|är|er|jest|to|je|on|is|это|sind|olarak".split("|")
CONNECT_GLUED = "是|为|為|设为|改为|改成|は|が|を|는|은|이|가|:|：|=|＝|→|->|=>|—|–".split("|")
# `admin / S3cret!`: a user and a password written as a pair, after one of these words or with a
# user name that ships as a default.
CREDENTIAL_CUES = (
    "credential|creds|login|log in|sign in|signin|username|user/pass|account|anmeldedaten|zugangsdaten|"
    "identifiants|credenciales|credenciais|账号|帐号|账户|用户名|ログイン|アカウント|계정|учетные|логин"
).split("|")
DEFAULT_USERS = frozenset(
    "admin administrator root sa postgres guest ubuntu pi elastic kibana oracle ec2-user vagrant jenkins "
    "rabbitmq minioadmin superuser tomcat".split()
)
# A 52-character Azure DevOps PAT is lowercase base32 with nothing of its own: only these words
# near it say what it is.
AZURE_PAT_CUES = ("azure", "devops", "ado", " pat", "pat ", "pat:", "personal access token", "visualstudio.com")
