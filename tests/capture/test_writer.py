"""`gpuwise capture`: format, secrets, masking, atomic write."""

from __future__ import annotations

import json
import os

import pytest

from gpuwise.capture import writer
from gpuwise.capture.host import CaptureHost, LiveHost
from gpuwise.capture.sources import ALL_COMMAND_IDS
from gpuwise.errors import UserInputError

SECRET = "s3cr3t-value-that-must-not-leak"


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    """One real capture of this machine (directory form), with a planted secret in the environment."""
    out = tmp_path_factory.mktemp("cap") / "node"
    env = {**os.environ, "GPUWISE_TEST_API_TOKEN": SECRET, "NCCL_DEBUG": "INFO"}
    summary = writer.write_capture(out, host=LiveHost(env=env))
    return out, summary


def test_capture_layout_and_meta(captured):
    out, summary = captured
    meta = json.loads((out / "meta.json").read_text())
    assert meta["format"] == "gpuwise-capture/1" and meta["gpuwise_version"]
    assert set(meta["commands"]) == set(ALL_COMMAND_IDS)
    assert (out / "files/proc/cpuinfo").is_file()
    assert (out / "commands/lscpu.txt").read_text().strip()
    # nvidia-smi is not installed on this CPU-only VM: recorded as missing, with no .txt
    if meta["commands"]["nvidia-smi-q-x"]["status"] == "missing":
        assert not (out / "commands/nvidia-smi-q-x.txt").exists()
        assert CaptureHost(out).run("nvidia-smi-q-x").status == "missing"
    assert summary.files > 10


def test_secrets_are_redacted(captured):
    out, summary = captured
    blob = "".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())
    assert SECRET not in blob
    meta = json.loads((out / "meta.json").read_text())
    assert "GPUWISE_TEST_API_TOKEN" in meta["redacted"]["env"]
    assert "GPUWISE_TEST_API_TOKEN" in summary.redacted_env


def test_tarball_replays_like_the_directory(tmp_path):
    tgz = tmp_path / "node.tar.gz"
    writer.write_capture(tgz)
    host = CaptureHost(tgz)
    assert host.read_file("/proc/meminfo").startswith("MemTotal")
    assert host.run("lscpu").ok
    assert not [p for p in tmp_path.iterdir() if p.name != "node.tar.gz"]  # no temp leftovers


def test_mask_removes_hostname_and_macs(tmp_path):
    import socket

    out = tmp_path / "masked"
    summary = writer.write_capture(out, mask=True)
    blob = "".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())
    host = socket.gethostname()
    if len(host) > 3:
        assert host not in blob
    for mac_file in (out / "files/sys/class/net").glob("*/address"):
        mac = mac_file.read_text().strip()
        assert mac in ("00:00:00:00:00:00", "") or mac.startswith("02:00:00:")
    assert json.loads((out / "meta.json").read_text())["masked"] is True
    assert summary.masked.get("host", 0) >= 1


def test_interrupted_capture_leaves_nothing(tmp_path, monkeypatch):
    def boom(*_a, **_k):
        raise KeyboardInterrupt

    monkeypatch.setattr(writer, "_publish", boom)
    with pytest.raises(KeyboardInterrupt):
        writer.write_capture(tmp_path / "half.tar.gz")
    assert list(tmp_path.iterdir()) == []


def test_refuses_to_overwrite(tmp_path):
    (tmp_path / "exists.tar.gz").write_text("user data")
    with pytest.raises(UserInputError):
        writer.write_capture(tmp_path / "exists.tar.gz")
    assert (tmp_path / "exists.tar.gz").read_text() == "user data"
