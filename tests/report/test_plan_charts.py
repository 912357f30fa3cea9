"""The plan's time-to-train, break-even and sensitivity (tornado) charts, checked against the plan model
and, for the sensitivity, against the plan re-made with the input actually changed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from gpuwise.plan.planner import make_plan
from gpuwise.report.formats import get_renderer
from gpuwise.report.views.plan import plan_view
from gpuwise.report.views.plan_charts import (
    SWING,
    plan_break_even_chart,
    plan_time_chart,
    sensitivity,
    sensitivity_table,
    tornado_chart,
)

ROOT = Path(__file__).resolve().parents[2]
WORKLOAD = ROOT / "examples" / "llm-7b-pretrain-1t.yaml"
OPTIONS = ROOT / "examples" / "plan-options.yaml"


@pytest.fixture(scope="module")
def plan():
    return make_plan(WORKLOAD, OPTIONS)


def _ratio(p) -> float:
    d = p.decision
    b, c = d.best_onprem, d.best_cloud
    return float(p.run_cost[b, p.chosen[b]] / p.run_cost[c, p.chosen[c]] * 100)


def test_time_chart_is_time_to_train_per_option_and_node_count(plan):
    (chart,) = plan_time_chart(plan)
    assert chart.kind == "line" and "days" in chart.y_label
    first = plan.shown[0]
    series = chart.series[0]
    assert series.x == [str(int(n)) for n in plan.nodes]
    for k, y in enumerate(series.y):
        if plan.perf.short_reasons(first, k):
            assert y is None
        else:
            assert y == pytest.approx(plan.perf.time_to_train_s[first, k] / 86400)
    # setups that cannot run or be bought are not drawn: 300 instances is more than EC2 Capacity Blocks sell
    (big,) = plan_time_chart(make_plan(WORKLOAD, OPTIONS, nodes=[1, 2, 4, 8, 16, 32, 300]))
    assert any(y is None for s in big.series for y in s.y)


def test_break_even_chart_crosses_at_the_decisions_break_even_utilisation(plan):
    (chart,) = plan_break_even_chart(plan)
    u_star = plan.decision.break_even_utilisation
    build, *clouds = [s for s in chart.series if len(s.x) > 1]
    point = next(s for s in chart.series if s.name.startswith("break-even"))
    assert point.x == [pytest.approx(u_star * 100, abs=0.05)]
    # at U* the build's run costs what the pay-per-use cloud run costs: one flat cloud line meets it
    flat = [s.y[0] for s in clouds if len(set(s.y)) == 1]
    assert any(y == pytest.approx(point.y[0], rel=1e-6) for y in flat)
    # the build's line: its cost per run at the plan's utilisation, scaled by expected / u
    i = build.x.index(50.0)
    expected = min(plan.workload.org.utilisation, 1 / plan.workload.org.burstiness)
    b = plan.decision.best_onprem
    assert build.y[i] == pytest.approx(plan.run_cost[b, plan.chosen[b]] * expected / 0.5)


def test_sensitivity_matches_the_flip_numbers(plan):
    ratio, swings = sensitivity(plan)
    assert ratio == pytest.approx(_ratio(plan))
    price_flip = next(f for f in plan.decision.flips if f.kind == "price")
    assert ratio / 100 == pytest.approx(1 - price_flip.numbers["cloud_price_change"])  # build is cheaper here
    cloud = next(s for s in swings if s.name == "cloud prices")
    assert (cloud.low, cloud.high) == pytest.approx((ratio / (1 - SWING), ratio / (1 + SWING)))
    widths = [abs(s.high - s.low) for s in swings]
    assert widths == sorted(widths, reverse=True)  # a tornado: widest bar on top
    # utilisation moves the ratio only against a cloud that is not paid for idle hours
    pays_idle = plan.rows[plan.decision.best_cloud].pays_idle
    assert ("utilisation" in [s.name for s in swings]) == (not pays_idle)


def test_the_electricity_swing_is_what_re_planning_with_that_price_gives(plan, tmp_path):
    _, swings = sensitivity(plan)
    b = plan.decision.best_onprem
    options = yaml.safe_load(OPTIONS.read_text())
    build = next(x for x in options["onprem"] if x["name"] == plan.rows[b].label)
    build["costs"]["electricity_per_kwh"] = plan.rows[b].onprem.electricity_per_kwh * (1 + SWING)
    (tmp_path / "options.yaml").write_text(yaml.safe_dump(options))
    moved = make_plan(WORKLOAD, tmp_path / "options.yaml")
    power = next(s for s in swings if s.name == "electricity price")
    assert _ratio(moved) == pytest.approx(power.high, rel=1e-9)


def test_utilisation_swing_against_pay_per_use_cloud(tmp_path):
    """Without reserved offers the best cloud is pay-per-use: 20% more utilisation lowers the build's cost
    per run by 1/1.2, exactly what re-planning at that utilisation gives."""
    options = yaml.safe_load(OPTIONS.read_text())
    options["cloud"]["pricing"] = ["on_demand"]
    (tmp_path / "options.yaml").write_text(yaml.safe_dump(options))
    base = make_plan(WORKLOAD, tmp_path / "options.yaml")
    _, swings = sensitivity(base)
    util = next(s for s in swings if s.name == "utilisation")
    workload = yaml.safe_load(WORKLOAD.read_text())
    u = base.workload.org.utilisation
    workload.setdefault("org", {})["utilisation"] = u * (1 - SWING)
    (tmp_path / "w.yaml").write_text(yaml.safe_dump(workload))
    lower = make_plan(tmp_path / "w.yaml", tmp_path / "options.yaml")
    assert _ratio(lower) == pytest.approx(util.low, rel=1e-9)


def test_tornado_is_horizontal_bars_from_the_baseline_with_the_flip_line(plan):
    (chart,) = tornado_chart(plan)
    ratio, swings = sensitivity(plan)
    assert chart.horizontal and chart.base == pytest.approx(ratio) and chart.rules[0][0] == 100.0
    assert chart.series[0].x == [s.name for s in swings]
    (table,) = sensitivity_table(plan)
    assert [r[0] for r in table.rows] == [s.name for s in swings]
    assert all(r[3] == "no" for r in table.rows)  # 49% of the cloud: no ±20% input flips it
    html = get_renderer("html")(plan_view(plan))
    svg = re.search(r"<svg[^>]*>(?:(?!</svg>).)*What would flip it(?:(?!</svg>).)*</svg>", html, re.S)
    assert svg and svg.group(0).count("<rect") >= 2 * len(swings) and 'class="rule"' in svg.group(0)
    assert 'class="base"' in svg.group(0)


def test_a_flipping_input_is_marked(plan, monkeypatch):
    from gpuwise.report.views import plan_charts

    swing = plan_charts.Swing("cloud prices", 112.5, 75.0)  # build at 90% of the cloud; prices -20% flip it
    monkeypatch.setattr(plan_charts, "sensitivity", lambda p: (90.0, [swing]))
    (table,) = sensitivity_table(plan)
    assert table.rows[0][1:] == ["112%", "75%", "yes"]
