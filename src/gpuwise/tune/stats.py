"""Throughput with a bootstrap noise interval, speedup against the baseline, and the numerics guard.

Throughput is samples x steps / their total time (what an epoch sees; a median step would overstate a
bursty loader, whose workers deliver batches in clumps). Its interval is a percentile bootstrap of the
mean step time; a speedup's interval bootstraps both sides independently. A setting wins only when its gain clears the noise:
the lower end of its 95 % speedup interval is above 1 + max(5 %, the drift between the two baseline
runs) — DeepSpeed Autotuning's 5 % threshold, applied to the interval's lower bound. (A rule on the
interval's width would reject clear wins whose interval is skewed: a loader with workers delivers some
batches in ~0 s, which stretches the upper end, not the lower one.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

BOOTSTRAP = 2000
CONFIDENCE = 0.95
MIN_GAIN = 0.05  # DeepSpeed Autotuning METRIC_PERCENT_DIFF_CONST
# loss tolerance (relative, max over the guard steps) per declared numerics effect
GUARD_TOLERANCE = {"none": 1e-4, "rounding": 1e-3, "precision": 5e-2, "optimisation": 5e-2}


@dataclass(frozen=True)
class Throughput:
    samples_per_s: float
    low: float
    high: float
    steps: int

    @property
    def noise(self) -> float:
        """Half-width of the interval relative to the value."""
        return (self.high - self.low) / 2 / self.samples_per_s if self.samples_per_s else math.inf


def _means(seconds: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    picks = rng.integers(0, len(seconds), size=(BOOTSTRAP, len(seconds)))
    return np.mean(seconds[picks], axis=1)


def throughput(seconds: list[float], samples: int, seed: int = 0) -> Throughput:
    arr = np.asarray(seconds, dtype=float)
    if arr.size == 0:
        raise ValueError("no timed steps")
    mean = float(np.mean(arr))
    boot = samples / _means(arr, np.random.default_rng(seed))
    lo, hi = np.quantile(boot, [(1 - CONFIDENCE) / 2, (1 + CONFIDENCE) / 2])
    return Throughput(samples / mean, float(lo), float(hi), int(arr.size))


@dataclass(frozen=True)
class Speedup:
    value: float
    low: float
    high: float

    @property
    def noise(self) -> float:
        """Relative standard error: the 95 % interval's half-width / 1.96, over the value."""
        return (self.high - self.low) / 2 / 1.96 / self.value if self.value else math.inf


def speedup(candidate_s: list[float], baseline_s: list[float], seed: int = 0) -> Speedup:
    """Baseline mean step time / candidate mean step time, with a bootstrap interval."""
    rng = np.random.default_rng(seed)
    cand, base = np.asarray(candidate_s, float), np.asarray(baseline_s, float)
    ratio = _means(base, rng) / _means(cand, rng)
    lo, hi = np.quantile(ratio, [(1 - CONFIDENCE) / 2, (1 + CONFIDENCE) / 2])
    return Speedup(float(np.mean(base) / np.mean(cand)), float(lo), float(hi))


def required_gain(s: Speedup, drift: float) -> float:
    """The gain the interval's lower end must clear: the worthwhile minimum, or the baseline's own drift."""
    return max(MIN_GAIN, drift)


def beats_baseline(s: Speedup, drift: float) -> bool:
    """The gain is real: the 95 % interval's lower end clears max(5 %, baseline drift)."""
    return s.low - 1.0 > required_gain(s, drift)


def drift(first_s: list[float], second_s: list[float]) -> float:
    """Relative change of the baseline's mean step time between its two runs."""
    a, b = float(np.mean(first_s)), float(np.mean(second_s))
    return abs(a - b) / min(a, b) if min(a, b) > 0 else math.inf


@dataclass(frozen=True)
class Guard:
    max_rel_diff: float
    tolerance: float
    steps: int

    @property
    def ok(self) -> bool:
        return self.max_rel_diff <= self.tolerance


def numerics_guard(losses: list[float], baseline_losses: list[float], effect: str, k: int) -> Guard:
    """Compare the first k losses with the baseline's on the same seed and data."""
    n = min(k, len(losses), len(baseline_losses))
    diffs = [
        abs(a - b) / max(abs(b), 1e-12) if math.isfinite(a) else math.inf
        for a, b in zip(losses[:n], baseline_losses[:n], strict=True)
    ]
    return Guard(max(diffs) if diffs else math.inf, GUARD_TOLERANCE[effect], n)
