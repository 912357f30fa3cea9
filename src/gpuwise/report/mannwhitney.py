"""The two-sided Mann-Whitney U test (Wilcoxon rank-sum) of two small samples, for `gpuwise compare`.

Without ties and with at most EXACT_MAX values per side, the p-value is exact: the share of the
C(n1+n2, n1) equally likely rank splits whose U is at least as far from n1*n2/2 as the observed one
(the null distribution counted by the recurrence of Mann and Whitney 1947). With ties or more values,
the normal approximation with the tie-corrected variance and a continuity correction, as in
https://en.wikipedia.org/wiki/Mann%E2%80%93Whitney_U_test#Normal_approximation_and_tie_correction.
"""

from __future__ import annotations

import math
from collections import Counter
from functools import cache

EXACT_MAX = 20  # the exact table for 20 + 20 values: 441 (n1, n2) rows of at most 401 counts


def _ranks(values: list[float]) -> list[float]:
    """1-based ranks, ties given the mean of their ranks."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


@cache
def _counts(n1: int, n2: int) -> tuple[int, ...]:
    """How many rank splits of n1 + n2 values give U = 0, 1, ..., n1*n2 (no ties)."""
    if n1 == 0 or n2 == 0:
        return (1,)
    # the largest value is in the first sample (it then beats all n2 of the second) or in the second
    with_first, with_second = _counts(n1 - 1, n2), _counts(n1, n2 - 1)
    out = [0] * (n1 * n2 + 1)
    for u, c in enumerate(with_first):
        out[u + n2] += c
    for u, c in enumerate(with_second):
        out[u] += c
    return tuple(out)


def mann_whitney_p(a: list[float], b: list[float]) -> float:
    """Two-sided p-value that `a` and `b` come from the same distribution (1.0 for an empty side)."""
    n1, n2 = len(a), len(b)
    if not n1 or not n2:
        return 1.0
    ranks = _ranks(list(a) + list(b))
    u = sum(ranks[:n1]) - n1 * (n1 + 1) / 2
    mean = n1 * n2 / 2
    ties = len(set(a) | set(b)) < n1 + n2
    if not ties and max(n1, n2) <= EXACT_MAX:
        counts = _counts(n1, n2)
        far = abs(u - mean)
        extreme = sum(c for k, c in enumerate(counts) if abs(k - mean) >= far - 1e-9)
        return min(1.0, extreme / math.comb(n1 + n2, n1))
    n = n1 + n2
    tie_term = sum(t**3 - t for t in Counter(list(a) + list(b)).values())
    variance = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)))
    if variance <= 0:
        return 1.0
    z = (abs(u - mean) - 0.5) / math.sqrt(variance)
    return min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2)))
