"""Change points and slow windows of one metric's series, and the context signals that moved with them.

Method: PELT (Killick, Fearnhead and Eckley, "Optimal detection of changepoints with a linear
computational cost", JASA 2012, https://doi.org/10.1080/01621459.2012.737745) as implemented by
ruptures (Truong, Oudre and Vayatis, "Selective review of offline change point detection methods",
Signal Processing 2020, https://doi.org/10.1016/j.sigpro.2019.107299) with its L1 cost (deviation
from each segment's median, robust to single outliers). The series is first divided by its robust
noise scale (MAD of first differences / sqrt 2, insensitive to level shifts), so one penalty,
`pelt_penalty_per_log_n * ln n`, fits every metric and unit.

A segment is a slow window when it is worse than the baseline (the longest segment: the machine's
usual state) by at least `window_min_change`, and its median differs from the baseline by at least
`window_min_z` standard errors (robust sigma of the baseline segment * sqrt(pi/2) / sqrt(length));
adjacent slow segments merge when their medians are within `window_min_change` of the baseline of each
other (one slow state that PELT split); a step between two slow levels (a hog, then a noisy neighbour)
stays two windows, each with its own context. For each window, each context signal's median inside is compared with
its median outside; it "moved with" the window when the difference goes the way that explains a
slowdown (steal up, throttled time up, clock down...) by at least `context_min_z` robust standard
deviations of its outside values and by its floor (context.SLOWDOWN_DIRECTION).
"""

from __future__ import annotations

import math

import numpy as np

from gpuwise.i18n import msg
from gpuwise.stability.context import SLOWDOWN_DIRECTION
from gpuwise.stability.model import ContextMove, Window
from gpuwise.stability.stats import MAD_TO_SIGMA, robust_sigma

SQRT_HALF_PI = math.sqrt(math.pi / 2)  # the median's standard error over the mean's, for normal noise


def noise_scale(x: np.ndarray) -> float:
    """Robust noise sigma from first differences (a level shift moves only one difference)."""
    if x.size < 3:
        return 0.0
    d = np.diff(x)
    return float(MAD_TO_SIGMA * np.median(np.abs(d - np.median(d))) / math.sqrt(2.0))


def require_ruptures():
    """Import ruptures or raise MissingDependencyError with the install command."""
    try:
        import ruptures
    except ImportError:
        from gpuwise.errors import MissingDependencyError

        raise MissingDependencyError(
            msg("ruptures (PELT change points) is not installed"), msg("pip install 'gpuwise[stability]'")
        ) from None
    return ruptures


def breakpoints(x: np.ndarray, penalty_per_log_n: float, min_size: int = 2) -> list[int]:
    """Segment end indices (exclusive), the last one len(x), as ruptures returns them."""
    n = x.size
    if n < 2 * min_size + 1:
        return [n]
    ruptures = require_ruptures()
    scale = noise_scale(x) or robust_sigma(x) or (abs(float(np.median(x))) * 1e-3) or 1.0
    z = ((x - np.median(x)) / scale).reshape(-1, 1)
    algo = ruptures.Pelt(model="l1", min_size=min_size, jump=1).fit(z)
    return list(algo.predict(pen=penalty_per_log_n * math.log(n)))


def _z(shift: float, sigma: float, m: int) -> float:
    """A segment's shift in standard errors of its median (sqrt(pi/2) * sigma / sqrt(m) for normal noise)."""
    return shift / (SQRT_HALF_PI * sigma / math.sqrt(max(m, 1)))


def slow_windows(
    t: list[float],
    x: list[float],
    higher_is_better: bool,
    durations: list[float],
    settings: dict,
) -> list[tuple[int, int, Window]]:
    """(first index, last index exclusive, Window) for each slow stretch; context not filled yet.
    `durations`: how long each sample's probes ran. A window starts halfway between the end of the last
    good sample and the start of the first slow one, and ends halfway between the end of the last slow
    sample and the start of the next good one (a slowed round can last longer than the interval)."""
    xs = np.asarray(x, dtype=float)
    if xs.size < 5:
        return []
    ends = breakpoints(xs, float(settings["pelt_penalty_per_log_n"]))
    segments = list(zip([0, *ends[:-1]], ends, strict=True))
    base_a, base_b = max(segments, key=lambda s: s[1] - s[0])
    baseline = float(np.median(xs[base_a:base_b]))
    sigma = max(robust_sigma(xs[base_a:base_b]), noise_scale(xs), abs(baseline) * 1e-3)
    slow = []
    for a, b in segments:
        med = float(np.median(xs[a:b]))
        worse = (baseline - med) if higher_is_better else (med - baseline)
        change = worse / abs(baseline) if baseline else 0.0
        if change >= float(settings["window_min_change"]) and _z(worse, sigma, b - a) >= float(
            settings["window_min_z"]
        ):
            slow.append((a, b))
    same_level = float(settings["window_min_change"]) * abs(baseline)
    merged: list[tuple[int, int]] = []
    for a, b in slow:
        if (
            merged
            and merged[-1][1] == a
            and abs(float(np.median(xs[merged[-1][0] : a])) - float(np.median(xs[a:b]))) < same_level
        ):
            merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    out = []
    for a, b in merged:
        med = float(np.median(xs[a:b]))
        worse = (baseline - med) if higher_is_better else (med - baseline)
        window = Window(
            start_s=round((t[a - 1] + durations[a - 1] + t[a]) / 2 if a > 0 else t[a], 3),
            end_s=round(
                (t[b - 1] + durations[b - 1] + t[b]) / 2 if b < xs.size else t[b - 1] + durations[b - 1], 3
            ),
            median=med,
            baseline=baseline,
            change=worse / abs(baseline) if baseline else 0.0,
            z=round(_z(worse, sigma, b - a), 2),
        )
        out.append((a, b, window))
    return out


def context_moves(contexts: list[dict[str, float | None]], inside: range, min_z: float) -> list[ContextMove]:
    """The context signals whose inside-window median moved the slowdown's way; strongest first."""
    moves = []
    for signal, (direction, floor) in SLOWDOWN_DIRECTION.items():
        ins = [c.get(signal) for i, c in enumerate(contexts) if i in inside]
        outs = [c.get(signal) for i, c in enumerate(contexts) if i not in inside]
        ins = [v for v in ins if v is not None]
        outs = [v for v in outs if v is not None]
        if len(ins) < 1 or len(outs) < 2:
            continue
        m_in, m_out = float(np.median(ins)), float(np.median(outs))
        moved = (m_in - m_out) * direction
        spread = max(robust_sigma(outs), floor / min_z)
        z = moved / spread
        if moved >= floor and z >= min_z:
            moves.append(ContextMove(signal=signal, inside=m_in, outside=m_out, z=round(z, 2)))
    return sorted(moves, key=lambda m: -m.z)
