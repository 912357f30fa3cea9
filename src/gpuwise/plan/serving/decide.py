"""The serve-from-cloud-or-own decision for an inference plan, as typed reasons and flips.

Following the source documents' selection logic: production inference with clear peaks and valleys
goes to the cloud (load balancing and autoscaling pay only for the hours used), a flat, long-lived
load, strict residency or an ops team favour owning. Cost decides when the gap is clear (over
close_cost_margin); otherwise the context votes decide. Verdicts read only kinds, sides and numbers.
"""

from __future__ import annotations

from collections.abc import Callable

from gpuwise.i18n import cmsg, joined, msg
from gpuwise.plan.decision import Decision, Flip, FlipKind, Reason, ReasonKind
from gpuwise.plan.defaults import DecisionThresholds
from gpuwise.plan.serving.strategies import Strategy
from gpuwise.plan.serving.workload import InferenceWorkload

FAST_GROWTH_PER_YEAR = 0.5  # a fleet sized today is 1.5× short within a year (see the growth reason)


def verdict_name(verdict: str) -> str:
    """The verdict as shown (the Decision and the JSON keep the enum value)."""
    names = {
        "cloud": cmsg("verdict", "CLOUD"),
        "build": cmsg("verdict", "BUILD"),
        "hybrid": cmsg("verdict", "HYBRID"),
        "undecided": cmsg("verdict", "UNDECIDED"),
    }
    return names.get(verdict, verdict.upper())


def best_by_side(strategies: list[Strategy], slo_target: float) -> dict[str, Strategy]:
    """Cheapest (typical) acceptable strategy per side: cloud, build, hybrid."""
    best: dict[str, Strategy] = {}
    for s in strategies:
        if s.slo_attainment + 1e-9 < slo_target:
            continue
        if s.side not in best or s.cost_month[1] < best[s.side].cost_month[1]:
            best[s.side] = s
    return best


def _money(x: float, ccy: str) -> str:
    return f"{x:,.0f} {ccy}"


def context_reasons(
    wl: InferenceWorkload, peak_to_valley: float, bursty: float, long_years: float
) -> list[Reason]:
    org, out = wl.org, []
    if peak_to_valley >= bursty:
        out.append(Reason(ReasonKind.BURSTINESS, "cloud",
            msg("traffic peaks at {ratio}× its valley: a fleet sized for the peak idles in the valley, "
              "while cloud capacity follows the traffic (load balancing and autoscaling)").format(ratio=f"{peak_to_valley:.1f}"),
            msg("peaky traffic"), {"peak_to_valley": peak_to_valley}))  # fmt: skip
    else:
        out.append(Reason(ReasonKind.STEADY_LOAD, "build",
            msg("traffic is flat (peak {ratio}× the valley): owned capacity stays busy").format(
                ratio=f"{peak_to_valley:.1f}"),
            msg("flat traffic"), {"peak_to_valley": peak_to_valley}))  # fmt: skip
    growth = wl.traffic.growth_per_year
    if growth >= FAST_GROWTH_PER_YEAR:
        out.append(Reason(ReasonKind.GROWTH, "cloud",
            msg("demand grows {pct} a year: owned capacity bought now is short within a year "
              "(expansion takes weeks to months)").format(pct=f"{growth:.0%}"),
            msg("fast growth"), {"growth_per_year": growth}))  # fmt: skip
    if org.horizon_years < long_years:
        out.append(Reason(ReasonKind.HORIZON, "cloud",
            msg("horizon {years} years < {long}: owning pays back over longer horizons").format(
                years=f"{org.horizon_years:g}", long=f"{long_years:g}"),
            msg("short horizon"), {"horizon_years": org.horizon_years}))  # fmt: skip
    if org.data_residency == "on-prem":
        out.append(
            Reason(ReasonKind.RESIDENCY, "build", msg("data must stay on premises"), msg("on-prem residency"))
        )
    if org.compliance:
        out.append(Reason(ReasonKind.COMPLIANCE, "build",
            msg("compliance ({rules}): physical isolation is simpler on owned hardware").format(
                rules=joined(", ", org.compliance)),
            msg("compliance")))  # fmt: skip
    out.append(
        Reason(ReasonKind.OPS_TEAM, "build", msg("an ops team can run owned servers"), msg("ops team"))
        if org.ops_team
        else Reason(
            ReasonKind.OPS_TEAM, "cloud", msg("no ops team: the cloud runs the servers"), msg("no ops team")
        )
    )
    return out


def decide(
    wl: InferenceWorkload,
    strategies: list[Strategy],
    slo_target: float,
    peak_to_valley: float,
    close_margin: float,
    bursty: float,
    currency: str,
    rerun: Callable[[float | None, float | None], dict[str, Strategy]],
    t: DecisionThresholds,
) -> Decision:
    """`rerun(peak_to_valley, growth)` re-costs every strategy for another traffic shape (for the flips);
    `t` are the training plans' decision thresholds (long horizon, votes that override cost)."""
    best = best_by_side(strategies, slo_target)
    reasons = context_reasons(wl, peak_to_valley, bursty, t.long_horizon_years)
    if not best:
        return Decision(
            "undecided", msg("no option meets the service target in enough hours"), None, None, reasons
        )
    ranked = sorted(best.values(), key=lambda s: s.cost_month[1])
    winner = ranked[0]
    cloud, owned = best.get("cloud"), next((s for s in ranked if s.side != "cloud"), None)
    net_cloud = sum(1 if r.favours == "cloud" else -1 for r in reasons)
    family = "cloud" if winner.side == "cloud" else "own"
    if cloud is not None and owned is not None:
        cheaper, dearer = sorted((cloud, owned), key=lambda s: s.cost_month[1])
        gap = (dearer.cost_month[1] - cheaper.cost_month[1]) / cheaper.cost_month[1]
        favours = "cloud" if cheaper is cloud else "build"
        text = (
            msg("{option} on {hardware}: {cost}/month; the best owned option, {other}, costs {gap} more "
              "({other_cost})")
            if favours == "cloud"
            else msg("{option} on {hardware}: {cost}/month; the best cloud option, {other}, costs {gap} more "
                   "({other_cost})")
        ).format(option=cheaper.title, hardware=cheaper.hardware.label,
                 cost=_money(cheaper.cost_month[1], currency), other=dearer.title, gap=f"{gap:.0%}",
                 other_cost=_money(dearer.cost_month[1], currency))  # fmt: skip
        numbers = {"cost_month": float(cheaper.cost_month[1]),
                   "other_side_cost_month": float(dearer.cost_month[1]), "gap": gap}  # fmt: skip
        reasons.insert(0, Reason(ReasonKind.COST, favours, text, msg("cost"), numbers))
        if gap < close_margin and net_cloud != 0:  # a close call: the context decides
            family = "cloud" if net_cloud > 0 else "own"
        elif gap >= close_margin and favours == "build" and net_cloud >= t.context_votes_override_cost:
            family = "cloud"
    if wl.org.data_residency == "on-prem":
        family = "own"
    if family == "own" and owned is None:
        summary = msg("no owned option meets the target, and the data must stay on premises")
        return Decision("undecided", summary, None, None, reasons)
    chosen = cloud if family == "cloud" and cloud is not None else (owned or winner)
    verdict = chosen.side
    low, typical, high = (_money(c, currency) for c in chosen.cost_month)
    cost = (
        msg("{typical}/month (range {low} to {high})").format(typical=typical, low=low, high=high)
        if low != high
        else msg("{typical}/month").format(typical=typical)
    )
    summary = msg(
        "{verdict}: {option} on {hardware}, {cost}; capacity meets the target in {slo} of hours"
    ).format(
        verdict=verdict_name(verdict),
        option=chosen.title,
        hardware=chosen.hardware.label,
        cost=cost,
        slo=f"{chosen.slo_attainment:.1%}",
    )
    flips = _flips(winner, best, peak_to_valley, wl.traffic.growth_per_year, rerun)
    return Decision(verdict, summary, None, None, reasons, flips)


def _change(fraction: float) -> str:
    pct = f"{abs(fraction):.0%}"
    return msg("{pct} higher").format(pct=pct) if fraction > 0 else msg("{pct} lower").format(pct=pct)


def _cost_side(best: dict[str, Strategy]) -> str | None:
    if not best:
        return None
    return "cloud" if min(best.values(), key=lambda s: s.cost_month[1]).side == "cloud" else "own"


def _flips(winner, best, ptv, growth, rerun) -> list[Flip]:
    flips: list[Flip] = []
    now = "cloud" if winner.side == "cloud" else "own"
    other = msg("owning") if now == "cloud" else msg("the cloud")
    for ratio in (1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0):
        if (ratio > ptv) == (now == "cloud"):
            continue  # peakier traffic only helps the cloud, flatter only helps owning
        if _cost_side(rerun(ratio, None)) not in (now, None):
            flips.append(Flip(FlipKind.PEAK_TO_VALLEY,
                msg("peak/valley {ratio}× instead of {now}× makes {other} cheaper").format(
                    ratio=f"{ratio:g}", now=f"{ptv:.1f}", other=other),
                {"peak_to_valley": ratio, "now": ptv}))  # fmt: skip
            break
    for g in (0.0, 0.25, 0.5, 1.0, 2.0):
        if abs(g - growth) < 1e-9:
            continue
        if _cost_side(rerun(None, g)) not in (now, None):
            flips.append(Flip(FlipKind.GROWTH,
                              msg("growth of {pct} a year (now {now}) makes {other} cheaper").format(
                                  pct=f"{g:.0%}", now=f"{growth:.0%}", other=other),
                              {"growth_per_year": g, "now": growth}))  # fmt: skip
            break
    rival = [s for s in best.values() if (s.side == "cloud") != (winner.side == "cloud")]
    if rival:
        r = min(rival, key=lambda s: s.cost_month[1])
        if winner.side == "cloud":
            change = r.cost_month[1] / winner.cost_month[1] - 1.0
            text = msg("cloud prices {change} (all else equal) make {option} as cheap").format(
                change=_change(change), option=r.title
            )
        else:
            change = winner.cost_month[1] / r.cost_month[1] - 1.0
            text = msg("cloud prices {change} (all else equal) make {option} as cheap as owning").format(
                change=_change(change), option=r.title
            )
        flips.append(Flip(FlipKind.PRICE, text, {"cloud_price_change": change}))
    return flips
