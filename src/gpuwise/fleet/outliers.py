"""Peer-relative outliers: robust z-scores per metric, per GPU and per node, on the bad side only.

z = (x - median) / max(1.4826 * MAD, floor * |median|), compared with a sourced threshold
(data/thresholds.yaml). 1.4826 * MAD estimates the standard deviation of normal data, and the
median/MAD pair is not pulled by the outliers it is looking for. With fewer values than
`min_nodes_for_z`, a value is compared with the median of the others instead (a ratio).
Only the bad side counts: a node faster than its peers is not a problem to report.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable

from gpuwise.documents.bench import BenchReport
from gpuwise.fleet.model import Outlier
from gpuwise.fleet.thresholds import value as threshold

MAD_TO_SIGMA = 1.4826  # 1 / Phi^-1(3/4): MAD of a normal distribution x 1.4826 = its standard deviation
LOWER_IS_BETTER_UNITS = {"us", "ms", "s", "ns", "seconds"}

Sample = tuple[str, str | None, float]  # (node, device, value)


def lower_is_better(unit: str) -> bool:
    return unit.strip().lower() in LOWER_IS_BETTER_UNITS


def bench_samples(nodes: Iterable[tuple[str, BenchReport]]) -> dict[tuple[str, str], list[Sample]]:
    """(metric, unit) -> one sample per node and device, from each node's usable measurements."""
    out: dict[tuple[str, str], list[Sample]] = {}
    for node, report in nodes:
        for m in report.results:
            if m.status != "ok" or m.value is None:
                continue
            out.setdefault((m.name, m.unit), []).append((node, m.device, float(m.value)))
    return out


def scope_of(device: str | None) -> str:
    return "gpu" if device and device.startswith("cuda:") else "node"


def find_outliers(metric: str, unit: str, samples: list[Sample], scope: str | None = None) -> list[Outlier]:
    """The samples that sit beyond the threshold on the bad side of their peers."""
    values = [v for _, _, v in samples]
    if len(values) < 2:
        return []
    worse_low = not lower_is_better(unit)
    if len(values) >= threshold("min_nodes_for_z"):
        return _by_z(metric, unit, samples, worse_low, scope)
    return _by_ratio(metric, unit, samples, worse_low, scope)


def _by_z(metric: str, unit: str, samples: list[Sample], worse_low: bool, scope: str | None) -> list[Outlier]:
    values = [v for _, _, v in samples]
    median = statistics.median(values)
    mad = statistics.median(abs(v - median) for v in values)
    scale = max(MAD_TO_SIGMA * mad, threshold("mad_floor_fraction") * abs(median))
    if scale == 0:
        return []
    limit = threshold("robust_z_threshold")
    out = []
    for node, device, v in samples:
        z = (v - median) / scale
        if (z <= -limit) if worse_low else (z >= limit):
            out.append(
                Outlier(
                    metric=metric,
                    scope=scope or scope_of(device),
                    node=node,
                    device=device,
                    value=v,
                    unit=unit,
                    median=median,
                    score=round(z, 2),
                    deviation_pct=round((v - median) / median * 100, 1) if median else 0.0,
                    method="robust z",
                    peers=len(samples),
                )
            )
    return out


def _by_ratio(
    metric: str, unit: str, samples: list[Sample], worse_low: bool, scope: str | None
) -> list[Outlier]:
    ratio = threshold("small_fleet_ratio")
    out = []
    for i, (node, device, v) in enumerate(samples):
        others = statistics.median(x for j, (_, _, x) in enumerate(samples) if j != i)
        if others <= 0:
            continue
        bad = v < ratio * others if worse_low else v > others / ratio
        if bad:
            out.append(
                Outlier(
                    metric=metric,
                    scope=scope or scope_of(device),
                    node=node,
                    device=device,
                    value=v,
                    unit=unit,
                    median=others,
                    deviation_pct=round((v - others) / others * 100, 1),
                    method="vs others' median",
                    peers=len(samples) - 1,
                )
            )
    return out
