"""The fleet report's per-node distributions: every node's value per metric in the model and its JSON, the
spread table, and the chart with the outliers drawn as their own series."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuwise.fleet.analyze import analyze_fleet
from gpuwise.report.document import Chart, Table
from gpuwise.report.formats import get_renderer
from gpuwise.report.views.charts import fleet_distribution_chart
from gpuwise.report.views.fleet import fleet_view
from tests.fleet.fleet_kit import build_fleet


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from tests.conftest import REAL

    if not REAL.is_dir():
        pytest.skip(f"real fixtures not present at {REAL}")
    return analyze_fleet(
        build_fleet(tmp_path_factory.mktemp("gwfl-charts"), count=12)
    )  # node11 has the slow matmul


def test_distributions_hold_every_nodes_value(report):
    bench = json.loads((Path(report.directory) / "node05" / "bench.json").read_text())
    matmul = next(d for d in report.distributions if d.metric == "matmul_bf16")
    assert (
        len(matmul.values) == 12 and matmul.unit == "TFLOP/s" and matmul.scope == "node"
    )  # device "cuda", not "cuda:N"
    node05 = next(v for v in matmul.values if v.node == "node05")
    recorded = next(r for r in bench["results"] if r["name"] == "matmul_bf16")
    assert node05.value == pytest.approx(recorded["value"]) and node05.device == recorded["device"]
    doc = report.to_json_dict()
    assert {d["metric"] for d in doc["distributions"]} >= {"matmul_bf16", "h2d_pinned"}


def test_chart_marks_the_outlier_and_names_each_node(report):
    (chart,) = fleet_distribution_chart(report)
    normal, odd = chart.series
    assert chart.kind == "scatter" and len(odd.x) == len(report.outliers) >= 1
    (outlier,) = [o for o in report.outliers if o.metric == "matmul_bf16"]
    i = odd.x.index("matmul_bf16")
    assert odd.labels[i].startswith(outlier.node)
    assert odd.y[i] == pytest.approx(outlier.value / outlier.median * 100)
    assert outlier.node not in [
        lab.split()[0] for x, lab in zip(normal.x, normal.labels, strict=True) if x == "matmul_bf16"
    ]
    assert len(normal.x) + len(odd.x) == sum(len(d.values) for d in report.distributions)


def test_view_has_spread_table_and_chart_and_html_draws_it(report):
    doc = fleet_view(report)
    table = next(b for b in doc.blocks if isinstance(b, Table) and b.columns[1].header == "unit")
    row = next(r for r in table.rows if r[0] == "matmul_bf16")
    values = [v.value for v in next(d for d in report.distributions if d.metric == "matmul_bf16").values]
    assert row[3] == f"{min(values):.4g}" and row[5] == f"{max(values):.4g}" and row[6].text == "1"
    assert sum(isinstance(b, Chart) for b in doc.blocks) == 1
    html = get_renderer("html")(doc)
    assert 'data-series="outliers (bad side)"' in html
    assert "· node05" in html  # tooltips name the node


def test_no_chart_without_two_values():
    from gpuwise.fleet.model import Distribution, FleetReport, NodeValue

    one = Distribution(
        metric="m", unit="GB/s", scope="node", median=1.0, values=[NodeValue(node="a", value=1.0)]
    )
    report = FleetReport(created_at="t", directory="d", nodes=[], distributions=[one])
    assert fleet_distribution_chart(report) == []


def test_a_large_fleet_draws_its_outliers_and_evenly_spaced_ranks():
    from gpuwise.fleet.model import Distribution, FleetReport, NodeValue, Outlier
    from gpuwise.report.views.charts import MAX_POINTS

    values = [NodeValue(node=f"n{i:04d}", device="cuda:0", value=100.0 + i % 50) for i in range(4000)]
    values[7].value, values[9].value = 10.0, 12.0
    slow = [
        Outlier(metric="m", scope="gpu", node=v.node, device="cuda:0", value=v.value, unit="GB/s", median=124.0,
                deviation_pct=-90.0, method="robust z", peers=4000)
        for v in values[7:10:2]
    ]  # fmt: skip
    dist = Distribution(metric="m", unit="GB/s", scope="gpu", median=124.0, values=values)
    report = FleetReport(created_at="t", directory="d", nodes=[], distributions=[dist], outliers=slow)
    (chart,) = fleet_distribution_chart(report)
    normal, odd = chart.series
    assert len(normal.x) == MAX_POINTS and odd.labels == ["n0007 cuda:0", "n0009 cuda:0"]
    assert min(normal.y) == pytest.approx(100 / 124 * 100) and max(normal.y) == pytest.approx(149 / 124 * 100)
    assert len(get_renderer("html")(fleet_view(report))) < 200_000
