"""The noise rules: bootstrap intervals, when a speedup counts, and the numerics guard."""

from __future__ import annotations

import numpy as np

from gpuwise.tune import stats


def _steps(median: float, spread: float, n: int = 20, seed: int = 1) -> list[float]:
    return list(median * (1 + spread * np.random.default_rng(seed).standard_normal(n)))


def test_throughput_interval_brackets_the_value():
    tp = stats.throughput(_steps(0.1, 0.05), samples=32)
    assert tp.low < tp.samples_per_s < tp.high
    assert abs(tp.samples_per_s - 320) < 20


def test_a_clear_speedup_beats_the_baseline():
    s = stats.speedup(_steps(0.05, 0.05), _steps(0.1, 0.05, seed=2))
    assert 1.8 < s.value < 2.2 and s.low > 1.5
    assert stats.beats_baseline(s, drift=0.02)


def test_the_same_distribution_does_not_beat_the_baseline():
    s = stats.speedup(_steps(0.1, 0.2, seed=3), _steps(0.1, 0.2, seed=4))
    assert not stats.beats_baseline(s, drift=0.0)


def test_a_small_gain_under_the_baseline_drift_does_not_count():
    s = stats.speedup(_steps(0.09, 0.01, n=40), _steps(0.1, 0.01, n=40, seed=2))
    assert s.low > 1.0 and stats.beats_baseline(s, drift=0.0)
    assert not stats.beats_baseline(s, drift=0.2)  # the baseline itself moved 20 % between its runs


def test_numerics_guard_tolerance_follows_the_declared_effect():
    base = [2.30, 2.25, 2.20]
    assert stats.numerics_guard(base, base, "none", 3).ok
    drifted = [2.30, 2.27, 2.24]
    assert not stats.numerics_guard(drifted, base, "rounding", 3).ok
    assert stats.numerics_guard(drifted, base, "precision", 3).ok
    assert not stats.numerics_guard([float("nan")] * 3, base, "precision", 3).ok
