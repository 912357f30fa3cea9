"""One reading of every GPU on a host: the common shape of live NVML and every replay source.

Every number is optional: None means the source did not report it (not supported, not recorded), and
the collector then publishes no series for it rather than a made-up zero.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ProcessSample:
    pid: int
    used_mib: float | None = None
    name: str | None = None
    cpu_pct: float | None = None  # of one core, since the previous sample (live only)
    iowait_pct: float | None = None  # of wall time in block I/O wait (live, needs kernel delayacct)
    rss_bytes: int | None = None


@dataclass
class GpuSample:
    index: int
    uuid: str | None = None
    name: str | None = None
    pci_bus_id: str | None = None
    util_gpu_pct: float | None = None
    util_mem_pct: float | None = None
    fb_used_mib: float | None = None
    fb_free_mib: float | None = None
    fb_reported_total_mib: float | None = None  # the total as nvidia-smi/NVML report it (with the reserve)
    temperature_c: float | None = None
    power_w: float | None = None
    power_limit_w: float | None = None
    energy_mj: int | None = None
    sm_clock_mhz: int | None = None
    sm_clock_max_mhz: int | None = None
    mem_clock_mhz: int | None = None
    mem_clock_max_mhz: int | None = None
    clock_event_mask: int | None = None  # NVML's bit mask; names in gpuwise.facts.gpu_fields
    pcie_gen: int | None = None
    pcie_gen_max: int | None = None
    pcie_width: int | None = None
    pcie_width_max: int | None = None
    pcie_tx_kbps: float | None = None
    pcie_rx_kbps: float | None = None
    pcie_replay: int | None = None
    nvlink_tx_kib: int | None = None
    nvlink_rx_kib: int | None = None
    ecc_sbe_volatile: int | None = None
    ecc_dbe_volatile: int | None = None
    ecc_sbe_aggregate: int | None = None
    ecc_dbe_aggregate: int | None = None
    remapped_correctable: int | None = None
    remapped_uncorrectable: int | None = None
    remap_pending: bool | None = None
    remap_failure: bool | None = None
    xid_last: int | None = None
    processes: list[ProcessSample] = field(default_factory=list)

    @property
    def fb_total_mib(self) -> float | None:
        if self.fb_used_mib is None or self.fb_free_mib is None:
            return None
        return self.fb_used_mib + self.fb_free_mib

    @property
    def memory_total_mib(self) -> float | None:
        """The GPU's memory as probe and the catalog show it: the reported total (nvidia-smi's
        "Total", NVML's memory total) when the source gave it, else used + free."""
        return self.fb_reported_total_mib if self.fb_reported_total_mib is not None else self.fb_total_mib

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GpuSample:
        """From capture.nvml.Sampler's dict or a recorded sample (unknown keys are ignored)."""
        names = {f.name for f in dataclasses.fields(cls)}
        kwargs = {k: v for k, v in data.items() if k in names and k != "processes"}
        procs = [ProcessSample(**p) for p in data.get("processes") or []]
        return cls(**kwargs, processes=procs)


@dataclass
class Snapshot:
    """Every GPU at one moment. `error` set and no GPUs: the source could not read (publish nothing)."""

    taken_at: float  # UNIX seconds
    hostname: str
    gpus: list[GpuSample] = field(default_factory=list)
    driver_version: str | None = None
    cuda_version: str | None = None
    environment: str = "unknown"  # cloud / onprem / unknown, from gpuwise.facts.platform
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Snapshot:
        gpus = [GpuSample.from_dict(g) for g in data.get("gpus") or []]
        names = {f.name for f in dataclasses.fields(cls)} - {"gpus"}
        return cls(**{k: v for k, v in data.items() if k in names}, gpus=gpus)
