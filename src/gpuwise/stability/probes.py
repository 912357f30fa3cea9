"""Short probes, one per layer, each well under a second, built on bench's measurement code:

  compute      one matmul shape timed with bench.timing.measure, a fixed number of calls per sample
               (fp32 on one CPU thread, bf16 on a GPU)
  memory       STREAM triad with bench.memory.stream_pair (host DRAM; and HBM on a GPU)
  host-device  pinned H2D copy with bench.host_device.copy_bandwidth (GPU only)
  storage      1 s of fio 4 KiB random reads (bench.storage.run_job): throughput and completion-latency p99
  network      TCP throughput to a peer running `gpuwise stability --sink PORT` (network_probe.py)
  collective   an all-reduce across local ranks, kept up between rounds (allreduce.py)

A probe names its metrics (model.MetricInfo) and returns {metric: value} per round; a failure raises
and the runner records it for that round.
"""

from __future__ import annotations

import abc
import os
import shutil
import tempfile
from pathlib import Path

from gpuwise.bench.context import BenchContext
from gpuwise.errors import MissingDependencyError, UserInputError
from gpuwise.i18n import joined, msg
from gpuwise.stability.model import MetricInfo

MiB = 1 << 20


class Probe(abc.ABC):
    """One layer's short measurement, repeated every round; each subclass says what one round measures."""

    layer = ""
    metrics: list[MetricInfo] = []

    @abc.abstractmethod
    def run(self) -> dict[str, float]:
        """One round: metric name -> value."""

    def close(self) -> None:  # noqa: B027 - most probes hold nothing; the ones that do override it
        """Release what the probe holds (files, processes)."""


class ComputeProbe(Probe):
    """One matmul shape, the same work every round: the number of back-to-back calls per timed sample is
    calibrated once at start (bench.timing.measure, ~30 ms per sample) and then kept, so a round under
    contention is not re-calibrated to a single short call that fits between two stalls."""

    layer = "compute"
    SAMPLE_S = 0.03

    def __init__(self, ctx: BenchContext):
        from gpuwise.bench import require_torch
        from gpuwise.bench.timing import measure

        self.torch = torch = require_torch()
        self.measure = measure
        self.device = ctx.device
        self.dtype = "bf16" if ctx.device == "cuda" and ctx.supports("bf16") else "fp32"
        m, n, k = self.shape = (4096, 4096, 4096) if ctx.device == "cuda" else (384, 384, 384)
        dtype = torch.bfloat16 if self.dtype == "bf16" else torch.float32
        device = "cuda:0" if ctx.device == "cuda" else "cpu"
        a = torch.randn(m, k, device=device, dtype=dtype)
        b = torch.randn(k, n, device=device, dtype=dtype)
        c = torch.empty(m, n, device=device, dtype=dtype)
        self.fn = lambda: torch.mm(a, b, out=c)
        with self._threads():
            warm = measure(self.fn, device=self.device, warmup=2, repeats=1, target_sample_s=self.SAMPLE_S,
                           warmup_s=0.5 if ctx.device == "cuda" else 0.0)  # fmt: skip
        self.inner = warm.inner
        self.metrics = [
            MetricInfo(
                name=f"compute.matmul_{self.dtype}",
                layer="compute",
                unit="TFLOP/s",
                higher_is_better=True,
                description=f"{m}x{n}x{k} {self.dtype} matmul on {ctx.device}"
                + (", 1 thread" if ctx.device == "cpu" else "")
                + f", {self.inner} calls per sample, median of 3",
            )
        ]

    def _threads(self):
        """One thread on CPU: a parallel region waits for its slowest thread, so on a shared host
        OpenMP's barrier would make the number bimodal."""
        import contextlib

        torch = self.torch

        @contextlib.contextmanager
        def one_thread():
            threads = torch.get_num_threads()
            if self.device == "cpu":
                torch.set_num_threads(1)
            try:
                yield
            finally:
                torch.set_num_threads(threads)

        return one_thread()

    def run(self) -> dict[str, float]:
        with self._threads():
            # target_sample_s far above any call time: every sample runs exactly max_inner = self.inner calls
            timed = self.measure(self.fn, device=self.device, warmup=1, repeats=3, target_sample_s=1e9,
                                 max_inner=self.inner)  # fmt: skip
        flops = 2.0 * self.shape[0] * self.shape[1] * self.shape[2]
        return {self.metrics[0].name: timed.stats_of(lambda sec: flops / sec / 1e12).median}


class MemoryProbe(Probe):
    layer = "memory"

    def __init__(self, ctx: BenchContext):
        from gpuwise.bench import memory, require_torch
        from gpuwise.bench.peaks import no_host_memory_peak

        self.torch = require_torch()
        self.memory, self.peak = memory, no_host_memory_peak()
        self.spec = memory.Spec(warmup=1, repeats=3, target_sample_s=0.02)
        self.cuda = ctx.device == "cuda"
        self.metrics = [
            MetricInfo(
                name="memory.host_triad",
                layer="memory",
                unit="GB/s",
                higher_is_better=True,
                description="STREAM triad, 3 x 32 MiB fp32 host buffers",
            )
        ]
        if self.cuda:
            self.metrics.append(
                MetricInfo(
                    name="memory.device_triad",
                    layer="memory",
                    unit="GB/s",
                    higher_is_better=True,
                    description="STREAM triad, 3 x 256 MiB fp32 buffers in GPU 0 memory",
                )
            )

    def run(self) -> dict[str, float]:
        out = {}
        host = self.memory.stream_pair(self.torch, "cpu", 32 * MiB, self.spec, "host", self.peak)
        out["memory.host_triad"] = next(m.value for m in host if m.name == "host_triad")
        if self.cuda:
            dev = self.memory.stream_pair(self.torch, "cuda:0", 256 * MiB, self.spec, "device", self.peak)
            out["memory.device_triad"] = next(m.value for m in dev if m.name == "device_triad")
        return out


class HostDeviceProbe(Probe):
    layer = "host-device"

    def __init__(self, ctx: BenchContext):
        from gpuwise.bench import host_device, require_torch

        self.torch = require_torch()
        self.copy = host_device.copy_bandwidth
        self.spec = host_device.Spec(nbytes=64 * MiB, warmup=1, repeats=3)
        self.metrics = [
            MetricInfo(
                name="host-device.h2d_pinned",
                layer="host-device",
                unit="GB/s",
                higher_is_better=True,
                description="64 MiB pinned host -> GPU 0 copy",
            )
        ]

    def run(self) -> dict[str, float]:
        _timed, stats = self.copy(self.torch, 0, "h2d", True, self.spec)
        return {"host-device.h2d_pinned": stats.median}


class StorageProbe(Probe):
    layer = "storage"

    def __init__(self, ctx: BenchContext, directory: str | None):
        from gpuwise.bench import storage

        if shutil.which("fio") is None:
            raise MissingDependencyError(
                msg("fio is not installed, so storage cannot be probed."),
                fix=msg("apt-get install fio  (or dnf install fio), or leave storage out of --layers"),
            )
        base = Path(directory or tempfile.gettempdir())
        if not base.is_dir() or not os.access(base, os.W_OK):
            raise UserInputError(
                msg("data directory {base} does not exist or is not writable").format(base=base),
                fix=msg("pass --data-dir with a writable directory on the filesystem you train from"),
            )
        self.storage = storage
        self.workdir = tempfile.mkdtemp(prefix="gpuwise-stability-fio-", dir=base)
        try:
            self.direct, self.why = storage.direct_io_supported(self.workdir)
            self.engine = storage._engine()
            self.spec = storage.Spec(self.workdir, file_bytes=64 * MiB, runtime_s=1)
            self.job = storage.FioJob("stability_randread_4k", "randread", "4k", 1, 8, "IOPS")
            layout = storage.FioJob("stability_layout", "write", "1M", 1, 8, "GB/s")
            storage.run_job(layout, self.workdir, self.spec, self.direct, self.engine)
        except BaseException:
            self.close()
            raise
        io = "direct" if self.direct else "buffered"
        self.metrics = [
            MetricInfo(
                name="storage.randread_mb_s",
                layer="storage",
                unit="MB/s",
                higher_is_better=True,
                description=f"fio 4 KiB random reads, iodepth 8, 1 s, {io} I/O, {base}",
            ),
            MetricInfo(
                name="storage.randread_p99_us",
                layer="storage",
                unit="us",
                higher_is_better=False,
                description="completion latency p99 of the same fio run",
            ),
        ]

    def run(self) -> dict[str, float]:
        r = self.storage.run_job(self.job, self.workdir, self.spec, self.direct, self.engine)
        out = {"storage.randread_mb_s": r["bw_bytes"] / 1e6}
        p99 = r["latency_us"].get("p99_us")
        if p99 is not None:
            out["storage.randread_p99_us"] = float(p99)
        return out

    def close(self) -> None:
        shutil.rmtree(self.workdir, ignore_errors=True)


class NetworkProbe(Probe):
    layer = "network"

    def __init__(self, peer: str):
        from gpuwise.stability.network_probe import parse_peer

        self.host, self.port = parse_peer(peer)
        self.metrics = [
            MetricInfo(
                name="network.tcp_gbit_s",
                layer="network",
                unit="Gbit/s",
                higher_is_better=True,
                description=f"TCP bytes delivered to {self.host}:{self.port} in 0.25 s of sending",
            )
        ]

    def run(self) -> dict[str, float]:
        from gpuwise.stability.network_probe import tcp_throughput

        return {"network.tcp_gbit_s": tcp_throughput(self.host, self.port) * 8 / 1e9}


LAYERS = ("compute", "memory", "host-device", "storage", "network", "collective")


def default_layers(ctx: BenchContext, peer: str | None) -> list[str]:
    layers = ["compute", "memory"]
    if ctx.device == "cuda":
        layers.append("host-device")
    if shutil.which("fio"):
        layers.append("storage")
    if peer:
        layers.append("network")
    layers.append("collective")
    return layers


def make_probe(layer: str, ctx: BenchContext, data_dir: str | None, peer: str | None) -> Probe:
    if layer == "compute":
        return ComputeProbe(ctx)
    if layer == "memory":
        return MemoryProbe(ctx)
    if layer == "host-device":
        from gpuwise.bench.context import Skip

        if ctx.device != "cuda":
            raise Skip(msg("no CUDA GPU: host<->device copies need one"))
        return HostDeviceProbe(ctx)
    if layer == "storage":
        return StorageProbe(ctx, data_dir)
    if layer == "network":
        if not peer:
            raise UserInputError(
                msg("the network layer needs a peer"),
                msg("run `gpuwise stability --sink 5201` on the peer and pass --peer HOST:5201"),
            )
        return NetworkProbe(peer)
    if layer == "collective":
        from gpuwise.stability.allreduce import AllReduceProbe

        return AllReduceProbe(ctx)
    raise UserInputError(
        msg("unknown layer {layer}").format(layer=layer),
        msg("choose from {layers}").format(layers=joined(", ", LAYERS)),
    )
