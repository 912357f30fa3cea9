"""Memory bandwidth, STREAM style: device (HBM) copy and triad, and host (DRAM) copy and triad.

Bytes moved follow STREAM: copy reads N and writes N (2N), triad `a = b + s*c` moves 3N.
Buffers are far larger than any cache (1 GiB per buffer on GPU in quick mode, 128 MiB on the host)
so the number is DRAM/HBM, not cache.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuwise.bench.context import BenchContext
from gpuwise.bench.peaks import Peak, hbm_peak, no_host_memory_peak
from gpuwise.bench.registry import BenchInfo
from gpuwise.bench.timing import measure
from gpuwise.documents.bench import Measurement
from gpuwise.i18n import N_, msg

BENCHMARK = BenchInfo(
    name="memory",
    layer="memory",
    title=N_("Memory bandwidth"),
    help=N_("STREAM-style copy and triad: GPU memory (HBM) and host DRAM"),
    order=20,
    quick_timeout_s=60,
    full_timeout_s=600,
    aliases=(),
)

MiB = 1 << 20


@dataclass(frozen=True)
class Spec:
    device_bytes: int = 1024 * MiB
    host_bytes: int = 128 * MiB
    warmup: int = 3
    repeats: int = 10
    target_sample_s: float = 0.05


def make_spec(ctx: BenchContext) -> Spec:
    if ctx.mode == "full":
        return Spec(device_bytes=4096 * MiB, host_bytes=1024 * MiB, repeats=20, target_sample_s=0.2)
    if ctx.device == "cpu":
        return Spec(repeats=5, warmup=1)
    return Spec()


def stream_pair(torch, device: str, nbytes: int, spec: Spec, where: str, peak: Peak) -> list[Measurement]:
    """copy and triad on `device` with buffers of `nbytes` each; GB/s = bytes moved / s / 1e9."""
    n = nbytes // 4
    a = torch.empty(n, dtype=torch.float32, device=device)
    b = torch.rand(n, dtype=torch.float32, device=device)
    c = torch.rand(n, dtype=torch.float32, device=device)
    kernels = {
        "copy": (lambda: a.copy_(b), 2 * n * 4, "a = b"),
        "triad": (lambda: torch.add(b, c, alpha=3.0, out=a), 3 * n * 4, "a = b + 3.0*c"),
    }
    timing_device = "cuda" if device.startswith("cuda") else "cpu"
    out = []
    for kind, (fn, moved, formula) in kernels.items():
        timed = measure(
            fn,
            device=timing_device,
            warmup=spec.warmup,
            repeats=spec.repeats,
            target_sample_s=spec.target_sample_s,
            warmup_s=0.3 if timing_device == "cuda" else 0.0,
        )
        stats = timed.stats_of(lambda s, moved=moved: moved / s / 1e9)
        m = Measurement(
            name=f"{where}_{kind}",
            layer="memory",
            unit="GB/s",
            stats=stats,
            device=device,
            params={
                "buffer_bytes": n * 4,
                "bytes_moved_per_op": moved,
                "kernel": formula,
                "dtype": "fp32",
                "inner": timed.inner,
            },
        )
        peak.apply(m)
        out.append(m)
    return out


def run(ctx: BenchContext, spec: Spec) -> list[Measurement]:
    from gpuwise.bench import require_torch

    torch = require_torch()
    results: list[Measurement] = []
    if ctx.device == "cuda":
        ctx.say(msg("device copy/triad, {mib} MiB buffers").format(mib=spec.device_bytes // MiB))
        results += stream_pair(torch, "cuda:0", spec.device_bytes, spec, "device", hbm_peak(ctx.gpu_name))
        torch.cuda.empty_cache()
    else:
        for kind in ("copy", "triad"):
            results.append(
                Measurement(
                    name=f"device_{kind}",
                    layer="memory",
                    status="skipped",
                    reason=msg("no CUDA GPU: device memory bandwidth needs one"),
                )
            )
    ctx.say(
        msg("host copy/triad, {mib} MiB buffers, {threads} threads").format(
            mib=spec.host_bytes // MiB, threads=torch.get_num_threads()
        )
    )
    results += stream_pair(torch, "cpu", spec.host_bytes, spec, "host", no_host_memory_peak())
    for m in results[-2:]:
        m.params["threads"] = torch.get_num_threads()
    return results
