"""Every option evaluated at every node count: the numbers the decision is made from.

`planner.make_plan` builds an `Evaluation`, `decide.decide(evaluation)` turns it into a `Decision`, and
the `Plan` the renderers read is the evaluation with its decision. Arrays are (O, K): option × node count.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpuwise.plan import commitments
from gpuwise.plan.calibrate import Calibration
from gpuwise.plan.defaults import PlanDefaults
from gpuwise.plan.options import OptionRow, UnpricedOffer
from gpuwise.plan.perf import PerfResult
from gpuwise.plan.region import Exclusion
from gpuwise.plan.staging import Staging
from gpuwise.plan.workload import Workload


@dataclass
class Evaluation:
    workload: Workload
    workload_path: str
    rows: list[OptionRow]
    nodes: np.ndarray  # (K,)
    perf: PerfResult
    run_cost: np.ndarray  # (O, K) at the org's utilisation, plan currency (NaN: no exchange rate)
    run_cost_low: np.ndarray  # (O, K) with every on-prem input at its low-cost end (cloud: = run_cost)
    run_cost_high: np.ndarray  # (O, K) with every on-prem input at its high-cost end
    year_cost: np.ndarray  # (O, K)
    eff_gpu_hour_cost: np.ndarray  # (O, K)
    chosen: np.ndarray  # (O,) index into nodes, -1 = nothing feasible
    currency: str
    convertible: np.ndarray  # (O,) bool: the price converts to the plan currency
    calibration: Calibration | None
    defaults: PlanDefaults
    blocked: np.ndarray  # (O, K) commitments.* flags: cannot be bought for this run (0 = can)
    billed_hours: np.ndarray  # (O, K) hours paid for (whole blocks where a provider sells blocks)
    unpriced: list[UnpricedOffer] = field(default_factory=list)
    cloud_compared: bool = True  # False: the options file left the cloud out (cloud.include: false)
    builds_compared: bool = True  # False: the options file gave `onprem: []`  # matched offers with no price
    shown: list[int] = field(default_factory=list)  # row indices worth showing, best first
    notes: list[str] = field(default_factory=list)
    excluded: list[Exclusion] = field(default_factory=list)  # options the org cannot buy, with reasons
    # (low, high) scaling efficiency at the ends of each option's network achieved-fraction range, (O, K)
    efficiency_range: tuple[np.ndarray, np.ndarray] | None = None
    # (O,) the data set's move to each option before training (plan/staging.py); empty: nothing moves
    staging: list[Staging | None] = field(default_factory=list)

    def staging_hours(self, o: int) -> float:
        """Hours to bring the data to row `o` before training (0 when nothing moves or the time is unknown)."""
        s = self.staging[o] if o < len(self.staging) else None
        return s.hours if s is not None and s.hours is not None else 0.0

    def efficiency_bounds(self, o: int, k: int) -> tuple[float, float] | None:
        """(low, high) efficiency for one cell when the network range moves it by a point or more."""
        if self.efficiency_range is None:
            return None
        low, high = (float(e[o, k]) for e in self.efficiency_range)
        return (low, high) if high - low >= 0.01 else None

    def hours(self, o: int, k: int) -> float:
        return float(self.perf.time_to_train_s[o, k] / 3600.0)

    def days_to_result(self, o: int) -> float:
        """Lead time + data staging + training days of row `o` at its chosen node count (inf: nothing feasible)."""
        k = int(self.chosen[o])
        if k < 0:
            return float("inf")
        return self.rows[o].lead_time_days + (self.staging_hours(o) + self.hours(o, k)) / 24.0

    def meets_deadline(self, o: int) -> bool:
        """No deadline, or row `o` at its chosen node count delivers within it (lead time included)."""
        deadline = self.workload.deadline_days
        return deadline is None or self.days_to_result(o) <= deadline

    def feasible(self, o: int, k: int) -> bool:
        """Can run (perf model) and can be bought for this run (commitments)."""
        return self.perf.infeasible[o, k] == 0 and self.blocked[o, k] == 0

    def short_reasons(self, o: int, k: int) -> list[str]:
        return self.perf.short_reasons(o, k) + commitments.short_reasons(int(self.blocked[o, k]))

    def reasons(self, o: int, k: int) -> list[str]:
        return self.perf.reasons(o, k) + commitments.reasons(int(self.blocked[o, k]))
