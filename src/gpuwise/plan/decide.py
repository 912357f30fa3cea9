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

from gpuwise.plan import explain
from gpuwise.plan.cost import HOURS_PER_YEAR, break_even_months, break_even_utilisation
from gpuwise.plan.decision import BreakEven, Decision, Flip, FlipKind, Reason, Side, Verdict
from gpuwise.plan.decision import ReasonKind as K
from gpuwise.plan.defaults import DecisionThresholds
from gpuwise.plan.evaluation import Evaluation
from gpuwise.plan.options import OptionRow
from gpuwise.plan.workload import OrgContext, Workload

# Pay-per-use pricings: break-even points are computed against these.
PAY_PER_USE = ("on_demand", "spot", "capacity_block")


def _best(ev: Evaluation, kind: str, pricings: tuple[str, ...] | None = None) -> int | None:
    """The cheapest row of `kind` at its chosen node count; among rows within the node tie tolerance of
    the cheapest, the one with the fewest nodes."""
    candidates = []
    for o, row in enumerate(ev.rows):
        k = ev.chosen[o]
        if row.kind != kind or k < 0 or not ev.convertible[o] or (pricings and row.pricing not in pricings):
            continue
        candidates.append((float(ev.run_cost[o, k]), float(ev.nodes[k]), o))
    if not candidates:
        return None
    cheapest = min(c for c, _n, _o in candidates)
    tie = ev.defaults.decision().node_tie_tolerance
    ties = [c for c in candidates if c[0] <= cheapest * (1.0 + tie)]
    return min(ties, key=lambda c: (c[1], c[0]))[2]


def _money(value: float, ccy: str) -> str:
    return f"{value:,.0f} {ccy}" if value >= 100 else f"{value:,.2f} {ccy}"


def _sweep_winners(ev: Evaluation, cloud_rows: list[int], onprem_rows: list[int]) -> list[str]:
    """At each node count: which side is cheaper per run (feasible rows only)."""
    out = []
    for k, _n in enumerate(ev.nodes):

        def cheapest(rows: list[int], k: int = k) -> float:
            costs = [ev.run_cost[o, k] for o in rows if ev.feasible(o, k) and ev.convertible[o]]
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
                "data must stay on premises (org.data_residency: on-prem): "
                "cloud options are shown for comparison only",
                "data must stay on premises",
            )
        )
    elif org.data_residency == "region":
        reasons.append(
            Reason(
                K.RESIDENCY,
                "cloud",
                "data residency 'region' can be met in the cloud by renting in that region only; "
                "check each offer's region",
                "data residency in one region",
            )
        )
    if org.compliance:
        reasons.append(
            Reason(
                K.COMPLIANCE,
                "build",
                f"compliance requirements ({', '.join(org.compliance)}): "
                "physical isolation is simpler on owned hardware (source docs); "
                "confirm what your cloud certifies",
                f"compliance requirements ({', '.join(org.compliance)})",
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
        label = f"bursty demand (peak {org.burstiness:g}× average)"
        reasons.append(
            Reason(
                K.BURSTINESS,
                "cloud",
                f"{label}: an owned fleet sized for the peak is busy at most {1 / org.burstiness:.0%} of the time",
                label,
                {"burstiness": org.burstiness, "threshold": t.bursty_peak_ratio},
            )
        )
    if org.horizon_years < t.long_horizon_years:
        label = f"short horizon ({org.horizon_years:g} year{'s' if org.horizon_years != 1 else ''})"
        reasons.append(
            Reason(
                K.HORIZON,
                "cloud",
                f"{label}: building pays back over {t.long_horizon_years:g}+ years of steady load (source docs)",
                label,
                {"horizon_years": org.horizon_years, "threshold": t.long_horizon_years},
            )
        )
    elif org.utilisation >= t.steady_utilisation and org.burstiness < t.bursty_peak_ratio:
        label = f"steady load ({org.utilisation:.0%} busy, {org.horizon_years:g}-year horizon)"
        reasons.append(
            Reason(
                K.STEADY_LOAD,
                "build",
                f"{label}: the source documents' case for building",
                label,
                {"utilisation": org.utilisation, "horizon_years": org.horizon_years},
            )
        )
    if org.ops_team:
        reasons.append(
            Reason(
                K.OPS_TEAM,
                "build",
                "an ops team is available to run a cluster",
                "an ops team is available to run a cluster",
            )
        )
    else:
        reasons.append(
            Reason(
                K.OPS_TEAM,
                "cloud",
                "no ops team: a self-built cluster needs people for BIOS, drivers, fabric and failures",
                "no ops team",
            )
        )
    if wl.deadline_days and rb.lead_time_days + ttt_b_days > wl.deadline_days:
        label = f"deadline {wl.deadline_days:g} days"
        reasons.append(
            Reason(
                K.DEADLINE,
                "cloud",
                f"{label}: the build needs {rb.lead_time_days:.0f} days lead time + {ttt_b_days:.1f} days "
                "training; the cloud can start now",
                label,
                {
                    "deadline_days": wl.deadline_days,
                    "lead_time_days": rb.lead_time_days,
                    "build_training_days": ttt_b_days,
                },
            )
        )
    return reasons


def _missing(ev: Evaluation, side: str) -> Reason:
    """Why no cloud offer (side "cloud") or no build (side "build") can be costed, as a typed reason;
    numbers["settled"] = 1 when the other side can be recommended anyway (left out on purpose, or it
    cannot run the workload), 0 when the comparison is missing data."""
    if side == "cloud":
        text, label, numbers, settled = explain.no_cloud(ev)
        return Reason(K.NO_CLOUD_OPTION, "build", text, label, {**numbers, "settled": float(settled)})
    text, label, numbers, settled = explain.no_build(ev)
    return Reason(K.NO_BUILD_OPTION, "cloud", text, label, {**numbers, "settled": float(settled)})


def decide(ev: Evaluation) -> Decision:
    org, wl = ev.workload.org, ev.workload
    t = ev.defaults.decision()
    ccy = ev.currency
    cloud = _best(ev, "cloud", PAY_PER_USE)
    cloud_any = _best(ev, "cloud")
    build = _best(ev, "onprem")
    flips: list[Flip] = []
    rent = explain.pick(ev, cloud_any) if cloud_any is not None else None
    buy = explain.pick(ev, build) if build is not None else None

    if cloud_any is None and build is None:
        missing = [_missing(ev, "cloud"), _missing(ev, "build")]
        return Decision(
            "undecided",
            "no option can be costed: " + "; ".join(r.label for r in missing),
            None,
            None,
            missing,
        )
    reasons = _constraint_reasons(org)
    if build is None:
        why = _missing(ev, "build")
        if why.numbers["settled"]:
            return Decision(
                "cloud", f"{rent.text()}: {why.label}", cloud_any, None, [*reasons, why], rent=rent
            )
        return Decision(
            "undecided",
            f"cannot compare ({why.label}); the best cloud option: {rent.text()}",
            cloud_any,
            None,
            [*reasons, why],
            rent=rent,
        )
    if cloud_any is None:
        if org.data_residency == "on-prem":
            return Decision(
                "build", f"{buy.text()}: data residency rules out the cloud", None, build, reasons, buy=buy
            )
        why = _missing(ev, "cloud")
        if why.numbers["settled"]:
            return Decision("build", f"{buy.text()}: {why.label}", None, build, [*reasons, why], buy=buy)
        return Decision(
            "undecided",
            f"cannot compare ({why.label}); the best build: {buy.text()}",
            None,
            build,
            [*reasons, why],
            buy=buy,
        )
    payg = cloud if cloud is not None else cloud_any  # break-even points are against pay-per-use capacity
    cloud = cloud_any  # the cost comparison takes the cheapest cloud pricing, reserved included
    assert cloud is not None and payg is not None

    kb, kc = ev.chosen[build], ev.chosen[cloud]
    cost_b, cost_c = ev.run_cost[build, kb], ev.run_cost[cloud, kc]
    hours_b, hours_c = ev.hours(build, kb), ev.hours(cloud, kc)
    rb, rc = ev.rows[build], ev.rows[cloud]
    cheaper: Side = "build" if cost_b < cost_c else "cloud"
    gap = abs(cost_b - cost_c) / max(cost_b, cost_c)
    b_low, b_high = float(ev.run_cost_low[build, kb]), float(ev.run_cost_high[build, kb])
    best, worst = explain.saving(b_low, cost_c), explain.saving(b_high, cost_c)
    label = f"cost per run at {org.utilisation:.0%} utilisation"
    billed = ev.billed_hours[cloud, kc]
    billed_days = round(billed / 24)
    billed_txt = (
        f", billed {billed_days} day{'s' if billed_days != 1 else ''}" if billed > hours_c * 1.001 else ""
    )
    reasons.append(
        Reason(
            K.COST,
            cheaper,
            f"{label}: "
            f"{rb.label} x{int(ev.nodes[kb])} nodes {_money(cost_b, ccy)} "
            f"(range {_money(b_low, '').strip()}–{_money(b_high, ccy)}; {hours_b / 24:.1f} days) "
            f"vs {rc.label} {rc.pricing.replace('_', '-')} x{int(ev.nodes[kc])} {_money(cost_c, ccy)} "
            f"({hours_c / 24:.1f} days{billed_txt}): "
            + explain.range_phrase(best, worst, explain.drivers(ev, build)),
            label,
            {
                "build_cost_per_run": float(cost_b),
                "build_cost_per_run_low": b_low,
                "build_cost_per_run_high": b_high,
                "cloud_cost_per_run": float(cost_c),
                "gap": float(gap),
                "saving_best": best,
                "saving_worst": worst,
            },
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
        label = f"break-even utilisation vs {payg_name} {u_star:.0%}"
        reasons.append(
            Reason(
                K.BREAK_EVEN_UTILISATION,
                "build" if u_eff > u_star else "cloud",
                f"{label}; expected {u_eff:.0%} "
                f"(utilisation {org.utilisation:.0%}, burstiness {org.burstiness:g})",
                label,
                {"break_even_utilisation": u_star, "effective_utilisation": u_eff},
            )
        )
        flips.append(
            Flip(
                FlipKind.UTILISATION,
                f"utilisation: against {payg_name}, owning wins above {u_star:.0%} utilisation"
                if u_star <= 1
                else f"utilisation: owning does not beat {payg_name} even at 100% utilisation",
                {"break_even_utilisation": u_star},
            )
        )
        if rc.pays_idle:
            flips.append(
                Flip(
                    FlipKind.RESERVED_UTILISATION,
                    f"utilisation does not move the comparison with {rc.label} {rc.pricing}: "
                    "reserved and owned capacity both pay for idle hours",
                )
            )
    if math.isfinite(m_star):
        reasons.append(
            Reason(
                K.BREAK_EVEN_MONTHS,
                "build" if m_star / 12 <= org.horizon_years else "cloud",
                f"break-even after {m_star:.0f} months of steady use (capex, no resale credit) "
                f"vs a {org.horizon_years:g}-year horizon",
                f"break-even after {m_star:.0f} months",
                {"break_even_months": m_star, "horizon_years": org.horizon_years},
            )
        )
    else:
        reasons.append(
            Reason(
                K.BREAK_EVEN_MONTHS,
                "cloud",
                "owning never breaks even: monthly opex exceeds the cloud bill for the same work",
                "owning never breaks even",
                {"break_even_months": m_star, "horizon_years": org.horizon_years},
            )
        )
    cloud_change, onprem_change = abs(1 - cost_b / cost_c), abs(1 - cost_c / cost_b)
    # The same move at the two ends of the on-prem cost range (a range that crosses zero is said in the
    # cost reason: then one end already flips it).
    ends = sorted(abs(1 - b / cost_c) for b in (b_low, b_high))
    same_side = (b_low < cost_c) == (b_high < cost_c)
    across = f" ({ends[0] * 100:.0f}–{ends[1]:.0%} across the on-prem cost range)" if same_side else ""
    flips.append(
        Flip(
            FlipKind.PRICE,
            "price: "
            f"cloud prices would have to {'fall' if cheaper == 'build' else 'rise'} {cloud_change:.0%}{across} "
            f"or on-prem costs {'rise' if cheaper == 'build' else 'fall'} {onprem_change:.0%} "
            "to flip the cost comparison",
            {
                "cloud_price_change": float(cloud_change),
                "onprem_cost_change": float(onprem_change),
                "cloud_price_change_low": ends[0],
                "cloud_price_change_high": ends[1],
            },
        )
    )

    ttt_b_days = hours_b / 24
    reasons += _context_reasons(org, wl, rb, ttt_b_days, t)

    winners = _sweep_winners(
        ev,
        [o for o, r in enumerate(ev.rows) if r.kind == "cloud"],
        [o for o, r in enumerate(ev.rows) if r.kind == "onprem"],
    )
    changes = [f"{int(n)}: {w}" for n, w in zip(ev.nodes, winners, strict=False) if w != "-"]
    if len({w for w in winners if w != "-"}) > 1:
        flips.append(
            Flip(
                FlipKind.NODE_COUNT,
                "node count: the cheaper side changes across the sweep (" + ", ".join(changes) + ")",
            )
        )
    elif changes:
        flips.append(
            Flip(
                FlipKind.NODE_COUNT,
                f"node count: {winners[-1] if winners[-1] != '-' else cheaper} "
                "stays cheaper at every node count swept",
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
        rent=rent,
        buy=buy,
    )


def _verdict(reasons: list[Reason], org: OrgContext, t: DecisionThresholds) -> tuple[Verdict, str]:
    """Cost decides unless the context (demand shape, horizon, team, deadline) clearly points the other way.
    A cost range that crosses zero (cheaper at the low end of on-prem costs, dearer at the high end) is a
    close call, decided by the context like a gap within the model's uncertainty.

    Reads each reason's kind, side and numbers only, never its wording."""
    if org.data_residency == "on-prem":
        return "build", "build: data residency rules out the cloud"
    cost = next(r for r in reasons if r.kind == K.COST)
    cheaper, gap = cost.favours, cost.numbers["gap"]
    best, worst = cost.numbers["saving_best"], cost.numbers["saving_worst"]
    straddles = best > 0 > worst
    span = explain.range_phrase(best, worst, [])
    kinds = {r.kind for r in reasons}
    late = K.DEADLINE in kinds
    context = [r for r in reasons if r.is_context]
    lean = sum(1 if r.favours == "build" else -1 for r in context)  # > 0: context favours building
    against = "; ".join(r.label for r in context if r.favours == "cloud")
    if cheaper == "build" and gap >= t.close_cost_margin and not straddles:
        if lean <= -t.context_votes_override_cost:
            return "cloud", f"rent: on paper {span} per run, but the context points to cloud ({against})"
        if late:
            return (
                "hybrid",
                "rent for this run (the build would miss the deadline), then build for the steady load",
            )
        if K.BURSTINESS in kinds:
            return (
                "hybrid",
                "own the steady base load, rent the peaks: building is cheaper per run but demand is bursty",
            )
        return "build", f"build: {span} per run at the expected utilisation"
    if cheaper == "build":  # within the model's uncertainty or the cost range: context decides
        if lean > 0 and not late:
            return "build", f"build, narrowly: {span} per run and the context favours owning"
        return (
            "cloud",
            f"rent: {span} per run, within the model's uncertainty or the cost range, "
            "and the context favours cloud",
        )
    if (gap < t.close_cost_margin or straddles) and lean >= t.context_votes_tip_close_call and not late:
        return "build", f"build, narrowly: {span} per run and the context favours owning"
    return "cloud", f"rent: {span} per run at the expected utilisation"
