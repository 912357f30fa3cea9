"""Rent or build: a recommendation with reasons, and the inputs that would flip it.

The logic follows the source documents (REFERENCE.md §1, "Selection"): exploration and bursty or
elastic demand favour cloud; very large steady training, strict data residency or a skilled ops team
favour building, which wins on marginal cost over 3+ years of full load. Every reason carries a kind,
the side it favours and the numbers behind it (plan/decision.py); the verdict is the cost comparison
unless a hard constraint (residency, deadline vs lead time) or the demand shape overrides it, and it
reads kinds and numbers only. The thresholds are in plan_defaults.yaml (`decision:`), each sourced.
"""

from __future__ import annotations

import math

from gpuwise.i18n import _
from gpuwise.plan.cost import HOURS_PER_YEAR, break_even_months, break_even_utilisation
from gpuwise.plan.decision import BreakEven, Decision, Flip, FlipKind, Reason, Side, Verdict
from gpuwise.plan.decision import ReasonKind as K
from gpuwise.plan.defaults import DecisionThresholds
from gpuwise.plan.evaluation import Evaluation
from gpuwise.plan.options import OptionRow
from gpuwise.plan.workload import OrgContext, Workload


def _best(ev: Evaluation, kind: str, pricings: tuple[str, ...] | None = None) -> int | None:
    best, best_cost = None, math.inf
    for o, row in enumerate(ev.rows):
        k = ev.chosen[o]
        if row.kind != kind or k < 0 or not ev.convertible[o] or (pricings and row.pricing not in pricings):
            continue
        cost = ev.run_cost[o, k]
        if cost < best_cost:
            best, best_cost = o, cost
    return best


def side_word(side: str) -> str:
    """'build' / 'cloud' in the active language, inside a sentence (the Side values stay English)."""
    return {"build": _("build"), "cloud": _("cloud")}.get(side, side)


def _money(value: float, ccy: str) -> str:
    return f"{value:,.0f} {ccy}" if value >= 100 else f"{value:,.2f} {ccy}"


def _sweep_winners(ev: Evaluation, cloud_rows: list[int], onprem_rows: list[int]) -> list[str]:
    """At each node count: which side is cheaper per run (feasible rows only)."""
    out = []
    for k, _n in enumerate(ev.nodes):

        def cheapest(rows: list[int], k: int = k) -> float:
            costs = [ev.run_cost[o, k] for o in rows if ev.perf.infeasible[o, k] == 0 and ev.convertible[o]]
            return min(costs) if costs else math.inf

        c, b = cheapest(cloud_rows), cheapest(onprem_rows)
        out.append("-" if math.isinf(c) and math.isinf(b) else ("cloud" if c <= b else "build"))
    return out


def break_even_vs(ev: Evaluation, build: int, cloud: int) -> BreakEven:
    """Break-even utilisation and months of owned build `build` against cloud row `cloud`, each at its
    chosen node count, for the same work. The cloud run is priced pay-per-use."""
    org, onp = ev.workload.org, ev.rows[build].onprem
    assert onp is not None, "break_even_vs needs an on-prem row"
    kb, kc = ev.chosen[build], ev.chosen[cloud]
    hours_b = ev.hours(build, kb)
    u_eff = min(org.utilisation, 1.0 / org.burstiness)
    fleet_annual = onp.annual_per_node() * ev.nodes[kb] + onp.staff_per_year
    opex_month = (sum(onp.opex_per_year().values()) * ev.nodes[kb] + onp.staff_per_year) / 12.0
    capex = onp.capex_per_node() * ev.nodes[kb]
    if ev.rows[cloud].pays_idle:
        # Reserved capacity is paid every hour, used or not: utilisation cannot flip owned vs reserved, and the
        # monthly bill is fixed. run_cost = price·N·T·fx/u_eff, so price·N·fx = run_cost·u_eff/T.
        monthly = ev.run_cost[cloud, kc] * u_eff / ev.hours(cloud, kc) * HOURS_PER_YEAR / 12.0
        return BreakEven(float("nan"), float(break_even_months(capex, opex_month, monthly)))
    cloud_run = ev.run_cost[cloud, kc]
    u_star = break_even_utilisation(fleet_annual, hours_b, cloud_run)
    runs_per_month = u_eff * HOURS_PER_YEAR / 12.0 / hours_b
    return BreakEven(float(u_star), float(break_even_months(capex, opex_month, runs_per_month * cloud_run)))


def _constraint_reasons(org: OrgContext) -> list[Reason]:
    """Residency and compliance: stated before any cost is known."""
    reasons = []
    if org.data_residency == "on-prem":
        reasons.append(
            Reason(
                K.RESIDENCY,
                "build",
                _(
                    "data must stay on premises (org.data_residency: on-prem): cloud options are shown for "
                    "comparison only"
                ),
                _("data must stay on premises"),
            )
        )
    elif org.data_residency == "region":
        reasons.append(
            Reason(
                K.RESIDENCY,
                "cloud",
                _(
                    "data residency 'region' can be met in the cloud by renting in that region only; check "
                    "each offer's region"
                ),
                _("data residency in one region"),
            )
        )
    if org.compliance:
        reasons.append(
            Reason(
                K.COMPLIANCE,
                "build",
                _(
                    "compliance requirements ({join}): physical isolation is simpler on owned hardware "
                    "(source docs); confirm what your cloud certifies"
                ).format(join=", ".join(org.compliance)),
                _("compliance requirements ({join})").format(join=", ".join(org.compliance)),
                {"requirements": float(len(org.compliance))},
            )
        )
    return reasons


def _context_reasons(
    org: OrgContext, wl: Workload, rb: OptionRow, ttt_b_days: float, t: DecisionThresholds
) -> list[Reason]:
    """Demand shape, horizon, team and deadline (the source documents' selection logic)."""
    reasons = []
    if org.burstiness >= t.bursty_peak_ratio:
        label = _("bursty demand (peak {burstiness:g}× average)").format(burstiness=org.burstiness)
        reasons.append(
            Reason(
                K.BURSTINESS,
                "cloud",
                _(
                    "{label}: an owned fleet sized for the peak is busy at most {value:.0%} of the time"
                ).format(label=label, value=1 / org.burstiness),
                label,
                {"burstiness": org.burstiness, "threshold": t.bursty_peak_ratio},
            )
        )
    if org.horizon_years < t.long_horizon_years:
        label = (
            _("short horizon ({years:g} year)")
            if org.horizon_years == 1
            else _("short horizon ({years:g} years)")
        ).format(years=org.horizon_years)
        reasons.append(
            Reason(
                K.HORIZON,
                "cloud",
                _(
                    "{label}: building pays back over {long_horizon_years:g}+ years of steady load (source "
                    "docs)"
                ).format(label=label, long_horizon_years=t.long_horizon_years),
                label,
                {"horizon_years": org.horizon_years, "threshold": t.long_horizon_years},
            )
        )
    elif org.utilisation >= t.steady_utilisation and org.burstiness < t.bursty_peak_ratio:
        label = _("steady load ({utilisation:.0%} busy, {years:g}-year horizon)").format(
            utilisation=org.utilisation, years=org.horizon_years
        )
        reasons.append(
            Reason(
                K.STEADY_LOAD,
                "build",
                _("{label}: the source documents' case for building").format(label=label),
                label,
                {"utilisation": org.utilisation, "horizon_years": org.horizon_years},
            )
        )
    if org.ops_team:
        reasons.append(
            Reason(
                K.OPS_TEAM,
                "build",
                _("an ops team is available to run a cluster"),
                _("an ops team is available to run a cluster"),
            )
        )
    else:
        reasons.append(
            Reason(
                K.OPS_TEAM,
                "cloud",
                _("no ops team: a self-built cluster needs people for BIOS, drivers, fabric and failures"),
                _("no ops team"),
            )
        )
    if wl.deadline_days and rb.lead_time_days + ttt_b_days > wl.deadline_days:
        label = _("deadline {days:g} days").format(days=wl.deadline_days)
        reasons.append(
            Reason(
                K.DEADLINE,
                "cloud",
                _(
                    "{label}: the build needs {lead_time_days:.0f} days lead time + {ttt_b_days:.1f} days "
                    "training; the cloud can start now"
                ).format(label=label, lead_time_days=rb.lead_time_days, ttt_b_days=ttt_b_days),
                label,
                {
                    "deadline_days": wl.deadline_days,
                    "lead_time_days": rb.lead_time_days,
                    "build_training_days": ttt_b_days,
                },
            )
        )
    return reasons


def decide(ev: Evaluation) -> Decision:
    org, wl = ev.workload.org, ev.workload
    t = ev.defaults.decision()
    ccy = ev.currency
    cloud = _best(ev, "cloud", ("on_demand", "spot"))
    cloud_any = _best(ev, "cloud")
    build = _best(ev, "onprem")
    flips: list[Flip] = []

    if cloud is None and build is None:
        return Decision(
            "undecided", _("no option can run this workload (see the reasons per option)"), None, None
        )
    reasons = _constraint_reasons(org)
    if build is None:
        return Decision("cloud", _("rent: no on-prem build can run this workload"), cloud_any, None, reasons)
    if cloud is None and cloud_any is None:
        why = (
            _("data residency rules out the cloud")
            if org.data_residency == "on-prem"
            else _("no cloud option qualifies")
        )
        return Decision("build", _("build: {why}").format(why=why), None, build, reasons)
    payg = cloud if cloud is not None else cloud_any  # break-even points are against pay-per-use capacity
    cloud = cloud_any  # the cost comparison takes the cheapest cloud pricing, reserved included
    assert cloud is not None and payg is not None

    kb, kc = ev.chosen[build], ev.chosen[cloud]
    cost_b, cost_c = ev.run_cost[build, kb], ev.run_cost[cloud, kc]
    hours_b, hours_c = ev.hours(build, kb), ev.hours(cloud, kc)
    rb, rc = ev.rows[build], ev.rows[cloud]
    cheaper: Side = "build" if cost_b < cost_c else "cloud"
    gap = abs(cost_b - cost_c) / max(cost_b, cost_c)
    label = _("cost per run at {utilisation:.0%} utilisation").format(utilisation=org.utilisation)
    reasons.append(
        Reason(
            K.COST,
            cheaper,
            _(
                "{label}: {build} x{build_nodes} nodes {build_cost} ({build_days:.1f} days) vs {cloud} "
                "{pricing} x{cloud_nodes} {cloud_cost} ({cloud_days:.1f} days): {cheaper} is {gap:.0%} cheaper"
            ).format(
                label=label,
                build=rb.label,
                build_nodes=int(ev.nodes[kb]),
                build_cost=_money(cost_b, ccy),
                build_days=hours_b / 24,
                cloud=rc.label,
                pricing=rc.pricing,
                cloud_nodes=int(ev.nodes[kc]),
                cloud_cost=_money(cost_c, ccy),
                cloud_days=hours_c / 24,
                cheaper=side_word(cheaper),
                gap=gap,
            ),
            label,
            {"build_cost_per_run": float(cost_b), "cloud_cost_per_run": float(cost_c), "gap": float(gap)},
        )
    )

    # Break-even utilisation and months against the pay-as-you-go cloud option (and, in the JSON, every option).
    rp = ev.rows[payg]
    u_eff = min(org.utilisation, 1.0 / org.burstiness)
    be = break_even_vs(ev, build, payg)
    u_star, m_star = be.utilisation, be.months
    per_option = {
        ev.rows[o].key: break_even_vs(ev, build, o)
        for o in ev.shown
        if ev.rows[o].kind == "cloud" and ev.chosen[o] >= 0 and ev.convertible[o]
    }
    payg_name = f"{rp.label} {rp.pricing}"
    if u_star == u_star:
        label = _("break-even utilisation vs {option} {u_star:.0%}").format(option=payg_name, u_star=u_star)
        reasons.append(
            Reason(
                K.BREAK_EVEN_UTILISATION,
                "build" if u_eff > u_star else "cloud",
                _(
                    "{label}; expected {u_eff:.0%} (utilisation {utilisation:.0%}, burstiness {burstiness:g})"
                ).format(label=label, u_eff=u_eff, utilisation=org.utilisation, burstiness=org.burstiness),
                label,
                {"break_even_utilisation": u_star, "effective_utilisation": u_eff},
            )
        )
        flips.append(
            Flip(
                FlipKind.UTILISATION,
                _("utilisation: against {payg_name}, owning wins above {u_star:.0%} utilisation").format(
                    payg_name=payg_name, u_star=u_star
                )
                if u_star <= 1
                else _("utilisation: owning does not beat {payg_name} even at {full} utilisation").format(
                    full="100%",  # "% u" in a msgid would read as a printf placeholder to Babel's checks
                    payg_name=payg_name,
                ),
                {"break_even_utilisation": u_star},
            )
        )
        if rc.pays_idle:
            flips.append(
                Flip(
                    FlipKind.RESERVED_UTILISATION,
                    _(
                        "utilisation does not move the comparison with {label} {pricing}: reserved and owned "
                        "capacity both pay for idle hours"
                    ).format(label=rc.label, pricing=rc.pricing),
                )
            )
    if math.isfinite(m_star):
        reasons.append(
            Reason(
                K.BREAK_EVEN_MONTHS,
                "build" if m_star / 12 <= org.horizon_years else "cloud",
                _(
                    "break-even after {m_star:.0f} months of steady use (capex, no resale credit) vs a "
                    "{horizon_years:g}-year horizon"
                ).format(m_star=m_star, horizon_years=org.horizon_years),
                _("break-even after {m_star:.0f} months").format(m_star=m_star),
                {"break_even_months": m_star, "horizon_years": org.horizon_years},
            )
        )
    else:
        reasons.append(
            Reason(
                K.BREAK_EVEN_MONTHS,
                "cloud",
                _("owning never breaks even: monthly opex exceeds the cloud bill for the same work"),
                _("owning never breaks even"),
                {"break_even_months": m_star, "horizon_years": org.horizon_years},
            )
        )
    cloud_change, onprem_change = abs(1 - cost_b / cost_c), abs(1 - cost_c / cost_b)
    flips.append(
        Flip(
            FlipKind.PRICE,
            _(
                "price: cloud prices would have to {value} {cloud_change:.0%} (or on-prem costs {value2} "
                "{onprem_change:.0%}) to flip the cost comparison"
            ).format(
                value=_("fall") if cheaper == "build" else _("rise"),
                cloud_change=cloud_change,
                value2=_("rise") if cheaper == "build" else _("fall"),
                onprem_change=onprem_change,
            ),
            {"cloud_price_change": float(cloud_change), "onprem_cost_change": float(onprem_change)},
        )
    )

    ttt_b_days = hours_b / 24
    reasons += _context_reasons(org, wl, rb, ttt_b_days, t)

    winners = _sweep_winners(
        ev,
        [o for o, r in enumerate(ev.rows) if r.kind == "cloud"],
        [o for o, r in enumerate(ev.rows) if r.kind == "onprem"],
    )
    changes = [f"{int(n)}: {side_word(w)}" for n, w in zip(ev.nodes, winners, strict=False) if w != "-"]
    if len({w for w in winners if w != "-"}) > 1:
        flips.append(
            Flip(
                FlipKind.NODE_COUNT,
                _("node count: the cheaper side changes across the sweep ({changes})").format(
                    changes=", ".join(changes)
                ),
            )
        )
    elif changes:
        flips.append(
            Flip(
                FlipKind.NODE_COUNT,
                _("node count: {value} stays cheaper at every node count swept").format(
                    value=side_word(winners[-1] if winners[-1] != "-" else cheaper)
                ),
            )
        )

    verdict, summary = _verdict(reasons, org, t)
    return Decision(
        verdict,
        summary,
        cloud,
        build,
        reasons,
        flips,
        float(u_star) if u_star == u_star else None,
        float(m_star) if math.isfinite(m_star) else None,
        per_option,
    )


def _verdict(reasons: list[Reason], org: OrgContext, t: DecisionThresholds) -> tuple[Verdict, str]:
    """Cost decides unless the context (demand shape, horizon, team, deadline) clearly points the other way.

    Reads each reason's kind, side and numbers only, never its wording."""
    if org.data_residency == "on-prem":
        return "build", _("build: data residency rules out the cloud")
    cost = next(r for r in reasons if r.kind == K.COST)
    cheaper, gap = cost.favours, cost.numbers["gap"]
    kinds = {r.kind for r in reasons}
    late = K.DEADLINE in kinds
    context = [r for r in reasons if r.is_context]
    lean = sum(1 if r.favours == "build" else -1 for r in context)  # > 0: context favours building
    against = "; ".join(r.label for r in context if r.favours == "cloud")
    if cheaper == "build" and gap >= t.close_cost_margin:
        if lean <= -t.context_votes_override_cost:
            return "cloud", _(
                "rent: building is {gap:.0%} cheaper per run on paper, but the context points to cloud ({against})"
            ).format(gap=gap, against=against)
        if late:
            return (
                "hybrid",
                _("rent for this run (the build would miss the deadline), then build for the steady load"),
            )
        if K.BURSTINESS in kinds:
            return (
                "hybrid",
                _(
                    "own the steady base load, rent the peaks: building is cheaper per run but demand is bursty"
                ),
            )
        return "build", _("build: {gap:.0%} cheaper per run at the expected utilisation").format(gap=gap)
    if cheaper == "build":  # within the model's uncertainty: context decides
        if lean > 0 and not late:
            return "build", _(
                "build, narrowly: {gap:.0%} cheaper per run and the context favours owning"
            ).format(gap=gap)
        return (
            "cloud",
            _(
                "rent: building is only {gap:.0%} cheaper per run (within the model's uncertainty) "
                "and the context favours cloud"
            ).format(gap=gap),
        )
    if gap < t.close_cost_margin and lean >= t.context_votes_tip_close_call and not late:
        return (
            "build",
            _(
                "build, narrowly: cloud is only {gap:.0%} cheaper per run and the context favours owning"
            ).format(gap=gap),
        )
    return "cloud", _("rent: cloud is {gap:.0%} cheaper per run at the expected utilisation").format(gap=gap)
