"""Fleet thresholds (data/thresholds.yaml): every number the fleet analysis compares against, with its source."""

from __future__ import annotations

from functools import lru_cache

from gpuwise.thresholds import Threshold, load_thresholds


@lru_cache(maxsize=1)
def thresholds() -> dict[str, Threshold]:
    return load_thresholds("gpuwise.fleet", "data/thresholds.yaml")


def value(name: str) -> float:
    return float(thresholds()[name].value)
