"""Data staging in the plan: the time and cost of bringing the workload's data to each option, before training.

Only when the workload says where its data is (`data.source`): the path model is catalog/data_paths.py
(the same one `gpuwise launch` uses, so both show the same figure). The time is added to the option's
time to result (the data must arrive before training starts); the egress cost is shown on its own line,
in the plan's currency, and is not part of the run cost the decision compares.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuwise.catalog import data_paths
from gpuwise.catalog.offers import find_offer
from gpuwise.i18n import msg
from gpuwise.plan import currency
from gpuwise.plan.options import OptionRow
from gpuwise.plan.workload import DataSpec


@dataclass
class Staging:
    path: str  # data_paths.PathKind
    gbps: float | None
    hours: float | None
    cost: float | None  # in `currency`
    currency: str | None
    bound: str
    cost_source: str
    assumption: bool
    comparison: str = ""

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "gbps": self.gbps,
            "hours": None if self.hours is None else round(self.hours, 4),
            "cost": None if self.cost is None else round(self.cost, 2),
            "currency": self.currency,
            "bound": self.bound,
            "cost_source": self.cost_source,
            "assumption": self.assumption,
            "comparison": self.comparison,
        }


def source_of(data: DataSpec) -> data_paths.Source | None:
    if not data.source:
        return None
    return data_paths.Source(
        data_paths.kind_of(data.source), data_paths.scheme_of(data.source), data.region,
        data.link_gbps, data.dedicated_line_gbps,
    )  # fmt: skip


def _network(row: OptionRow) -> tuple[float | None, str | None]:
    """The offer's catalogued network and fabric, looked up as `gpuwise launch --plan` does."""
    if row.kind != "cloud" or not row.instance_type:
        return None, None
    found = [o for o in find_offer(row.instance_type) if o.provider == row.provider]
    return (found[0].network_gbps, found[0].fabric) if found else (None, None)


def stage(
    data: DataSpec, row: OptionRow, nodes: int, plan_ccy: str, rates: dict[str, float]
) -> Staging | None:
    """The move of `data` to `row` at `nodes` nodes, or None when nothing moves (no source, or on-site data
    on your own build)."""
    src = source_of(data)
    if src is None or (row.kind == "onprem" and src.kind != "object-store"):
        return None
    tgt = data_paths.Target(row.provider, row.region, nodes, *_network(row))
    move = data_paths.move(int(data.size_gb * 1e9), src, tgt)
    p = move.chosen
    cost, ccy, cost_source = p.cost(move.size_bytes), p.currency, p.cost_source
    if cost == 0.0:
        ccy = plan_ccy
    elif cost is not None and ccy and ccy.upper() != plan_ccy:
        rate = currency.conversion(ccy, plan_ccy, rates)
        if rate is not None:
            cost, ccy = cost * rate.value, plan_ccy
            cost_source = msg("{source}; {rate}").format(source=cost_source, rate=currency.describe(rate))
    return Staging(p.path, p.gbps, p.hours, cost, ccy, p.bound, cost_source, p.assumption, move.note)


def for_rows(
    data: DataSpec, rows: list[OptionRow], chosen: np.ndarray, nodes: np.ndarray, plan_ccy: str,
    rates: dict[str, float],
) -> list[Staging | None]:  # fmt: skip
    """One staging per option row, at the row's chosen node count (its first node count when none)."""
    return [stage(data, r, int(nodes[max(int(chosen[o]), 0)]), plan_ccy, rates) for o, r in enumerate(rows)]
