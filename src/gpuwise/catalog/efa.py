"""How many Elastic Fabric Adapters an EC2 instance type supports, from data/efa_instance_types.csv."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from gpuwise.datafiles import read_rows

COLUMNS = ("instance_type", "efa_interfaces", "verified", "source", "as_of", "notes")
REQUIRED = ("instance_type", "efa_interfaces", "source")


@dataclass(frozen=True)
class EfaSupport:
    instance_type: str
    efa_interfaces: int  # 0: the instance type has no EFA
    source: str


def data_path() -> Path:
    return Path(str(resources.files("gpuwise.catalog") / "data" / "efa_instance_types.csv"))


@functools.cache
def _table() -> dict[str, EfaSupport]:
    rows = read_rows(data_path(), REQUIRED, COLUMNS)
    out = {}
    for row in rows:
        name = row.text("instance_type", required=True).strip().lower()
        out[name] = EfaSupport(
            name, row.integer("efa_interfaces", required=True), row.text("source", required=True)
        )
    return out


def efa_support(instance_type: str | None) -> EfaSupport | None:
    """The EFA support of `instance_type` (case-insensitive), None when it is unknown or not in the table."""
    return _table().get((instance_type or "").strip().lower()) if instance_type else None
