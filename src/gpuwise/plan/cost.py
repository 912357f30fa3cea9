"""Cost model: on-prem TCO per node, cloud cost per run and per year, break-even points.

Standard formulas (any engineering-economics text; e.g. https://en.wikipedia.org/wiki/Capital_recovery_factor):

* capital recovery factor   CRF(r, L) = r(1+r)^L / ((1+r)^L − 1); straight line (capex − residual)/L when r = 0
* owned annual cost         capex·CRF + power·load·PUE·8760·$/kWh + colocation + staff + support
                            (capex = server + compute fabric + management network + storage, plus spares)
* break-even utilisation    U* = owned annual cost · T_own / (8760 · p_cloud · N_cloud · T_cloud)
* break-even months         m* = capex / (monthly cloud cost for the same work − monthly opex)

Utilisation: a fleet that is owned or reserved is sized for peak demand, so it is busy at most
average/peak of the time: effective utilisation = min(utilisation, 1 / burstiness). On-demand and
spot capacity is paid only while used.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

HOURS_PER_YEAR = 8760.0


def capital_recovery_factor(rate: float, years: float) -> float:
    """Annual payment per unit of capital over `years` at interest `rate` (1/years when rate is 0)."""
    if years <= 0:
        raise ValueError("lifetime must be positive")
    if rate <= 0:
        return 1.0 / years
    growth = (1.0 + rate) ** years
    return rate * growth / (growth - 1.0)


@dataclass(frozen=True)
class OnpremCostInputs:
    """Per-node TCO inputs for one on-prem build (catalog defaults, overridable in the options file)."""

    server_price_per_node: float
    network_cost_per_node: float  # the compute fabric (InfiniBand / RoCE)
    storage_cost_per_node: float
    spares_fraction: float
    power_kw_per_node: float
    load_fraction: float
    pue: float
    electricity_per_kwh: float
    colo_per_kw_month: float
    staff_per_year: float  # whole cluster (FTE × loaded cost), not per node
    support_fraction_per_year: float
    lifetime_years: float
    interest_rate: float
    residual_fraction: float  # recovered at the end of `lifetime_years`
    currency: str = "USD"
    management_network_per_node: float = 0.0  # front-end and out-of-band Ethernet
    staff_per_node_year: float = 0.0  # FTE per node × loaded cost (the default; staff_per_year replaces it)
    support_per_node_year: float = (
        0.0  # support subscriptions per node (support_fraction_per_year adds to it)
    )

    def capex_per_node(self) -> float:
        parts = (
            self.server_price_per_node,
            self.network_cost_per_node,
            self.management_network_per_node,
            self.storage_cost_per_node,
        )
        return sum(parts) * (1.0 + self.spares_fraction)

    def capital_per_year(self) -> float:
        """Capex recovered per year; the residual value is credited at end of life (present value when r > 0)."""
        capex = self.capex_per_node()
        residual = capex * self.residual_fraction
        r, life = self.interest_rate, self.lifetime_years
        residual_pv = residual / (1.0 + r) ** life if r > 0 else residual
        return (capex - residual_pv) * capital_recovery_factor(r, life)

    def opex_per_year(self) -> dict[str, float]:
        kw = self.power_kw_per_node
        return {
            "power": kw * self.load_fraction * self.pue * HOURS_PER_YEAR * self.electricity_per_kwh,
            "colocation": kw * self.colo_per_kw_month * 12.0,
            "support": self.capex_per_node() * self.support_fraction_per_year + self.support_per_node_year,
            "staff": self.staff_per_node_year,
        }

    def annual_per_node(self) -> float:
        """Capital + per-node opex per year; cluster-wide staff is separate (`staff_per_year`)."""
        return self.capital_per_year() + sum(self.opex_per_year().values())

    def breakdown(self) -> dict[str, float]:
        out = {"capex_per_node": self.capex_per_node(), "capital_per_node_year": self.capital_per_year()}
        out.update({f"{k}_per_node_year": v for k, v in self.opex_per_year().items()})
        out["annual_per_node"] = self.annual_per_node()
        out["staff_per_year"] = self.staff_per_year
        return out

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class CostArrays:
    """Per option, shape (O,). Cloud rows have node_hour_price; owned rows have annual_per_node."""

    node_hour_price: np.ndarray  # NaN for owned
    pays_idle: np.ndarray  # 1 for reserved and owned
    annual_per_node: np.ndarray  # NaN for cloud
    fixed_per_year: np.ndarray  # cluster-wide yearly cost (staff); 0 for cloud
    capex_per_node: np.ndarray  # NaN for cloud
    opex_per_node_year: np.ndarray  # NaN for cloud
    currency_factor: np.ndarray  # to the plan currency; NaN = no exchange rate


def effective_utilisation(utilisation, burstiness) -> np.ndarray:
    return np.minimum(np.asarray(utilisation, dtype=float), 1.0 / float(burstiness))


def cost_per_run(c: CostArrays, nodes, time_to_train_h, utilisation, burstiness: float) -> np.ndarray:
    """Cost of one training run in the plan currency. Shapes: c (O,), nodes (K,), ttt (O,K), utilisation (U,)
    -> (O, K, U). Idle capacity of reserved/owned fleets is charged to the runs that use it."""
    n = np.asarray(nodes, dtype=float)[None, :, None]
    t = np.asarray(time_to_train_h, dtype=float)[:, :, None]
    u_eff = effective_utilisation(utilisation, burstiness)[None, None, :]
    price = c.node_hour_price[:, None, None]
    idle = c.pays_idle[:, None, None] > 0
    fx = c.currency_factor[:, None, None]
    cloud = price * n * t * np.where(idle, 1.0 / u_eff, 1.0)
    owned = (
        (c.annual_per_node[:, None, None] * n + c.fixed_per_year[:, None, None])
        * t
        / (HOURS_PER_YEAR * u_eff)
    )
    return np.where(np.isnan(price), owned, cloud) * fx


def cost_per_year(c: CostArrays, nodes, utilisation, burstiness: float) -> np.ndarray:
    """Yearly cost of a fleet of `nodes` nodes busy `utilisation` of the time. -> (O, K, U)."""
    n = np.asarray(nodes, dtype=float)[None, :, None]
    u_eff = effective_utilisation(utilisation, burstiness)[None, None, :]
    price = c.node_hour_price[:, None, None]
    idle = c.pays_idle[:, None, None] > 0
    cloud = price * n * HOURS_PER_YEAR * np.where(idle, 1.0, u_eff)
    owned = c.annual_per_node[:, None, None] * n + c.fixed_per_year[:, None, None] + 0.0 * u_eff
    return np.where(np.isnan(price), owned, cloud) * c.currency_factor[:, None, None]


def cost_per_effective_gpu_hour(
    c: CostArrays, nodes, gpus_per_node, efficiency, utilisation, burstiness: float
) -> np.ndarray:
    """Yearly cost / useful GPU-hours (busy hours × scaling efficiency). -> (O, K, U)."""
    n = np.asarray(nodes, dtype=float)[None, :, None]
    u_eff = effective_utilisation(utilisation, burstiness)[None, None, :]
    gpu_hours = n * np.asarray(gpus_per_node, dtype=float)[:, None, None] * HOURS_PER_YEAR * u_eff
    return cost_per_year(c, nodes, utilisation, burstiness) / (gpu_hours * np.asarray(efficiency)[:, :, None])


def break_even_utilisation(owned_annual: float, owned_hours: float, cloud_run_cost: float) -> float:
    """Utilisation at which one owned run costs the same as one pay-as-you-go cloud run.

    `owned_annual` is the whole fleet's yearly cost (nodes × per-node + cluster-wide fixed)."""
    if not cloud_run_cost > 0:
        return float("nan")
    return owned_annual * owned_hours / (HOURS_PER_YEAR * cloud_run_cost)


def break_even_months(capex_total: float, opex_month: float, cloud_month_same_work: float) -> float:
    """Months until buying beats renting for a steady monthly workload; inf when it never does."""
    saving = cloud_month_same_work - opex_month
    return capex_total / saving if saving > 0 else float("inf")
