"""Fleet thresholds (data/thresholds.yaml): every number the fleet analysis compares against, with its source."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import yaml


@dataclass(frozen=True)
class Threshold:
    name: str
    value: float
    unit: str
    source: str


@lru_cache(maxsize=1)
def thresholds() -> dict[str, Threshold]:
    text = resources.files("gpuwise.fleet").joinpath("data/thresholds.yaml").read_text(encoding="utf-8")
    out = {}
    for name, row in (yaml.safe_load(text) or {}).items():
        if not isinstance(row, dict) or "value" not in row or "source" not in row:
            raise ValueError(f"fleet thresholds.yaml: {name} needs 'value' and 'source'")
        out[name] = Threshold(name, float(row["value"]), str(row.get("unit", "")), str(row["source"]))
    return out


def value(name: str) -> float:
    return thresholds()[name].value
