"""The scaling model against published multi-node runs (benchmarks/data/published_scaling.yaml).

Runs the plan's own model on every published point and holds it to the issue's tolerances, so a change
that makes the model drift from published reality fails here. The points the model does not explain are
listed by name (KNOWN_OUTSIDE) and in the README, rather than fitted away.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from gpuwise.plan.defaults import PlanDefaults
from gpuwise.plan.options import achieved_range, socket_advice, tcp_fraction

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "validate_published_scaling.py"
# One 2-node run at 99%, above the tuned end (the same source's 4-node run is super-linear against its
# 1-node run, so its baseline is doubtful): reported in the validation table.
# Two of the DGX A100 points added after the model was built (first run, nothing changed for them): a
# 4-node run at 100.2% (super-linear against its 1-node run) and a 32-node run 1 point under the range's
# low end.
KNOWN_OUTSIDE = {
    ("ResNet-50 mixed, TF + Horovod, aws-samples example", 2),
    ("BERT-large pretraining seq 512 TF32, TF + Horovod, DGX A100 40GB", 4),
    ("BERT-large pretraining seq 128 mixed, TF + Horovod, DGX A100 40GB", 32),
}


@pytest.fixture(scope="module")
def rows():
    spec = importlib.util.spec_from_file_location("validate_published_scaling", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.points()


def test_enough_points_from_enough_sources(rows):
    assert len(rows) >= 30
    sources = {r["source"].split()[0] for r in rows}
    assert len(sources) >= 5
    tcp = {r["nodes"] for r in rows if r["transport"] == "TCP"}
    assert 4 in tcp and max(tcp) >= 16  # cloud TCP at 4 and 16+ nodes


def test_typical_within_10_points_on_90_percent(rows):
    within = [abs(r["typical"] - r["published"]) <= 0.10 for r in rows]
    assert sum(within) >= 0.9 * len(rows), [
        (r["name"], r["nodes"], round(r["published"], 2), round(r["typical"], 2))
        for r, ok in zip(rows, within, strict=True)
        if not ok
    ]


def test_range_contains_published_except_the_named_points(rows):
    outside = {
        (r["name"], r["nodes"]) for r in rows if not r["low"] - 1e-9 <= r["published"] <= r["high"] + 1e-9
    }
    assert outside <= KNOWN_OUTSIDE, outside - KNOWN_OUTSIDE
    for r in rows:
        assert r["low"] <= r["typical"] <= r["high"]


def test_points_added_after_the_model_are_held_to_the_same_tolerance(rows):
    # published runs the model never saw (no input set from them): the aim is the same 10 points on 90%
    unseen = [r for r in rows if r["unseen"]]
    assert len(unseen) >= 6 and not any(r["fitted"] for r in unseen)
    assert sum(abs(r["typical"] - r["published"]) <= 0.10 for r in unseen) >= 0.9 * len(unseen)
    assert {r["source"].split()[0] for r in unseen}.isdisjoint(
        {r["source"].split()[0] for r in rows if not r["unseen"]}
    )


def test_fitted_points_are_few_and_marked(rows):
    # the straggler cv is fitted to the DGX-2H cases only; everything else is out of sample
    fitted = [r for r in rows if r["fitted"]]
    assert fitted and all("DGX-2H" in r["name"] for r in fitted)
    assert len(rows) - len(fitted) >= 25


def test_tcp_fraction_depends_on_line_rate_and_sockets():
    d = PlanDefaults()
    # one socket is flow-limited; tuned sockets reach the wire on 25G and the host ceiling on 100G
    assert tcp_fraction(d, 25, 1) < tcp_fraction(d, 25, 64)
    assert tcp_fraction(d, 100, 64) < tcp_fraction(d, 25, 64)
    low, typical, high = achieved_range(d, rdma=False, gbps=100, provider="aws")
    assert low < typical <= high
    assert achieved_range(d, rdma=False, gbps=25, provider=None)[1] < typical * 4  # defaults: 1 socket
    assert "NCCL_SOCKET_NTHREADS" in socket_advice(d, 100, None)
    assert socket_advice(d, 1, None) == ""  # 1 Gbit/s: one flow already fills it


def test_untuned_horovod_on_old_nccl_is_flat_across_node_counts(rows):
    # a ring over every GPU sends 2(N-1)/N of the gradient out of each node at any node count: #396's
    # untuned runs published 49/44/45% at 2/4/8 nodes, and the model stays inside their range
    kubenet = [r for r in rows if "kubenet" in r["name"]]
    assert max(r["typical"] for r in kubenet) - min(r["typical"] for r in kubenet) < 0.05
    assert all(r["low"] <= r["published"] <= r["high"] for r in kubenet)


def test_the_readme_scaling_table_matches_the_validation(rows):
    """README's per-source table (points, within 10 points, inside the range) is the validation's, so it
    cannot drift from the model."""
    import re

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### Scaling validation (plan)", 1)[1].split("\n## ", 1)[0]
    table = {}
    for line in section.splitlines():
        link = re.match(r"\| \[[^\]]+\]\((https://[^)]+)\)", line)
        if link:
            cells = [c.strip() for c in line.strip("|").split("|")]
            table[link.group(1)] = (int(cells[3]), int(cells[6]), int(cells[7]))
    by_source: dict[str, list[dict]] = {}
    for r in rows:
        by_source.setdefault(r["source"].split()[0], []).append(r)
    expected = {
        src: (
            len(rs),
            sum(abs(r["typical"] - r["published"]) <= 0.10 for r in rs),
            sum(r["low"] - 1e-9 <= r["published"] <= r["high"] + 1e-9 for r in rs),
        )
        for src, rs in by_source.items()
    }
    assert table == expected
    total = f"{len(rows)} points from {len(by_source)}"
    assert total in " ".join(section.split())
