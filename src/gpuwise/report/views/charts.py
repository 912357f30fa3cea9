"""Charts for the views, where a person would rather look than read (drawn by --format html only).

Each builder takes a command's model and returns Chart blocks (none when there is nothing to draw);
every number a chart draws is also in a table of the same view, so text and md lose nothing.
  bench:   % of peak per benchmark, error bars from the repeats' min..max, and the typically
           achievable % beside it where the catalog knows it (a band when it knows it for every bar);
  compare: A vs B as paired bars, B as % of A (units differ: TFLOP/s and GB/s share no axis);
  plan:    cost of the run vs node count, one line per option shown (more in plan_charts.py);
  serving: the daily traffic profile against each option's capacity (inference plans);
  fleet:   every node's value per metric as % of the fleet median, the outliers as their own series
           (the view's table has each metric's min, median and max; the JSON has every value).
"""

from __future__ import annotations

import math

from gpuwise.i18n import C_, _
from gpuwise.plan.decision import pricing_label
from gpuwise.report.document import Chart, Series


def bench_peak_chart(report) -> list[Chart]:
    """report: a documents.bench.BenchReport."""
    rows = [m for m in report.results if m.status == "ok" and m.percent_of_peak is not None and m.peak]
    if not rows:
        return []
    errs = [
        (m.stats.max - m.stats.min) / 2 / m.peak * 100 if m.stats and m.stats.max is not None else None
        for m in rows
    ]
    series = [
        Series(_("measured (median; bars: min..max of repeats)"), [m.name for m in rows],
               [m.percent_of_peak for m in rows], err=errs)
    ]  # fmt: skip
    typical = [m.achievable_fraction * 100 if m.achievable_fraction else None for m in rows]
    if any(t is not None for t in typical):  # the typical fraction is known per benchmark, not for all
        series.append(Series(_("typically achievable"), [m.name for m in rows], typical))
    known = [t for t in typical if t is not None]
    return [
        Chart(
            "bar",
            _("Measured {percent_sign} of peak per benchmark").format(percent_sign="%"),
            _("benchmark"),
            _("{percent_sign} of peak").format(percent_sign="%"),
            series,
            band=(min(known), max(known)) if len(known) == len(rows) else None,  # one band fits all bars
        )
    ]


def compare_charts(comparison) -> list[Chart]:
    """comparison: report.compare.Comparison. B relative to A (A = 100%) for every measurement both
    have: one axis for all units, and a 10% gap looks the same on a 7 GB/s and a 4000 GB/s bar."""
    rows = [m for m in comparison.measurements if m.a and m.b is not None and m.ratio is not None]
    if not rows:
        return []
    names = [m.name for m in rows]
    return [
        Chart(
            "bar",
            "B relative to A (A = 100%; B/A in the table)",
            "measurement",
            "% of A",
            [
                Series(f"A: {comparison.host_a or comparison.a}", names, [100.0] * len(rows)),
                Series(f"B: {comparison.host_b or comparison.b}", names, [m.ratio * 100 for m in rows]),
            ],
        )
    ]


def plan_cost_chart(plan) -> list[Chart]:
    """plan: plan.planner.Plan; one line per shown option, cost of the run at each node count."""
    nodes = [str(int(n)) for n in plan.nodes]  # one slot per count: a sweep 1, 2, 4, ... 32 spaced evenly
    series = []
    for o in plan.shown:
        costs = [  # an infeasible setup (too little memory, capacity, ...) has no cost to draw
            None if plan.short_reasons(o, k) else _finite(float(c)) for k, c in enumerate(plan.run_cost[o])
        ]
        if any(c is not None for c in costs):
            series.append(
                Series(f"{plan.rows[o].label} ({pricing_label(plan.rows[o].pricing)})", nodes, costs)
            )
    if not series or len(nodes) < 2:
        return []
    title, y_label = _("Cost of the run vs node count"), _("cost ({currency})").format(currency=plan.currency)
    return [Chart("line", title, _("nodes"), y_label, series)]


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def serving_capacity_chart(plan) -> list[Chart]:
    """plan: plan.serving.planner.ServingPlan; the daily traffic profile against the capacity of each
    option shown (means over the week by hour of day, first-year growth), requests/s."""
    from gpuwise.plan.serving.strategies import short_name

    hours = list(range(24))
    growth = plan.demand.first_year_mean_growth()
    profile = plan.demand.daily_profile()
    series = [Series(C_("demand", "traffic"), hours, [_finite(float(v * growth)) for v in profile])]
    for s in plan.shown()[:4]:
        cap = s.capacity_rps.reshape(7, 24).mean(axis=0)
        series.append(
            Series(f"{short_name(s.name)} {s.hardware.gpu}", hours, [_finite(float(v)) for v in cap])
        )  # short: legend
    return [
        Chart(
            "line",
            _("Daily traffic vs each option's capacity"),
            _("hour of day"),
            _("requests/s"),
            series,
        )
    ]


MAX_POINTS = 200  # per metric: a large fleet draws the outliers and 200 evenly spaced ranks of the rest


def fleet_distribution_chart(report) -> list[Chart]:
    """report: fleet.model.FleetReport. Every node's value per metric as % of the fleet median (one axis
    for all units), the outliers drawn apart; each point's tooltip names its node (and GPU). Past
    MAX_POINTS values a metric draws every outlier and MAX_POINTS evenly spaced ranks of the others
    (min and max included), so the page stays small for thousands of GPUs."""
    flagged = {(o.metric, o.node, o.device) for o in report.outliers}
    normal = Series(C_("chart series", "nodes"), [], [], labels=[])
    odd = Series(_("outliers (bad side)"), [], [], labels=[])
    for d in report.distributions:
        if not d.median or len(d.values) < 2:
            continue
        usual = sorted(
            (v for v in d.values if (d.metric, v.node, v.device) not in flagged), key=lambda v: v.value
        )
        if len(usual) > MAX_POINTS:
            usual = [usual[round(i * (len(usual) - 1) / (MAX_POINTS - 1))] for i in range(MAX_POINTS)]
        outliers = [v for v in d.values if (d.metric, v.node, v.device) in flagged]
        for series, values in ((normal, usual), (odd, outliers)):
            for v in values:
                series.x.append(d.metric)
                series.y.append(v.value / d.median * 100)
                series.labels.append(v.node + (f" {v.device}" if v.device and d.scope == "gpu" else ""))
    if not normal.x:
        return []
    return [
        Chart(
            "scatter",
            _("Every node's value per metric (fleet median = 100{percent_sign})").format(percent_sign="%"),
            _("metric"),
            _("{percent_sign} of the fleet median").format(percent_sign="%"),
            [normal, odd] if odd.x else [normal],
        )
    ]
