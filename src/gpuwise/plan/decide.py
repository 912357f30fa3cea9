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
from dataclasses import dataclass

from gpuwise.i18n import N_, joined, msg
from gpuwise.plan import explain
from gpuwise.plan.cost import HOURS_PER_YEAR, break_even_months, break_even_utilisation
from gpuwise.plan.decision import (
    BreakEven,
    Decision,
    Flip,
    FlipKind,
    Pick,
    Reason,
    Side,
    Verdict,
    pricing_label,
)
from gpuwise.plan.decision import ReasonKind as K
from gpuwise.plan.defaults import DecisionThresholds
from gpuwise.plan.evaluation import Evaluation
from gpuwise.plan.options import OptionRow
from gpuwise.plan.provenance import Kind as ProvenanceKind
from gpuwise.plan.workload import OrgContext, Workload

# A price older than this is flagged in the decision (cloud list prices move within a year).
PRICE_MAX_AGE_DAYS = 365
# Pay-per-use pricings: break-even points are computed against these.
PAY_PER_USE = ("on_demand", "spot", "capacity_block")
# The two sides in words, where a message names the cheaper one.
SIDE_WORDS = {"cloud": N_("cloud"), "build": N_("build")}


def _best(ev: Evaluation, kind: str, pricings: tuple[str, ...] | None = None) -> int | None:
    """The cheapest row of `kind` at its chosen node count that meets the deadline; among rows within the
    node tie tolerance of the cheapest, the one with the fewest nodes. When no row of `kind` meets the
    deadline: the one that delivers soonest (the closest), never a cheaper one that is later still."""
    rows = [
        o
        for o, row in enumerate(ev.rows)
        if row.kind == kind
        and ev.chosen[o] >= 0
        and ev.convertible[o]
        and not (pricings and row.pricing not in pricings)
    ]
    if not rows:
        return None
    on_time = [o for o in rows if ev.meets_deadline(o)]
    if not on_time:
        return min(rows, key=lambda o: (ev.days_to_result(o), float(ev.run_cost[o, ev.chosen[o]])))
    candidates = [(float(ev.run_cost[o, ev.chosen[o]]), float(ev.nodes[ev.chosen[o]]), o) for o in on_time]
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
                msg(
                    "data must stay on premises (org.data_residency: on-prem): "
                    "cloud options are shown for comparison only"
                ),
                msg("data must stay on premises"),
            )
        )
    elif org.data_residency == "region":
        reasons.append(
            Reason(
                K.RESIDENCY,
                "cloud",
                msg(
                    "data residency 'region' can be met in the cloud by renting in that region only; "
                    "check each offer's region"
                ),
                msg("data residency in one region"),
            )
        )
    if org.compliance:
        reasons.append(
            Reason(
                K.COMPLIANCE,
                "build",
                msg(
                    "compliance requirements ({requirements}): physical isolation is simpler on owned "
                    "hardware; confirm what your cloud certifies"
                ).format(requirements=joined(", ", org.compliance)),
                msg("compliance requirements ({requirements})").format(
                    requirements=joined(", ", org.compliance)
                ),
                {"requirements": float(len(org.compliance))},
            )
        )
    return reasons


def _demand_reasons(org: OrgContext, t: DecisionThresholds) -> list[Reason]:
    """Demand shape and horizon: bursty demand and a short horizon favour cloud, steady load building."""
    reasons = []
    if org.burstiness >= t.bursty_peak_ratio:
        label = msg("bursty demand (peak {ratio}× average)").format(ratio=f"{org.burstiness:g}")
        reasons.append(
            Reason(
                K.BURSTINESS,
                "cloud",
                msg("{label}: an owned fleet sized for the peak is busy at most {pct} of the time").format(
                    label=label, pct=f"{1 / org.burstiness:.0%}"
                ),
                label,
                {"burstiness": org.burstiness, "threshold": t.bursty_peak_ratio},
            )
        )
    if org.horizon_years < t.long_horizon_years:
        label = (
            msg("short horizon (1 year)")
            if org.horizon_years == 1
            else msg("short horizon ({years} years)").format(years=f"{org.horizon_years:g}")
        )
        reasons.append(
            Reason(
                K.HORIZON,
                "cloud",
                msg("{label}: building pays back only over {years}+ years of steady load").format(
                    label=label, years=f"{t.long_horizon_years:g}"
                ),
                label,
                {"horizon_years": org.horizon_years, "threshold": t.long_horizon_years},
            )
        )
    elif org.utilisation >= t.steady_utilisation and org.burstiness < t.bursty_peak_ratio:
        label = msg("steady load ({pct} busy, {years}-year horizon)").format(
            pct=f"{org.utilisation:.0%}", years=f"{org.horizon_years:g}"
        )
        reasons.append(
            Reason(
                K.STEADY_LOAD,
                "build",
                msg("{label}: owned hardware stays busy, so its lower running cost pays back").format(
                    label=label
                ),
                label,
                {"utilisation": org.utilisation, "horizon_years": org.horizon_years},
            )
        )
    return reasons


def _team_reason(org: OrgContext) -> Reason:
    """An ops team favours building; without one, cloud."""
    if org.ops_team:
        return Reason(
            K.OPS_TEAM,
            "build",
            msg("an ops team is available to run a cluster"),
            msg("an ops team is available to run a cluster"),
        )
    return Reason(
        K.OPS_TEAM,
        "cloud",
        msg("no ops team: a self-built cluster needs people for BIOS, drivers, fabric and failures"),
        msg("no ops team"),
    )


def _deadline_reason(wl: Workload, rb: OptionRow, ttt_b_days: float, cloud_days: float) -> Reason | None:
    """When the build's lead time plus its training time misses the deadline: the side that finishes first."""
    if not (wl.deadline_days and rb.lead_time_days + ttt_b_days > wl.deadline_days):
        return None
    label = msg("deadline {days} days").format(days=f"{wl.deadline_days:g}")
    if cloud_days <= wl.deadline_days:
        cloud_part = msg("the cloud option starts now and finishes in {days} days").format(
            days=f"{cloud_days:.1f}"
        )
    else:
        cloud_part = msg("the cloud option misses it too ({days} days)").format(days=f"{cloud_days:.1f}")
    return Reason(
        K.DEADLINE,
        "cloud" if cloud_days < rb.lead_time_days + ttt_b_days else "build",
        msg("{label}: the build needs {lead} days lead time + {train} days training; {cloud}").format(
            label=label, lead=f"{rb.lead_time_days:.0f}", train=f"{ttt_b_days:.1f}", cloud=cloud_part
        ),
        label,
        {
            "deadline_days": wl.deadline_days,
            "lead_time_days": rb.lead_time_days,
            "build_training_days": ttt_b_days,
            "cloud_days": cloud_days,
        },
    )


def _context_reasons(
    org: OrgContext, wl: Workload, rb: OptionRow, ttt_b_days: float, t: DecisionThresholds, cloud_days: float
) -> list[Reason]:
    """Demand shape, horizon, team and deadline (the rent-or-build selection logic)."""
    deadline = _deadline_reason(wl, rb, ttt_b_days, cloud_days)
    return [*_demand_reasons(org, t), _team_reason(org), *([deadline] if deadline else [])]


def _missing(ev: Evaluation, side: str) -> Reason:
    """Why no cloud offer (side "cloud") or no build (side "build") can be costed, as a typed reason;
    numbers["settled"] = 1 when the other side can be recommended anyway (left out on purpose, or it
    cannot run the workload), 0 when the comparison is missing data."""
    if side == "cloud":
        text, label, numbers, settled = explain.no_cloud(ev)
        return Reason(K.NO_CLOUD_OPTION, "build", text, label, {**numbers, "settled": float(settled)})
    text, label, numbers, settled = explain.no_build(ev)
    return Reason(K.NO_BUILD_OPTION, "cloud", text, label, {**numbers, "settled": float(settled)})


@dataclass(frozen=True)
class _Picks:
    """The rows the decision compares: the cheapest cloud row at any pricing, the cheapest pay-per-use one
    (break-even points are against pay-per-use capacity) and the cheapest build; None where there is none."""

    cloud: int | None
    payg: int | None
    build: int | None
    rent: Pick | None
    buy: Pick | None


def _picks(ev: Evaluation) -> _Picks:
    cloud, payg, build = _best(ev, "cloud"), _best(ev, "cloud", PAY_PER_USE), _best(ev, "onprem")
    return _Picks(
        cloud,
        payg if payg is not None else cloud,
        build,
        explain.pick(ev, cloud) if cloud is not None else None,
        explain.pick(ev, build) if build is not None else None,
    )


def _nothing_costed(ev: Evaluation) -> Decision:
    missing = [_missing(ev, "cloud"), _missing(ev, "build")]
    return Decision(
        "undecided",
        msg("no option can be costed: {why}").format(why=joined("; ", (r.label for r in missing))),
        None,
        None,
        missing,
    )


def _cloud_only(ev: Evaluation, p: _Picks, reasons: list[Reason]) -> Decision:
    """No build can be costed: cloud when that is settled (left out, or none can run it), else undecided."""
    assert p.rent is not None
    why = _missing(ev, "build")
    if why.numbers["settled"]:
        return Decision("cloud", f"{p.rent.text()}: {why.label}", p.cloud, None, [*reasons, why], rent=p.rent)
    return Decision(
        "undecided",
        msg("cannot compare ({why}); the best cloud option: {pick}").format(
            why=why.label, pick=p.rent.text()
        ),
        p.cloud,
        None,
        [*reasons, why],
        rent=p.rent,
    )


def _build_only(ev: Evaluation, p: _Picks, reasons: list[Reason]) -> Decision:
    """No cloud offer can be costed: build when residency or the missing side settles it, else undecided."""
    assert p.buy is not None
    if ev.workload.org.data_residency == "on-prem":
        return Decision(
            "build",
            msg("{pick}: data residency rules out the cloud").format(pick=p.buy.text()),
            None,
            p.build,
            reasons,
            buy=p.buy,
        )
    why = _missing(ev, "cloud")
    if why.numbers["settled"]:
        return Decision("build", f"{p.buy.text()}: {why.label}", None, p.build, [*reasons, why], buy=p.buy)
    return Decision(
        "undecided",
        msg("cannot compare ({why}); the best build: {pick}").format(why=why.label, pick=p.buy.text()),
        None,
        p.build,
        [*reasons, why],
        buy=p.buy,
    )


@dataclass(frozen=True)
class _RunCosts:
    """The compared build and cloud rows, each at its chosen node count: cost per run, its range, hours."""

    kb: int
    kc: int
    build: float
    cloud: float
    build_low: float
    build_high: float
    build_hours: float
    cloud_hours: float

    @property
    def cheaper(self) -> Side:
        return "build" if self.build < self.cloud else "cloud"

    @property
    def gap(self) -> float:
        return abs(self.build - self.cloud) / max(self.build, self.cloud)


def _run_costs(ev: Evaluation, build: int, cloud: int) -> _RunCosts:
    kb, kc = ev.chosen[build], ev.chosen[cloud]
    return _RunCosts(
        kb,
        kc,
        ev.run_cost[build, kb],
        ev.run_cost[cloud, kc],
        float(ev.run_cost_low[build, kb]),
        float(ev.run_cost_high[build, kb]),
        ev.hours(build, kb),
        ev.hours(cloud, kc),
    )


def _cloud_time(ev: Evaluation, cloud: int, c: _RunCosts) -> str:
    """The cloud run's days, with the billed days when billing rounds up (capacity blocks, minimum terms)."""
    billed = ev.billed_hours[cloud, c.kc]
    billed_days = round(billed / 24)
    cloud_days = f"{c.cloud_hours / 24:.1f}"
    if billed <= c.cloud_hours * 1.001:
        return msg("{days} days").format(days=cloud_days)
    if billed_days == 1:
        return msg("{days} days, billed 1 day").format(days=cloud_days)
    return msg("{days} days, billed {billed} days").format(days=cloud_days, billed=billed_days)


def _cost_reason(ev: Evaluation, build: int, cloud: int, c: _RunCosts) -> Reason:
    """Cost per run of the compared build and cloud option, with the on-prem cost range."""
    ccy, rb, rc = ev.currency, ev.rows[build], ev.rows[cloud]
    best, worst = explain.saving(c.build_low, c.cloud), explain.saving(c.build_high, c.cloud)
    label = msg("cost per run at {pct} utilisation").format(pct=f"{ev.workload.org.utilisation:.0%}")
    return Reason(
        K.COST,
        c.cheaper,
        msg(
            "{label}: {build} x{build_nodes} nodes {build_cost} (range {low}–{high}; {build_days} days) "
            "vs {cloud} {pricing} x{cloud_nodes} {cloud_cost} ({cloud_time}): {phrase}"
        ).format(
            label=label,
            build=rb.label,
            build_nodes=int(ev.nodes[c.kb]),
            build_cost=_money(c.build, ccy),
            low=_money(c.build_low, "").strip(),
            high=_money(c.build_high, ccy),
            build_days=f"{c.build_hours / 24:.1f}",
            cloud=rc.label,
            pricing=pricing_label(rc.pricing),
            cloud_nodes=int(ev.nodes[c.kc]),
            cloud_cost=_money(c.cloud, ccy),
            cloud_time=_cloud_time(ev, cloud, c),
            phrase=explain.range_phrase(best, worst, explain.drivers(ev, build)),
        ),
        label,
        {
            "build_cost_per_run": float(c.build),
            "build_cost_per_run_low": c.build_low,
            "build_cost_per_run_high": c.build_high,
            "cloud_cost_per_run": float(c.cloud),
            "gap": float(c.gap),
            "saving_best": best,
            "saving_worst": worst,
        },
    )


def _break_even_per_option(ev: Evaluation, build: int) -> dict[str, BreakEven]:
    """The build's break-even against every shown cloud option that can be costed (the JSON's per-option table)."""
    return {
        ev.rows[o].key: break_even_vs(ev, build, o)
        for o in ev.shown
        if ev.rows[o].kind == "cloud" and ev.chosen[o] >= 0 and ev.convertible[o]
    }


def _utilisation_reason_and_flips(
    ev: Evaluation, payg: int, cloud: int, u_star: float
) -> tuple[Reason, list[Flip]]:
    """Break-even utilisation against the pay-as-you-go option: the reason, the utilisation flip, and (when the
    compared cloud option is reserved) why utilisation cannot flip owned vs reserved."""
    org, rp, rc = ev.workload.org, ev.rows[payg], ev.rows[cloud]
    u_eff = min(org.utilisation, 1.0 / org.burstiness)
    payg_name = f"{rp.label} {pricing_label(rp.pricing)}"
    label = msg("break-even utilisation vs {option} {pct}").format(option=payg_name, pct=f"{u_star:.0%}")
    reason = Reason(
        K.BREAK_EVEN_UTILISATION,
        "build" if u_eff > u_star else "cloud",
        msg("{label}; expected {expected} (utilisation {utilisation}, burstiness {burstiness})").format(
            label=label,
            expected=f"{u_eff:.0%}",
            utilisation=f"{org.utilisation:.0%}",
            burstiness=f"{org.burstiness:g}",
        ),
        label,
        {"break_even_utilisation": u_star, "effective_utilisation": u_eff},
    )
    flips = [
        Flip(
            FlipKind.UTILISATION,
            msg("utilisation: against {option}, owning wins above {pct} utilisation").format(
                option=payg_name, pct=f"{u_star:.0%}"
            )
            if u_star <= 1
            else msg("utilisation: owning does not beat {option} even at {pct} utilisation").format(
                option=payg_name, pct="100%"
            ),
            {"break_even_utilisation": u_star},
        )
    ]
    if rc.pays_idle:
        flips.append(
            Flip(
                FlipKind.RESERVED_UTILISATION,
                msg(
                    "utilisation does not move the comparison with {option}: "
                    "reserved and owned capacity both pay for idle hours"
                ).format(option=f"{rc.label} {pricing_label(rc.pricing)}"),
            )
        )
    return reason, flips


def _break_even_months_reason(m_star: float, horizon_years: float) -> Reason:
    if math.isfinite(m_star):
        return Reason(
            K.BREAK_EVEN_MONTHS,
            "build" if m_star / 12 <= horizon_years else "cloud",
            msg(
                "break-even after {months} months of steady use (capex, no resale credit) vs a {years}-year horizon"
            ).format(months=f"{m_star:.0f}", years=f"{horizon_years:g}"),
            msg("break-even after {months} months").format(months=f"{m_star:.0f}"),
            {"break_even_months": m_star, "horizon_years": horizon_years},
        )
    return Reason(
        K.BREAK_EVEN_MONTHS,
        "cloud",
        msg("owning never breaks even: monthly opex exceeds the cloud bill for the same work"),
        msg("owning never breaks even"),
        {"break_even_months": m_star, "horizon_years": horizon_years},
    )


def _price_flip(c: _RunCosts) -> Flip:
    """How far prices would have to move to flip the cost comparison, at both ends of the on-prem cost range
    (a range that crosses zero is said in the cost reason: then one end already flips it)."""
    cloud_change, onprem_change = abs(1 - c.build / c.cloud), abs(1 - c.cloud / c.build)
    ends = sorted(abs(1 - b / c.cloud) for b in (c.build_low, c.build_high))
    same_side = (c.build_low < c.cloud) == (c.build_high < c.cloud)
    across = (
        msg(" ({span} across the on-prem cost range)").format(span=f"{ends[0] * 100:.0f}–{ends[1]:.0%}")
        if same_side
        else ""
    )
    price_flip = (
        msg(
            "price: cloud prices would have to fall {cloud}{across} or on-prem costs rise {onprem} "
            "to flip the cost comparison"
        )
        if c.cheaper == "build"
        else msg(
            "price: cloud prices would have to rise {cloud}{across} or on-prem costs fall {onprem} "
            "to flip the cost comparison"
        )
    )
    return Flip(
        FlipKind.PRICE,
        price_flip.format(cloud=f"{cloud_change:.0%}", across=across, onprem=f"{onprem_change:.0%}"),
        {
            "cloud_price_change": float(cloud_change),
            "onprem_cost_change": float(onprem_change),
            "cloud_price_change_low": ends[0],
            "cloud_price_change_high": ends[1],
        },
    )


def _node_count_flip(ev: Evaluation, cheaper: Side) -> Flip | None:
    """Whether the cheaper side changes across the node-count sweep, or stays the same at every count."""
    winners = _sweep_winners(
        ev,
        [o for o, r in enumerate(ev.rows) if r.kind == "cloud"],
        [o for o, r in enumerate(ev.rows) if r.kind == "onprem"],
    )
    changes = [f"{int(n)}: {msg(SIDE_WORDS[w])}" for n, w in zip(ev.nodes, winners, strict=False) if w != "-"]
    if len({w for w in winners if w != "-"}) > 1:
        return Flip(
            FlipKind.NODE_COUNT,
            msg("node count: the cheaper side changes across the sweep ({changes})").format(
                changes=joined(", ", changes)
            ),
        )
    if changes:
        side = winners[-1] if winners[-1] != "-" else cheaper
        return Flip(
            FlipKind.NODE_COUNT,
            msg("node count: {side} stays cheaper at every node count swept").format(
                side=msg(SIDE_WORDS[side])
            ),
        )
    return None


def _compare(ev: Evaluation, build: int, cloud: int, payg: int, p: _Picks) -> Decision:
    """Both sides can be costed: the reasons (constraints, cost, break-even, context), the flips, the verdict
    read from the reasons, then the caveats."""
    org, t = ev.workload.org, ev.defaults.decision()
    c = _run_costs(ev, build, cloud)
    reasons = [*_constraint_reasons(org), _cost_reason(ev, build, cloud, c)]
    flips: list[Flip] = []
    be = break_even_vs(ev, build, payg)
    u_star, m_star = be.utilisation, be.months
    if u_star == u_star:
        reason, utilisation_flips = _utilisation_reason_and_flips(ev, payg, cloud, u_star)
        reasons.append(reason)
        flips += utilisation_flips
    reasons.append(_break_even_months_reason(m_star, org.horizon_years))
    flips.append(_price_flip(c))
    reasons += _context_reasons(
        org, ev.workload, ev.rows[build], c.build_hours / 24, t, ev.days_to_result(cloud)
    )
    node_flip = _node_count_flip(ev, c.cheaper)
    if node_flip is not None:
        flips.append(node_flip)
    verdict, summary = _verdict(reasons, org, t)
    caveats = _caveats(ev, cloud, build)
    late = next((r for r in caveats if r.kind == K.NO_OPTION_IN_TIME), None)
    if late is not None:
        summary = f"{late.label}: {summary}"
    return Decision(
        verdict,
        summary,
        cloud,
        build,
        reasons + caveats,
        flips,
        float(u_star) if u_star == u_star else None,
        float(m_star) if math.isfinite(m_star) else None,
        _break_even_per_option(ev, build),
        rent=p.rent,
        buy=p.buy,
    )


def decide(ev: Evaluation) -> Decision:
    """Pick the cheapest cloud option and build, then compare them, or say why one side cannot be costed."""
    p = _picks(ev)
    if p.cloud is None and p.build is None:
        return _nothing_costed(ev)
    if p.build is None:
        return _cloud_only(ev, p, _constraint_reasons(ev.workload.org))
    if p.cloud is None:
        return _build_only(ev, p, _constraint_reasons(ev.workload.org))
    assert p.payg is not None
    return _compare(ev, p.build, p.cloud, p.payg, p)


def _deadline_caveat(ev: Evaluation, cloud: int, build: int) -> Reason | None:
    """Neither pick meets the deadline: the closest one."""
    deadline = ev.workload.deadline_days
    if not deadline or ev.meets_deadline(cloud) or ev.meets_deadline(build):
        return None
    closest = min((cloud, build), key=ev.days_to_result)
    label = msg("no option meets the {days}-day deadline").format(days=f"{deadline:g}")
    return Reason(
        K.NO_OPTION_IN_TIME,
        "cloud" if ev.rows[closest].kind == "cloud" else "build",
        msg("{label}; the closest is {option} in {need} days (lead time included)").format(
            label=label, option=ev.rows[closest].label, need=f"{ev.days_to_result(closest):.1f}"
        ),
        label,
        {"deadline_days": deadline, "closest_days": ev.days_to_result(closest)},
    )


def _spot_caveat(ev: Evaluation, o: int) -> Reason:
    """A spot pick's expected interruptions over the run and the wall time they cost."""
    row, k = ev.rows[o], int(ev.chosen[o])
    loss = float(ev.perf.interruption_loss[o, k])
    expected = int(ev.nodes[k]) * row.numbers.interruptions_per_node_hour * ev.hours(o, k)
    return Reason(
        K.SPOT_INTERRUPTIONS,
        "cloud",
        msg(
            "spot on {option}: about {count} interruptions over the run, {pct} more wall time ({how})"
        ).format(
            option=row.label,
            count=f"{expected:.0f}",
            pct=f"{loss / (1 - loss):.1%}",
            how=row.provenance.get("spot_short", ""),
        ),
        msg("spot interruptions"),
        {"interruptions": expected, "time_lost_fraction": loss},
    )


def _fallback_mfu_caveat(row: OptionRow) -> Reason:
    return Reason(
        K.ESTIMATE,
        "cloud" if row.kind == "cloud" else "build",
        msg(
            "{option}: no measured or published MFU for {gpu}; the plan used the generic "
            "median ({source}): run `gpuwise bench` on it and pass --calibrate"
        ).format(option=row.label, gpu=row.gpu_name, source=row.provenance["mfu"]),
        msg("MFU is a generic estimate"),
        {"mfu": float(row.numbers.mfu)},
    )


def _price_age_caveat(row: OptionRow, age: int) -> Reason:
    return Reason(
        K.PRICE_AGE,
        "cloud" if row.kind == "cloud" else "build",
        msg("the price of {option} dates from {date} ({days} days ago): check today's price").format(
            option=row.label, date=row.price_as_of.isoformat(), days=f"{age:.0f}"
        ),
        msg("price over a year old"),
        {"price_age_days": float(age)},
    )


def _caveats(ev: Evaluation, cloud: int, build: int) -> list[Reason]:
    """What the reader must know about the picks that is not a vote: no option meets the deadline, a spot
    pick's interruptions, a model input that fell back to a generic default, a price over a year old."""
    late = _deadline_caveat(ev, cloud, build)
    out: list[Reason] = [late] if late is not None else []
    for o in (cloud, build):
        row = ev.rows[o]
        if row.pricing == "spot":
            out.append(_spot_caveat(ev, o))
        if row.provenance.kind("mfu") is ProvenanceKind.FALLBACK:
            out.append(_fallback_mfu_caveat(row))
        age = row.price_age_days
        if age is not None and age > PRICE_MAX_AGE_DAYS:
            out.append(_price_age_caveat(row, age))
    return out


def _verdict(reasons: list[Reason], org: OrgContext, t: DecisionThresholds) -> tuple[Verdict, str]:
    """Cost decides unless the context (demand shape, horizon, team, deadline) clearly points the other way.
    A cost range that crosses zero (cheaper at the low end of on-prem costs, dearer at the high end) is a
    close call, decided by the context like a gap within the model's uncertainty.

    Reads each reason's kind, side and numbers only, never its wording."""
    if org.data_residency == "on-prem":
        return "build", msg("build: data residency rules out the cloud")
    cost = next(r for r in reasons if r.kind == K.COST)
    cheaper, gap = cost.favours, cost.numbers["gap"]
    best, worst = cost.numbers["saving_best"], cost.numbers["saving_worst"]
    straddles = best > 0 > worst
    span = explain.range_phrase(best, worst, [])
    kinds = {r.kind for r in reasons}
    late = K.DEADLINE in kinds
    context = [r for r in reasons if r.is_context]
    lean = sum(1 if r.favours == "build" else -1 for r in context)  # > 0: context favours building
    against = joined("; ", (r.label for r in context if r.favours == "cloud"))
    if cheaper == "build" and gap >= t.close_cost_margin and not straddles:
        if lean <= -t.context_votes_override_cost:
            return "cloud", msg(
                "rent: on paper {span} per run, but the context points to cloud ({against})"
            ).format(span=span, against=against)
        if late:
            return (
                "hybrid",
                msg("rent for this run (the build would miss the deadline), then build for the steady load"),
            )
        if K.BURSTINESS in kinds:
            return (
                "hybrid",
                msg(
                    "own the steady base load, rent the peaks: building is cheaper per run but demand is bursty"
                ),
            )
        return "build", msg("build: {span} per run at the expected utilisation").format(span=span)
    narrowly = msg("build, narrowly: {span} per run and the context favours owning").format(span=span)
    if cheaper == "build":  # within the model's uncertainty or the cost range: context decides
        if lean > 0 and not late:
            return "build", narrowly
        return (
            "cloud",
            msg(
                "rent: {span} per run, within the model's uncertainty or the cost range, "
                "and the context favours cloud"
            ).format(span=span),
        )
    if (gap < t.close_cost_margin or straddles) and lean >= t.context_votes_tip_close_call and not late:
        return "build", narrowly
    return "cloud", msg("rent: {span} per run at the expected utilisation").format(span=span)
