"""CPU SIMD FMA rates from data/cpu_fma.csv: what bench's derived CPU peak multiplies cores x clock by.

No vendor publishes one peak number per CPU the way GPU datasheets do, so the peak is derived from
the CPU flags; the per-flag rates are hardware constants and live here as sourced, dated data.
"""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from gpuwise.datafiles import read_rows
from gpuwise.errors import DataValidationError
from gpuwise.i18n import msg

DTYPES = ("fp32", "bf16", "fp16")
COLUMNS = ("vendor", "flag", "dtype", "fma_lanes", "fp32_multiple", "source", "as_of")
REQUIRED = ("vendor", "flag", "dtype", "source", "as_of")


@dataclass(frozen=True)
class FmaRate:
    """One flag's FMA lanes per cycle per core: `fma_lanes`, or `fp32_multiple` x the fp32 lanes."""

    vendor: str  # /proc/cpuinfo vendor_id, or "*" for any
    flag: str
    dtype: str
    fma_lanes: int | None
    fp32_multiple: float | None
    source: str
    as_of: dt.date

    def applies_to(self, vendor: str, flags: set[str]) -> bool:
        return self.flag in flags and self.vendor in ("*", vendor)


def read_fma_rates(path: Path) -> list[FmaRate]:
    """Parse and validate one cpu_fma.csv (no caching); each row gives exactly one of the two rates."""
    rates = []
    for row in read_rows(path, REQUIRED, COLUMNS):
        lanes, multiple = row.integer("fma_lanes", minimum=1), row.number("fp32_multiple")
        if (lanes is None) == (multiple is None):
            raise row.error("fma_lanes", "give exactly one of fma_lanes and fp32_multiple")
        rates.append(
            FmaRate(
                vendor=row.text("vendor", required=True),
                flag=row.text("flag", required=True),
                dtype=row.choice("dtype", DTYPES, required=True),
                fma_lanes=lanes,
                fp32_multiple=multiple,
                source=row.text("source", required=True),
                as_of=row.date("as_of", required=True),
            )
        )
    if not rates:
        raise DataValidationError(
            msg("no CPU FMA rows"), msg("restore the file from the gpuwise package"), path=str(path)
        )
    return rates


def shipped_cpu_fma_path() -> Path:
    return Path(str(resources.files("gpuwise.catalog") / "data" / "cpu_fma.csv"))


@functools.lru_cache(maxsize=1)
def load_fma_rates() -> tuple[FmaRate, ...]:
    """The shipped rows, in file order (most specific first; cached)."""
    return tuple(read_fma_rates(shipped_cpu_fma_path()))
