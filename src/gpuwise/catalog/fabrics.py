"""Links and fabrics from data/fabrics.csv: PCIe, NVLink, Ethernet, InfiniBand, RoCE, EFA.

Bandwidth is nominal and per direction. Each row gives it in Gbit/s or GByte/s and the loader fills
in the other unit, so callers can use whichever their formula wants (network in `_gbps`, memory
and bus in `_gb_s`, see the unit convention in the brief). `achieved_fraction` is a typical
achieved share of nominal where one has been published; None otherwise.
"""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from gpuwise.datafiles import Row, did_you_mean, read_rows
from gpuwise.errors import DataValidationError, UserInputError
from gpuwise.i18n import joined, msg

KINDS = ("pcie", "nvlink", "ethernet", "infiniband", "roce", "efa")
COLUMNS = (
    "key",
    "kind",
    "bandwidth_gbps",
    "bandwidth_gb_s",
    "latency_us",
    "achieved_fraction",
    "verified",
    "source",
    "as_of",
    "notes",
)
REQUIRED = ("key", "kind", "verified", "source", "as_of")


@dataclass(frozen=True)
class Fabric:
    """One link or network technology. Bandwidth per direction, for the unit named in `notes`."""

    key: str
    kind: str
    bandwidth_gbps: float  # Gbit/s per direction
    bandwidth_gb_s: float  # GByte/s per direction (same figure, other unit)
    latency_us: float | None
    achieved_fraction: float | None
    verified: bool
    source: str
    as_of: dt.date
    notes: str = ""

    @property
    def achievable_gb_s(self) -> float | None:
        """Nominal × typical achieved fraction, when the fraction is known."""
        return None if self.achieved_fraction is None else self.bandwidth_gb_s * self.achieved_fraction


def _fabric_from_row(row: Row) -> Fabric:
    gbps = row.number("bandwidth_gbps")
    gb_s = row.number("bandwidth_gb_s")
    if gbps is None and gb_s is None:
        raise row.error("bandwidth_gbps", "neither bandwidth_gbps nor bandwidth_gb_s is given")
    if gbps is not None and gb_s is not None and abs(gbps - gb_s * 8) > 0.01 * gbps:
        raise row.error("bandwidth_gb_s", f"{gb_s:g} GB/s disagrees with bandwidth_gbps {gbps:g} Gbit/s")
    return Fabric(
        key=row.text("key", required=True),
        kind=row.choice("kind", KINDS, required=True),
        bandwidth_gbps=gbps if gbps is not None else gb_s * 8,
        bandwidth_gb_s=gb_s if gb_s is not None else gbps / 8,
        latency_us=row.number("latency_us"),
        achieved_fraction=row.fraction("achieved_fraction"),
        verified=row.boolean("verified"),
        source=row.text("source", required=True),
        as_of=row.date("as_of", required=True),
        notes=row.text("notes") or "",
    )


def read_fabrics(path: Path) -> list[Fabric]:
    """Parse and validate one fabrics.csv file (no caching)."""
    fabrics: list[Fabric] = []
    seen: dict[str, int] = {}
    for row in read_rows(path, REQUIRED, COLUMNS):
        fabric = _fabric_from_row(row)
        if fabric.key in seen:
            raise row.error("key", f"duplicate key {fabric.key!r} (first on line {seen[fabric.key]})")
        seen[fabric.key] = row.line
        fabrics.append(fabric)
    if not fabrics:
        raise DataValidationError(
            msg("no fabric rows"), msg("restore the file from the gpuwise package"), path=str(path)
        )
    return fabrics


def shipped_fabrics_path() -> Path:
    return Path(str(resources.files("gpuwise.catalog") / "data" / "fabrics.csv"))


@functools.lru_cache(maxsize=1)
def load_fabrics() -> list[Fabric]:
    """The shipped fabric rows (cached; do not mutate)."""
    return read_fabrics(shipped_fabrics_path())


def get_fabric(key: str) -> Fabric:
    """The fabric with this key; raises UserInputError (with a did-you-mean) when there is none."""
    for fabric in load_fabrics():
        if fabric.key == key.strip().lower():
            return fabric
    keys = [f.key for f in load_fabrics()]
    raise UserInputError(
        msg("unknown fabric {key!r}{did_you_mean_key}").format(
            key=key, did_you_mean_key=did_you_mean(key, keys)
        ),
        msg("use one of: {join}").format(join=joined(", ", keys)),
    )


def pcie_x16(gen: int) -> Fabric | None:
    """The PCIe x16 row for a generation (3–6), or None."""
    try:
        return get_fabric(f"pcie{gen}-x16")
    except UserInputError:
        return None
