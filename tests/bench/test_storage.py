"""Storage with real fio on a temp directory: numbers, cleanup, direct-I/O fallback, fio missing, and a
cross-check against a hand-written fio command line of the same job."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from facts.fake_host import FakeHost
from gpuwise.bench import storage
from gpuwise.bench.context import BenchContext, BenchOptions, MissingTool
from gpuwise.capture.host import LiveHost
from gpuwise.facts.storage import collect_storage

from ..conftest import real_files

needs_fio = pytest.mark.skipif(
    shutil.which("fio") is None, reason="fio not installed (`.ci/run` installs it)"
)
MiB = 1 << 20


def _ctx(path) -> BenchContext:
    ctx = BenchContext(BenchOptions(data_dir=str(path)), device="cpu")
    ctx.mounts = collect_storage(LiveHost()).mounts  # as build_context reads them: the probe's parse
    return ctx


def _snapshot(path: Path) -> set[str]:
    return {str(p.relative_to(path)) for p in path.rglob("*")}


@needs_fio
def test_storage_measures_and_cleans_up_and_matches_a_direct_fio_run(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "keep.txt").write_text("user file")
    spec = storage.Spec(str(data), file_bytes=64 * MiB, runtime_s=1)
    before_outside = _snapshot(tmp_path)
    results = storage.run(_ctx(data), spec)

    # only the user's file remains; nothing appeared next to the directory either
    assert _snapshot(data) == {"keep.txt"} and _snapshot(tmp_path) == before_outside
    by_name = {m.name: m for m in results}
    assert set(by_name) == {"fio_seqwrite_1m", "fio_seqread_1m", "fio_randread_4k"}
    for m in results:
        assert m.status == "ok" and m.value > 0 and m.layer == "storage"
        assert m.extra["latency_us"]["p99_us"] >= m.extra["latency_us"]["p50_us"] > 0
    assert by_name["fio_randread_4k"].unit == "IOPS" and by_name["fio_seqread_1m"].unit == "GB/s"
    direct = by_name["fio_seqread_1m"].params["direct"]

    # The same jobs, written out by hand. This VM's virtio disk is shared with other engineers'
    # test runs: back-to-back identical 2 s fio runs here measured 1.02-1.90 GB/s seq read and
    # 68.5k-80.5k IOPS 4k random read (`fio --rw=read --bs=1M --iodepth=16 --direct=1 ...`, 4 runs).
    # So compare with the range of 3 direct runs, widened 2x each way: this still catches unit
    # mistakes (KiB vs bytes, bits vs bytes, x1000), the wrong side of the job, or the wrong job.
    workdir = data / "direct-check"
    workdir.mkdir()
    try:
        common = [
            f"--directory={workdir}",
            "--filename=check.dat",
            f"--size={64 * MiB}",
            "--ioengine=libaio",
            f"--direct={int(direct)}",
            "--time_based",
            "--runtime=1",
            "--group_reporting",
            "--output-format=json",
        ]
        subprocess.run(
            ["fio", "--name=w", "--rw=write", "--bs=1M", "--iodepth=16", *common],
            check=True,
            capture_output=True,
            timeout=300,
        )
        seq, rand = [], []
        for _ in range(3):
            out = subprocess.run(
                ["fio", "--name=r", "--rw=read", "--bs=1M", "--iodepth=16", "--numjobs=1", *common],
                check=True,
                capture_output=True,
                text=True,
                timeout=300,
            ).stdout
            seq.append(json.loads(out)["jobs"][0]["read"]["bw_bytes"] / 1e9)
            out = subprocess.run(
                ["fio", "--name=rr", "--rw=randread", "--bs=4k", "--iodepth=32", "--numjobs=4", *common],
                check=True,
                capture_output=True,
                text=True,
                timeout=300,
            ).stdout
            rand.append(json.loads(out)["jobs"][0]["read"]["iops"])
    finally:
        shutil.rmtree(workdir)
    assert min(seq) / 2 <= by_name["fio_seqread_1m"].value <= max(seq) * 2, (
        by_name["fio_seqread_1m"].value,
        seq,
    )
    assert min(rand) / 2 <= by_name["fio_randread_4k"].value <= max(rand) * 2, (
        by_name["fio_randread_4k"].value,
        rand,
    )


@needs_fio
@pytest.mark.root
def test_a_filesystem_without_o_direct_falls_back_to_buffered_and_says_so(tmp_path):
    # tmpfs accepts O_DIRECT since Linux 6.6 (this VM runs 6.18), so use ramfs, which still refuses it
    mnt = tmp_path / "ramfs"
    mnt.mkdir()
    mounted = subprocess.run(["mount", "-t", "ramfs", "ramfs", str(mnt)], capture_output=True, timeout=300)
    if mounted.returncode != 0:
        pytest.skip("cannot mount ramfs here")
    try:
        ok, why = storage.direct_io_supported(str(mnt))
        assert not ok and "O_DIRECT" in why and "EINVAL" in why
        spec = storage.Spec(str(mnt), file_bytes=16 * MiB, runtime_s=1, jobs=storage.JOBS[:2])
        results = storage.run(_ctx(mnt), spec)
        assert all(m.status == "ok" and m.value > 0 for m in results)
        assert all(m.params["direct"] is False and "buffered I/O" in m.reason for m in results)
        assert all(m.params["filesystem"] == "ramfs" for m in results)
        assert list(mnt.iterdir()) == []
    finally:
        subprocess.run(["umount", str(mnt)], check=True, timeout=300)


def test_probe_and_bench_agree_on_a_mount_with_spaces_and_tabs():
    """/proc/mounts escapes space, tab, newline and backslash as octal; bench once decoded only \\040."""
    proc_mounts = (
        "/dev/vda1 / ext4 rw,relatime 0 0\n"
        "/dev/nvme0n1 /mnt/train\\040data xfs rw,noatime 0 0\n"
        "server:/x /mnt/tab\\011dir nfs4 rw 0 0\n"
    )
    mounts = collect_storage(FakeHost(files={"/proc/mounts": proc_mounts})).mounts
    assert [m.mountpoint for m in mounts] == ["/", "/mnt/train data", "/mnt/tab\tdir"]
    assert storage.filesystem_of("/mnt/train data/shards", mounts) == "xfs"
    assert storage.filesystem_of("/mnt/tab\tdir/run1", mounts) == "nfs4"
    assert storage.filesystem_of("/home/me", mounts) == "ext4"


def test_direct_io_probe_leaves_nothing_behind(tmp_path):
    storage.direct_io_supported(str(tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_fio_missing_skips_with_the_install_command(tmp_path, monkeypatch):
    monkeypatch.setattr(storage.shutil, "which", lambda name: None)
    with pytest.raises(MissingTool, match="To fix: apt-get install fio") as missing:
        storage.run(_ctx(tmp_path), storage.Spec(str(tmp_path)))
    assert missing.value.tool == "fio"


def test_fio_argv_writes_only_inside_the_directory():
    argv = storage.fio_argv(storage.JOBS[0], "/data/x", storage.Spec("/data"), True, "libaio")
    assert "--directory=/data/x" in argv and f"--filename={storage.DATA_FILE}" in argv
    assert not any(a.startswith(("--output=", "--write_", "--filename=/")) for a in argv)


@pytest.mark.parametrize("path", real_files("fio", "*.json"), ids=lambda p: p.name)
def test_parse_recorded_fio_json(path):
    parsed = storage.parse_fio_json(path.read_text(), "randread")
    assert parsed["bw_bytes"] > 0 and parsed["iops"] > 0
    assert parsed["latency_us"]["p99_us"] >= parsed["latency_us"]["p50_us"] > 0


def test_garbage_fio_output_is_a_clear_error():
    from gpuwise.errors import EnvironmentProblem

    with pytest.raises(EnvironmentProblem, match="not the JSON expected"):
        storage.parse_fio_json("fio: engine libaio not loadable\n", "read")
