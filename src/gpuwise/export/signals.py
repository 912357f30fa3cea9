"""Tuning signals: the readings that mean "this training job is losing time", judged per GPU per sample.

Thresholds, reason names and advice come from data/signals.yaml (each with its source). A signal is
True (on), False (off) or None (the source cannot tell: e.g. a replay without process CPU data), and
the collector publishes no series for None.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from typing import Any

import yaml

from gpuwise.export.sample import GpuSample
from gpuwise.facts.gpu_fields import CLOCK_EVENT_REASON_BITS
from gpuwise.thresholds import parse_thresholds


@dataclass(frozen=True)
class SignalInfo:
    id: str
    title: str
    advice: str
    source: str


@dataclass(frozen=True)
class SignalConfig:
    thresholds: dict[str, float]
    power_mask: int
    thermal_mask: int
    signals: dict[str, SignalInfo]


@functools.cache
def load_config() -> SignalConfig:
    raw: dict[str, Any] = yaml.safe_load(
        resources.files("gpuwise.export").joinpath("data/signals.yaml").read_text(encoding="utf-8")
    )
    bit_of = {name: bit for bit, name in CLOCK_EVENT_REASON_BITS.items()}
    rows = parse_thresholds(raw.get("thresholds"), "gpuwise/export/data/signals.yaml (thresholds)")
    thresholds = {name: float(t.value) for name, t in rows.items()}
    signals = {sid: SignalInfo(id=sid, **row) for sid, row in raw["signals"].items()}
    return SignalConfig(
        thresholds=thresholds,
        power_mask=sum(bit_of[r] for r in raw["power_reasons"]),
        thermal_mask=sum(bit_of[r] for r in raw["thermal_reasons"]),
        signals=signals,
    )


def evaluate(gpu: GpuSample, config: SignalConfig | None = None) -> dict[str, bool | None]:
    """Every signal for one GPU sample, in signals.yaml's order."""
    c = config or load_config()
    t = c.thresholds
    util = gpu.util_gpu_pct
    held = bool(gpu.processes)
    result: dict[str, bool | None] = {
        "idle_while_held": None if util is None else held and util <= t["idle_util_pct"],
        "data_starved": _starved(gpu, t),
        "power_limited": None if gpu.clock_event_mask is None else bool(gpu.clock_event_mask & c.power_mask),
        "thermal_limited": (
            None if gpu.clock_event_mask is None else bool(gpu.clock_event_mask & c.thermal_mask)
        ),
        "pcie_degraded": _pcie_degraded(gpu, t),
        "memory_errors": _memory_errors(gpu),
    }
    return {sid: result[sid] for sid in c.signals}


def _starved(gpu: GpuSample, t: dict[str, float]) -> bool | None:
    if gpu.util_gpu_pct is None:
        return None
    if not gpu.processes or gpu.util_gpu_pct >= t["starved_util_pct"]:
        return False
    cpu = [p.cpu_pct for p in gpu.processes if p.cpu_pct is not None]
    iowait = [p.iowait_pct for p in gpu.processes if p.iowait_pct is not None]
    if not cpu and not iowait:
        return None  # a replay without the processes' CPU use cannot tell starved from idle
    return any(v >= t["starved_process_cpu_pct"] for v in cpu) or any(
        v >= t["starved_iowait_pct"] for v in iowait
    )


def _pcie_degraded(gpu: GpuSample, t: dict[str, float]) -> bool | None:
    parts = (gpu.util_gpu_pct, gpu.pcie_gen, gpu.pcie_gen_max, gpu.pcie_width, gpu.pcie_width_max)
    if any(v is None for v in parts):
        return None
    if gpu.util_gpu_pct < t["pcie_load_util_pct"]:
        return False
    return gpu.pcie_gen < gpu.pcie_gen_max or gpu.pcie_width < gpu.pcie_width_max


def _memory_errors(gpu: GpuSample) -> bool | None:
    known = [
        v for v in (gpu.ecc_dbe_volatile, gpu.remap_pending, gpu.remap_failure, gpu.xid_last) if v is not None
    ]
    return None if not known else any(bool(v) for v in known)
