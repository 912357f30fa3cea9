"""GPU <-> GPU peer copy bandwidth for every ordered pair, telling NVLink from PCIe from no P2P.

The link type of each pair comes from `nvidia-smi topo -m` (through the Host, the one place that
runs nvidia-smi): NV# pairs are compared with the catalog's NVLink per-direction bandwidth, the rest
with PCIe. A pair without peer access still copies (staged through host memory) and says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuwise.bench.context import BenchContext, Skip
from gpuwise.bench.models import Measurement
from gpuwise.bench.peaks import Peak, nvlink_peak, pcie_peak
from gpuwise.bench.timing import measure

MiB = 1 << 20
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class Spec:
    nbytes: int = 256 * MiB
    warmup: int = 3
    repeats: int = 10


def make_spec(ctx: BenchContext) -> Spec:
    return Spec(nbytes=1024 * MiB, repeats=20) if ctx.mode == "full" else Spec()


def parse_topo_links(text: str | None) -> dict[tuple[int, int], str]:
    """(gpu_i, gpu_j) -> link code ("NV18", "PIX", "SYS", ...) from `nvidia-smi topo -m` text."""
    if not text:
        return {}
    lines = [_ANSI.sub("", line) for line in text.splitlines()]
    header = next((line for line in lines if re.search(r"\bGPU0\b", line) and not line.startswith("GPU")), None)
    if header is None:
        return {}
    columns = [tok for tok in header.split() if re.fullmatch(r"GPU\d+", tok)]
    links = {}
    for line in lines:
        cells = line.split()
        if not cells or not re.fullmatch(r"GPU\d+", cells[0]):
            continue
        i = int(cells[0][3:])
        for col, code in zip(columns, cells[1:1 + len(columns)], strict=False):
            j = int(col[3:])
            if i != j and code != "X":
                links[(i, j)] = code
    return links


def link_peak(gpu_name: str | None, code: str | None) -> tuple[str, Peak]:
    if code and code.startswith("NV"):
        return "nvlink", nvlink_peak(gpu_name)
    if code:
        return "pcie", pcie_peak(gpu_name)
    return "unknown", Peak(None, "link type unknown: `nvidia-smi topo -m` not available")


def _topo_text() -> str | None:
    from gpuwise.capture.host import LiveHost

    result = LiveHost().run("nvidia-smi-topo-m")
    return result.stdout if result is not None and result.ok else None


def run(ctx: BenchContext, spec: Spec) -> list[Measurement]:
    if ctx.device != "cuda":
        raise Skip("no CUDA GPU: peer copies need two")
    if ctx.gpu_count < 2:
        raise Skip(f"only {ctx.gpu_count} GPU visible: peer copies need two")
    from gpuwise.bench import require_torch

    torch = require_torch()
    links = parse_topo_links(_topo_text())
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
                timed = measure(lambda a=a, b=b: b.copy_(a, non_blocking=True), device="host", sync=sync,
                                warmup=spec.warmup, repeats=spec.repeats, target_sample_s=0.05)
            stats = timed.stats_of(lambda s: spec.nbytes / s / 1e9)
            m = Measurement(name=f"p2p_gpu{src}_gpu{dst}", layer="gpu-gpu", unit="GB/s", value=stats.median,
                            stats=stats, device=f"GPU{src}->GPU{dst}",
                            params={"bytes": spec.nbytes, "direction": "unidirectional", "inner": timed.inner},
                            extra={"link": links.get((src, dst), "unknown"), "link_kind": kind, "peer_access": peer})
            if not peer:
                m.reason = "no peer access: the copy is staged through host memory"
            peak.apply(m)
            results.append(m)
    return results
