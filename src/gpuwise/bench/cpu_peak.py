"""The CPU's peak FLOP/s, derived from cores x max clock x SIMD FMA width read from the CPU flags.

No vendor publishes one number per CPU the way GPU datasheets do, so the peak is derived and every
value says so ("derived: ..."). The FMA width per core is data (the table below, most specific row
first), never guessed: a CPU whose flags match no row gets no peak.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

# (vendor_id or "*", required flag, dtype, FMA lanes per cycle per core, source)
# One FMA = 2 FLOP. Lanes count all FMA pipes together (2 x 256-bit pipes of fp32 = 16 lanes).
# A negative lane count means "that many times the fp32 lanes" (bf16 dot-product instructions).
FMA_LANES: tuple[tuple[str, str, str, int, str], ...] = (
    ("GenuineIntel", "amx_bf16", "bf16", 1024, "Intel AMX: 1024 bf16 FMA/cycle/core (Intel optimization manual)"),
    ("*", "avx512_bf16", "bf16", -2, "VDPBF16PS: 2 bf16 pairs per fp32 lane, 2x the fp32 rate"),
    ("GenuineIntel", "avx512f", "fp32", 32, "2 x 512-bit FMA units (Xeon Scalable Gold/Platinum)"),
    ("AuthenticAMD", "avx512f", "fp32", 16, "Zen 4: 512-bit ops on 2 x 256-bit FMA pipes (AMD Zen 4 guide)"),
    ("*", "fma", "fp32", 16, "AVX2 + FMA3: 2 x 256-bit FMA pipes (Haswell+, Zen)"),
    ("*", "avx", "fp32", 8, "AVX without FMA: one 256-bit add + one 256-bit mul per cycle"),
    ("*", "asimd", "fp32", 8, "Arm NEON: 2 x 128-bit FMA pipes (Neoverse N1/V1 class)"),
    ("*", "sse2", "fp32", 4, "SSE2: one 128-bit add + one 128-bit mul per cycle"),
)


@dataclass(frozen=True)
class CpuPeak:
    """Derived peak TFLOP/s per dtype, with the derivation spelled out in `source`."""

    tflops: dict[str, float]
    source: dict[str, str]
    cores: int
    clock_mhz: float | None
    clock_basis: str
    model: str

    def peak(self, dtype: str) -> tuple[float | None, str]:
        if dtype in self.tflops:
            return self.tflops[dtype], self.source[dtype]
        return None, f"no derived CPU peak for {dtype}: no matching SIMD flag on this CPU"


def _cpu_blocks(cpuinfo: str) -> list[dict[str, str]]:
    blocks = []
    for chunk in cpuinfo.strip().split("\n\n"):
        fields = {}
        for line in chunk.splitlines():
            key, sep, value = line.partition(":")
            if sep:
                fields[key.strip()] = value.strip()
        if fields:
            blocks.append(fields)
    return blocks


def physical_cores(blocks: list[dict[str, str]], allowed: set[int] | None) -> int:
    """Cores this process may run on, counting hyperthread siblings once (they share FMA pipes)."""
    cores = set()
    for b in blocks:
        cpu = int(b.get("processor", "-1"))
        if allowed is not None and cpu not in allowed:
            continue
        cores.add((b.get("physical id", "0"), b.get("core id", str(cpu))))
    return len(cores)


def max_clock_mhz(cpuinfo_max_freq: str | None, lscpu: str | None, blocks: list[dict[str, str]]) -> tuple[float | None, str]:
    """Best available max clock: cpufreq max, then lscpu 'CPU max MHz', then the current cpuinfo MHz."""
    if cpuinfo_max_freq and cpuinfo_max_freq.strip().isdigit():
        return int(cpuinfo_max_freq.strip()) / 1000.0, "cpufreq cpuinfo_max_freq"
    match = re.search(r"^\s*CPU max MHz:\s*([\d.]+)", lscpu or "", re.M)
    if match and float(match.group(1)) > 0:
        return float(match.group(1)), "lscpu CPU max MHz"
    mhz = [float(b["cpu MHz"]) for b in blocks if b.get("cpu MHz", "").replace(".", "", 1).isdigit()]
    if mhz:
        # a VM often hides cpufreq: the current clock is all there is, and boost can exceed it
        return max(mhz), "current clock from /proc/cpuinfo; max not exposed, boost may exceed it"
    return None, "no clock found"


def derive_cpu_peak(cpuinfo: str | None, cpuinfo_max_freq: str | None = None, lscpu: str | None = None,
                    allowed_cpus: set[int] | None = None) -> CpuPeak:
    """Peak TFLOP/s per dtype for the cores this process may use. Pure: inputs are recorded text."""
    blocks = _cpu_blocks(cpuinfo or "")
    first = blocks[0] if blocks else {}
    flags = set((first.get("flags") or first.get("Features") or "").split())
    vendor = first.get("vendor_id", "")
    model = first.get("model name", "unknown CPU")
    cores = physical_cores(blocks, allowed_cpus) or (len(allowed_cpus) if allowed_cpus else os.cpu_count() or 1)
    mhz, basis = max_clock_mhz(cpuinfo_max_freq, lscpu, blocks)
    tflops: dict[str, float] = {}
    source: dict[str, str] = {}
    if mhz is not None:
        fp32_lanes = next((r[3] for r in FMA_LANES if r[2] == "fp32" and r[1] in flags and r[0] in ("*", vendor)), 0)
        for row_vendor, flag, dtype, row_lanes, why in FMA_LANES:
            if dtype in tflops or flag not in flags or row_vendor not in ("*", vendor):
                continue
            lanes = -row_lanes * fp32_lanes if row_lanes < 0 else row_lanes
            if lanes <= 0:
                continue
            tflops[dtype] = cores * mhz * 1e6 * lanes * 2 / 1e12
            source[dtype] = (f"derived: {cores} cores x {mhz:.0f} MHz ({basis}) x {lanes} {dtype} FMA lanes "
                             f"x 2 FLOP/FMA; flag {flag}: {why}")
    return CpuPeak(tflops=tflops, source=source, cores=cores, clock_mhz=mhz, clock_basis=basis, model=model)


def live_cpu_peak() -> CpuPeak:
    """This machine's derived CPU peak, read through the Host (so it can be replayed from a capture)."""
    from gpuwise.capture.host import LiveHost

    host = LiveHost()
    lscpu = host.run("lscpu")
    try:
        allowed = set(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        allowed = None
    return derive_cpu_peak(
        host.read_file("/proc/cpuinfo"),
        host.read_file("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"),
        lscpu.stdout if lscpu is not None and lscpu.ok else None,
        allowed,
    )
