"""The CPU's peak FLOP/s, derived from cores x max clock x SIMD FMA width read from the CPU flags.

No vendor publishes one number per CPU the way GPU datasheets do, so the peak is derived and every
value says so ("derived: ..."). The FMA width per core is data (catalog/data/cpu_fma.csv, most
specific row first), never guessed: a CPU whose flags match no row gets no peak.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class CpuPeak:
    """Derived peak TFLOP/s per dtype, with the derivation spelled out in `source`."""

    tflops: dict[str, float]
    source: dict[str, str]
    cores: int
    clock_mhz: float | None
    clock_basis: str
    model: str
    unavailable: str = ""  # why no rate table could be read, when it could not

    def peak(self, dtype: str) -> tuple[float | None, str]:
        if dtype in self.tflops:
            return self.tflops[dtype], self.source[dtype]
        return None, self.unavailable or f"no derived CPU peak for {dtype}: no matching SIMD flag on this CPU"


def physical_cores(blocks: list[dict[str, str]], allowed: set[int] | None) -> int:
    """Cores this process may run on, counting hyperthread siblings once (they share FMA pipes)."""
    cores = set()
    for b in blocks:
        cpu = int(b.get("processor", "-1"))
        if allowed is not None and cpu not in allowed:
            continue
        cores.add((b.get("physical id", "0"), b.get("core id", str(cpu))))
    return len(cores)


def max_clock_mhz(
    cpuinfo_max_freq: str | None, lscpu: str | None, blocks: list[dict[str, str]]
) -> tuple[float | None, str]:
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


def derive_cpu_peak(
    cpuinfo: str | None,
    cpuinfo_max_freq: str | None = None,
    lscpu: str | None = None,
    allowed_cpus: set[int] | None = None,
) -> CpuPeak:
    """Peak TFLOP/s per dtype for the cores this process may use. Pure: inputs are recorded text."""
    from gpuwise.facts.cpu import parse_cpuinfo

    blocks = parse_cpuinfo(cpuinfo or "")
    first = blocks[0] if blocks else {}
    flags = set((first.get("flags") or first.get("Features") or "").split())
    vendor = first.get("vendor_id", "")
    model = first.get("model name", "unknown CPU")
    cores = physical_cores(blocks, allowed_cpus) or (
        len(allowed_cpus) if allowed_cpus else os.cpu_count() or 1
    )
    mhz, basis = max_clock_mhz(cpuinfo_max_freq, lscpu, blocks)
    tflops: dict[str, float] = {}
    source: dict[str, str] = {}
    try:
        from gpuwise.catalog.cpus import load_fma_rates

        rates = [r for r in load_fma_rates() if r.applies_to(vendor, flags)]
        unavailable = ""
    except Exception as exc:  # a broken data file costs the CPU peak, not the benchmark run
        rates, unavailable = [], f"no derived CPU peak: the CPU FMA table could not be read ({exc})"
    if mhz is not None:
        fp32_lanes = next((r.fma_lanes for r in rates if r.dtype == "fp32"), None) or 0
        for rate in rates:
            if rate.dtype in tflops:
                continue
            lanes = rate.fma_lanes or int((rate.fp32_multiple or 0) * fp32_lanes)
            if lanes <= 0:
                continue
            tflops[rate.dtype] = cores * mhz * 1e6 * lanes * 2 / 1e12
            source[rate.dtype] = (
                f"derived: {cores} cores x {mhz:.0f} MHz ({basis}) "
                f"x {lanes} {rate.dtype} FMA lanes x 2 FLOP/FMA; flag {rate.flag}: {rate.source}"
            )
    return CpuPeak(
        tflops=tflops,
        source=source,
        cores=cores,
        clock_mhz=mhz,
        clock_basis=basis,
        model=model,
        unavailable=unavailable,
    )


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
