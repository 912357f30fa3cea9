"""Robust z / small-fleet outliers, drift and link pairs on hand-made values."""

from __future__ import annotations

import pytest

from gpuwise.fleet.drift import find_drift
from gpuwise.fleet.linktest import pairs
from gpuwise.fleet.outliers import find_outliers
from tests.advise.factories import expectation_node


def test_robust_z_flags_only_the_bad_side():
    samples = [(f"n{i}", None, 100.0 + (i % 3)) for i in range(10)] + [
        ("slow", None, 80.0),
        ("fast", None, 130.0),
    ]
    (o,) = find_outliers("matmul_bf16", "TFLOP/s", samples)
    assert (o.node, o.method) == ("slow", "robust z") and o.score < -3.5
    # for a time, higher is worse
    (t,) = find_outliers("step", "ms", samples)
    assert t.node == "fast"


def test_identical_nodes_use_the_floor_not_a_zero_mad():
    samples = [(f"n{i}", None, 100.0) for i in range(8)]
    assert find_outliers("x", "GB/s", samples) == []
    (o,) = find_outliers("x", "GB/s", [*samples, ("odd", None, 95.0)])  # 5% below: z = -5 at the 1% floor
    assert o.node == "odd" and o.score == pytest.approx(-5.0)


def test_small_fleet_compares_with_the_others_median():
    assert find_outliers("x", "GB/s", [("a", None, 10.0), ("b", None, 6.0)]) == []
    (o,) = find_outliers("x", "GB/s", [("a", None, 10.0), ("b", None, 4.0), ("c", None, 9.0)])
    assert (o.node, o.method, o.score) == ("b", "vs others' median", None)


def test_drift_majority_and_unknowns():
    nodes = [(f"n{i}", expectation_node()) for i in range(5)]
    nodes.append(("old", expectation_node(driver="535.104.05")))
    unknown = expectation_node()
    unknown.software.driver_version = None  # not captured: not a difference
    nodes.append(("unknown", unknown))
    (d,) = find_drift(nodes)
    assert (d.key, d.majority, d.majority_count, d.odd) == (
        "NVIDIA driver",
        "550.54.14",
        5,
        {"535.104.05": ["old"]},
    )


def test_link_pairs():
    assert len(pairs(3)) == 6
    big = pairs(20)
    assert len(big) == 40 and all(s != d for s, d in big)


def _links(root, pairs_gb_s: dict[tuple[str, str], float]) -> None:
    import json

    rows = [{"src": s, "dst": d, "gb_s": v * 0.8, "best_gb_s": v} for (s, d), v in pairs_gb_s.items()]
    (root / "links.json").write_text(json.dumps({"schema": "gpuwise-links/1", "pairs": rows}))


def test_link_outlier_is_the_node_whose_best_pair_is_slow(tmp_path):
    from gpuwise.fleet.analyze import link_outliers, read_collective

    # c's ingress is limited: every transfer into c is slow, everything else is fast (a is a bit slow to send)
    fast = {
        ("a", "b"): 0.9,
        ("b", "a"): 1.4,
        ("c", "a"): 1.3,
        ("c", "b"): 1.4,
        ("a", "c"): 0.002,
        ("b", "c"): 0.002,
    }
    _links(tmp_path, fast)
    (o,) = link_outliers(read_collective(tmp_path))
    assert (o.node, o.metric, o.scope) == ("c", "link_rx_best_pair", "link")
    # two nodes: one pair per direction, nothing can be pinned on either end
    _links(tmp_path, {("a", "b"): 0.002, ("b", "a"): 1.0})
    assert link_outliers(read_collective(tmp_path)) == []


def test_bad_links_file_is_a_problem_not_a_crash(tmp_path):
    from gpuwise.fleet.analyze import read_collective

    (tmp_path / "links.json").write_text('{"schema": "other"}')
    c = read_collective(tmp_path)
    assert c is not None and "not a gpuwise-links/1 document" in c.problems[0]
