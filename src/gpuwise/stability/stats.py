"""Per-metric statistics of a stability run: median, p5/p95/p99, cv with a bootstrap confidence
interval, and a robust cv (1.4826 * MAD / median, the MAD scaled to a normal's standard deviation:
Rousseeuw and Croux 1993, https://doi.org/10.1080/01621459.1993.10476408)."""

from __future__ import annotations

import numpy as np

from gpuwise.stability.model import Summary

MAD_TO_SIGMA = 1.4826


def robust_sigma(values) -> float:
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return 0.0
    return float(MAD_TO_SIGMA * np.median(np.abs(x - np.median(x))))


def cv_of(x: np.ndarray) -> float | None:
    mean = float(np.mean(x))
    if x.size < 2 or mean == 0:
        return None
    return float(np.std(x, ddof=1) / abs(mean))


def bootstrap_cv_ci(x: np.ndarray, resamples: int, level: float, seed: int) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the cv (resampling the samples with replacement)."""
    if x.size < 3 or float(np.mean(x)) == 0:
        return None
    rng = np.random.default_rng(seed)
    draws = x[rng.integers(0, x.size, size=(resamples, x.size))]
    means = draws.mean(axis=1)
    cvs = draws.std(axis=1, ddof=1) / np.abs(np.where(means == 0, np.nan, means))
    cvs = cvs[np.isfinite(cvs)]
    if cvs.size == 0:
        return None
    alpha = (1.0 - level) / 2.0
    return float(np.quantile(cvs, alpha)), float(np.quantile(cvs, 1.0 - alpha))


def summarize(values: list[float], bootstrap: dict) -> Summary:
    x = np.asarray([v for v in values if v is not None and np.isfinite(v)], dtype=float)
    if x.size == 0:
        return Summary(n=0)
    median = float(np.median(x))
    p5, p95, p99 = (float(np.quantile(x, q)) for q in (0.05, 0.95, 0.99))
    return Summary(
        n=int(x.size),
        median=median,
        p5=p5,
        p95=p95,
        p99=p99,
        mean=float(np.mean(x)),
        cv=cv_of(x),
        cv_ci=bootstrap_cv_ci(
            x, int(bootstrap["resamples"]), float(bootstrap["level"]), int(bootstrap["seed"])
        ),
        robust_cv=robust_sigma(x) / abs(median) if median else None,
    )
