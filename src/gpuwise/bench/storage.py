"""Storage with fio (JSON output) in a directory the user names: sequential read and write with
1 MiB blocks, and random 4 KiB reads with several jobs; bandwidth, IOPS and latency percentiles.

Direct I/O (O_DIRECT) is used where the filesystem allows it, so reads measure the device and not
the page cache. Some filesystems refuse O_DIRECT (ramfs, tmpfs before Linux 6.6, some network and
FUSE filesystems): the benchmark detects that with a probe write, falls back to buffered I/O, and
says so next to the numbers. Every file goes into a fresh
subdirectory of the given directory, which is removed afterwards whatever happens.
"""

from __future__ import annotations

import errno
import json
import mmap
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gpuwise.bench.context import BenchContext, MissingTool
from gpuwise.bench.registry import BenchInfo
from gpuwise.bench.timing import stats_from
from gpuwise.documents.bench import Measurement, PeakSource
from gpuwise.errors import EnvironmentProblem, UserInputError
from gpuwise.i18n import N_, msg

if TYPE_CHECKING:
    from gpuwise.facts.models import Mount

BENCHMARK = BenchInfo(
    name="storage",
    layer="storage",
    title=N_("Storage (fio)"),
    help=N_("fio sequential read/write and 4 KiB random reads in --data-dir"),
    order=60,
    quick_timeout_s=90,
    full_timeout_s=900,
    aliases=("fio",),
)

MiB = 1 << 20


def no_storage_peak() -> PeakSource:
    return PeakSource(
        kind="none", text=msg("no storage peak: the device's rated speed is not known to bench")
    )


DATA_FILE = "gpuwise-fio.dat"


@dataclass(frozen=True)
class FioJob:
    name: str  # the Measurement name
    rw: str  # fio rw=
    bs: str
    numjobs: int
    iodepth: int
    unit: str  # "GB/s" or "IOPS"


JOBS = (
    FioJob("fio_seqwrite_1m", "write", "1M", 1, 16, "GB/s"),  # first: it lays out the file the reads use
    FioJob("fio_seqread_1m", "read", "1M", 1, 16, "GB/s"),
    FioJob("fio_randread_4k", "randread", "4k", 4, 32, "IOPS"),
)


@dataclass(frozen=True)
class Spec:
    directory: str
    file_bytes: int = 256 * MiB
    runtime_s: int = 2
    ramp_s: int = 0
    repeats: int = 1
    jobs: tuple[FioJob, ...] = JOBS


def make_spec(ctx: BenchContext) -> Spec:
    directory = ctx.options.data_dir or tempfile.gettempdir()
    if ctx.mode == "full":
        return Spec(directory, file_bytes=4096 * MiB, runtime_s=20, ramp_s=2, repeats=3)
    return Spec(directory)


def direct_io_supported(directory: str) -> tuple[bool, str]:
    """Try an aligned O_DIRECT write in `directory` (ramfs says EINVAL); the probe file is removed."""
    if not hasattr(os, "O_DIRECT"):
        return False, "O_DIRECT does not exist on this OS"
    path = Path(directory) / ".gpuwise-odirect-probe"
    buf = mmap.mmap(-1, 4096)  # page-aligned, as O_DIRECT requires
    buf.write(b"\0" * 4096)
    try:
        fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_DIRECT, 0o600)
        try:
            os.write(fd, buf)
        finally:
            os.close(fd)
        return True, "O_DIRECT works here"
    except OSError as exc:
        return (
            False,
            f"the filesystem refuses O_DIRECT ({errno.errorcode.get(exc.errno, exc.errno)}: {exc.strerror})",
        )
    finally:
        buf.close()
        path.unlink(missing_ok=True)


def filesystem_of(directory: str, mounts: list[Mount]) -> str:
    """The filesystem type of the mount holding `directory`: the longest matching mount point in the
    probe's mount table (facts.storage.mounts, already unescaped), so bench and probe name the same one."""
    real = os.path.realpath(directory)
    best, fstype = "", "unknown"
    for m in mounts:
        mount = m.mountpoint
        if (real == mount or real.startswith(mount.rstrip("/") + "/")) and len(mount) > len(best):
            best, fstype = mount, m.fstype or "unknown"
    return fstype


def fio_argv(job: FioJob, workdir: str, spec: Spec, direct: bool, engine: str) -> list[str]:
    """The fio command line for one job. Everything it writes is workdir/DATA_FILE."""
    return [
        "fio",
        "--output-format=json",
        f"--name={job.name}",
        f"--directory={workdir}",
        f"--filename={DATA_FILE}",
        f"--rw={job.rw}",
        f"--bs={job.bs}",
        f"--size={spec.file_bytes}",
        f"--numjobs={job.numjobs}",
        f"--iodepth={job.iodepth}",
        f"--ioengine={engine}",
        f"--direct={int(direct)}",
        "--time_based",
        f"--runtime={spec.runtime_s}",
        f"--ramp_time={spec.ramp_s}",
        "--group_reporting",
        "--end_fsync=1",
    ]


def parse_fio_json(text: str, rw: str) -> dict:
    """bw (bytes/s), IOPS and completion-latency percentiles (us) from fio's JSON for one job group."""
    try:
        doc = json.loads(text[text.index("{") :])  # fio may print a warning line before the JSON
        job = doc["jobs"][0]
    except (ValueError, KeyError, IndexError) as exc:
        raise EnvironmentProblem(
            msg("fio output is not the JSON expected ({exc})").format(exc=exc),
            fix=msg("check `fio --version` (3.x needed) and rerun"),
        ) from exc
    side = job["write" if "write" in rw else "read"]
    if job.get("error"):
        raise EnvironmentProblem(
            msg("fio job {get} failed with error {job}").format(get=job.get("jobname"), job=job["error"]),
            fix=msg("check free space and permissions in the data directory"),
        )
    # completion latency by default; total latency (lat_ns) when the job set lat_percentiles=1
    kind = next((k for k in ("clat_ns", "lat_ns") if (side.get(k) or {}).get("percentile")), "clat_ns")
    pct = (side.get(kind) or {}).get("percentile") or {}
    lat = {
        f"p{float(k):g}_us": v / 1000.0 for k, v in pct.items() if float(k) in (50.0, 90.0, 99.0, 99.9, 99.99)
    }
    return {
        "bw_bytes": float(side["bw_bytes"]),
        "iops": float(side["iops"]),
        "runtime_ms": side.get("runtime"),
        "latency_us": lat,
        "latency_kind": kind.removesuffix("_ns"),
        "mean_latency_us": (side.get(kind) or {}).get("mean", 0) / 1000.0,
        "fio_version": doc.get("fio version"),
    }


def _engine() -> str:
    out = subprocess.run(["fio", "--enghelp"], capture_output=True, text=True, timeout=30).stdout
    return "libaio" if "libaio" in out else "psync"


def run_job(job: FioJob, workdir: str, spec: Spec, direct: bool, engine: str) -> dict:
    timeout = spec.runtime_s + spec.ramp_s + 120 + spec.file_bytes / (50 * MiB)  # layout at >= 50 MB/s
    try:
        proc = subprocess.run(
            fio_argv(job, workdir, spec, direct, engine),
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=workdir,
        )
    except subprocess.TimeoutExpired as exc:
        raise EnvironmentProblem(
            msg("fio {name} did not finish in {timeout:.0f} s").format(name=job.name, timeout=timeout),
            fix=msg("the filesystem may be hung or very slow; try a smaller --quick run"),
        ) from exc
    if proc.returncode != 0:
        raise EnvironmentProblem(
            msg("fio {name} exited {returncode}: {strip}").format(
                name=job.name, returncode=proc.returncode, strip=proc.stderr.strip()[-300:]
            ),
            fix=msg("check free space and permissions in the data directory"),
        )
    return parse_fio_json(proc.stdout, job.rw)


def run(ctx: BenchContext, spec: Spec) -> list[Measurement]:
    if shutil.which("fio") is None:
        raise MissingTool(
            "fio",
            msg("fio is not installed, so storage cannot be measured."),
            msg("apt-get install fio  (or dnf install fio / brew install fio)"),
        )
    base = Path(spec.directory)
    if not base.is_dir() or not os.access(base, os.W_OK):
        raise UserInputError(
            msg("data directory {base} does not exist or is not writable").format(base=base),
            fix=msg("pass --data-dir with a writable directory on the filesystem you train from"),
        )
    workdir = tempfile.mkdtemp(prefix="gpuwise-fio-", dir=ctx.scratch_dir or base)
    try:
        direct, why = direct_io_supported(workdir)
        engine = _engine()
        fstype = filesystem_of(workdir, ctx.mounts)
        results = []
        for job in spec.jobs:
            runs = []
            for i in range(spec.repeats):
                ctx.say(f"fio {job.name} ({'direct' if direct else 'buffered'}) {i + 1}/{spec.repeats}")
                runs.append(run_job(job, workdir, spec, direct, engine))
            values = [r["bw_bytes"] / 1e9 if job.unit == "GB/s" else r["iops"] for r in runs]
            stats = stats_from(values)  # the headline is their median (of 1 run in --quick, 3 in --full)
            # latencies come from the run nearest that median (the median run itself when it is odd)
            best = runs[min(range(len(runs)), key=lambda i, v=values, mid=stats.median: abs(v[i] - mid))]
            m = Measurement(
                name=job.name,
                layer="storage",
                unit=job.unit,
                stats=stats,
                device=str(base),
                peak_source=no_storage_peak(),
                params={
                    "rw": job.rw,
                    "bs": job.bs,
                    "numjobs": job.numjobs,
                    "iodepth": job.iodepth,
                    "ioengine": engine,
                    "direct": direct,
                    "file_bytes": spec.file_bytes,
                    "runtime_s": spec.runtime_s,
                    "filesystem": fstype,
                    "fio_argv": fio_argv(job, "<dir>", spec, direct, engine),
                },
                extra={
                    "bandwidth_gb_s": best["bw_bytes"] / 1e9,
                    "iops": best["iops"],
                    "latency_us": best["latency_us"],
                    "mean_latency_us": best["mean_latency_us"],
                    "latency_kind": best["latency_kind"],
                    "fio_version": best["fio_version"],
                    "direct_io": why,
                },
            )
            if not direct:
                m.reason = f"buffered I/O: {why}; reads may come from the page cache"
            results.append(m)
        return results
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
