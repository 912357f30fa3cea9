"""GPU <-> GPU peer copy bandwidth for every ordered pair, telling NVLink from PCIe from no P2P.

The link type of each pair comes from `nvidia-smi topo -m` (through the Host, the one place that
runs nvidia-smi): NV# pairs are compared with the catalog's NVLink per-direction bandwidth, the rest
with PCIe. A pair without peer access still copies (staged through host memory) and says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuwise.bench.context import BenchContext, Skip
from gpuwise.bench.peaks import Peak, no_peak, nvlink_peak, pcie_peak
from gpuwise.bench.registry import BenchInfo
from gpuwise.bench.timing import measure
from gpuwise.documents.bench import Measurement
from gpuwise.i18n import N_, msg

BENCHMARK = BenchInfo(
    name="gpu-gpu",
    layer="gpu-gpu",
    title=N_("GPU <-> GPU peer copies"),
    help=N_("peer copies for every GPU pair, NVLink or PCIe, vs the link peak"),
    order=40,
    quick_timeout_s=120,
    full_timeout_s=1200,
    aliases=("p2p", "gpu_gpu"),
)

MiB = 1 << 20


@dataclass(frozen=True)
class Spec:
    nbytes: int = 256 * MiB
    warmup: int = 3
    repeats: int = 10


def make_spec(ctx: BenchContext) -> Spec:
    return Spec(nbytes=1024 * MiB, repeats=20) if ctx.mode == "full" else Spec()


def parse_topo_links(text: str | None) -> dict[tuple[int, int], str]:
    """(gpu_i, gpu_j) -> link code ("NV18", "PIX", "SYS", ...) from `nvidia-smi topo -m` text.

    Read with the facts parser (facts/topology.py), so bench and probe agree on every layout
    (tabs, empty affinity cells, ANSI escapes, NIC columns); {} when there is no GPU matrix.
    """
    if not text:
        return {}
    from gpuwise.facts.topology import parse_topo_m

    topo = parse_topo_m(text)
    ids = [int(name[3:]) for name in topo.gpu_names]
    return {
        (ids[a], ids[b]): code
        for a, row in enumerate(topo.gpu_links or [])
        for b, code in enumerate(row)
        if a != b and code and code != "X"
    }


def link_peak(gpu_name: str | None, code: str | None) -> tuple[str, Peak]:
    if code and code.startswith("NV"):
        return "nvlink", nvlink_peak(gpu_name)
    if code:
        return "pcie", pcie_peak(gpu_name)
    return "unknown", no_peak(msg("link type unknown: `nvidia-smi topo -m` not available"))


def live_topo_text() -> str | None:
    """`nvidia-smi topo -m` on this machine, through the Host boundary; None when it did not run."""
    from gpuwise.capture.host import LiveHost

    result = LiveHost().run("nvidia-smi-topo-m")
    return result.stdout if result is not None and result.ok else None


def run(ctx: BenchContext, spec: Spec) -> list[Measurement]:
    if ctx.device != "cuda":
        raise Skip(msg("no CUDA GPU: peer copies need two"))
    if ctx.gpu_count < 2:
        raise Skip(msg("only {n} GPU visible: peer copies need two").format(n=ctx.gpu_count))
    from gpuwise.bench import require_torch

    torch = require_torch()
    links = parse_topo_links(live_topo_text())
    buffers = [torch.empty(spec.nbytes, dtype=torch.uint8, device=f"cuda:{i}") for i in range(ctx.gpu_count)]
    results = []
    for src in range(ctx.gpu_count):
        for dst in range(ctx.gpu_count):
            if src == dst:
                continue
            ctx.say(f"GPU{src} -> GPU{dst} {spec.nbytes // MiB} MiB")
            peer = torch.cuda.can_device_access_peer(src, dst)
            kind, peak = link_peak(ctx.gpu_name, links.get((src, dst)))
            a, b = buffers[src], buffers[dst]

            def sync(s=src, d=dst):
                torch.cuda.synchronize(s)
                torch.cuda.synchronize(d)

            with torch.cuda.device(src):
                timed = measure(
                    lambda a=a, b=b: b.copy_(a, non_blocking=True),
                    device="host",
                    sync=sync,
                    warmup=spec.warmup,
                    repeats=spec.repeats,
                    target_sample_s=0.05,
                )
            stats = timed.stats_of(lambda s: spec.nbytes / s / 1e9)
            m = Measurement(
                name=f"p2p_gpu{src}_gpu{dst}",
                layer="gpu-gpu",
                unit="GB/s",
                stats=stats,
                device=f"GPU{src}->GPU{dst}",
                params={"bytes": spec.nbytes, "direction": "unidirectional", "inner": timed.inner},
                extra={"link": links.get((src, dst), "unknown"), "link_kind": kind, "peer_access": peer},
            )
            if not peer:
                m.reason = "no peer access: the copy is staged through host memory"
            peak.apply(m)
            results.append(m)
    return results
