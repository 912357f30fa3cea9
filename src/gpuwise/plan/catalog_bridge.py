"""The planner's only door into gpuwise.catalog.

The catalog owns hardware specs, fabrics, offers and on-prem cost defaults; the planner reads them
here, through a few small typed functions, so the rest of plan/ never depends on catalog internals.
The catalog is a lower layer than plan: these are plain imports. A catalog row may leave a field
empty (None): callers treat that as unknown, never as zero.
"""

from __future__ import annotations

from pathlib import Path

from gpuwise.catalog import costs, fabrics, gpu_support, gpus, offers
from gpuwise.catalog.costs import OnpremDefaults
from gpuwise.catalog.fabrics import Fabric
from gpuwise.catalog.gpu_support import PeerLink, Precisions
from gpuwise.catalog.gpus import GpuSpec
from gpuwise.catalog.offers import Offer
from gpuwise.errors import UserInputError

__all__ = [
    "Fabric",
    "GpuSpec",
    "Offer",
    "OnpremDefaults",
    "PeerLink",
    "Precisions",
    "get_fabric",
    "get_gpu",
    "gpu_memory_bytes",
    "load_offers",
    "match_gpu",
    "offer_matches_gpu",
    "onprem_defaults",
    "pcie_x16",
    "peak_flops",
    "peer_link",
    "precisions",
]


def load_offers(extra_dirs: list[str] | None = None) -> list[Offer]:
    return list(offers.load_offers([Path(d) for d in extra_dirs or []]))


def offer_matches_gpu(offer: Offer, gpu: str) -> bool:
    return offers.offer_matches_gpu(offer, gpu)


def match_gpu(name: str) -> GpuSpec | None:
    return gpus.match_gpu(name)


def get_gpu(key: str) -> GpuSpec | None:
    return gpus.get_gpu(key)


def get_fabric(key: str | None) -> Fabric | None:
    if not key:
        return None
    try:
        return fabrics.get_fabric(key)
    except UserInputError:  # an unknown key: the caller falls back and says so
        return None


def pcie_x16(gen: int) -> Fabric | None:
    """The catalog's PCIe x16 fabric row for a generation, or None."""
    return fabrics.pcie_x16(gen)


def onprem_defaults() -> OnpremDefaults:
    return costs.load_onprem_defaults()


def peak_flops(spec: GpuSpec | None, precision: str) -> float | None:
    """Dense peak FLOP/s per GPU at `precision`, or None when the catalog does not know it."""
    value = spec.peak_tflops(precision) if spec is not None else None
    return value * 1e12 if value else None


def gpu_memory_bytes(spec: GpuSpec | None) -> float | None:
    """Memory of one GPU in bytes, or None when the catalog row leaves it empty."""
    return float(spec.memory_bytes) if spec is not None and spec.memory_bytes else None


def peer_link(spec: GpuSpec) -> PeerLink | None:
    """The link tensor-parallel GPUs of this model use (NVLink, Infinity Fabric, PCIe), or None if unknown."""
    return gpu_support.peer_link(spec.key)


def precisions(spec: GpuSpec) -> Precisions | None:
    """The number formats the GPU's tensor cores compute in, or None if the catalog does not know."""
    return gpu_support.precisions(spec.key)
