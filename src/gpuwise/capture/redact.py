"""Keep secrets out of captures: by the variable's name, and by what a value looks like.

Names: a variable is a credential when its name contains one of the keywords of detect-secrets'
KeywordDetector (https://github.com/Yelp/detect-secrets/blob/master/detect_secrets/plugins/keyword.py,
DENYLIST: password, passwd, pass, pwd, secret, token, api_key, auth_key, private_key, ...) plus the
gitleaks rule families for DSNs, PATs, credentials and webhooks. Long keywords match anywhere in the
name (PGPASSWORD, MYSECRET); short ones (KEY, PASS, PWD, PAT, DSN, AUTH) only as a whole word part
(GITHUB_PAT, SENTRY_DSN, MYSQL_PWD), so PATH, AUTHOR and KEYBOARD_LAYOUT are kept.

Values: any URL with userinfo (redis://:pw@cache, https://token@host), an HTTP `Bearer ...` token,
and token formats from gitleaks' rules
(https://github.com/gitleaks/gitleaks/blob/master/config/gitleaks.toml): github-pat,
github-fine-grained-pat, gitlab-pat, huggingface-access-token, aws-access-token, slack-*-token,
openai-api-key, anthropic-api-key, npm-access-token, pypi-upload-token, private-key, jwt.
A value rule also runs over every captured file and command output (`redact_text`).

Entropy-based detection (detect-secrets' HexHighEntropyString) is not used: on environment values it
flags build ids, LS_COLORS and hashes, and the name and format rules above already cover the
credentials that ML machines carry (tests/capture/test_redact_mask.py lists 40 of them).
"""

from __future__ import annotations

import re

REDACTED = "<redacted>"

# Matched anywhere in the upper-cased name.
_NAME_ANYWHERE = (
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
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
    "CREDENTIAL",
    "CONNECTION_STRING",
    "CONN_STR",
    "WEBHOOK",
    "COOKIE",
    "KEYPASS",
    "CONTRASENA",
)
# Matched only as a whole part of the name between underscores (or the whole name).
_NAME_PARTS = {"KEY", "KEYS", "PASS", "PWD", "PW", "PAT", "DSN", "AUTH", "SESSION", "SIGNATURE", "SALT"}

# Names that match a rule above but hold a path, a location or a switch, not a secret.
_NOT_SECRETS = {"PWD", "OLDPWD", "SSH_AUTH_SOCK", "TOKENIZERS_PARALLELISM", "PIP_CERT", "XDG_SESSION_TYPE"}
_LOCATION_SUFFIXES = ("_FILE", "_DIR", "_PATH", "_BUNDLE", "_SOCK", "_TYPE", "_ID_FILE")

# (gitleaks rule id or our name, pattern). Patterns stop at whitespace and quotes.
VALUE_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("url-userinfo", re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s@'\"<>]+@")),
    ("http-bearer", re.compile(r"\bBearer\s+[A-Za-z0-9._~+/=-]{16,}")),
    ("private-key", re.compile(r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY-----")),
    ("github-pat", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}")),
    ("github-fine-grained-pat", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{40,}")),
    ("gitlab-pat", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}")),
    ("huggingface-access-token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    ("aws-access-token", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b")),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("anthropic-api-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("openai-api-key", re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}")),
    ("npm-access-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    ("pypi-upload-token", re.compile(r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}")),
)


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    if upper in _NOT_SECRETS or upper.endswith(_LOCATION_SUFFIXES):
        return False
    if any(word in upper for word in _NAME_ANYWHERE):
        return True
    return any(part in _NAME_PARTS for part in re.split(r"[_\-.]+", upper))


def secret_value_rule(value: str) -> str | None:
    """The id of the first value rule that `value` matches, or None."""
    for rule, pattern in VALUE_RULES:
        if pattern.search(value):
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


def redact_text(text: str, counts: dict[str, int] | None = None) -> str:
    """Replace credential-shaped values in free text; add hits per rule id to `counts`."""
    for rule, pattern in VALUE_RULES:
        if rule == "url-userinfo":
            text, n = pattern.subn(lambda m: m.group(0).split("://", 1)[0] + "://" + REDACTED + "@", text)
        else:
            text, n = pattern.subn(REDACTED, text)
        if n and counts is not None:
            counts[rule] = counts.get(rule, 0) + n
    return text
