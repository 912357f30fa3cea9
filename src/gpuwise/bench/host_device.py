"""Host <-> device copy bandwidth: H2D and D2H, each from pinned and from pageable host memory.

Pinned copies are DMA straight over PCIe and approach the link's per-direction peak (about 55 GB/s
on PCIe5 x16, REFERENCE §3); pageable copies stage through a driver bounce buffer and show what a
DataLoader without pin_memory gets. Compared with the catalog's PCIe generation at x16.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuwise.bench.context import BenchContext, Skip
from gpuwise.bench.peaks import pcie_peak
from gpuwise.bench.registry import BenchInfo
from gpuwise.bench.timing import measure
from gpuwise.documents.bench import Measurement
from gpuwise.i18n import N_, msg

BENCHMARK = BenchInfo(
    name="host-device",
    layer="host-device",
    title=N_("Host <-> device copies"),
    help=N_("H2D and D2H copies from pinned and pageable memory vs the PCIe peak"),
    order=30,
    quick_timeout_s=60,
    full_timeout_s=600,
    aliases=("host_device", "h2d"),
)

MiB = 1 << 20


@dataclass(frozen=True)
class Spec:
    nbytes: int = 256 * MiB
    all_gpus: bool = False
    warmup: int = 3
    repeats: int = 10


def make_spec(ctx: BenchContext) -> Spec:
    if ctx.mode == "full":
        return Spec(nbytes=1024 * MiB, all_gpus=True, repeats=20)
    return Spec()


def copy_bandwidth(torch, gpu: int, direction: str, pinned: bool, spec: Spec):
    host = torch.empty(spec.nbytes, dtype=torch.uint8, pin_memory=pinned)
    dev = torch.empty(spec.nbytes, dtype=torch.uint8, device=f"cuda:{gpu}")
    host.fill_(1)
    if direction == "h2d":

        def fn():
            return dev.copy_(host, non_blocking=pinned)
    else:

        def fn():
            return host.copy_(dev, non_blocking=pinned)

    with torch.cuda.device(gpu):
        # host clock around a device sync: pageable copies block the host, events would miss that part
        timed = measure(
            fn,
            device="host",
            sync=lambda: torch.cuda.synchronize(gpu),
            warmup=spec.warmup,
            repeats=spec.repeats,
            target_sample_s=0.05,
        )
    return timed, timed.stats_of(lambda s: spec.nbytes / s / 1e9)


def run(ctx: BenchContext, spec: Spec) -> list[Measurement]:
    if ctx.device != "cuda":
        raise Skip(msg("no CUDA GPU: host<->device copies need one"))
    from gpuwise.bench import require_torch

    torch = require_torch()
    peak = pcie_peak(ctx.gpu_name)
    results = []
    for gpu in range(ctx.gpu_count if spec.all_gpus else 1):
        for direction in ("h2d", "d2h"):
            for pinned in (True, False):
                memory = "pinned" if pinned else "pageable"
                ctx.say(f"GPU{gpu} {direction} {memory} {spec.nbytes // MiB} MiB")
                timed, stats = copy_bandwidth(torch, gpu, direction, pinned, spec)
                m = Measurement(
                    name=f"{direction}_{memory}" + (f"_gpu{gpu}" if spec.all_gpus else ""),
                    layer="host-device",
                    unit="GB/s",
                    stats=stats,
                    device=f"cuda:{gpu}",
                    params={
                        "bytes": spec.nbytes,
                        "direction": direction,
                        "host_memory": memory,
                        "inner": timed.inner,
                    },
                )
                peak.apply(m)
                results.append(m)
        torch.cuda.empty_cache()
    return results
