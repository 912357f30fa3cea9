"""`gpuwise capture`: format, secrets, masking, atomic write."""

from __future__ import annotations

import json
import os

import pytest

from gpuwise.capture import writer
from gpuwise.capture.host import CaptureHost, LiveHost, absent_source
from gpuwise.capture.sources import ALL_COMMAND_IDS
from gpuwise.errors import UserInputError
from tests.capture.test_redact_mask import CREDENTIALS

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


def test_forty_credentials_never_reach_a_capture_file(tmp_path):
    """Every value of the 40 realistic credentials is absent from every file; meta names them only."""
    out = tmp_path / "node"
    summary = writer.write_capture(out, host=LiveHost(env={**os.environ, **CREDENTIALS}))
    blob = "".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())
    leaked = sorted(name for name, value in CREDENTIALS.items() if len(value) > 3 and value in blob)
    assert not leaked, f"values leaked: {leaked}"
    meta = json.loads((out / "meta.json").read_text())
    assert set(CREDENTIALS) <= set(meta["redacted"]["env"]) == set(summary.redacted_env)
    assert isinstance(meta["redacted"]["values"], dict)  # rule id -> count, never a value


def test_mask_replaces_every_ip_address(tmp_path):
    out = tmp_path / "masked"
    writer.write_capture(out, mask=True)
    addr = (out / "commands/ip-j-addr.txt").read_text()
    if not addr.strip():
        pytest.skip("ip -j addr gave no output here")
    originals = [
        a["local"]
        for link in json.loads(LiveHost().run("ip-j-addr").stdout)
        for a in link.get("addr_info", [])
        if a.get("local") and not a["local"].startswith(("127.", "::1"))
    ]
    assert originals, "this machine has a non-loopback address to mask"
    assert not [a for a in originals if a in addr]
    meta = json.loads((out / "meta.json").read_text())
    assert meta["masked_counts"].get("ipv4", 0) + meta["masked_counts"].get("ipv6", 0) >= 1


def test_a_file_that_appears_during_capture_is_never_replaced(tmp_path):
    """The user (or another program) writes the target while the capture runs: the capture loses."""
    target = tmp_path / "t.tar.gz"

    class Racer(LiveHost):
        def prefetch(self, command_ids):
            super().prefetch(command_ids)
            target.write_text("the user's file")

    with pytest.raises(UserInputError) as err:
        writer.write_capture(target, host=Racer())
    assert "appeared while capturing" in str(err.value) and "To fix:" in str(err.value)
    assert target.read_text() == "the user's file"
    assert [p.name for p in tmp_path.iterdir()] == ["t.tar.gz"]  # no temporaries


def test_a_directory_that_appears_during_capture_is_never_replaced(tmp_path):
    target = tmp_path / "node"

    class Racer(LiveHost):
        def prefetch(self, command_ids):
            super().prefetch(command_ids)
            target.mkdir()
            (target / "keep.txt").write_text("mine")

    with pytest.raises(UserInputError):
        writer.write_capture(target, host=Racer())
    assert [p.name for p in target.iterdir()] == ["keep.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["node"]


def test_publish_without_renameat2_still_never_replaces(tmp_path, monkeypatch):
    """On a filesystem without RENAME_NOREPLACE the link(2)/rename(2) fallback keeps the guarantee."""
    from gpuwise import atomic

    monkeypatch.setattr(atomic, "_renameat2_noreplace", lambda src, dst: False)
    src, dst = tmp_path / "a", tmp_path / "b"
    src.write_text("new")
    dst.write_text("old")
    with pytest.raises(FileExistsError):
        atomic.publish_noreplace(src, dst)
    assert dst.read_text() == "old"
    dst.unlink()
    atomic.publish_noreplace(src, dst)
    assert dst.read_text() == "new" and not src.exists()
    folder, busy = tmp_path / "d", tmp_path / "busy"
    folder.mkdir()
    busy.mkdir()
    (busy / "x").write_text("x")
    with pytest.raises(FileExistsError):
        atomic.publish_noreplace(folder, busy)


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


def test_absent_log_sources_say_what_was_absent_and_why(captured):
    """A `tail` of a log file this machine does not have, or a journal without a previous boot, ran and found
    nothing to read: 'absent', with the tool's own words, not 'ran with errors'."""
    from gpuwise.capture.host import CommandResult
    from gpuwise.report.formats import render
    from gpuwise.report.views.capture import capture_view

    missing_file = CommandResult(
        "tail-kern-log",
        stdout="",
        stderr="tail: cannot open '/var/log/kern.log' for reading: No such file or directory\n",
        rc=1,
    )
    assert "/var/log/kern.log" in absent_source(missing_file)
    no_boot = CommandResult(
        "journalctl-k-b-1",
        stdout="",
        stderr="Data from the specified boot (-1) is not available: No such boot ID in journal\n",
        rc=1,
    )
    assert "No such boot ID" in absent_source(no_boot)
    assert (
        absent_source(CommandResult("journalctl-k", stdout="-- No entries --\n", rc=0)) == "-- No entries --"
    )
    assert (
        absent_source(CommandResult("tail-syslog", stdout="", stderr="tail: Permission denied\n", rc=1))
        is None
    )
    assert absent_source(CommandResult("journalctl-k", stdout="kernel: hello\n", rc=0)) is None
    # ibstat's partial output ending "stat of IB device 'mlx5_8' failed: No such file or directory" failed
    ibstat = CommandResult(
        "ibstat", stdout="CA 'mlx5_7'\n", stderr="ibpanic: ... No such file or directory", rc=255
    )
    assert absent_source(ibstat) is None

    _out, summary = captured
    assert {"journalctl-k-b-1", "ibstatus", "ibdev2netdev"} <= set(summary.commands)
    for cid, why in summary.absent.items():
        assert summary.commands[cid] == "absent" and why
    text = render(capture_view(summary, mask=False), "text", width=200)
    for cid in summary.absent:
        assert cid in text.split("absent here", 1)[1]
        assert f"{cid} (rc=" not in text  # not listed as a failure
