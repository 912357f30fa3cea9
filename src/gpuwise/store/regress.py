"""Regressions: is a metric of a new run worse than the same series' recent runs, beyond the noise?

A series is the runs of one host, GPU model and origin (live or replay, store/identity.py): a bench
of another machine never becomes this machine's baseline. The numbers below are rows of
data/regress.yaml, each with its source.

For each metric, with the newest `baseline_runs` past values of the series:
  0. under `min_past_runs` past values there is no judgement: "not enough history (N of 3 runs)";
  1. the baseline is their median, the noise bound `noise_k` × `mad_to_sigma` × MAD (median absolute
     deviation from that median): beyond it the new value is an outlier of the past runs (Leys et al.
     2013, k = 3, the conservative choice);
  2. it is beyond the within-run noise: even the best repeat of the new run is worse than the baseline
     (the stored min/max of each run), so a few slow repeats cannot cause it;
  3. it is at least `min_change` of the baseline, a reporting floor: past runs that agree closely
     have a MAD near 0.
Throughputs regress downwards, times (LOWER_IS_BETTER_UNITS) upwards. What changed in the facts
between the newest past run and the new one (driver, torch, ...) is named, since that is usually
the cause.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from functools import lru_cache

from gpuwise.i18n import joined, msg
from gpuwise.store.history import Metric, Run
from gpuwise.thresholds import load_thresholds

LOWER_IS_BETTER_UNITS = {"ns", "us", "µs", "ms", "s"}


@lru_cache(maxsize=1)
def thresholds() -> dict[str, float]:
    return {k: float(t.value) for k, t in load_thresholds("gpuwise.store", "data/regress.yaml").items()}


def lower_is_better(unit: str) -> bool:
    return unit in LOWER_IS_BETTER_UNITS


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
    noise: float = 0.0  # the bound: k x 1.4826 x MAD of the past values, in the metric's unit

    def sentence(self) -> str:
        values = {
            "metric": self.metric,
            "pct": f"{abs(self.change) * 100:.1f}%",
            "since": self.since[:10],
            "before": f"{self.baseline:.4g}",
            "after": f"{self.value:.4g}",
            "unit": self.unit,
            "runs": self.runs,
            "noise": f"{self.noise:.2g}" if self.noise < 100 else f"{self.noise:.0f}",
            "k": f"{thresholds()['noise_k']:g}",
        }
        text = (
            msg(
                "{metric} down {pct} since {since} ({before} → {after} {unit}; median of {runs} past runs, "
                "noise bound ±{noise} = {k} × 1.4826 × MAD)"
            )
            if self.change < 0
            else msg(
                "{metric} up {pct} since {since} ({before} → {after} {unit}; median of {runs} past runs, "
                "noise bound ±{noise} = {k} × 1.4826 × MAD)"
            )
        ).format(**values)
        if self.fact_changes:
            text += msg("; changed in between: {changes}").format(changes=joined(", ", self.fact_changes))
        return text


@dataclass
class Check:
    """What the regression check found: the regressions, and the metrics it could not judge with the
    number of past values each had (fewer than min_past_runs)."""

    regressions: list[Regression] = field(default_factory=list)
    too_short: dict[str, int] = field(default_factory=dict)

    def not_enough_history(self) -> str | None:
        """One sentence when some metric could not be judged, with the fewest past runs any had."""
        if not self.too_short:
            return None
        return msg(
            "not enough history ({n} of {need} runs) to judge {count} metric(s) for regressions"
        ).format(
            n=min(self.too_short.values()), need=int(thresholds()["min_past_runs"]), count=len(self.too_short)
        )


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


def check(current: list[Metric], facts: dict, past: list[Run]) -> Check:
    """Judge `current` (a new run's metrics, with `facts`) against `past` runs of the same series
    (host, GPU model, origin) and kind, newest first."""
    t = thresholds()
    past = past[: int(t["baseline_runs"])]
    changes = fact_changes(past[0].facts, facts) if past else []
    out = Check()
    for metric in current:
        values = [m.value for run in past for m in run.metrics if m.name == metric.name]
        if len(values) < t["min_past_runs"]:
            out.too_short[metric.name] = len(values)
            continue
        baseline = statistics.median(values)
        if baseline == 0:
            continue
        mad = statistics.median(abs(v - baseline) for v in values)
        noise = t["noise_k"] * t["mad_to_sigma"] * mad
        sign = -1.0 if lower_is_better(metric.unit) else 1.0
        worse = sign * (baseline - metric.value)  # > 0: worse than usual, in the metric's unit
        best_repeat = metric.high if sign > 0 else metric.low
        best_repeat = metric.value if best_repeat is None else best_repeat
        beyond_repeats = sign * (baseline - best_repeat) > 0
        if worse > noise and worse / abs(baseline) > t["min_change"] and beyond_repeats:
            out.regressions.append(
                Regression(
                    metric=metric.name,
                    unit=metric.unit,
                    baseline=baseline,
                    value=metric.value,
                    change=(metric.value - baseline) / abs(baseline),
                    since=past[0].created_at,
                    runs=len(values),
                    fact_changes=changes,
                    noise=noise,
                )
            )
    return out


def find_regressions(current: list[Metric], facts: dict, past: list[Run]) -> list[Regression]:
    """The regressions of check() alone."""
    return check(current, facts, past).regressions
