"""The plan's charts beyond cost per node count (charts.plan_cost_chart), read from the Plan's fields.

time to train vs node count: one line per shown option (infeasible setups are not drawn);
break-even: cost of one run vs utilisation, the best build and each cloud option at its chosen
         node count. Owned and reserved capacity is paid while idle, so their cost per run falls
         as 1/utilisation (up to the 1/burstiness cap on utilisation); on-demand and spot stay flat.
         The build's line crosses the pay-per-use line at the decision's break-even utilisation;
sensitivity ("what would flip it"): the best build's cost per run as % of the best cloud option's
         (100% = break-even) with each input 20% lower and higher, drawn as a tornado chart and
         listed as a table. Costs are linear in each input (plan/cost.py), so the swings are exact
         for the model: cloud prices divide the ratio, the build's capital, power and staff shares
         of its yearly cost scale it, utilisation moves every capacity that is paid while idle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuwise.i18n import C_, N_, _
from gpuwise.plan.decision import pricing_label
from gpuwise.report.document import Chart, Column, Series, Table

SWING = 0.2  # how far each input is moved, down and up (a display range, not an uncertainty estimate)
UTILISATIONS = [u / 100 for u in range(20, 101, 5)]  # below 20% an owned run's cost dwarfs the rest


def _option_name(plan, o: int) -> str:
    return f"{plan.rows[o].label} ({pricing_label(plan.rows[o].pricing)})"


def plan_time_chart(plan) -> list[Chart]:
    """plan: plan.planner.Plan. Time to train per option at each node count."""
    nodes = [str(int(n)) for n in plan.nodes]  # one slot per count, as in the cost chart
    feasible = [
        [None if plan.perf.short_reasons(o, k) else float(plan.perf.time_to_train_s[o, k])
         for k in range(len(nodes))]
        for o in plan.shown
    ]  # fmt: skip
    longest = max((s for row in feasible for s in row if s is not None), default=None)
    if longest is None or len(nodes) < 2:
        return []
    days = longest >= 2 * 86400
    scale, unit = (86400.0, _("days")) if days else (3600.0, _("hours"))
    series = [
        Series(_option_name(plan, o), nodes, [None if s is None else s / scale for s in row])
        for o, row in zip(plan.shown, feasible, strict=True)
        if any(s is not None for s in row)
    ]
    title, y_label = _("Time to train vs node count"), _("time to train ({unit})").format(unit=unit)
    return [Chart("line", title, _("nodes"), y_label, series)]


def _scales_with_idle(plan, o: int) -> bool:
    return plan.rows[o].kind == "onprem" or bool(plan.rows[o].pays_idle)


def plan_break_even_chart(plan) -> list[Chart]:
    """Cost per run vs utilisation for the best build and the shown cloud options, with the break-even."""
    d = plan.decision
    build = d.best_onprem
    if build is None or plan.chosen[build] < 0 or d.best_cloud is None:
        return []
    org = plan.workload.org
    cap = min(1.0, 1.0 / org.burstiness)
    expected = min(org.utilisation, cap)
    rows = [build] + [
        o for o in plan.shown if plan.rows[o].kind == "cloud" and plan.chosen[o] >= 0 and plan.convertible[o]
    ]
    u_star = d.break_even_utilisation
    grid = sorted({*UTILISATIONS, *(u / 100 for u in range(10, 20, 5) if u_star and u_star < 0.2)})
    xs = [round(u * 100, 1) for u in grid]
    series = []
    for o in rows[:7]:
        cost = float(plan.run_cost[o, plan.chosen[o]])
        if not math.isfinite(cost):
            continue
        ys = [cost * expected / min(u, cap) if _scales_with_idle(plan, o) else cost for u in grid]
        nodes = int(plan.nodes[plan.chosen[o]])
        series.append(Series(f"{_option_name(plan, o)} ×{nodes}", xs, ys))
    if len(series) < 2:
        return []
    build_cost = float(plan.run_cost[build, plan.chosen[build]])
    expected_name = _("expected utilisation (this plan)")
    series.append(Series(expected_name, [round(expected * 100, 1)], [build_cost]))
    if u_star is not None and 0 < u_star <= cap:
        name = _("break-even ({pct})").format(pct=f"{u_star:.0%}")
        series.append(Series(name, [round(u_star * 100, 1)], [build_cost * expected / u_star]))
    return [
        Chart(
            "line",
            _("Break-even: cost of one run vs utilisation"),
            _("utilisation of owned and reserved capacity (%)"),
            _("cost per run ({currency})").format(currency=plan.currency),
            series,
        )
    ]


@dataclass
class Swing:
    """One input of the sensitivity: the build's cost as % of the cloud's with the input lower, higher."""

    name: str
    low: float  # % with the input SWING lower
    high: float  # % with the input SWING higher


def sensitivity(plan) -> tuple[float, list[Swing]]:
    """(the baseline %, swings largest first); (nan, []) when there is no build and cloud to compare."""
    d = plan.decision
    b, c = d.best_onprem, d.best_cloud
    if b is None or c is None or plan.chosen[b] < 0 or plan.chosen[c] < 0:
        return math.nan, []
    cost_b = float(plan.run_cost[b, plan.chosen[b]])
    cost_c = float(plan.run_cost[c, plan.chosen[c]])
    onp = plan.rows[b].onprem
    if not (math.isfinite(cost_b) and math.isfinite(cost_c) and cost_c > 0 and onp is not None):
        return math.nan, []
    ratio = cost_b / cost_c * 100
    n = float(plan.nodes[plan.chosen[b]])
    total = onp.annual_per_node() * n + onp.staff_per_year
    shares = {
        N_("server and network price (capex)"): onp.capital_per_year() * n / total,
        N_("electricity price"): onp.opex_per_year()["power"] * n / total,
        N_("staff cost"): onp.staff_per_year / total,
    }
    swings = [Swing(_("cloud prices"), ratio / (1 - SWING), ratio / (1 + SWING))]
    swings += [
        Swing(_(k), ratio * (1 - SWING * f), ratio * (1 + SWING * f)) for k, f in shares.items() if f > 0
    ]
    org = plan.workload.org
    u_eff = min(org.utilisation, 1.0 / org.burstiness)

    def at(u: float) -> float:  # the ratio at utilisation u: what is paid while idle scales by u_eff / u_eff'
        moved = min(u, 1.0, 1.0 / org.burstiness)
        cloud = u_eff / moved if _scales_with_idle(plan, c) else 1.0
        return ratio * (u_eff / moved) / cloud

    utilisation = Swing(
        _("utilisation"), at(org.utilisation * (1 - SWING)), at(org.utilisation * (1 + SWING))
    )
    if abs(utilisation.high - utilisation.low) > 1e-9:
        swings.append(utilisation)
    swings.sort(key=lambda s: -abs(s.high - s.low))
    return ratio, swings


def _pair(plan) -> str:
    d = plan.decision
    return _("{build} vs {cloud}").format(
        build=_option_name(plan, d.best_onprem), cloud=_option_name(plan, d.best_cloud)
    )


def tornado_chart(plan) -> list[Chart]:
    ratio, swings = sensitivity(plan)
    if not swings:
        return []
    names = [s.name for s in swings]
    pct = int(SWING * 100)
    return [
        Chart(
            "bar",
            _("What would flip it: {pair}").format(pair=_pair(plan)),
            _("input"),
            _("build's cost per run as {pct} of the cloud's (under 100% = build cheaper)").format(pct="%"),
            [
                Series(_("input {pct} lower").format(pct=f"{pct}%"), names, [s.low for s in swings]),
                Series(_("input {pct} higher").format(pct=f"{pct}%"), names, [s.high for s in swings]),
            ],
            horizontal=True,
            base=ratio,
            rules=[(100.0, _("break-even 100%"))],
        )
    ]


def sensitivity_table(plan) -> list[Table]:
    ratio, swings = sensitivity(plan)
    if not swings:
        return []
    pct = int(SWING * 100)

    def flips(value: float) -> bool:
        return (value - 100) * (ratio - 100) < 0

    rows = [
        [
            s.name,
            f"{s.low:.0f}%",
            f"{s.high:.0f}%",
            C_("flips it", "yes") if flips(s.low) or flips(s.high) else C_("flips it", "no"),
        ]
        for s in swings
    ]
    return [
        Table(
            [
                Column(_("input")),
                Column(_("{pct} lower").format(pct=f"{pct}%"), "right"),
                Column(_("{pct} higher").format(pct=f"{pct}%"), "right"),
                Column(_("flips it")),
            ],
            rows,
            title=_(
                "Sensitivity: the build's cost per run as {pct} of the cloud's, now {ratio} ({pair})"
            ).format(pct="%", ratio=f"{ratio:.0f}%", pair=_pair(plan)),
            caption=_(
                "{hundred} = break-even; under {hundred} the build is cheaper. Each input moved alone."
            ).format(hundred="100%"),
        )  # fmt: skip
    ]
