"""Charts from real models (a recorded H200 bench, a comparison, a plan, the history), drawn as HTML
and opened in headless Chromium; one screenshot per report type stays in pytest's tmp dir."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gpuwise.documents.bench import BenchReport
from gpuwise.report.document import Chart, Column, Document, Heading, Table
from gpuwise.report.formats import get_renderer
from gpuwise.report.views.charts import bench_peak_chart, compare_charts, plan_cost_chart
from tests.report.test_html_format import CHROMIUM, assert_page_drawn, open_in_chromium

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "tests" / "captures" / "h200-1gpu-kvm-vm.bench-quick.json"


def bench_report() -> BenchReport:
    return BenchReport.model_validate_json(BENCH.read_text())


def chart_numbers(chart: Chart) -> list[float]:
    return [y for s in chart.series for y in s.y if y is not None]


def test_bench_chart_is_percent_of_peak_with_repeat_error_bars():
    (chart,) = bench_peak_chart(bench_report())
    series, typical = chart.series
    assert chart.kind == "bar" and "matmul_bf16" in series.x
    i = series.x.index("matmul_bf16")
    assert series.y[i] == pytest.approx(678.6096931546447 / 989 * 100, abs=0.2)  # H200 dense bf16 peak
    assert series.err[i] == pytest.approx((698.4518815759908 - 560.9355453432266) / 2 / 989 * 100, abs=0.1)
    assert chart.band is None  # typical fractions known for 4 benchmarks only: no band over all bars
    assert typical.y[series.x.index("h2d_pinned")] == pytest.approx(87.0) and typical.y[i] is None
    assert "storage" not in series.x  # failed benchmarks are not drawn


def test_bench_chart_band_is_the_typical_range_when_known_for_every_bar():
    report = bench_report()
    for i, m in enumerate(report.results):
        m.achievable_fraction = 0.7 if i % 2 else 0.8
    (chart,) = bench_peak_chart(report)
    assert chart.band == pytest.approx((70.0, 80.0))


def test_compare_chart_pairs_a_and_b_relative_to_a(tmp_path):
    from gpuwise.report.compare import compare_files

    b = json.loads(BENCH.read_text())
    b["hostname"] = "vm-b"
    for r in b["results"]:
        if r.get("value"):
            r["value"] *= 0.9
    (tmp_path / "b.json").write_text(json.dumps(b))
    (chart,) = compare_charts(compare_files(BENCH, tmp_path / "b.json"))
    a, bb = chart.series
    assert a.x == bb.x and "matmul_bf16" in a.x and "storage" not in a.x  # failed on both sides
    assert set(a.y) == {100.0} and bb.y == pytest.approx([90.0] * len(bb.y), abs=0.01)


def test_plan_chart_is_cost_per_node_count():
    from gpuwise.plan.planner import make_plan

    nodes = [1, 2, 4, 8, 16, 32, 300]  # 300 instances: more than EC2 Capacity Blocks sell
    plan = make_plan(
        ROOT / "examples" / "llm-7b-pretrain-1t.yaml", ROOT / "examples" / "plan-options.yaml", nodes=nodes
    )
    (chart,) = plan_cost_chart(plan)
    assert chart.kind == "line" and chart.series[0].x == [str(n) for n in nodes]  # evenly spaced slots
    assert len({s.name for s in chart.series}) == len(chart.series)  # pricing tells rows apart
    assert chart.series[0].y[0] == pytest.approx(float(plan.run_cost[plan.shown[0]][0]))
    drawn = {s.name: s.y for s in chart.series}
    skipped = 0
    for o in plan.shown:  # setups that cannot run or be bought are not drawn
        name = f"{plan.rows[o].label} ({plan.rows[o].pricing})"
        for k in range(len(plan.nodes)):
            if plan.short_reasons(o, k):
                assert name not in drawn or drawn[name][k] is None
                skipped += 1
    # options that do not fit (p4d: 40 GB GPUs) or cannot be bought (capacity-block limits)
    assert skipped > 0


def _page(title: str, charts: list[Chart]) -> Document:
    rows = [
        [s.name, str(x), f"{y:.4g}"]
        for c in charts
        for s in c.series
        for x, y in zip(s.x, s.y, strict=True)
        if y
    ]
    return Document(
        title, [Heading(title), *charts, Table([Column("series"), Column("x"), Column("y")], rows)]
    )


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (scripts/install-system-deps.sh)")
def test_report_charts_draw_in_headless_chromium(tmp_path):
    from gpuwise.plan.planner import make_plan
    from gpuwise.report.compare import compare_files

    plan = make_plan(ROOT / "examples" / "llm-7b-pretrain-1t.yaml", ROOT / "examples" / "plan-options.yaml")
    pages = {
        "bench": bench_peak_chart(bench_report()),
        "compare": compare_charts(compare_files(BENCH, BENCH)),
        "plan": plan_cost_chart(plan),
    }
    for name, charts in pages.items():
        html = get_renderer("html")(_page(f"gpuwise {name}", charts))
        dom, png = open_in_chromium(html, tmp_path, name)
        assert_page_drawn(dom, png, charts=len(charts))
        for chart in charts:  # every drawn number is readable in the page as a tooltip too
            assert all(f"{y:.6g}" in html for y in chart_numbers(chart)[:5])


# Sets data-overflow on the page: the chart texts (titles, legend entries) whose drawn box leaves the SVG.
_MEASURE = """<script>
addEventListener('load', () => {
  const out = [];
  for (const svg of document.querySelectorAll('svg.chart-svg')) {
    const width = svg.viewBox.baseVal.width;
    for (const t of svg.querySelectorAll('text.chart-title, text.legend-label')) {
      const b = t.getBBox();
      if (b.x < 0 || b.x + b.width > width) out.push(t.textContent);
    }
  }
  document.body.dataset.overflow = JSON.stringify(out);
});
</script>"""


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (scripts/install-system-deps.sh)")
def test_long_titles_and_legends_stay_inside_the_chart(tmp_path):
    """A long title wraps onto more lines (in English and in Chinese, whose characters are twice as wide)
    and the legend and plot move down, measured by the browser's own text boxes."""
    from gpuwise.report.document import Series

    english = "What would flip it: 8x NVIDIA H100 80GB HBM3 own build (4 nodes) vs aws p5.48xlarge on-demand"
    chinese = "什么会改变结论：自建 8x NVIDIA H100 80GB HBM3（4 个节点）对比 aws p5.48xlarge 按量计费，每次运行的成本"
    series = [
        Series("输入降低 20%", ["a", "b"], [90.0, 95.0]),
        Series("input 20% higher", ["a", "b"], [110, 105]),
    ]
    charts = [
        Chart("bar", english, "input", "% of cloud", series, horizontal=True, base=100.0),
        Chart("bar", chinese, "输入", "占云的 %", series),
        Chart(
            "line", "short", "nodes", "USD", [Series("a" * 60, [1, 2], [1, 2]), Series("b", [1, 2], [2, 3])]
        ),
    ]
    html = get_renderer("html")(_page("gpuwise long titles", charts))
    # the page's CSP forbids scripts; this test page drops it to run its measuring script
    html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html).replace(
        "</body>", _MEASURE + "</body>"
    )
    assert html.count('class="chart-title"') >= 5  # both long titles wrapped onto a second line
    dom, png = open_in_chromium(html, tmp_path, "long-titles")
    assert_page_drawn(dom, png, charts=3)
    overflow = re.search(r'data-overflow="([^"]*)"', dom)
    assert overflow is not None, "the measuring script did not run"
    assert json.loads(overflow.group(1).replace("&quot;", '"')) == []
