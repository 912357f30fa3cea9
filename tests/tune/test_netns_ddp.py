"""Validation (root): over a 200 Mbit/s tbf link, tune finds that gradient compression or larger buckets
speed up 2-rank gloo DDP, and reports compression as affecting numerics."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _namespaces() -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=300).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith("gwtn-")]


@pytest.mark.root
@pytest.mark.slow
def test_tune_finds_the_compression_gain_on_a_slow_link(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    monkeypatch.setenv("PYTHONPATH", str(BENCH))
    import validate_tune_netns

    before = set(_namespaces())
    doc = validate_tune_netns.run(200, trials=5, steps=4, storage=tmp_path / "tune.sqlite3")
    assert set(_namespaces()) == before  # removed again
    assert doc["winner"] is not None, doc["verdict"]
    best = doc["best_changes"]
    assert "comm_hook" in best or best.get("bucket_cap_mb", 25) > 25, best
    if "comm_hook" in best:
        winner = next(t for t in doc["trials"] if t["number"] == doc["winner"])
        assert winner["numerics"] == "optimisation" and winner["speedup_low"] > 1.0
    assert sys.modules["validate_tune_netns"]
