"""Test helpers: start `gpuwise export` as a user would, and a throw-away TLS certificate."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CAPTURES

H200 = str(CAPTURES / "h200-1gpu-kvm-vm")


def serve(*args: str, env: dict[str, str] | None = None, source: str = H200) -> tuple[subprocess.Popen, str]:
    """An exporter replaying `source` on a free loopback port; (process, metrics URL).

    `env` replaces the environment (PATH and the like are kept from this one)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpuwise.cli", "export", "--from", source, "--listen", "127.0.0.1:0", *args],
        stderr=subprocess.PIPE,
        text=True,
        env=None if env is None else {**_base_env(), **env},
    )
    line = proc.stderr.readline()
    m = re.search(r"(https?://127\.0\.0\.1:\d+/metrics)", line)
    if m is None:
        proc.kill()
        pytest.fail(f"exporter did not start: {line}{proc.stderr.read()}")
    return proc, m.group(1)


def _base_env() -> dict[str, str]:
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "PYTHONPATH", "VIRTUAL_ENV", "TMPDIR")
    return {k: v for k, v in os.environ.items() if k in keep}


def stop(proc: subprocess.Popen, timeout: float = 20) -> int:
    """SIGTERM, then the exit code (143 = a clean stop by SIGTERM)."""
    proc.terminate()
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise


def make_cert(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 made with `openssl req`; (cert, key)."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl not installed")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
        timeout=60,
    )  # fmt: skip
    return cert, key
