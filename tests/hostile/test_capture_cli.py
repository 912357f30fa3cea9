"""`gpuwise capture` as a hostile environment meets it: a racing writer, credentials, --mask."""

from __future__ import annotations

import json
import subprocess
import time

from gpuwise.capture.host import CaptureHost
from gpuwise.errors import EXIT_COULD_NOT_RUN, EXIT_OK
from tests.capture.test_redact_mask import CREDENTIALS

# The issue's examples first; the rest are the 46 realistic credentials of tests/capture.
ISSUE_ENV = {
    "PGPASSWORD": "pg-hunter2-pw",
    "REDIS_URL": "redis://:redis-pw-123@cache:6379/0",
    "SENTRY_DSN": "https://dsnkey123abc@o1.ingest.sentry.io/42",
    "GITHUB_PAT": "github_pat_11AAAAAAA0123456789_abcdefghijklmnopqrstuvwxyzABCDEF",
    "MYSECRET": "my-own-secret-value",
}


def test_two_captures_to_one_path_one_wins_and_one_exits_3(sandbox):
    sandbox.freeze_inputs()
    first = sandbox.start("capture", "-o", "t.tar.gz")
    second = sandbox.start("capture", "-o", "t.tar.gz")
    a, b = sandbox.wait(first), sandbox.wait(second)
    assert sorted([a.rc, b.rc]) == [EXIT_OK, EXIT_COULD_NOT_RUN], (a, b)
    loser = a if a.rc == EXIT_COULD_NOT_RUN else b
    assert "To fix" in loser.stderr and (
        "appeared while capturing" in loser.stderr or "exists" in loser.stderr
    )
    assert CaptureHost(sandbox.work / "t.tar.gz").run("lscpu") is not None  # the winner's capture is whole
    sandbox.allowed_outputs = {"t.tar.gz"}


def test_a_users_file_written_during_capture_is_kept(sandbox):
    """The file appears after capture's start-up check: capture must lose, not replace it."""
    sandbox.freeze_inputs()
    proc = sandbox.start("capture", "-o", "t.tar.gz")
    deadline = time.monotonic() + 30
    while not any(p.name.startswith(".t.tar.gz.") for p in sandbox.work.iterdir()):  # past the check
        assert time.monotonic() < deadline, "capture never started writing"
        time.sleep(0.002)
    (sandbox.work / "t.tar.gz").write_text("the user's own file\n")
    out = sandbox.wait(proc).check(EXIT_COULD_NOT_RUN, "appeared while capturing")
    assert (sandbox.work / "t.tar.gz").read_text() == "the user's own file\n", out
    sandbox.allowed_outputs = {"t.tar.gz"}


def test_credentials_never_reach_the_capture_even_masked(sandbox):
    env = sandbox.env(**{**CREDENTIALS, **ISSUE_ENV})
    sandbox.freeze_inputs()
    for out, extra in (("plain", ()), ("masked", ("--mask",))):
        sandbox.run("capture", "-o", out, *extra, env=env).check(EXIT_OK, "redacted")
        blob = "".join(p.read_text(errors="replace") for p in (sandbox.work / out).rglob("*") if p.is_file())
        leaked = sorted(n for n, v in {**CREDENTIALS, **ISSUE_ENV}.items() if len(v) > 3 and v in blob)
        assert not leaked, f"{out}: values of {leaked} are in the capture"
        meta = json.loads((sandbox.work / out / "meta.json").read_text())
        assert set(ISSUE_ENV) | set(CREDENTIALS) <= set(meta["redacted"]["env"])  # listed by name
    sandbox.allowed_outputs = {
        str(p.relative_to(sandbox.work)) for d in ("plain", "masked") for p in (sandbox.work / d).rglob("*")
    }


def test_mask_leaves_no_ip_address_of_this_machine(sandbox):
    sandbox.freeze_inputs()
    sandbox.run("capture", "-o", "m", "--mask").check(EXIT_OK, "masked")
    blob = "".join(p.read_text(errors="replace") for p in (sandbox.work / "m").rglob("*") if p.is_file())
    links = json.loads(
        subprocess.run(["ip", "-j", "addr"], capture_output=True, text=True, timeout=300).stdout or "[]"
    )
    addrs = [a["local"] for link in links for a in link.get("addr_info", []) if a.get("local")]
    keep = ("127.", "::1")
    leaked = [a for a in addrs if not a.startswith(keep) and a in blob]
    assert not leaked, f"addresses left after --mask: {leaked}"
    sandbox.allowed_outputs = {str(p.relative_to(sandbox.work)) for p in (sandbox.work / "m").rglob("*")}
