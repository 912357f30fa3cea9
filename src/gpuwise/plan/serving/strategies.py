"""Ways to buy serving capacity, each costed against a week of hourly demand.

For one node type with planned capacity C requests/s per node, demand D[h] needs n[h] = ceil(D[h]/C)
nodes. The strategies:
  autoscale      on-demand nodes follow n[h] (at least min_nodes); each scale-up arrives
                 scale_up_delay minutes late, so that hour is short for delay/60 of it;
  reserved+od    b reserved (1-year) nodes always on, on-demand bursts above them (the cheapest b
                 with at least one reserved node and one burst);
  reserved+spot  the same with spot bursts (where the catalog has a spot price);
  reserved-peak  reserved nodes for the year-end peak, always on;
  owned-peak     owned nodes for the year-end peak (capital + opex per month, staff once);
  hybrid         b owned nodes with on-demand cloud bursts of the cheapest cloud node type (the
                 cheapest b with at least one owned node and one burst).
Costs are averaged over the first year (demand × mean growth); fixed fleets are sized for the peak at
the end of the year. Each figure is a range over three capacity multipliers (low, typical, high cost):
the modelled capacity corrected by the model's smallest, median and largest error against published
maximum-throughput benchmarks (benchmarks.capacity_factors).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuwise.i18n import N_, cmsg, msg
from gpuwise.plan.serving.hardware import HOURS_PER_MONTH, Hardware
from gpuwise.plan.serving.traffic import HOURS_PER_WEEK, DemandWeek

WEEKS_PER_MONTH = HOURS_PER_MONTH / HOURS_PER_WEEK
SIDE = {"autoscale": "cloud", "reserved+od": "cloud", "reserved+spot": "cloud", "reserved-peak": "cloud",
        "owned-peak": "build", "hybrid": "hybrid"}  # fmt: skip
TITLES = {  # shown in the active language (Strategy.title); the JSON's "strategy" is the key
    "autoscale": N_("on-demand autoscaling"),
    "reserved+od": N_("reserved base + on-demand burst"),
    "reserved+spot": N_("reserved base + spot burst"),
    "reserved-peak": N_("reserved for the peak"),
    "owned-peak": N_("owned for the peak"),
    "hybrid": N_("owned base + cloud burst"),
}


def short_name(name: str) -> str:
    """A strategy's key as a chart legend shows it (its key in English)."""
    names = {
        "autoscale": cmsg("strategy", "autoscale"),
        "reserved+od": cmsg("strategy", "reserved+od"),
        "reserved+spot": cmsg("strategy", "reserved+spot"),
        "reserved-peak": cmsg("strategy", "reserved-peak"),
        "owned-peak": cmsg("strategy", "owned-peak"),
        "hybrid": cmsg("strategy", "hybrid"),
    }
    return names.get(name, name)


@dataclass
class Strategy:
    name: str  # a key of TITLES
    hardware: Hardware
    burst: Hardware | None  # the cloud node type bursts run on (hybrid), else None
    base_nodes: int
    peak_nodes: int
    cost_month: np.ndarray  # (3,) low, typical, high
    slo_attainment: float  # typical capacity: share of the week's hours that meet the target
    utilisation: float  # served demand / capacity paid for (typical)
    capacity_rps: np.ndarray  # (168,) typical capacity each hour, requests/s

    @property
    def side(self) -> str:
        return SIDE[self.name]

    @property
    def title(self) -> str:
        return msg(TITLES[self.name])


def _nodes(demand: np.ndarray, per_node: float) -> np.ndarray:
    return np.ceil(np.maximum(demand, 0.0) / per_node - 1e-9).astype(int)


def _late_share(nodes: np.ndarray, floor: int, delay_min: float) -> np.ndarray:
    """Per hour: the share of the hour that new nodes are still starting (0 when nothing is added)."""
    running = np.maximum(nodes, floor)
    previous = np.roll(running, 1)
    return np.where(running > previous, min(delay_min / 60.0, 1.0), 0.0)


@dataclass(frozen=True)
class Inputs:
    demand: DemandWeek
    min_nodes: int
    delay_min: float
    capacity_factors: tuple[float, float, float]  # multipliers of capacity: low, typical, high cost


def _week_cost(hw_price: float, nodes: np.ndarray) -> float:
    return float(nodes.sum() * hw_price)


def cost_strategies(hw: Hardware, burst: Hardware | None, x: Inputs) -> list[Strategy]:
    """Every strategy this node type supports, costed at the three capacity factors."""
    if not hw.capacity.feasible:
        return []
    mean_demand = x.demand.rps * x.demand.first_year_mean_growth()
    peak_demand = x.demand.peak * x.demand.growth_factor(12)
    names = (
        ["owned-peak", "hybrid"]
        if hw.kind == "owned"
        else ["autoscale", "reserved+od", "reserved+spot", "reserved-peak"]
    )
    out = []
    for name in names:
        costs, keep = [], None
        for factor in x.capacity_factors:
            result = _one(
                name, hw, burst, mean_demand, peak_demand, hw.capacity.planned_rps_per_node * factor, x
            )
            if result is None:
                break
            costs.append(result[0])
            if factor == x.capacity_factors[1]:
                keep = result
        if keep is None or len(costs) != 3:
            continue
        _cost, base, peak, slo, util, cap = keep
        out.append(
            Strategy(
                name, hw, burst if name == "hybrid" else None, base, peak, np.array(costs), slo, util, cap
            )
        )
    return out


def _one(name, hw: Hardware, burst: Hardware | None, demand, peak_demand, per_node, x: Inputs):
    """(monthly cost, base nodes, peak nodes, SLO attainment, utilisation, capacity per hour) or None."""
    need = _nodes(demand, per_node)
    peak_nodes = int(_nodes(np.array([peak_demand]), per_node)[0])
    served = float(demand.sum())
    if name == "autoscale":
        if hw.on_demand is None:
            return None
        running = np.maximum(need, x.min_nodes)
        late = _late_share(need, x.min_nodes, x.delay_min)
        cost = _week_cost(hw.on_demand, running) * WEEKS_PER_MONTH
        return (
            cost,
            x.min_nodes,
            int(running.max()),
            1.0 - float(late.mean()),
            served / (running.sum() * per_node),
            running * per_node,
        )
    if name in ("reserved+od", "reserved+spot"):
        burst_price = hw.on_demand if name == "reserved+od" else hw.spot
        if hw.reserved is None or burst_price is None:
            return None
        return _base_plus_burst(
            need, per_node, hw.reserved * HOURS_PER_WEEK, burst_price, x, served, peak_nodes
        )
    if name == "reserved-peak":
        if hw.reserved is None:
            return None
        running = np.full(HOURS_PER_WEEK, peak_nodes)
        cost = hw.reserved * HOURS_PER_MONTH * peak_nodes
        return (
            cost,
            peak_nodes,
            peak_nodes,
            _met(running, need),
            served / (running.sum() * per_node),
            running * per_node,
        )
    if name == "owned-peak":
        running = np.full(HOURS_PER_WEEK, peak_nodes)
        cost = hw.owned_per_month * peak_nodes + hw.staff_per_month
        return (
            cost,
            peak_nodes,
            peak_nodes,
            _met(running, need),
            served / (running.sum() * per_node),
            running * per_node,
        )
    if name == "hybrid":
        if burst is None or burst.on_demand is None or not burst.capacity.feasible:
            return None
        burst_per_node = burst.capacity.planned_rps_per_node * per_node / hw.capacity.planned_rps_per_node
        best = None
        for base in range(1, int(need.max())):  # a real hybrid: some owned nodes, some bursts
            rest = np.maximum(demand - base * per_node, 0.0)
            extra = _nodes(rest, burst_per_node)
            late = _late_share(extra, 0, x.delay_min)
            cost = hw.owned_per_month * base + (hw.staff_per_month if base else 0.0)
            cost += _week_cost(burst.on_demand, extra) * WEEKS_PER_MONTH
            cap = base * per_node + extra * burst_per_node
            if best is None or cost < best[0]:
                best = (
                    cost,
                    base,
                    int(base + extra.max()),
                    1.0 - float(late.mean()),
                    served / cap.sum(),
                    cap,
                )
        return best  # None when the peak needs a single node: nothing to split
    raise ValueError(name)


def _met(running: np.ndarray, need: np.ndarray) -> float:
    return float((running >= need).mean())


def _base_plus_burst(need, per_node, reserved_week_per_node, burst_price, x: Inputs, served, peak_nodes):
    best = None
    for base in range(1, int(need.max())):  # some reserved nodes, some bursts (else: autoscale, peak)
        extra = np.maximum(need - base, 0)
        late = _late_share(extra, 0, x.delay_min)
        week = base * reserved_week_per_node + _week_cost(burst_price, extra)
        running = base + extra
        if best is None or week < best[0]:
            best = (
                week,
                base,
                int(running.max()),
                1.0 - float(late.mean()),
                served / (running.sum() * per_node),
                running * per_node,
            )
    if best is None:
        return None
    cost, base, peak, slo, util, cap = best
    return cost * WEEKS_PER_MONTH, base, peak, slo, util, cap
