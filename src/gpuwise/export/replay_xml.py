"""A Snapshot from recorded `nvidia-smi -q -x` output (what a gpuwise capture stores).

The XML holds the same per-GPU readings the live NVML sampler takes (utilisation, memory, power,
clocks, clock-event reasons, PCIe throughput, ECC, remapped rows, processes), so a capture replays
as one scrape. Fields the report lacks stay None; XID events are never in it.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any

from gpuwise.errors import UserInputError
from gpuwise.export.sample import GpuSample, ProcessSample, Snapshot
from gpuwise.facts.gpu_fields import (
    CLOCK_EVENT_REASON_BITS,
    XML_REASON_ALIASES,
    NoValue,
    convert,
    reason_from_label,
    to_celsius,
    to_enabled,
    to_int,
    to_mhz,
    to_watts,
    to_width,
)
from gpuwise.facts.gpu_xml import REASON_TAG, extract_document
from gpuwise.i18n import msg

_BIT_OF = {name: bit for bit, name in CLOCK_EVENT_REASON_BITS.items()}


def _number(text: str) -> float:
    """'55042 KB/s', '0 %', '143156 MiB' -> the leading number."""
    return float(text.split()[0])


# GpuSample field -> (converter, XML paths under <gpu>; the first one present wins)
_FIELDS: dict[str, tuple[Callable[[str], Any], tuple[str, ...]]] = {
    "uuid": (str.strip, ("uuid",)),
    "name": (str.strip, ("product_name",)),
    "pci_bus_id": (str.strip, ("pci/pci_bus_id",)),
    "util_gpu_pct": (_number, ("utilization/gpu_util",)),
    "util_mem_pct": (_number, ("utilization/memory_util",)),
    "fb_used_mib": (_number, ("fb_memory_usage/used", "memory_usage/used")),
    "fb_free_mib": (_number, ("fb_memory_usage/free", "memory_usage/free")),
    "fb_reported_total_mib": (_number, ("fb_memory_usage/total", "memory_usage/total")),
    "temperature_c": (to_celsius, ("temperature/gpu_temp",)),
    "power_w": (
        to_watts,
        (
            "gpu_power_readings/instant_power_draw",
            "gpu_power_readings/power_draw",
            "gpu_power_readings/average_power_draw",
            "power_readings/power_draw",
        ),
    ),
    "power_limit_w": (
        to_watts,
        (
            "gpu_power_readings/current_power_limit",
            "power_readings/enforced_power_limit",
            "power_readings/power_limit",
        ),
    ),
    "sm_clock_mhz": (to_mhz, ("clocks/sm_clock",)),
    "sm_clock_max_mhz": (to_mhz, ("max_clocks/sm_clock",)),
    "mem_clock_mhz": (to_mhz, ("clocks/mem_clock",)),
    "mem_clock_max_mhz": (to_mhz, ("max_clocks/mem_clock",)),
    "pcie_gen": (to_int, ("pci/pci_gpu_link_info/pcie_gen/current_link_gen",)),
    "pcie_gen_max": (to_int, ("pci/pci_gpu_link_info/pcie_gen/max_link_gen",)),
    "pcie_width": (to_width, ("pci/pci_gpu_link_info/link_widths/current_link_width",)),
    "pcie_width_max": (to_width, ("pci/pci_gpu_link_info/link_widths/max_link_width",)),
    "pcie_tx_kbps": (_number, ("pci/tx_util",)),
    "pcie_rx_kbps": (_number, ("pci/rx_util",)),
    "pcie_replay": (to_int, ("pci/replay_counter",)),
    "remapped_correctable": (to_int, ("remapped_rows/remapped_row_corr",)),
    "remapped_uncorrectable": (to_int, ("remapped_rows/remapped_row_unc",)),
    "remap_pending": (to_enabled, ("remapped_rows/remapped_row_pending",)),
    "remap_failure": (to_enabled, ("remapped_rows/remapped_row_failure",)),
}

# ECC counters: old DTDs have single_bit/double_bit totals, newer ones DRAM and SRAM parts.
_ECC = {
    "sbe": (("single_bit/total",), ("dram_correctable", "sram_correctable")),
    "dbe": (
        ("double_bit/total",),
        (
            "dram_uncorrectable",
            "sram_uncorrectable",
            "sram_uncorrectable_parity",
            "sram_uncorrectable_secded",
        ),
    ),
}


def snapshot_from_xml(text: str, *, hostname: str, taken_at: float, environment: str = "unknown") -> Snapshot:
    """Parse the XML report into a Snapshot; text with no readable XML is a UserInputError."""
    doc = extract_document(text)
    try:
        root = ET.fromstring(doc) if doc is not None else None
    except ET.ParseError as exc:
        raise UserInputError(
            msg("the nvidia-smi -q -x output is not valid XML ({exc})").format(exc=exc),
            msg("record it again with `nvidia-smi -q -x > FILE` (the file may be truncated)"),
        ) from exc
    if root is None:
        raise UserInputError(
            msg("the file holds no nvidia-smi -q -x XML document"),
            msg("record it with `nvidia-smi -q -x > FILE`"),
        )
    gpus = [_gpu(index, el) for index, el in enumerate(root.findall("gpu"))]
    return Snapshot(
        taken_at=taken_at,
        hostname=hostname,
        gpus=gpus,
        driver_version=_leaf(root, "driver_version"),
        cuda_version=_leaf(root, "cuda_version"),
        environment=environment,
    )


def _leaf(el: ET.Element, path: str) -> str | None:
    node = el.find(path)
    return None if node is None or len(node) else (node.text or "").strip()


def _value(el: ET.Element, paths: tuple[str, ...], conv: Callable[[str], Any]) -> Any:
    for path in paths:
        raw = _leaf(el, path)
        if raw is not None:
            try:
                return convert(raw, conv)
            except NoValue:
                return None
    return None


def _gpu(index: int, el: ET.Element) -> GpuSample:
    gpu = GpuSample(index=index)
    for field, (conv, paths) in _FIELDS.items():
        setattr(gpu, field, _value(el, paths, conv))
    minor = _value(el, ("minor_number",), to_int)
    gpu.index = index if minor is None else minor
    for scope in ("volatile", "aggregate"):
        counters = el.find(f"ecc_errors/{scope}")
        for kind, (totals, parts) in _ECC.items():
            if counters is not None:
                setattr(gpu, f"ecc_{kind}_{scope}", _ecc_count(counters, totals, parts))
    gpu.clock_event_mask = _clock_event_mask(el)
    gpu.processes = [
        ProcessSample(
            pid=pid,
            used_mib=_value(p, ("used_memory",), _number),
            name=_leaf(p, "process_name"),
        )
        for p in el.findall("processes/process_info")
        if (pid := _value(p, ("pid",), to_int)) is not None
    ]
    return gpu


def _ecc_count(counters: ET.Element, totals: tuple[str, ...], parts: tuple[str, ...]) -> int | None:
    found = [v for p in totals if (v := _value(counters, (p,), to_int)) is not None]
    if not found:
        found = [v for p in parts if (v := _value(counters, (p,), to_int)) is not None]
    return sum(found) if found else None


def _clock_event_mask(el: ET.Element) -> int | None:
    section = el.find("clocks_event_reasons")
    if section is None:
        section = el.find("clocks_throttle_reasons")
    if section is None:
        return None
    mask, readable = 0, False
    for child in section:
        m = REASON_TAG.match(child.tag)
        state = (child.text or "").strip().lower()
        if m is None or state not in ("active", "not active"):
            continue
        readable = True
        name = reason_from_label(m.group(1), XML_REASON_ALIASES)
        if state == "active" and name in _BIT_OF:
            mask |= _BIT_OF[name]
    return mask if readable else None
