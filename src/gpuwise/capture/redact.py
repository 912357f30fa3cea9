"""Keep secrets out of captures: by the variable's name, and by what a value looks like.

Names: a variable is a credential when its name contains one of the keywords of detect-secrets'
KeywordDetector (https://github.com/Yelp/detect-secrets/blob/master/detect_secrets/plugins/keyword.py,
DENYLIST: password, passwd, pass, pwd, secret, token, api_key, auth_key, private_key, ...) plus the
gitleaks rule families for DSNs, PATs, credentials and webhooks. Long keywords (PASS, SECRET, TOKEN,
...) match anywhere in the name (SSHPASS, PGPASSWORD, MYSECRET); short ones only as a whole part of the
name between `_`, `-` or `.` (KEY, PAT, DSN, AUTH, and the cloud SDKs' AK/SK: HUAWEICLOUD_SDK_AK,
QCLOUD_SK), and a part that ends in KEY (SIGNINGKEY, MASTERKEY). Words that merely contain a keyword
(TOKENIZERS, KEYBOARD, PASSTHROUGH, BYPASS) are taken out first, so PATH, AUTHOR, KEYBOARD_LAYOUT and
TOKENIZERS_PARALLELISM are kept.

Values: any URL with userinfo (redis://:pw@cache, https://token@host), an HTTP `Bearer ...` token, a
signed or tokened URL's query value (Azure SAS `sig=`, S3 `X-Amz-Signature=`, GCS `X-Goog-Signature=`,
CloudFront/OSS `Signature=`, COS `q-signature=`, `access_token=`, `key=`), chat webhooks (Slack,
Discord, Teams, DingTalk, Feishu/Lark, WeCom), connection-string keys (Azure `AccountKey=`,
`SharedAccessKey=`), whole private key blocks, and token formats from gitleaks' rules
(https://github.com/gitleaks/gitleaks/blob/master/config/gitleaks.toml): github-pat,
github-fine-grained-pat, gitlab-pat, huggingface-access-token, aws-access-token, gcp-api-key,
alibaba-access-key-id, tencent secret ids (AKID...), slack-*-token, openai-api-key, anthropic-api-key,
npm-access-token, pypi-upload-token, stripe, sendgrid, private-key, jwt, and Google OAuth access tokens
(`ya29.`). A value rule also runs over every captured file and command output (`redact_text`), as does
a name rule for `NAME=value` and `"NAME": "value"` pairs whose NAME is a credential's.

Entropy-based detection (detect-secrets' HexHighEntropyString) is not used: on environment values it
flags build ids, LS_COLORS and hashes, and the name and format rules above already cover the
credentials that ML machines carry (tests/hostile/test_secrets.py lists 60+ of them).
"""

from __future__ import annotations

import functools
import re

from gpuwise.i18n import joined

REDACTED = "<redacted>"

# Matched anywhere in the upper-cased name.
_NAME_ANYWHERE = (
    "PASS",  # PASSWORD, PASSWD, PASSPHRASE, SSHPASS, KEYPASS, ...
    "SECRET",
    "TOKEN",
    "APIKEY",
    "API_KEY",
    "APPKEY",
    "APP_KEY",
    "AUTHKEY",
    "AUTH_KEY",
    "ACCESSKEY",
    "ACCESS_KEY",
    "PRIVATEKEY",
    "PRIVATE_KEY",
    "PRIV_KEY",
    "PRIVKEY",
    "CLIENT_KEY",
    "SERVICE_KEY",
    "ACCOUNT_KEY",
    "LICENSE_KEY",
    "SIGNING_KEY",
    "CREDENTIAL",
    "CONNECTION_STRING",
    "CONN_STR",
    "WEBHOOK",
    "COOKIE",
    "CONTRASENA",
    "SAS_URL",
    "SIGNED_URL",
    "PRESIGNED",
)
# Matched only as a whole part of the name between underscores (or the whole name).
_NAME_PARTS = {
    "KEY",
    "KEYS",
    "PWD",
    "PW",
    "PAT",
    "DSN",
    "AUTH",
    "SESSION",
    "SIGNATURE",
    "SALT",
    "AK",  # access key (Huawei, Volcano Engine, Baidu SDKs: *_AK / *_SK)
    "SK",
    "SAS",
    "SIG",
    "OTP",
    "TOTP",
}
# Words that contain a keyword and mean nothing secret; taken out of the name before matching.
_INNOCENT_WORDS = ("TOKENIZER", "KEYBOARD", "PASSTHROUGH", "BYPASS", "COMPASS", "PASSIVE", "MONKEY")

# Names that match a rule above but hold a path, a location or a switch, not a secret.
_NOT_SECRETS = {"PWD", "OLDPWD", "SSH_AUTH_SOCK", "PIP_CERT", "XDG_SESSION_TYPE", "XDG_SESSION_ID"}
_LOCATION_SUFFIXES = ("_FILE", "_DIR", "_PATH", "_BUNDLE", "_SOCK", "_TYPE", "_ID_FILE")

_QUERY_SECRETS = (
    "sig|signature|x-amz-signature|x-amz-security-token|x-amz-credential|x-goog-signature|"
    "x-goog-credential|q-signature|x-oss-signature|ossaccesskeyid|access_token|accesstoken|token|key|"
    "api_key|apikey|secret|password|client_secret|auth"
)

# (gitleaks rule id or our name, pattern). Patterns stop at whitespace and quotes.
VALUE_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("url-userinfo", re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s@'\"<>]+@")),
    ("http-bearer", re.compile(r"\b(?:Bearer|Basic|token)\s+[A-Za-z0-9._~+/=-]{16,}")),
    (
        "private-key",
        re.compile(
            r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[\s\S]{0,16384}?-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----)?"
        ),
    ),
    (
        "slack-webhook",
        re.compile(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+"),
    ),
    (
        "discord-webhook",
        re.compile(r"https://(?:\w+\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]+"),
    ),
    ("teams-webhook", re.compile(r"https://[A-Za-z0-9.-]+\.webhook\.office\.com/webhookb2/[^\s'\"<>]+")),
    (
        "feishu-lark-webhook",
        re.compile(r"https://open\.(?:feishu\.cn|larksuite\.com)/open-apis/bot/v2/hook/[A-Za-z0-9-]+"),
    ),
    ("signed-url-param", re.compile(rf"(?i)[?&;](?:{_QUERY_SECRETS})=[^&\s'\"<>]+")),
    (
        "connection-string-key",
        re.compile(r"(?i)\b(?:AccountKey|SharedAccessKey|SharedAccessSignature|Password|Pwd)=[^;\s'\"]+"),
    ),
    ("github-pat", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}")),
    ("github-fine-grained-pat", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{40,}")),
    ("gitlab-pat", re.compile(r"\bgl(?:pat|ptt|dt|rt)-[A-Za-z0-9_-]{20,}")),
    ("huggingface-access-token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    ("aws-access-token", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b")),
    ("gcp-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("google-oauth-access-token", re.compile(r"\bya29\.[0-9A-Za-z_-]{20,}")),
    ("alibaba-access-key-id", re.compile(r"\bLTAI[A-Za-z0-9]{12,20}\b")),
    ("tencent-secret-id", re.compile(r"\bAKID[A-Za-z0-9]{13,40}\b")),
    ("volcengine-access-key-id", re.compile(r"\bAKLT[A-Za-z0-9_-]{20,}")),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("slack-app-token", re.compile(r"\bxapp-[0-9]-[A-Za-z0-9-]{10,}")),
    ("anthropic-api-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("openai-api-key", re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}")),
    ("stripe-access-token", re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("sendgrid-api-token", re.compile(r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}")),
    ("npm-access-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    ("pypi-upload-token", re.compile(r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}")),
)

# Literals one of which a text must contain for the rule to match at all: a substring test runs at
# memory speed, a regex scan does not, and most texts hold none of them (case-insensitive rules: the
# literals are lower case and tested on the lowered text).
_NEEDLES: dict[str, tuple[str, ...]] = {
    "url-userinfo": ("://",),
    "http-bearer": ("Bearer", "Basic", "token"),
    "private-key": ("PRIVATE KEY",),
    "slack-webhook": ("hooks.slack.com",),
    "discord-webhook": ("discord",),
    "teams-webhook": ("webhook.office.com",),
    "feishu-lark-webhook": ("open-apis/bot",),
    "signed-url-param": ("sig", "signature=", "token=", "key=", "secret=", "password=", "auth=", "keyid="),
    "connection-string-key": ("accountkey=", "sharedaccess", "password=", "pwd="),
    "github-pat": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    "github-fine-grained-pat": ("github_pat_",),
    "gitlab-pat": ("glpat-", "glptt-", "gldt-", "glrt-"),
    "huggingface-access-token": ("hf_",),
    "aws-access-token": ("AKIA", "ASIA", "ABIA", "ACCA"),
    "gcp-api-key": ("AIza",),
    "google-oauth-access-token": ("ya29.",),
    "alibaba-access-key-id": ("LTAI",),
    "tencent-secret-id": ("AKID",),
    "volcengine-access-key-id": ("AKLT",),
    "slack-token": ("xox",),
    "slack-app-token": ("xapp-",),
    "anthropic-api-key": ("sk-ant-",),
    "openai-api-key": ("sk-",),
    "stripe-access-token": ("_live_", "_test_"),
    "sendgrid-api-token": ("SG.",),
    "npm-access-token": ("npm_",),
    "pypi-upload-token": ("pypi-",),
    "jwt": ("eyJ",),
}
_CASELESS = {"signed-url-param", "connection-string-key"}


def _may_match(rule: str, text: str, lowered: str) -> bool:
    haystack = lowered if rule in _CASELESS else text
    return any(needle in haystack for needle in _NEEDLES[rule])


# `NAME=value` (a line of `env`, a shell export, a .env file, docker's "Env": ["NAME=value"]) and
# `"NAME": "value"` (JSON, upper-case NAME only: a JSON `"key": "avx512f"` is a field, not a variable):
# the value is redacted when NAME is a credential's name; the name stays, so the reader sees what was there.
_ASSIGNMENT = re.compile(
    r"(?m)(?P<lhead>^(?:export\s+)?(?P<lname>[A-Za-z_][A-Za-z0-9_.-]{0,200})=)(?P<lvalue>[^\n]*)"  # `env`
    r"|(?P<head>(?<=[\s;\"'\[,])(?:export\s+)?(?P<name>[A-Za-z_][A-Za-z0-9_.-]{0,200})=)"
    r"(?P<value>[^\s'\"]+|'[^'\n]*'|\"[^\"\n]*\")"
    r"|(?P<jhead>\"(?P<jname>[A-Z_][A-Z0-9_.-]{0,200})\"\s*:\s*)(?P<jvalue>\"(?:[^\"\\\n]|\\.){0,100000}\")"
)
_INLINE = re.compile(_ASSIGNMENT.pattern.split("|", 1)[1])  # the same, without the line-start form
# A credential's name contains one of these (is_secret_name decides): only the lines that hold one are
# searched for assignments (found with str.find, at memory speed), so a text of a million innocent
# `A=b` lines costs a few scans, not a regex pass and a million calls back into Python.
_KEYWORDS = (
    "pass", "secret", "token", "key", "pwd", "pw", "pat", "dsn", "auth", "session", "signature", "salt",
    "ak", "sk", "sas", "sig", "otp", "credential", "conn", "webhook", "cookie", "contrasena", "signed",
)  # fmt: skip


@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    upper = name.upper()
    if upper in _NOT_SECRETS or upper.endswith(_LOCATION_SUFFIXES):
        return False
    for word in _INNOCENT_WORDS:
        upper = upper.replace(word, "_")
    if any(word in upper for word in _NAME_ANYWHERE):
        return True
    parts = re.split(r"[_\-.]+", upper)
    return any(part in _NAME_PARTS or (part.endswith(("KEY", "KEYS")) and len(part) > 4) for part in parts)


def secret_value_rule(value: str) -> str | None:
    """The id of the first value rule that `value` matches, or None."""
    lowered = _ascii_lower(value)
    for rule, pattern in VALUE_RULES:
        if _may_match(rule, value, lowered) and pattern.search(value):
            return rule
    return None


def redact_env(env: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """Return (env with secret values replaced, sorted names that were redacted)."""
    out, redacted = {}, []
    for name, value in env.items():
        if is_secret_name(name) or secret_value_rule(value or ""):
            out[name] = REDACTED
            redacted.append(name)
        else:
            out[name] = value
    return out, sorted(redacted)


def _keep_key(match: re.Match[str]) -> str:
    """`?sig=abc` -> `?sig=<redacted>`, `AccountKey=abc` -> `AccountKey=<redacted>`."""
    text = match.group(0)
    return text[: text.index("=") + 1] + REDACTED


def _assignment(match: re.Match[str], hits: list[int]) -> str:
    """One _ASSIGNMENT match with its value redacted when its name is a credential's."""
    groups = match.groupdict()
    name = groups.get("lname") or groups.get("name") or groups.get("jname") or ""
    value = groups.get("lvalue") or groups.get("value") or groups.get("jvalue") or ""
    if groups.get("lhead") is not None and not is_secret_name(name):  # `A=1 B_TOKEN=x`: look further
        return match.group("lhead") + _INLINE.sub(lambda m: _assignment(m, hits), value)
    if not is_secret_name(name) or value.strip("'\"").startswith(REDACTED):
        return match.group(0)
    hits.append(1)
    if groups.get("jhead") is not None:
        return groups["jhead"] + '"' + REDACTED + '"'
    return (groups.get("lhead") or groups.get("head") or "") + REDACTED


def _ascii_lower(text: str) -> str:
    """`text` with A-Z lowered and nothing else changed: the same length, so offsets in it are offsets
    in `text` (str.lower() turns 'İ' into two characters)."""
    return text.translate(_LOWER)


_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _keyword_lines(text: str) -> list[int]:
    """The start offsets of the lines of `text` that contain a _KEYWORDS word (any case), sorted."""
    lowered = _ascii_lower(text)
    starts: set[int] = set()
    for word in _KEYWORDS:
        pos = lowered.find(word)
        while pos >= 0:
            start = lowered.rfind("\n", 0, pos) + 1
            starts.add(start)
            end = lowered.find("\n", pos)
            if end < 0:
                break
            pos = lowered.find(word, end)
    return sorted(starts)


def _redact_assignments(text: str, hits: list[int]) -> str:
    """Apply _ASSIGNMENT to each line that holds a credential keyword; other lines are copied as they are."""
    starts = _keyword_lines(text)
    if not starts:
        return text
    out: list[str] = []
    done = 0  # text[:done] is in `out`
    for start in starts:
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        out.append(text[done:start])
        out.append(_ASSIGNMENT.sub(lambda m: _assignment(m, hits), text[start:end]))
        done = end
    out.append(text[done:])
    return joined("", out)


def redact_text(text: str, counts: dict[str, int] | None = None) -> str:
    """Replace credential-shaped values in free text; add hits per rule id to `counts`."""
    lowered = _ascii_lower(text)
    for rule, pattern in VALUE_RULES:
        if not _may_match(rule, text, lowered):
            continue
        if rule == "url-userinfo":
            text, n = pattern.subn(lambda m: m.group(0).split("://", 1)[0] + "://" + REDACTED + "@", text)
        elif rule in ("signed-url-param", "connection-string-key"):
            text, n = pattern.subn(_keep_key, text)
        else:
            text, n = pattern.subn(REDACTED, text)
        if n and counts is not None:
            counts[rule] = counts.get(rule, 0) + n
    hits: list[int] = []  # after the value rules, so a value they matched keeps their rule id
    if "=" in text or ":" in text:
        text = _redact_assignments(text, hits)
    if hits and counts is not None:
        counts["secret-name-assignment"] = counts.get("secret-name-assignment", 0) + len(hits)
    return text
