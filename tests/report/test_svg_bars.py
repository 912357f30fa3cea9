"""Horizontal bars (a tornado chart): rows per category, bars from the base, reference rules, escaping."""

from __future__ import annotations

import re

from gpuwise.report.document import Chart, Series
from gpuwise.report.formats._svg import chart_svg


def _rects(svg: str) -> list[dict]:
    return [
        {k: float(v) for k, v in re.findall(r'(x|y|width|height)="([\d.]+)"', attrs)}
        for attrs in re.findall(r"<rect ([^>]*)><title>", svg)
    ]


def tornado() -> Chart:
    names = ["cloud <prices>", "electricity"]
    return Chart(
        "bar",
        "What would flip it",
        "input",
        "% of cloud",
        [Series("lower", names, [61.0, 48.0]), Series("higher", names, [41.0, 50.0])],
        horizontal=True,
        base=49.0,
        rules=[(100.0, "break-even")],
    )


def test_tornado_bars_share_a_row_and_grow_from_the_base():
    svg = chart_svg(tornado())
    low_cloud, low_power, high_cloud, high_power = _rects(svg)
    assert low_cloud["y"] == high_cloud["y"] and low_power["y"] > low_cloud["y"]  # one row per input
    base_x = float(re.search(r'class="base" x1="([\d.]+)"', svg).group(1))
    assert low_cloud["x"] == base_x  # 61% grows right from the 49% base
    assert abs(high_cloud["x"] + high_cloud["width"] - base_x) < 0.2  # 41% grows left to it
    assert abs(low_cloud["width"] / high_cloud["width"] - (61 - 49) / (49 - 41)) < 0.02  # to scale
    rule_x = float(re.search(r'<g class="rule"><line x1="([\d.]+)"', svg).group(1))
    assert rule_x > low_cloud["x"] + low_cloud["width"]  # 100% lies right of every bar
    assert "cloud &lt;prices&gt;" in svg and "<prices>" not in svg and "break-even" in svg


def test_horizontal_bars_without_base_sit_side_by_side_from_zero():
    chart = tornado()
    chart.base, chart.rules = None, []
    svg = chart_svg(chart)
    low_cloud, _, high_cloud, _ = _rects(svg)
    assert low_cloud["x"] == high_cloud["x"]  # both start at 0
    assert high_cloud["y"] > low_cloud["y"]  # grouped within the row
    assert 'class="base"' not in svg and 'class="rule"' not in svg


def test_a_categorical_scatter_spreads_each_column_of_points():
    svg = chart_svg(
        Chart("scatter", "t", "metric", "%", [Series("nodes", ["a", "a", "a", "b"], [1.0, 2, 3, 4])])
    )
    xs = [float(x) for x in re.findall(r'<circle cx="([\d.]+)"', svg)]
    assert len(set(xs[:3])) == 3  # three points of "a", side by side
    assert abs(xs[0] - (xs[1] + xs[2]) / 2) < 0.2 and xs[3] > max(xs[:3])  # centred on "a"; "b" right of it
