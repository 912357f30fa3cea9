"""The planner's only door into gpuwise.catalog.

The catalog owns hardware specs, fabrics, offers and on-prem cost defaults; the planner reads them
here, through a few small functions, so the rest of plan/ never depends on catalog internals. A
catalog row may leave a field empty (None): callers treat that as unknown, never as zero.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuwise.errors import MissingDependencyError, UserInputError

if TYPE_CHECKING:
    from gpuwise.catalog.gpus import GpuSpec


def _catalog(module: str):
    try:
        return __import__(f"gpuwise.catalog.{module}", fromlist=[module])
    except ImportError as exc:
        raise MissingDependencyError(
            f"the gpuwise catalog module '{module}' could not be imported: {exc}",
            "reinstall gpuwise (`pip install -e .`) so the catalog package and data are present",
        ) from None


def load_offers(extra_dirs: list[str] | None = None) -> list[Any]:
    return list(_catalog("offers").load_offers(extra_dirs or []))


def offer_matches_gpu(offer: Any, gpu: str) -> bool:
    return _catalog("offers").offer_matches_gpu(offer, gpu)


def match_gpu(name: str):
    return _catalog("gpus").match_gpu(name)


def get_fabric(key: str | None):
    if not key:
        return None
    try:
        return _catalog("fabrics").get_fabric(key)
    except (LookupError, UserInputError):  # an unknown key: the caller falls back and says so
        return None


def pcie_x16(gen: int):
    """The catalog's PCIe x16 fabric row for a generation, or None."""
    return _catalog("fabrics").pcie_x16(gen)


def onprem_defaults():
    return _catalog("costs").load_onprem_defaults()


def peak_flops(spec: GpuSpec | None, precision: str) -> float | None:
    """Dense peak FLOP/s per GPU at `precision`, or None when the catalog does not know it."""
    value = spec.peak_tflops(precision) if spec is not None else None
    return value * 1e12 if value else None


def gpu_memory_bytes(spec: GpuSpec | None) -> float | None:
    """Memory of one GPU in bytes, or None when the catalog row leaves it empty."""
    return float(spec.memory_bytes) if spec is not None and spec.memory_bytes else None
