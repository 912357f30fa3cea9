"""The CPU's peak FLOP/s, derived from cores x max clock x SIMD FMA width read from the CPU flags.

Every input is the probe's parse of the machine (facts/cpu.py), never a second parser of its own.

No vendor publishes one number per CPU the way GPU datasheets do, so the peak is derived and every
value says so ("derived: ..."). The FMA width per core is data (catalog/data/cpu_fma.csv, most
specific row first), never guessed: a CPU whose flags match no row gets no peak.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the facts models import pydantic: bench modules stay light until they run
    from gpuwise.capture.host import Host
    from gpuwise.facts.models import Cpu

from gpuwise.documents.bench import PeakSource
from gpuwise.i18n import msg


@dataclass(frozen=True)
class CpuPeak:
    """Derived peak TFLOP/s per dtype, with the derivation spelled out in `source` (key: the ISA flag)."""

    tflops: dict[str, float]
    source: dict[str, PeakSource]
    cores: int
    clock_mhz: float | None
    clock_basis: str
    model: str
    unavailable: str = ""  # why no rate table could be read, when it could not

    def peak(self, dtype: str) -> tuple[float | None, PeakSource]:
        if dtype in self.tflops:
            return self.tflops[dtype], self.source[dtype]
        why = self.unavailable or msg(
            "no derived CPU peak for {dtype}: no matching SIMD flag on this CPU"
        ).format(dtype=dtype)
        return None, PeakSource(kind="none", text=why)


def physical_cores(blocks: list[dict[str, str]], allowed: set[int] | None) -> int:
    """Cores this process may run on, counting hyperthread siblings once (they share FMA pipes)."""
    cores = set()
    for b in blocks:
        cpu = int(b.get("processor", "-1"))
        if allowed is not None and cpu not in allowed:
            continue
        cores.add((b.get("physical id", "0"), b.get("core id", str(cpu))))
    return len(cores)


def derive_cpu_peak(cpu: Cpu, current_mhz: float | None = None, usable_cores: int | None = None) -> CpuPeak:
    """Peak TFLOP/s per dtype from the probe's CPU facts (model, vendor, flags, cores, max clock, as
    facts/cpu.py parses them for `gpuwise probe`), so bench and probe cannot disagree about the CPU.

    `current_mhz` is used only when the facts have no max clock (VMs often hide cpufreq); `usable_cores`
    replaces the machine's core count when this process may run on fewer cores (affinity, cpusets).
    """
    flags = set(cpu.flags or [])
    cores = usable_cores or cpu.cores or cpu.threads or os.cpu_count() or 1
    if cpu.max_mhz is not None:
        mhz, basis = cpu.max_mhz, msg("max clock: lscpu CPU max MHz, else cpufreq cpuinfo_max_freq")
    elif current_mhz is not None:
        mhz, basis = (
            current_mhz,
            msg("current clock from /proc/cpuinfo; max not exposed, boost may exceed it"),
        )
    else:
        mhz, basis = None, msg("no clock found")
    tflops: dict[str, float] = {}
    source: dict[str, PeakSource] = {}
    try:
        from gpuwise.catalog.cpus import load_fma_rates

        rates = [r for r in load_fma_rates() if r.applies_to(cpu.vendor or "", flags)]
        unavailable = ""
    except Exception as exc:  # a broken data file costs the CPU peak, not the benchmark run
        rates, unavailable = (
            [],
            msg("no derived CPU peak: the CPU FMA table could not be read ({error})").format(error=exc),
        )
    if mhz is not None:
        fp32_lanes = next((r.fma_lanes for r in rates if r.dtype == "fp32"), None) or 0
        for rate in rates:
            if rate.dtype in tflops:
                continue
            lanes = rate.fma_lanes or int((rate.fp32_multiple or 0) * fp32_lanes)
            if lanes <= 0:
                continue
            tflops[rate.dtype] = cores * mhz * 1e6 * lanes * 2 / 1e12
            source[rate.dtype] = PeakSource(
                kind="derived",
                key=rate.flag,
                text=msg(
                    "derived: {cores} cores x {mhz} MHz ({basis}) x {lanes} {dtype} FMA lanes x 2 FLOP/FMA; "
                    "flag {flag}: {source}"
                ).format(
                    cores=cores,
                    mhz=f"{mhz:.0f}",
                    basis=basis,
                    lanes=lanes,
                    dtype=rate.dtype,
                    flag=rate.flag,
                    source=rate.source,
                ),
                source=rate.source,
            )
    return CpuPeak(
        tflops=tflops,
        source=source,
        cores=cores,
        clock_mhz=mhz,
        clock_basis=basis,
        model=cpu.model or "unknown CPU",
        unavailable=unavailable,
    )


def read_cpu_peak(host: Host, cpu: Cpu, allowed_cpus: set[int] | None = None) -> CpuPeak:
    """The derived peak for `cpu` (the probe's facts of `host`), for the CPUs this process may use.

    /proc/cpuinfo (through the facts parser) gives what the facts do not keep: the current clock, for
    when no max clock is exposed, and which physical core each logical CPU is, to count usable cores.
    """
    from gpuwise.facts.cpu import parse_cpuinfo
    from gpuwise.facts.sourcing import to_float

    blocks = parse_cpuinfo(host.read_file("/proc/cpuinfo") or "")
    mhz = [to_float(b.get("cpu MHz")) for b in blocks]
    current = max((m for m in mhz if m), default=None)
    online = {int(b["processor"]) for b in blocks if b.get("processor", "").isdigit()}
    usable = None
    if allowed_cpus is not None and online and not online <= allowed_cpus:
        usable = physical_cores(blocks, allowed_cpus) or len(allowed_cpus)
    return derive_cpu_peak(cpu, current, usable)


def affinity() -> set[int] | None:
    """The CPUs this process may run on (None where the OS does not say)."""
    try:
        return set(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None
