"""Regressions: is a metric of a new run worse than the same host's recent runs, beyond the noise?

For each metric, the baseline is the median of the last BASELINE_RUNS recorded values on the host.
A change is a regression when all three hold (for throughputs; mirrored for latencies):
  1. it is beyond the run-to-run noise: the drop is larger than the spread between the past medians
     (max - min over their median), which we only know from two past runs on;
  2. it is beyond the within-run noise: even the best repeat of the new run is below the baseline
     (the stored min/max of each run), so a few slow repeats cannot cause it;
  3. it is at least MIN_CHANGE, a reporting floor (a gpuwise policy, not a measured threshold): with
     tight repeats and one past run, 1. and 2. alone would flag a 0.5% dip.
What changed in the facts between the newest past run and the new one (driver, torch, ...) is
named, since that is usually the cause.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from gpuwise.i18n import _
from gpuwise.store.history import Metric, Run

BASELINE_RUNS = 5
MIN_CHANGE = 0.03
LOWER_IS_BETTER_UNITS = {"ns", "us", "µs", "ms", "s"}


@dataclass
class Regression:
    metric: str
    unit: str
    baseline: float  # median of the past values
    value: float
    change: float  # signed fraction; negative = worse for a throughput
    since: str  # created_at of the newest past run
    runs: int  # past runs compared with
    fact_changes: list[str]

    def sentence(self) -> str:
        values = {
            "metric": self.metric,
            "pct": f"{abs(self.change) * 100:.1f}%",
            "since": self.since[:10],
            "before": f"{self.baseline:.4g}",
            "after": f"{self.value:.4g}",
            "unit": self.unit,
            "runs": self.runs,
        }
        text = (
            _("{metric} down {pct} since {since} ({before} → {after} {unit}, median of {runs} past run(s))")
            if self.change < 0
            else _(
                "{metric} up {pct} since {since} ({before} → {after} {unit}, median of {runs} past run(s))"
            )
        ).format(**values)
        if self.fact_changes:
            text += _("; changed in between: {changes}").format(changes=", ".join(self.fact_changes))
        return text


def fact_changes(before: dict, after: dict) -> list[str]:
    """'torch 2.11.0 → 2.12.0' for every fact that differs (added or removed ones too)."""
    out = []
    for key in sorted(set(before) | set(after)):
        if before.get(key) != after.get(key):
            out.append(f"{key} {_short(before.get(key))} → {_short(after.get(key))}")
    return out


def _short(value) -> str:
    text = "—" if value is None else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def find_regressions(current: list[Metric], facts: dict, past: list[Run]) -> list[Regression]:
    """Regressions of `current` (a new run's metrics, with `facts`) against `past` runs of the same
    host and kind, newest first."""
    past = past[:BASELINE_RUNS]
    if not past:
        return []
    changes = fact_changes(past[0].facts, facts)
    found = []
    for metric in current:
        history = [m for run in past for m in run.metrics if m.name == metric.name]
        if not history:
            continue
        medians = [m.value for m in history]
        baseline = statistics.median(medians)
        if baseline == 0:
            continue
        sign = -1.0 if metric.unit in LOWER_IS_BETTER_UNITS else 1.0
        worse = sign * (baseline - metric.value) / abs(baseline)  # > 0: worse than usual
        between = (max(medians) - min(medians)) / abs(baseline) if len(medians) > 1 else 0.0
        best_repeat = metric.high if sign > 0 else metric.low
        best_repeat = metric.value if best_repeat is None else best_repeat
        beyond_repeats = sign * (baseline - best_repeat) > 0
        if worse > max(MIN_CHANGE, between) and beyond_repeats:
            found.append(
                Regression(
                    metric=metric.name,
                    unit=metric.unit,
                    baseline=baseline,
                    value=metric.value,
                    change=(metric.value - baseline) / abs(baseline),
                    since=past[0].created_at,
                    runs=len(medians),
                    fact_changes=changes,
                )
            )
    return found
