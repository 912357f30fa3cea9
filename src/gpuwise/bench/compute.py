"""Matmul throughput per dtype (fp32, tf32, bf16, fp16, fp8 where supported), mamf-finder style.

Quick mode times a few large shapes; full mode sweeps square and rectangular shapes and, like
mamf-finder, reports the maximum achievable matmul FLOP/s (the best shape's median). FLOPs per
matmul are 2*m*n*k. On CPU the peak is derived from cores x clock x FMA width (cpu_peak.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuwise.bench.context import BenchContext
from gpuwise.bench.peaks import Peak, cpu_matmul_peak, matmul_peak
from gpuwise.bench.registry import BenchInfo
from gpuwise.bench.timing import measure
from gpuwise.documents.bench import Measurement
from gpuwise.i18n import N_, joined

BENCHMARK = BenchInfo(
    name="compute",
    layer="compute",
    title=N_("Compute (matmul)"),
    help=N_("matmul throughput per dtype (fp32, tf32, bf16, fp16, fp8) vs the datasheet peak"),
    order=10,
    quick_timeout_s=120,
    full_timeout_s=3600,
    aliases=("matmul",),
)

Shape = tuple[int, int, int]

DTYPES = ("fp32", "tf32", "bf16", "fp16", "fp8")


@dataclass(frozen=True)
class Spec:
    dtypes: tuple[str, ...] = DTYPES
    shapes: tuple[Shape, ...] = ((4096, 4096, 4096), (8192, 8192, 8192))
    warmup: int = 5
    repeats: int = 10
    target_sample_s: float = 0.05
    warmup_s: float = 0.0  # minimum warm-up time, so GPU clocks have boosted before timing


def _sweep(lo: int, hi: int, step: int) -> tuple[Shape, ...]:
    cubes = tuple((s, s, s) for s in range(lo, hi + 1, step))
    # mamf-finder also looks at rectangular shapes: a wide and a tall-skinny one per decade
    rect = ((hi, hi // 2, hi), (hi // 2, hi, hi // 4), (hi * 2, hi // 4, hi))
    return cubes + rect


def make_spec(ctx: BenchContext) -> Spec:
    if ctx.device == "cuda":
        if ctx.mode == "full":
            return Spec(
                shapes=_sweep(1024, 16384, 1024), warmup=10, repeats=20, target_sample_s=0.1, warmup_s=0.5
            )
        return Spec(shapes=((4096, 4096, 4096), (8192, 8192, 8192), (16384, 8192, 8192)), warmup_s=0.5)
    if ctx.mode == "full":
        return Spec(shapes=_sweep(256, 2048, 256), warmup=2, repeats=5, target_sample_s=0.2)
    return Spec(shapes=((512, 512, 512), (1024, 1024, 1024)), warmup=1, repeats=3, target_sample_s=0.1)


def _operands(torch, dtype: str, shape: Shape, device: str):
    """(fn, keepalive) where fn() runs one matmul of `shape` in `dtype` into a preallocated output."""
    m, n, k = shape
    if dtype == "fp8":
        a = torch.randn(m, k, device=device).to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device=device).to(torch.float8_e4m3fn).t()  # _scaled_mm wants column-major B
        one = torch.tensor(1.0, device=device)
        return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    torch_dtype = {
        "fp32": torch.float32,
        "tf32": torch.float32,
        "bf16": torch.bfloat16,
        "fp16": torch.float16,
    }[dtype]
    a = torch.randn(m, k, device=device, dtype=torch_dtype)
    b = torch.randn(k, n, device=device, dtype=torch_dtype)
    c = torch.empty(m, n, device=device, dtype=torch_dtype)
    return lambda: torch.mm(a, b, out=c)


def time_matmul(torch, dtype: str, shape: Shape, device: str, spec: Spec):
    """Timed result of one matmul shape; TFLOP/s = 2mnk / seconds."""
    # tf32 vs fp32 is a global switch in torch; set it for this dtype only
    torch.set_float32_matmul_precision("high" if dtype == "tf32" else "highest")
    fn = _operands(torch, dtype, shape, device)
    timed = measure(
        fn,
        device=device,
        warmup=spec.warmup,
        repeats=spec.repeats,
        target_sample_s=spec.target_sample_s,
        warmup_s=spec.warmup_s,
    )
    flops = 2.0 * shape[0] * shape[1] * shape[2]
    return timed, timed.stats_of(lambda s: flops / s / 1e12, of=joined("x", map(str, shape)))


def _peak(ctx: BenchContext, dtype: str) -> Peak:
    return matmul_peak(ctx.gpu_name, dtype) if ctx.device == "cuda" else cpu_matmul_peak(ctx.cpu_peak, dtype)


def run(ctx: BenchContext, spec: Spec) -> list[Measurement]:
    """One Measurement per dtype: the best shape's median TFLOP/s, with every shape in extra."""
    from gpuwise.bench import require_torch

    torch = require_torch()
    results = []
    for dtype in spec.dtypes:
        m = Measurement(
            name=f"matmul_{dtype}",
            layer="compute",
            unit="TFLOP/s",
            device=ctx.device,
            params={"dtype": dtype, "shapes": [list(s) for s in spec.shapes], "flops_per_matmul": "2*m*n*k"},
        )
        results.append(m)
        if not ctx.supports(dtype):
            m.status, m.reason = "skipped", ctx.support_reason(dtype)
            continue
        per_shape, best = [], None
        for shape in spec.shapes:
            ctx.say(f"matmul {dtype} {shape[0]}x{shape[1]}x{shape[2]}")
            timed, stats = time_matmul(torch, dtype, shape, ctx.device, spec)
            per_shape.append(
                {
                    "m": shape[0],
                    "n": shape[1],
                    "k": shape[2],
                    "tflops_median": round(stats.median, 4),
                    "inner": timed.inner,
                }
            )
            if best is None or stats.median > best[1].median:
                best = (shape, stats)
            if ctx.device == "cuda":
                torch.cuda.empty_cache()
        torch.set_float32_matmul_precision("highest")
        m.stats = best[1]  # the best shape's samples: the headline is their median
        m.value = m.stats.headline()
        m.params["best_shape"] = list(best[0])
        m.extra["per_shape"] = per_shape
        _peak(ctx, dtype).apply(m)
    return results
