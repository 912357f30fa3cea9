"""Host protocol: LiveHost runs argv with timeouts and records missing tools; CaptureHost replays."""

from __future__ import annotations

import json
import tarfile

import pytest

from gpuwise.capture.host import CaptureHost, LiveHost, run_argv
from gpuwise.capture.sources import COMMANDS, CommandSource
from gpuwise.errors import CaptureFormatError


def test_missing_tool_is_recorded_not_raised():
    r = run_argv(CommandSource("x", ("gpuwise-no-such-tool-xyz",)))
    assert r.status == "missing" and r.rc is None and not r.ok
    assert "not installed" in r.reason()


def test_timeout_is_enforced():
    r = run_argv(CommandSource("sleep", ("sleep", "5"), timeout_s=0.3))
    assert r.status == "timeout" and r.seconds == pytest.approx(0.3)


def test_nonzero_exit_is_kept_apart_from_missing():
    r = run_argv(CommandSource("false", ("false",)))
    assert r.status == "ok" and r.rc == 1 and not r.ok
    assert "exited 1" in r.reason()


def test_no_shell_is_used():
    # A shell would expand this; argv execution passes it literally to echo.
    r = run_argv(CommandSource("echo", ("echo", "$HOME;", "`id`")))
    assert r.stdout.strip() == "$HOME; `id`"


def test_live_host_reads_files_and_caches_commands():
    host = LiveHost()
    assert "MemTotal" in host.read_file("/proc/meminfo")
    assert host.read_file("/nonexistent/file") is None
    assert host.run("not-a-known-id") is None
    first = host.run("lscpu")
    assert host.run("lscpu") is first


def _make_capture(root, files=None, commands=None, meta=None):
    root.mkdir(parents=True, exist_ok=True)
    (root / "meta.json").write_text(json.dumps(meta or {"format": "gpuwise-capture/1", "commands": {}}))
    for path, text in (files or {}).items():
        p = root / "files" / path.lstrip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    for name, text in (commands or {}).items():
        p = root / "commands" / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def test_capture_host_keeps_not_captured_empty_and_failed_apart(tmp_path):
    cap = _make_capture(
        tmp_path / "c",
        files={"/proc/cmdline": "ro quiet\n"},
        commands={"lscpu.txt": "", "numactl-H.txt": "", "numactl-H.rc": "1\n", "numactl-H.err": "boom"},
        meta={"format": "gpuwise-capture/1", "commands": {"ibstat": {"status": "missing"}}},
    )
    host = CaptureHost(cap)
    assert host.read_file("/proc/cmdline") == "ro quiet\n"
    assert host.run("ip-j-addr") is None  # not captured
    empty = host.run("lscpu")
    assert empty.ok and empty.stdout == ""  # captured but empty
    failed = host.run("numactl-H")
    assert failed.rc == 1 and failed.stderr == "boom" and not failed.ok
    missing = host.run("ibstat")
    assert missing.status == "missing"


def test_capture_host_reads_tarball_and_globs(tmp_path):
    cap = _make_capture(
        tmp_path / "node1", files={"/sys/class/net/eth0/mtu": "1500\n", "/sys/class/net/lo/mtu": "65536\n"}
    )
    tgz = tmp_path / "node1.tar.gz"
    with tarfile.open(tgz, "w:gz") as tar:
        tar.add(cap, arcname="node1")
    host = CaptureHost(tgz)
    assert host.glob("/sys/class/net/*/mtu") == ["/sys/class/net/eth0/mtu", "/sys/class/net/lo/mtu"]


@pytest.mark.parametrize(
    "setup, message",
    [
        (lambda p: None, "not found"),
        (lambda p: p.mkdir(), "no meta.json"),
        (lambda p: (p.mkdir(), (p / "meta.json").write_text("{not json")), "not valid JSON"),
        (
            lambda p: (p.mkdir(), (p / "meta.json").write_text('{"format": "other/2"}')),
            "expected 'gpuwise-capture/1'",
        ),
        (lambda p: p.write_bytes(b"\x1f\x8b garbage"), "cannot read the tarball"),
    ],
)
def test_bad_captures_get_clear_errors(tmp_path, setup, message):
    path = tmp_path / "cap"
    setup(path)
    with pytest.raises(CaptureFormatError) as err:
        CaptureHost(path)
    assert message in str(err.value) and "To fix:" in str(err.value)


def test_design_command_ids_are_in_the_table():
    required = {
        "nvidia-smi-q-x",
        "nvidia-smi-topo-m",
        "nvidia-smi-nvlink-s",
        "lscpu",
        "numactl-H",
        "ibv_devinfo-v",
        "ibstat",
        "ip-j-addr",
        "findmnt-J",
        "lspci-vvv",
    }
    assert required <= set(COMMANDS)
    assert COMMANDS["nvidia-smi-q-x"].argv == ("nvidia-smi", "-q", "-x")


def test_output_listed_in_meta_but_missing_is_an_error_not_empty(tmp_path):
    cap = _make_capture(
        tmp_path / "c", meta={"format": "gpuwise-capture/1", "commands": {"lscpu": {"status": "ok", "rc": 0}}}
    )
    r = CaptureHost(cap).run("lscpu")
    assert r.status == "error" and "incomplete copy" in r.reason()


def test_directory_and_tarball_hosts_answer_the_protocol_alike(tmp_path):
    meta = {
        "format": "gpuwise-capture/1",
        "hostname": "node7",
        "captured_at": "2026-11-29T21:46:06+00:00",
        "gpuwise_version": "0.1.0",
        "commands": {"ibstat": {"status": "missing"}, "lscpu": {"status": "ok", "rc": 0}},
    }
    cap = _make_capture(tmp_path / "node7", commands={"lscpu.txt": "Architecture: x86_64\n"}, meta=meta)
    tgz = tmp_path / "node7.tar.gz"
    with tarfile.open(tgz, "w:gz") as tar:
        tar.add(cap, arcname="node7")
    for host in (CaptureHost(cap), CaptureHost(tgz)):
        host.prefetch(["lscpu", "ibstat"])  # a no-op on a capture
        m = host.meta()
        assert (m.hostname, m.captured_at, m.gpuwise_version) == ("node7", meta["captured_at"], "0.1.0")
        assert m.source == host.name
        assert host.executed() == ["ibstat", "lscpu"]


def test_live_host_meta_and_executed_track_what_ran():
    host = LiveHost()
    assert host.executed() == [] and host.meta().source == "live" and host.meta().hostname
    host.prefetch(["lscpu", "numactl-H"])
    host.run("df-P-B1")
    assert sorted(host.executed()) == ["df-P-B1", "lscpu", "numactl-H"]
