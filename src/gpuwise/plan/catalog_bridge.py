"""The planner's only door into gpuwise.catalog.

The catalog owns hardware specs, fabrics, offers and on-prem cost defaults; the planner reads them
here, through a few small functions, so the rest of plan/ never depends on catalog internals. Reads
are defensive (getattr with defaults) because a catalog row may leave a field empty.
"""

from __future__ import annotations

from typing import Any

from gpuwise.errors import MissingDependencyError, UserInputError


def _catalog(module: str):
    try:
        return __import__(f"gpuwise.catalog.{module}", fromlist=[module])
    except ImportError as exc:
        raise MissingDependencyError(f"the gpuwise catalog module '{module}' could not be imported: {exc}",
                                     "reinstall gpuwise (`pip install -e .`) so the catalog package and data are present") from None


def load_offers(extra_dirs: list[str] | None = None) -> list[Any]:
    return list(_catalog("offers").load_offers(extra_dirs or []))


def match_gpu(name: str):
    return _catalog("gpus").match_gpu(name)


def get_fabric(key: str | None):
    if not key:
        return None
    try:
        return _catalog("fabrics").get_fabric(key)
    except (LookupError, UserInputError):  # an unknown key: the caller falls back and says so
        return None


def onprem_defaults():
    return _catalog("costs").load_onprem_defaults()


def attr(obj: Any, *names: str, default: Any = None) -> Any:
    """First non-None attribute (or dict key) among `names`."""
    for name in names:
        value = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
        if callable(value) and not isinstance(obj, dict):
            continue
        if value is not None:
            return value
    return default


def peak_flops(spec: Any, precision: str) -> float | None:
    """Dense peak FLOP/s per GPU at `precision`, or None when the catalog does not know it."""
    if spec is None:
        return None
    getter = getattr(spec, "peak_tflops", None)
    value = None
    if callable(getter):
        try:
            value = getter(precision)
        except (KeyError, ValueError, TypeError):
            value = None
    if value is None:
        value = attr(spec, f"{precision}_tflops")
    return float(value) * 1e12 if value else None


def gpu_memory_bytes(spec: Any) -> float | None:
    value = attr(spec, "memory_bytes")
    if value is None and attr(spec, "memory_gib") is not None:
        value = float(attr(spec, "memory_gib")) * 2**30
    return float(value) if value else None
