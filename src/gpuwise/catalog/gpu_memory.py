"""The GPU memory a device reports (data/gpu_memory_reported.csv), beside the vendor's marketed figure.

The catalog's memory_gib is the vendor's "GB", which for GPU memory counts the physical memory in
binary units (an A100 40GB reports 40960 MiB). What nvidia-smi and NVML report as the total is a little
less (the driver's reserve; ECC on some parts), and that is the figure probe and watch show.
Where a recording of a device exists, the catalog shows the reported figure too, so one H200 reads
140.4 GiB in probe, watch and catalog.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from importlib import resources


@dataclass(frozen=True)
class ReportedMemory:
    key: str
    total_bytes: int
    reported_mib: int
    driver: str
    source: str


@cache
def reported() -> dict[str, ReportedMemory]:
    text = (
        resources.files("gpuwise.catalog")
        .joinpath("data/gpu_memory_reported.csv")
        .read_text(encoding="utf-8")
    )
    rows = csv.DictReader(line for line in text.splitlines() if line.strip() and not line.startswith("#"))
    out = {}
    for row in rows:
        mib = int(row["reported_mib"])
        if mib <= 0 or not row.get("source"):
            raise ValueError(
                f"gpu_memory_reported.csv: {row.get('key')} needs a positive reported_mib and a source"
            )
        out[row["key"]] = ReportedMemory(row["key"], mib * 2**20, mib, row.get("driver") or "", row["source"])
    return out


def reported_memory(key: str) -> ReportedMemory | None:
    """The recorded total of catalog key `key`, or None when no recording is in the table."""
    return reported().get(key)
