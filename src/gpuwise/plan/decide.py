"""Rent or build: a recommendation with reasons, and the inputs that would flip it.

The logic follows the source documents (REFERENCE.md §1, "Selection"): exploration and bursty or
elastic demand favour cloud; very large steady training, strict data residency or a skilled ops team
favour building, which wins on marginal cost over 3+ years of full load. Every reason carries the
number behind it; the verdict is the cost comparison unless a hard constraint (residency, deadline
vs lead time) or the demand shape overrides it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gpuwise.plan.cost import HOURS_PER_YEAR, break_even_months, break_even_utilisation

BURSTY = 2.0  # peak/average above which elastic capacity is the point (an owned fleet idles >= half the time)
LONG_HORIZON_YEARS = 3.0  # source docs: build has lower marginal cost "over 3+ years of full load"
CLOSE_MARGIN = 0.15  # cost gaps below 15% are within the model's uncertainty: let context decide


@dataclass
class Reason:
    favours: str  # "cloud" or "build"
    text: str


@dataclass
class Decision:
    verdict: str  # "cloud", "build", "hybrid" or "undecided"
    summary: str
    best_cloud: int | None  # row index
    best_onprem: int | None
    reasons: list[Reason] = field(default_factory=list)
    flips: list[str] = field(default_factory=list)
    break_even_utilisation: float | None = None
    break_even_months: float | None = None
    per_option: dict[str, dict[str, float]] = field(
        default_factory=dict
    )  # cloud key -> break-even vs best build


def _best(plan, kind: str, pricings: tuple[str, ...] | None = None) -> int | None:
    best, best_cost = None, math.inf
    for o, row in enumerate(plan.rows):
        k = plan.chosen[o]
        if row.kind != kind or k < 0 or not plan.convertible[o] or (pricings and row.pricing not in pricings):
            continue
        cost = plan.run_cost[o, k]
        if cost < best_cost:
            best, best_cost = o, cost
    return best


def _money(value: float, ccy: str) -> str:
    return f"{value:,.0f} {ccy}" if value >= 100 else f"{value:,.2f} {ccy}"


def _sweep_winners(plan, cloud_rows: list[int], onprem_rows: list[int]) -> list[str]:
    """At each node count: which side is cheaper per run (feasible rows only)."""
    out = []
    for k, _n in enumerate(plan.nodes):

        def cheapest(rows, k=k):
            costs = [
                plan.run_cost[o, k] for o in rows if plan.perf.infeasible[o, k] == 0 and plan.convertible[o]
            ]
            return min(costs) if costs else math.inf

        c, b = cheapest(cloud_rows), cheapest(onprem_rows)
        out.append("-" if math.isinf(c) and math.isinf(b) else ("cloud" if c <= b else "build"))
    return out


def break_even_vs(plan, build: int, cloud: int) -> tuple[float, float]:
    """(break-even utilisation, break-even months) of owned build `build` against cloud row `cloud`,
    each at its chosen node count, for the same work. The cloud run is priced pay-per-use."""
    org, onp = plan.workload.org, plan.rows[build].onprem
    kb, kc = plan.chosen[build], plan.chosen[cloud]
    hours_b = plan.hours(build, kb)
    u_eff = min(org.utilisation, 1.0 / org.burstiness)
    fleet_annual = onp.annual_per_node() * plan.nodes[kb] + onp.staff_per_year
    opex_month = (sum(onp.opex_per_year().values()) * plan.nodes[kb] + onp.staff_per_year) / 12.0
    capex = onp.capex_per_node() * plan.nodes[kb]
    if plan.rows[cloud].pays_idle:
        # Reserved capacity is paid every hour, used or not: utilisation cannot flip owned vs reserved, and the
        # monthly bill is fixed. run_cost = price·N·T·fx/u_eff, so price·N·fx = run_cost·u_eff/T.
        monthly = plan.run_cost[cloud, kc] * u_eff / plan.hours(cloud, kc) * HOURS_PER_YEAR / 12.0
        return float("nan"), float(break_even_months(capex, opex_month, monthly))
    cloud_run = plan.run_cost[cloud, kc]
    u_star = break_even_utilisation(fleet_annual, hours_b, cloud_run)
    runs_per_month = u_eff * HOURS_PER_YEAR / 12.0 / hours_b
    return float(u_star), float(break_even_months(capex, opex_month, runs_per_month * cloud_run))


def decide(plan) -> Decision:
    org, wl = plan.workload.org, plan.workload
    ccy = plan.currency
    cloud = _best(plan, "cloud", ("on_demand", "spot"))
    cloud_any = _best(plan, "cloud")
    build = _best(plan, "onprem")
    reasons: list[Reason] = []
    flips: list[str] = []

    if cloud is None and build is None:
        return Decision(
            "undecided", "no option can run this workload (see the reasons per option)", None, None
        )
    if org.data_residency == "on-prem":
        reasons.append(
            Reason(
                "build",
                "data must stay on premises (org.data_residency: on-prem): "
                "cloud options are shown for comparison only",
            )
        )
    elif org.data_residency == "region":
        reasons.append(
            Reason(
                "cloud",
                "data residency 'region' can be met in the cloud by renting in that region only; "
                "check each offer's region",
            )
        )
    if org.compliance:
        reasons.append(
            Reason(
                "build",
                f"compliance requirements ({', '.join(org.compliance)}): "
                "physical isolation is simpler on owned hardware (source docs); "
                "confirm what your cloud certifies",
            )
        )
    if build is None:
        return Decision("cloud", "rent: no on-prem build can run this workload", cloud_any, None, reasons)
    if cloud is None and cloud_any is None:
        why = (
            "data residency rules out the cloud"
            if org.data_residency == "on-prem"
            else "no cloud option qualifies"
        )
        return Decision("build", f"build: {why}", None, build, reasons)
    payg = cloud if cloud is not None else cloud_any  # break-even points are against pay-per-use capacity
    cloud = cloud_any  # the cost comparison takes the cheapest cloud pricing, reserved included

    kb, kc = plan.chosen[build], plan.chosen[cloud]
    cost_b, cost_c = plan.run_cost[build, kb], plan.run_cost[cloud, kc]
    hours_b, hours_c = plan.hours(build, kb), plan.hours(cloud, kc)
    rb, rc = plan.rows[build], plan.rows[cloud]
    cheaper = "build" if cost_b < cost_c else "cloud"
    gap = abs(cost_b - cost_c) / max(cost_b, cost_c)
    reasons.append(
        Reason(
            cheaper,
            (
                f"cost per run at {org.utilisation:.0%} utilisation: "
                f"{rb.label} x{int(plan.nodes[kb])} nodes {_money(cost_b, ccy)} ({hours_b / 24:.1f} days) "
                f"vs {rc.label} {rc.pricing} x{int(plan.nodes[kc])} {_money(cost_c, ccy)} ({hours_c / 24:.1f} days): "
                f"{cheaper} is {gap:.0%} cheaper"
            ),
        )
    )

    # Break-even utilisation and months against the pay-as-you-go cloud option (and, in the JSON, every option).
    rp = plan.rows[payg]
    u_eff = min(org.utilisation, 1.0 / org.burstiness)
    u_star, m_star = break_even_vs(plan, build, payg)
    per_option = {
        plan.rows[o].key: dict(
            zip(("break_even_utilisation", "break_even_months"), break_even_vs(plan, build, o), strict=True)
        )
        for o in plan.shown
        if plan.rows[o].kind == "cloud" and plan.chosen[o] >= 0 and plan.convertible[o]
    }
    payg_name = f"{rp.label} {rp.pricing}"
    if u_star == u_star:
        side = "build" if u_eff > u_star else "cloud"
        reasons.append(
            Reason(
                side,
                f"break-even utilisation vs {payg_name} {u_star:.0%}; "
                f"expected {u_eff:.0%} (utilisation {org.utilisation:.0%}, burstiness {org.burstiness:g})",
            )
        )
        flips.append(
            f"utilisation: against {payg_name}, owning wins above {u_star:.0%} utilisation"
            if u_star <= 1
            else f"utilisation: owning does not beat {payg_name} even at 100% utilisation"
        )
        if rc.pays_idle:
            flips.append(
                f"utilisation does not move the comparison with {rc.label} {rc.pricing}: "
                "reserved and owned capacity both pay for idle hours"
            )
    if math.isfinite(m_star):
        reasons.append(
            Reason(
                "build" if m_star / 12 <= org.horizon_years else "cloud",
                f"break-even after {m_star:.0f} months of steady use (capex, no resale credit) "
                f"vs a {org.horizon_years:g}-year horizon",
            )
        )
    else:
        reasons.append(
            Reason("cloud", "owning never breaks even: monthly opex exceeds the cloud bill for the same work")
        )
    flips.append(
        "price: "
        f"cloud prices would have to {'fall' if cheaper == 'build' else 'rise'} {abs(1 - cost_b / cost_c):.0%} (or on-prem costs {'rise' if cheaper == 'build' else 'fall'} {abs(1 - cost_c / cost_b):.0%}) "
        "to flip the cost comparison"
    )

    # Demand shape and organisation (source documents' selection logic).
    if org.burstiness >= BURSTY:
        reasons.append(
            Reason(
                "cloud",
                f"bursty demand (peak {org.burstiness:g}× average): "
                f"an owned fleet sized for the peak is busy at most {1 / org.burstiness:.0%} of the time",
            )
        )
    if org.horizon_years < LONG_HORIZON_YEARS:
        reasons.append(
            Reason(
                "cloud",
                f"short horizon ({org.horizon_years:g} year{'s' if org.horizon_years != 1 else ''}): "
                "building pays back over 3+ years of steady load (source docs)",
            )
        )
    elif org.utilisation >= 0.7 and org.burstiness < BURSTY:
        reasons.append(
            Reason(
                "build",
                f"steady load ({org.utilisation:.0%} busy, {org.horizon_years:g}-year horizon): "
                "the source documents' case for building",
            )
        )
    reasons.append(
        Reason(
            "build" if org.ops_team else "cloud",
            "an ops team is available to run a cluster"
            if org.ops_team
            else "no ops team: a self-built cluster needs people for BIOS, drivers, fabric and failures",
        )
    )
    ttt_b_days = hours_b / 24
    if wl.deadline_days and rb.lead_time_days + ttt_b_days > wl.deadline_days:
        reasons.append(
            Reason(
                "cloud",
                f"deadline {wl.deadline_days:g} days: "
                f"the build needs {rb.lead_time_days:.0f} days lead time + {ttt_b_days:.1f} days training; "
                "the cloud can start now",
            )
        )

    winners = _sweep_winners(
        plan,
        [o for o, r in enumerate(plan.rows) if r.kind == "cloud"],
        [o for o, r in enumerate(plan.rows) if r.kind == "onprem"],
    )
    changes = [f"{int(n)}: {w}" for n, w in zip(plan.nodes, winners, strict=False) if w != "-"]
    if len({w for w in winners if w != "-"}) > 1:
        flips.append("node count: the cheaper side changes across the sweep (" + ", ".join(changes) + ")")
    elif changes:
        flips.append(
            f"node count: {winners[-1] if winners[-1] != '-' else cheaper} stays cheaper at every node count swept"
        )

    verdict, summary = _verdict(plan, cheaper, gap, reasons, org, wl, rb, ttt_b_days)
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


def _verdict(plan, cheaper, gap, reasons, org, wl, rb, ttt_b_days) -> tuple[str, str]:
    """Cost decides unless the context (demand shape, horizon, team, deadline) clearly points the other way."""
    if org.data_residency == "on-prem":
        return "build", "build: data residency rules out the cloud"
    late = bool(wl.deadline_days and rb.lead_time_days + ttt_b_days > wl.deadline_days)
    context = [r for r in reasons if not r.text.startswith(("cost per run", "break-even", "owning never"))]
    lean = sum(1 if r.favours == "build" else -1 for r in context)  # > 0: context favours building
    against = "; ".join(r.text.split(":")[0] for r in context if r.favours == "cloud")
    if cheaper == "build" and gap >= CLOSE_MARGIN:
        if lean <= -3:
            return "cloud", (
                f"rent: building is {gap:.0%} cheaper per run on paper, "
                f"but the context points to cloud ({against})"
            )
        if late:
            return (
                "hybrid",
                "rent for this run (the build would miss the deadline), then build for the steady load",
            )
        if org.burstiness >= BURSTY:
            return (
                "hybrid",
                "own the steady base load, rent the peaks: building is cheaper per run but demand is bursty",
            )
        return "build", f"build: {gap:.0%} cheaper per run at the expected utilisation"
    if cheaper == "build":  # within the model's uncertainty: context decides
        if lean > 0 and not late:
            return "build", f"build, narrowly: {gap:.0%} cheaper per run and the context favours owning"
        return (
            "cloud",
            f"rent: building is only {gap:.0%} cheaper per run (within the model's uncertainty) and the context favours cloud",
        )
    if gap < CLOSE_MARGIN and lean >= 2 and not late:
        return (
            "build",
            f"build, narrowly: cloud is only {gap:.0%} cheaper per run and the context favours owning",
        )
    return "cloud", f"rent: cloud is {gap:.0%} cheaper per run at the expected utilisation"


def decision_to_json(d: Decision) -> dict:
    return {
        "verdict": d.verdict,
        "summary": d.summary,
        "reasons": [{"favours": r.favours, "text": r.text} for r in d.reasons],
        "flips": d.flips,
        "break_even_utilisation": d.break_even_utilisation,
        "break_even_months": d.break_even_months,
        "break_even_per_cloud_option": {
            k: {n: (v if v == v else None) for n, v in be.items()} for k, be in d.per_option.items()
        },
    }
