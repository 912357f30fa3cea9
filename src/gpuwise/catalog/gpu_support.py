"""Per-GPU serving facts with sources: the peer link tensor parallelism uses (data/gpu_peer_links.csv)
and the number formats its tensor cores compute in (data/gpu_precisions.csv).

A GPU without a row is unknown, never guessed: callers say so (one GPU per replica; fp8 not planned).
"""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from gpuwise.catalog.fabrics import get_fabric
from gpuwise.datafiles import read_rows
from gpuwise.errors import UserInputError

TOPOLOGIES = ("switch", "mesh")


@dataclass(frozen=True)
class PeerLink:
    """How one GPU reaches the other GPUs of its server. Bandwidth is per direction, GB/s."""

    key: str
    link: str  # e.g. "NVLink 4", "AMD Infinity Fabric (xGMI)", "PCIe 4.0 x16"
    topology: str  # switch: full bandwidth to every peer; mesh: one link per peer
    bandwidth_gb_s: float  # switch: the GPU's link; mesh: one peer link
    source: str
    as_of: dt.date

    def allreduce_gb_s(self, tp: int) -> float:
        """Per-direction bandwidth one GPU drives in a tp-GPU ring all-reduce: a mesh uses tp − 1 links."""
        return self.bandwidth_gb_s * (max(tp, 2) - 1) if self.topology == "mesh" else self.bandwidth_gb_s


@dataclass(frozen=True)
class Precisions:
    key: str
    bf16: bool
    fp8: bool
    source: str
    as_of: dt.date

    def supports(self, dtype: str) -> bool:
        return {"fp16": True, "bf16": self.bf16, "fp8": self.fp8}.get(dtype, False)


def _data(name: str) -> Path:
    return Path(str(resources.files("gpuwise.catalog") / "data" / name))


def read_peer_links(path: Path) -> dict[str, PeerLink]:
    out: dict[str, PeerLink] = {}
    for row in read_rows(path, ("key", "link", "topology", "source", "as_of"),
                         ("key", "link", "topology", "fabric", "per_peer_gb_s", "source", "as_of")):  # fmt: skip
        topology = row.choice("topology", TOPOLOGIES, required=True)
        if topology == "mesh":
            bandwidth = row.number("per_peer_gb_s")
            if not bandwidth:
                raise row.error("per_peer_gb_s", "a mesh link needs per_peer_gb_s")
        else:
            try:
                bandwidth = get_fabric(row.text("fabric", required=True)).bandwidth_gb_s
            except UserInputError as exc:
                raise row.error("fabric", str(exc)) from None
        key = row.text("key", required=True)
        out[key] = PeerLink(key, row.text("link", required=True), topology, bandwidth,
                            row.text("source", required=True), row.date("as_of", required=True))  # fmt: skip
    return out


def read_precisions(path: Path) -> dict[str, Precisions]:
    out: dict[str, Precisions] = {}
    for row in read_rows(path, ("key", "bf16", "fp8", "source", "as_of")):
        key = row.text("key", required=True)
        out[key] = Precisions(key, row.boolean("bf16"), row.boolean("fp8"),
                              row.text("source", required=True), row.date("as_of", required=True))  # fmt: skip
    return out


@functools.lru_cache(maxsize=1)
def _peer_links() -> dict[str, PeerLink]:
    return read_peer_links(_data("gpu_peer_links.csv"))


@functools.lru_cache(maxsize=1)
def _precisions() -> dict[str, Precisions]:
    return read_precisions(_data("gpu_precisions.csv"))


def peer_link(key: str) -> PeerLink | None:
    """The GPU's peer link, or None when the catalog does not know it."""
    return _peer_links().get(key)


def precisions(key: str) -> Precisions | None:
    """The GPU's tensor-core formats, or None when the catalog does not know them."""
    return _precisions().get(key)
