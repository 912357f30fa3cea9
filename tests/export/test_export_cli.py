"""`gpuwise export` as a user runs it: HTTP with basic auth and TLS, textfile output, clean errors."""

from __future__ import annotations

import base64
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.export.serving import H200, make_cert, serve, stop


def gpuwise(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gpuwise.cli", *args], capture_output=True, text=True, timeout=timeout
    )


def test_basic_auth_rejects_without_and_serves_with_credentials(tmp_path):
    secret = tmp_path / "auth"
    secret.write_text("prom:s3cret\n")
    proc, url = serve("--basic-auth-file", str(secret))
    try:
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(url, timeout=10)
        assert err.value.code == 401
        request = urllib.request.Request(url)
        request.add_header("Authorization", "Basic " + base64.b64encode(b"prom:s3cret").decode())
        with urllib.request.urlopen(request, timeout=10) as r:
            assert b"DCGM_FI_DEV_GPU_UTIL{" in r.read()
    finally:
        assert stop(proc) == 143  # SIGTERM: a clean stop, the exit-code table's 143


def test_tls_serves_https(tmp_path):
    cert, key = make_cert(tmp_path)
    proc, url = serve("--tls-cert", str(cert), "--tls-key", str(key))
    try:
        assert url.startswith("https://")
        context = ssl.create_default_context(cafile=str(cert))
        context.check_hostname = False
        with urllib.request.urlopen(url, context=context, timeout=10) as r:
            assert b"gpuwise_signal{" in r.read()
    finally:
        stop(proc)


def test_textfile_once_writes_one_prom_file(tmp_path):
    r = gpuwise("export", "--from", H200, "--textfile", str(tmp_path), "--once")
    assert r.returncode == 0, r.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["gpuwise.prom"]
    assert 'modelName="NVIDIA H200"' in (tmp_path / "gpuwise.prom").read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--listen", "nonsense"], "is not ADDRESS:PORT"),
        (["--textfile", "/nonexistent-gwexport"], "is not a directory"),
        (["--once"], "--once needs --textfile"),
        (["--tls-key", "k.pem"], "--tls-key needs --tls-cert"),
        (["--basic-auth-file", "/nonexistent-gwexport"], "cannot read the basic-auth file"),
        (["--from", "/nonexistent-gwexport.csv"], "does not exist"),
    ],
)
def test_bad_options_are_clean_errors(args, message):
    base = [] if "--from" in args else ["--from", H200]
    r = gpuwise("export", *base, *args)
    assert r.returncode == 3, r.stderr
    assert message in r.stderr and "To fix:" in r.stderr and "Traceback" not in r.stderr


def test_a_taken_port_is_a_clean_error():
    proc, url = serve()
    try:
        port = url.rsplit(":", 1)[1].split("/")[0]
        r = gpuwise("export", "--from", H200, "--listen", f"127.0.0.1:{port}")
        assert r.returncode == 3 and "cannot listen" in r.stderr and "To fix:" in r.stderr
    finally:
        stop(proc)


def test_live_export_without_a_gpu_publishes_health_only(tmp_path):
    if Path("/dev/nvidia0").exists():
        pytest.skip("this machine has a GPU")
    r = gpuwise("export", "--textfile", str(tmp_path), "--once")
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "gpuwise.prom").read_text()
    assert "gpuwise_exporter_read_ok 0.0" in text and "DCGM_FI_DEV_GPU_UTIL{" not in text
