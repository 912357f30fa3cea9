"""What each GPU fact is called in every source, and how its text becomes a typed value.

The three GPU sources (NVML, `nvidia-smi -q -x`, `nvidia-smi -q`) describe the same facts
under different names. This module keeps those names as data, so a parser is a table
lookup plus one converter per unit, and every source gives the same Gpu model with the
same clock-event reason names (NVML's raw bit mask is decoded by `clock_event_names`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpuwise.facts.models import Unknown, UnknownKind
from gpuwise.facts.sourcing import binary_scale
from gpuwise.i18n import msg

if TYPE_CHECKING:
    from gpuwise.facts.models import Gpu, GpuProbe

# NVML's clocks-event (formerly "throttle") reason bitmask, from nvml.h
# (nvmlClocksEventReason* / nvmlClocksThrottleReason*; the bit values never changed).
CLOCK_EVENT_REASON_BITS: dict[int, str] = {
    0x0000000000000001: "gpu_idle",
    0x0000000000000002: "applications_clocks_setting",
    0x0000000000000004: "sw_power_cap",
    0x0000000000000008: "hw_slowdown",
    0x0000000000000010: "sync_boost",
    0x0000000000000020: "sw_thermal_slowdown",
    0x0000000000000040: "hw_thermal_slowdown",
    0x0000000000000080: "hw_power_brake_slowdown",
    0x0000000000000100: "display_clock_setting",
}


def clock_event_names(mask: int) -> list[str]:
    """NVML's reason bitmask -> stable names; bits nvml.h did not define when this was written keep their value."""
    names = [name for bit, name in sorted(CLOCK_EVENT_REASON_BITS.items()) if mask & bit]
    extra = mask & ~sum(CLOCK_EVENT_REASON_BITS)
    bit = 1
    while extra:
        if extra & bit:
            names.append(f"reason_0x{bit:x}")
            extra &= ~bit
        bit <<= 1
    return names


# XML: <clocks_event_reason_X> / <clocks_throttle_reason_X>; X is the name, except where listed here.
XML_REASON_ALIASES: dict[str, str] = {"display_clocks_setting": "display_clock_setting"}

# Text report (`nvidia-smi -q`): the label under "Clocks Event Reasons" / "Clocks Throttle Reasons".
TEXT_REASON_LABELS: dict[str, str] = {
    "idle": "gpu_idle",
    "applications clocks setting": "applications_clocks_setting",
    "sw power cap": "sw_power_cap",
    "hw slowdown": "hw_slowdown",
    "hw thermal slowdown": "hw_thermal_slowdown",
    "hw power brake slowdown": "hw_power_brake_slowdown",
    "sync boost": "sync_boost",
    "sw thermal slowdown": "sw_thermal_slowdown",
    "display clock setting": "display_clock_setting",
}


def reason_from_label(label: str, aliases: dict[str, str]) -> str:
    """A stable snake_case name for a reason label; labels we do not know keep their own name."""
    key = label.strip().lower()
    if key in aliases:
        return aliases[key]
    return re.sub(r"[^a-z0-9]+", "_", key).strip("_")


# ---------------------------------------------------------------- value converters

# Values nvidia-smi prints when it has no number; each becomes None with the text as the reason.
_NO_VALUE = re.compile(
    r"^\[?(n/a|not supported|not available|unknown error|insufficient permissions|"
    r"requested functionality has been deprecated|gpu is lost|unknown)\]?$",
    re.IGNORECASE,
)


# Of those, the ones that mean "this GPU has no such value" (the others are errors reading it).
_NOT_APPLICABLE = re.compile(
    r"^\[?(n/a|not supported|not available|requested functionality has been deprecated)\b", re.IGNORECASE
)


def placeholder_kind(text: str) -> UnknownKind:
    """The kind of reason a tool's answer stands for: 'N/A', 'Not Supported (...)' mean the GPU has no
    such value; anything else ('[Unknown Error]', 'GPU is lost', an NVML error) is a failure to read it."""
    return "not_applicable" if _NOT_APPLICABLE.match(text.strip()) else "failed"


class NoValue(ValueError):
    """The source had the field but no usable value; the message is the reason, `kind` its kind."""

    def __init__(self, message: str, kind: UnknownKind):
        super().__init__(message)
        self.kind = kind


def _number(text: str, suffix: str = "") -> float:
    s = text.strip()
    if suffix and s.lower().endswith(suffix.lower()):
        s = s[: -len(suffix)].strip()
    return float(s)


def to_str(text: str) -> str:
    return text.strip()


def to_int(text: str) -> int:
    return int(text.strip(), 0) if text.strip().lower().startswith("0x") else int(float(text.strip()))


def to_bytes(text: str) -> int:
    """'81920 MiB' -> 85899345920."""
    m = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]*)\s*", text)
    if not m:
        raise ValueError(text)
    scale = binary_scale(m.group(2))
    if scale is None:
        raise ValueError(text)
    return int(float(m.group(1)) * scale)


def to_watts(text: str) -> float:
    return _number(text, "W")


def to_mhz(text: str) -> int:
    return int(_number(text, "MHz"))


def to_celsius(text: str) -> float:
    return _number(text, "C")


def to_percent(text: str) -> float:
    return _number(text, "%")


def to_width(text: str) -> int:
    """PCIe link width '16x' -> 16."""
    return int(_number(text, "x"))


def to_enabled(text: str) -> bool:
    v = text.strip().lower()
    if v in ("enabled", "enable", "on", "yes", "active"):
        return True
    if v in ("disabled", "disable", "off", "no", "not active"):
        return False
    raise ValueError(text)


def convert(raw: str, conv: Callable[[str], Any]) -> Any:
    """Apply `conv`, turning nvidia-smi's placeholders and unparseable text into NoValue."""
    text = raw.strip()
    if not text or _NO_VALUE.match(text):
        raise NoValue(
            msg("reported as {value}").format(value=repr(text)) if text else msg("reported empty"),
            placeholder_kind(text) if text else "unparsable",
        )
    try:
        return conv(text)
    except (ValueError, OverflowError) as exc:
        raise NoValue(msg("unparseable value {value}").format(value=repr(text[:60])), "unparsable") from exc


# ---------------------------------------------------------------- per-source paths


# field -> (converter, XML paths relative to <gpu>, text paths below "GPU <bus id>").
# The first path present wins; text keys are matched case-insensitively.
@dataclass(frozen=True)
class FieldSpec:
    conv: Callable[[str], Any]
    xml: tuple[str, ...]
    text: tuple[tuple[str, ...], ...]


FIELDS: dict[str, FieldSpec] = {
    "name": FieldSpec(to_str, ("product_name",), (("product name",),)),
    "uuid": FieldSpec(to_str, ("uuid",), (("gpu uuid",),)),
    "serial": FieldSpec(to_str, ("serial",), (("serial number",),)),
    "vbios_version": FieldSpec(to_str, ("vbios_version",), (("vbios version",),)),
    "pci_bus_id": FieldSpec(to_str, ("pci/pci_bus_id",), (("pci", "bus id"),)),
    "memory_total_bytes": FieldSpec(
        to_bytes,
        ("fb_memory_usage/total", "memory_usage/total"),
        (("fb memory usage", "total"), ("memory usage", "total")),
    ),
    "pcie.gen_current": FieldSpec(
        to_int,
        ("pci/pci_gpu_link_info/pcie_gen/current_link_gen",),
        (("pci", "gpu link info", "pcie generation", "current"),),
    ),
    "pcie.gen_max": FieldSpec(
        to_int,
        ("pci/pci_gpu_link_info/pcie_gen/max_link_gen",),
        (("pci", "gpu link info", "pcie generation", "max"),),
    ),
    "pcie.width_current": FieldSpec(
        to_width,
        ("pci/pci_gpu_link_info/link_widths/current_link_width",),
        (("pci", "gpu link info", "link width", "current"),),
    ),
    "pcie.width_max": FieldSpec(
        to_width,
        ("pci/pci_gpu_link_info/link_widths/max_link_width",),
        (("pci", "gpu link info", "link width", "max"),),
    ),
    # The limit in force: "enforced" in old reports, "current" since the R535 layout.
    "power_limit_watts": FieldSpec(
        to_watts,
        (
            "power_readings/enforced_power_limit",
            "gpu_power_readings/current_power_limit",
            "power_readings/power_limit",
        ),
        (
            ("power readings", "enforced power limit"),
            ("gpu power readings", "current power limit"),
            ("gpu power readings", "gpu ceiling power limit", "current power limit"),  # R610 layout
            ("power readings", "power limit"),
        ),
    ),
    "power_limit_default_watts": FieldSpec(
        to_watts,
        ("gpu_power_readings/default_power_limit", "power_readings/default_power_limit"),
        (("gpu power readings", "default power limit"), ("power readings", "default power limit")),
    ),
    "power_limit_max_watts": FieldSpec(
        to_watts,
        ("gpu_power_readings/max_power_limit", "power_readings/max_power_limit"),
        (("gpu power readings", "max power limit"), ("power readings", "max power limit")),
    ),
    "power_draw_watts": FieldSpec(
        to_watts,
        (
            "gpu_power_readings/power_draw",
            "power_readings/power_draw",
            "gpu_power_readings/average_power_draw",
        ),
        (
            ("gpu power readings", "power draw"),
            ("power readings", "power draw"),
            ("gpu power readings", "average power draw"),  # R610 layout
        ),
    ),
    "performance_state": FieldSpec(to_str, ("performance_state",), (("performance state",),)),
    "utilization_gpu_percent": FieldSpec(to_percent, ("utilization/gpu_util",), (("utilization", "gpu"),)),
    "persistence_mode": FieldSpec(to_enabled, ("persistence_mode",), (("persistence mode",),)),
    "ecc_enabled": FieldSpec(to_enabled, ("ecc_mode/current_ecc",), (("ecc mode", "current"),)),
    "ecc_pending_enabled": FieldSpec(to_enabled, ("ecc_mode/pending_ecc",), (("ecc mode", "pending"),)),
    "retired_pages_sbe": FieldSpec(
        to_int,
        ("retired_pages/multiple_single_bit_retirement/retired_count",),
        (("retired pages", "single bit ecc"),),
    ),
    "retired_pages_dbe": FieldSpec(
        to_int,
        ("retired_pages/double_bit_retirement/retired_count",),
        (("retired pages", "double bit ecc"),),
    ),
    "retired_pages_pending": FieldSpec(
        to_enabled,
        ("retired_pages/pending_blacklist", "retired_pages/pending_retirement"),
        (("retired pages", "pending page blacklist"), ("retired pages", "pending page retirement")),
    ),
    "remapped_rows_pending": FieldSpec(
        to_enabled,
        ("remapped_rows/remapped_row_pending", "remapped_rows"),
        (("remapped rows", "pending"), ("remapped rows",)),
    ),
    "remapped_rows_failure": FieldSpec(
        to_enabled,
        ("remapped_rows/remapped_row_failure", "remapped_rows"),
        (("remapped rows", "remapping failure occurred"), ("remapped rows",)),
    ),
    "mig_enabled": FieldSpec(to_enabled, ("mig_mode/current_mig",), (("mig mode", "current"),)),
    "sm_clock_mhz": FieldSpec(to_mhz, ("clocks/sm_clock",), (("clocks", "sm"),)),
    "sm_clock_max_mhz": FieldSpec(to_mhz, ("max_clocks/sm_clock",), (("max clocks", "sm"),)),
    "temperature_c": FieldSpec(to_celsius, ("temperature/gpu_temp",), (("temperature", "gpu current temp"),)),
    "fabric_state": FieldSpec(to_str, ("fabric/state",), (("fabric", "state"),)),
}

# Uncorrectable ECC totals: old layouts give one double-bit total; since Ampere the report splits
# DRAM and SRAM (and since R550 SRAM into parity and SEC-DED). The total is the sum of what is there.
ECC_TOTAL_XML = ("double_bit/total",)
ECC_PARTS_XML = (
    "dram_uncorrectable",
    "sram_uncorrectable",
    "sram_uncorrectable_parity",
    "sram_uncorrectable_secded",
)
ECC_TOTAL_TEXT = (("double bit", "total"),)
ECC_PARTS_TEXT = (
    ("dram uncorrectable",),
    ("sram uncorrectable",),
    ("sram uncorrectable parity",),
    ("sram uncorrectable sec-ded",),
)


# ---------------------------------------------------------------- results


@dataclass
class GpuResult:
    """What one GPU source said: the GPUs, how they were found, and the host-wide versions."""

    gpus: list[Gpu]
    probe: GpuProbe
    driver_version: str | None = None
    cuda_driver_version: str | None = None


def set_field(gpu: Any, name: str, value: Any) -> None:
    """Set 'pcie.gen_max'-style dotted fields on a Gpu."""
    target, _dot, attr = name.rpartition(".")
    obj = getattr(gpu, target) if target else gpu
    setattr(obj, attr, value)


def mark_unknown(gpu: Any, name: str, reason: Unknown | str, kind: UnknownKind | None = None) -> None:
    """Record why a (possibly dotted) field is None, on the object that owns it (see Part.why)."""
    target, _dot, attr = name.rpartition(".")
    (getattr(gpu, target) if target else gpu).why(attr, reason, kind)


def fill_fields(
    gpu: Any, lookup: Callable[[str], str | None], paths_of: Callable[[FieldSpec], tuple], tool: str
) -> None:
    """Fill every FIELDS entry of `gpu` from `lookup(path) -> raw text or None (absent)`."""
    for name, spec in FIELDS.items():
        raw = None
        for path in paths_of(spec):
            raw = lookup(path)
            if raw is not None and raw.strip() != "":
                break
        if raw is None:
            mark_unknown(gpu, name, msg("not in this {tool} output").format(tool=tool), kind="unparsable")
            continue
        try:
            set_field(gpu, name, convert(raw, spec.conv))
        except NoValue as exc:
            mark_unknown(gpu, name, f"{tool}: {exc}", kind=exc.kind)


def sum_parts(values: list[str | None], tool: str) -> tuple[int | None, Unknown | None]:
    """Add the counters that have numbers; (None, reason) when none has one."""
    total, seen, reasons = 0, False, []
    for raw in values:
        if raw is None:
            continue
        try:
            total += convert(raw, to_int)
            seen = True
        except NoValue as exc:
            reasons.append(exc)
    if seen:
        return total, None
    if reasons:
        return None, Unknown(kind=reasons[0].kind, text=f"{tool}: {reasons[0]}")
    return None, Unknown(kind="unparsable", text=msg("not in this {tool} output").format(tool=tool))


def bus_id_key(bus_id: str | None) -> tuple[int, int, int, int] | None:
    """'00000008:00:00.0' and '0008:00:00.0' name the same device; compare them as numbers."""
    if not bus_id:
        return None
    m = re.fullmatch(r"\s*(?:([0-9a-fA-F]+):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.([0-7])\s*", bus_id)
    if not m:
        return None
    return (int(m.group(1) or "0", 16), int(m.group(2), 16), int(m.group(3), 16), int(m.group(4)))
