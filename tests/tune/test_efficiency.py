"""Tuner efficiency, replayed on the two grids measured (benchmarks/data/), 20 seeds (deterministic).

The replay runs gpuwise's own search (run_search) with the trial runner replaced by the measured table.
Measured (`python benchmarks/tune_efficiency.py replay`): a median 10 of 40 trials to 95 % of the best
on the first table and 12 of 40 on the second (the issue's target: at most 30 %), against 13.5 and 20.5
for plain TPE; before measured settings were skipped and the search stepped to the best's neighbours it
needed 16 and 14.5. The test holds the target on both tables, and on held-out seeds 20-39."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def tune_efficiency(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    import tune_efficiency

    return tune_efficiency


def test_two_independently_measured_tables_are_kept(tune_efficiency):
    assert len(tune_efficiency.TABLES) >= 2
    for path in tune_efficiency.TABLES:
        table = tune_efficiency.load(path)
        assert set(table) == {tune_efficiency.key(p) for p in tune_efficiency.points()}
        assert max(table.values()) > 0


@pytest.mark.parametrize("seeds", [range(0, 20), range(20, 40)], ids=["seeds-0-19", "held-out-20-39"])
def test_the_search_reaches_95_percent_of_the_best_within_30_percent_of_the_grid(tune_efficiency, seeds):
    for path in tune_efficiency.TABLES:
        table = tune_efficiency.load(path)
        counts = tune_efficiency.replay_counts(table, seeds)
        ours, plain = counts["gpuwise tune"], counts["plain TPE"]
        assert len(ours) == len(seeds)
        assert statistics.median(ours) <= tune_efficiency.BUDGET * len(table), (path.name, ours)
        assert statistics.median(ours) < statistics.median(plain), (path.name, ours, plain)
