"""Keep secrets out of captures: environment variables whose names look like credentials."""

from __future__ import annotations

import re

# Name fragments that mark a credential. Matched on word parts of the variable name
# (AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN, HF_TOKEN, TENCENTCLOUD_SECRET_ID, DB_PASSWORD, ...).
_SECRET_PARTS = re.compile(
    r"(^|_)(KEY|KEYS|TOKEN|SECRET|SECRETS|PASSWORD|PASSWD|PASS|PWD|CREDENTIAL|CREDENTIALS|AUTH|"
    r"APIKEY|PRIVATE|SESSION|COOKIE|SIGNATURE|CERT|SECRETID|SECRETKEY|ACCESSKEY)($|_)",
    re.IGNORECASE,
)
# Values that carry credentials whatever the name: URLs with user:password@.
_URL_WITH_PASSWORD = re.compile(r"://[^/\s:@]+:[^/\s@]+@")
REDACTED = "<redacted>"


# Names that match a fragment above but hold a path or a location, not a secret.
_NOT_SECRETS = {
    "PWD",
    "OLDPWD",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "PIP_CERT",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
}


# Names that end like these hold a location (SSL_CERT_FILE, NIX_SSL_CERT_FILE, AWS_CA_BUNDLE): not a secret.
_LOCATION_SUFFIXES = ("_FILE", "_DIR", "_PATH", "_BUNDLE")


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    if upper in _NOT_SECRETS or upper.endswith(_LOCATION_SUFFIXES):
        return False
    return bool(_SECRET_PARTS.search(name))


def redact_env(env: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """Return (env with secret values replaced, sorted names that were redacted)."""
    out, redacted = {}, []
    for name, value in env.items():
        if is_secret_name(name) or _URL_WITH_PASSWORD.search(value or ""):
            out[name] = REDACTED
            redacted.append(name)
        else:
            out[name] = value
    return out, sorted(redacted)
