"""GPU specifications from data/gpus.csv, and matching the names NVML and nvidia-smi report.

Each row carries dense peak TFLOPS per dtype, memory, links, typical achievable fractions, a
`verified` flag, a source and an `as_of` date. A reported name is matched against each row's
`match` patterns (regular expressions, full match, case-insensitive, after dropping a leading
"NVIDIA " or "Tesla "). When several rows match, the longest pattern wins. A name no row matches
returns None and logs a warning: gpuwise never guesses a peak ("H100" alone matches nothing,
because SXM, PCIe and NVL parts differ by 30% or more).
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from gpuwise.datafiles import Row, read_rows
from gpuwise.errors import DataValidationError
from gpuwise.i18n import joined, msg

log = logging.getLogger(__name__)

DTYPES = ("fp32", "tf32", "fp16", "bf16", "fp8")
_DTYPE_ALIASES = {"float32": "fp32", "float": "fp32", "float16": "fp16", "half": "fp16", "bfloat16": "bf16"}
VENDORS = ("NVIDIA", "AMD", "Intel")
COLUMNS = (
    "key",
    "name",
    "vendor",
    "match",
    "fp32_tflops",
    "tf32_tflops",
    "fp16_tflops",
    "bf16_tflops",
    "fp8_tflops",
    "memory_gib",
    "memory_bandwidth_gb_s",
    "nvlink_bandwidth_gb_s",
    "pcie_gen",
    "tdp_watts",
    "mamf_fraction",
    "memcpy_fraction",
    "pcie_fraction",
    "nvlink_fraction",
    "verified",
    "source",
    "as_of",
    "notes",
)
REQUIRED = ("key", "name", "vendor", "match", "verified", "source", "as_of")
# Brand prefixes that vary between driver generations for the same part ("A100-SXM4-40GB" on old
# drivers, "NVIDIA A100-SXM4-40GB" on new ones; "Tesla V100-..." vs "NVIDIA Tesla V100-...").
_PREFIXES = re.compile(r"^(?:nvidia\s+)?(?:tesla\s+)?")


@dataclass(frozen=True)
class GpuSpec:
    """One GPU model's published figures. Peaks are dense (no sparsity); None means not published here."""

    key: str
    name: str
    vendor: str
    fp32_tflops: float | None
    tf32_tflops: float | None
    fp16_tflops: float | None
    bf16_tflops: float | None
    fp8_tflops: float | None
    memory_bytes: int | None
    memory_bandwidth_gb_s: float | None
    nvlink_bandwidth_gb_s: float | None  # per-GPU total, bidirectional; None when the part has no NVLink
    pcie_gen: int | None
    tdp_watts: float | None
    mamf_fraction: float | None  # measured max achievable bf16 matmul / bf16 peak
    memcpy_fraction: float | None  # achieved device-memory bandwidth / spec
    pcie_fraction: float | None  # achieved host<->device copy / PCIe x16 spec
    nvlink_fraction: float | None  # achieved P2P copy / NVLink spec
    verified: bool
    source: str
    as_of: dt.date
    notes: str = ""
    patterns: tuple[str, ...] = field(default=(), repr=False, compare=False)

    def peak_tflops(self, dtype: str) -> float | None:
        """Dense peak for `dtype` (fp32, tf32, fp16, bf16, fp8); None if unknown or unsupported."""
        dtype = _DTYPE_ALIASES.get(dtype.lower().removeprefix("torch."), dtype.lower())
        if dtype.startswith(("fp8", "float8")):
            dtype = "fp8"  # e4m3 and e5m2 share one tensor-core rate
        if dtype not in DTYPES:
            raise ValueError(f"unknown dtype {dtype!r}; use one of {joined(', ', DTYPES)}")
        return getattr(self, f"{dtype}_tflops")

    @property
    def memory_gib(self) -> float | None:
        return None if self.memory_bytes is None else self.memory_bytes / 2**30


def normalize_name(name: str) -> str:
    """Lower-case, single-spaced, without the brand prefixes that vary between drivers."""
    name = joined(" ", name.strip().lower().split())
    return _PREFIXES.sub("", name)


def _spec_from_row(row: Row) -> GpuSpec:
    patterns = tuple(p.strip() for p in (row.text("match", required=True) or "").split(";") if p.strip())
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise row.error(
                "match", f"pattern {pattern!r} is not a valid regular expression ({exc})"
            ) from None
    memory_gib = row.number("memory_gib")
    return GpuSpec(
        key=row.text("key", required=True),
        name=row.text("name", required=True),
        vendor=row.choice("vendor", VENDORS, required=True),
        fp32_tflops=row.number("fp32_tflops"),
        tf32_tflops=row.number("tf32_tflops"),
        fp16_tflops=row.number("fp16_tflops"),
        bf16_tflops=row.number("bf16_tflops"),
        fp8_tflops=row.number("fp8_tflops"),
        memory_bytes=None if memory_gib is None else int(memory_gib * 2**30),
        memory_bandwidth_gb_s=row.number("memory_bandwidth_gb_s"),
        nvlink_bandwidth_gb_s=row.number("nvlink_bandwidth_gb_s"),
        pcie_gen=row.integer("pcie_gen", minimum=1),
        tdp_watts=row.number("tdp_watts"),
        mamf_fraction=row.fraction("mamf_fraction"),
        memcpy_fraction=row.fraction("memcpy_fraction"),
        pcie_fraction=row.fraction("pcie_fraction"),
        nvlink_fraction=row.fraction("nvlink_fraction"),
        verified=row.boolean("verified"),
        source=row.text("source", required=True),
        as_of=row.date("as_of", required=True),
        notes=row.text("notes") or "",
        patterns=patterns,
    )


def read_gpu_specs(path: Path) -> list[GpuSpec]:
    """Parse and validate one gpus.csv file (no caching). Duplicate keys or patterns are errors."""
    specs: list[GpuSpec] = []
    seen_keys: dict[str, int] = {}
    seen_patterns: dict[str, str] = {}
    for row in read_rows(path, REQUIRED, COLUMNS):
        spec = _spec_from_row(row)
        if spec.key in seen_keys:
            raise row.error("key", f"duplicate key {spec.key!r} (first on line {seen_keys[spec.key]})")
        seen_keys[spec.key] = row.line
        for pattern in spec.patterns:
            if pattern in seen_patterns:
                raise row.error("match", f"pattern {pattern!r} is already used by {seen_patterns[pattern]}")
            seen_patterns[pattern] = spec.key
        specs.append(spec)
    if not specs:
        raise DataValidationError(
            msg("no GPU rows"), msg("restore the file from the gpuwise package"), path=str(path)
        )
    return specs


def shipped_gpus_path() -> Path:
    return Path(str(resources.files("gpuwise.catalog") / "data" / "gpus.csv"))


@functools.lru_cache(maxsize=1)
def load_gpu_specs() -> list[GpuSpec]:
    """The shipped GPU spec rows (cached; the list is shared, do not mutate it)."""
    return read_gpu_specs(shipped_gpus_path())


def get_gpu(key: str) -> GpuSpec | None:
    """The row whose key is `key` (case-insensitive), or None."""
    wanted = key.strip().lower()
    return next((s for s in load_gpu_specs() if s.key.lower() == wanted), None)


@functools.lru_cache(maxsize=256)
def _match(normalized: str) -> GpuSpec | None:
    best: tuple[int, GpuSpec] | None = None
    for spec in load_gpu_specs():
        for pattern in spec.patterns:
            longer = best is None or len(pattern) > best[0]
            if longer and re.fullmatch(pattern, normalized, flags=re.IGNORECASE):
                best = (len(pattern), spec)
    return best[1] if best else None


def match_gpu(name: str | None, warn: bool = True) -> GpuSpec | None:
    """The spec for a GPU name as NVML / nvidia-smi report it, or a catalog key; None if unknown.

    Unknown names log a warning and return None: callers show "no peak known" rather than a guess.
    """
    if not name or not name.strip():
        return None
    spec = _match(normalize_name(name)) or get_gpu(name)
    if spec is None and warn:
        log.warning("GPU %r is not in the gpuwise catalog: no peak figures known for it", name)
    return spec
