"""The serve-from-cloud-or-own decision for an inference plan, as typed reasons and flips.

Following the source documents' selection logic: production inference with clear peaks and valleys
goes to the cloud (load balancing and autoscaling pay only for the hours used), a flat, long-lived
load, strict residency or an ops team favour owning. Cost decides when the gap is clear (over
close_cost_margin); otherwise the context votes decide. Verdicts read only kinds, sides and numbers.
"""

from __future__ import annotations

from collections.abc import Callable

from gpuwise.plan.decision import Decision, Flip, FlipKind, Reason, ReasonKind
from gpuwise.plan.defaults import DecisionThresholds
from gpuwise.plan.serving.strategies import Strategy
from gpuwise.plan.serving.workload import InferenceWorkload

FAST_GROWTH_PER_YEAR = 0.5  # a fleet sized today is 1.5× short within a year (see the growth reason)


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
            f"traffic peaks at {peak_to_valley:.1f}× its valley: a fleet sized for the peak idles in the valley, "
            "and the source documents send production inference with peaks and valleys to the cloud "
            "(load balancing and autoscaling)", "peaky traffic", {"peak_to_valley": peak_to_valley}))  # fmt: skip
    else:
        out.append(Reason(ReasonKind.STEADY_LOAD, "build",
            f"traffic is flat (peak {peak_to_valley:.1f}× the valley): owned capacity stays busy",
            "flat traffic", {"peak_to_valley": peak_to_valley}))  # fmt: skip
    growth = wl.traffic.growth_per_year
    if growth >= FAST_GROWTH_PER_YEAR:
        out.append(Reason(ReasonKind.GROWTH, "cloud",
            f"demand grows {growth:.0%} a year: owned capacity bought now is short within a year "
            "(expansion takes weeks to months)", "fast growth", {"growth_per_year": growth}))  # fmt: skip
    if org.horizon_years < long_years:
        out.append(Reason(ReasonKind.HORIZON, "cloud",
            f"horizon {org.horizon_years:g} years < {long_years:g}: owning pays back over longer horizons",
            "short horizon", {"horizon_years": org.horizon_years}))  # fmt: skip
    if org.data_residency == "on-prem":
        out.append(Reason(ReasonKind.RESIDENCY, "build", "data must stay on premises", "on-prem residency"))
    if org.compliance:
        out.append(Reason(ReasonKind.COMPLIANCE, "build",
            f"compliance ({', '.join(org.compliance)}): physical isolation is simpler on owned hardware",
            "compliance"))  # fmt: skip
    out.append(
        Reason(ReasonKind.OPS_TEAM, "build", "an ops team can run owned servers", "ops team")
        if org.ops_team
        else Reason(ReasonKind.OPS_TEAM, "cloud", "no ops team: the cloud runs the servers", "no ops team")
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
            "undecided", "no option meets the service target in enough hours", None, None, reasons
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
        reasons.insert(0, Reason(ReasonKind.COST, favours,
            f"{cheaper.title} on {cheaper.hardware.label}: {_money(cheaper.cost_month[1], currency)}/month; "
            f"the best {'owned' if favours == 'cloud' else 'cloud'} option, {dearer.title}, costs {gap:.0%} more "
            f"({_money(dearer.cost_month[1], currency)})",
            "cost", {"cost_month": float(cheaper.cost_month[1]), "other_side_cost_month": float(dearer.cost_month[1]),
                     "gap": gap}))  # fmt: skip
        if gap < close_margin and net_cloud != 0:  # a close call: the context decides
            family = "cloud" if net_cloud > 0 else "own"
        elif gap >= close_margin and favours == "build" and net_cloud >= t.context_votes_override_cost:
            family = "cloud"
    if wl.org.data_residency == "on-prem":
        family = "own"
    if family == "own" and owned is None:
        return Decision("undecided", "no owned option meets the target, and the data must stay on premises",
                        None, None, reasons)  # fmt: skip
    chosen = cloud if family == "cloud" and cloud is not None else (owned or winner)
    verdict = chosen.side
    low, typical, high = (_money(c, currency) for c in chosen.cost_month)
    cost = f"{typical}/month" + (f" (range {low} to {high})" if low != high else "")
    summary = (
        f"{verdict.upper()}: {chosen.title} on {chosen.hardware.label}, {cost}; capacity meets the "
        f"target in {chosen.slo_attainment:.1%} of hours"
    )
    flips = _flips(winner, best, peak_to_valley, wl.traffic.growth_per_year, rerun)
    return Decision(verdict, summary, None, None, reasons, flips)


def _change(fraction: float) -> str:
    return f"{abs(fraction):.0%} {'higher' if fraction > 0 else 'lower'}"


def _cost_side(best: dict[str, Strategy]) -> str | None:
    if not best:
        return None
    return "cloud" if min(best.values(), key=lambda s: s.cost_month[1]).side == "cloud" else "own"


def _flips(winner, best, ptv, growth, rerun) -> list[Flip]:
    flips: list[Flip] = []
    now = "cloud" if winner.side == "cloud" else "own"
    other = "owning" if now == "cloud" else "the cloud"
    for ratio in (1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0):
        if (ratio > ptv) == (now == "cloud"):
            continue  # peakier traffic only helps the cloud, flatter only helps owning
        if _cost_side(rerun(ratio, None)) not in (now, None):
            flips.append(Flip(FlipKind.PEAK_TO_VALLEY,
                f"peak/valley {ratio:g}× instead of {ptv:.1f}× makes {other} cheaper",
                {"peak_to_valley": ratio, "now": ptv}))  # fmt: skip
            break
    for g in (0.0, 0.25, 0.5, 1.0, 2.0):
        if abs(g - growth) < 1e-9:
            continue
        if _cost_side(rerun(None, g)) not in (now, None):
            flips.append(Flip(FlipKind.GROWTH, f"growth of {g:.0%} a year (now {growth:.0%}) makes {other} cheaper",
                              {"growth_per_year": g, "now": growth}))  # fmt: skip
            break
    rival = [s for s in best.values() if (s.side == "cloud") != (winner.side == "cloud")]
    if rival:
        r = min(rival, key=lambda s: s.cost_month[1])
        if winner.side == "cloud":
            change = r.cost_month[1] / winner.cost_month[1] - 1.0
            text = f"cloud prices {_change(change)} (all else equal) make {r.title} as cheap"
        else:
            change = winner.cost_month[1] / r.cost_month[1] - 1.0
            text = f"cloud prices {_change(change)} (all else equal) make {r.title} as cheap as owning"
        flips.append(Flip(FlipKind.PRICE, text, {"cloud_price_change": change}))
    return flips
