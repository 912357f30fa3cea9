"""Words for the decision's data: the named offer to rent and build to buy, cost ranges, and why no cloud
offer or no build qualifies (never a silent fallback). plan/decide.py builds Reasons from these; the
verdict still reads kinds and numbers only.
"""

from __future__ import annotations

from collections import defaultdict

from gpuwise.plan.decision import Pick
from gpuwise.plan.evaluation import Evaluation
from gpuwise.plan.onprem import range_drivers
from gpuwise.providers import get as get_provider

# On-prem inputs in words, for "the range comes mostly from ...".
INPUT_LABELS = {
    "server_price_per_node": "the server price",
    "network_cost_per_node": "the fabric cost",
    "management_network_per_node": "the management network cost",
    "storage_cost_per_node": "the storage cost",
    "spares_fraction": "spares",
    "power_kw_per_node": "node power",
    "load_fraction": "the load factor",
    "pue": "PUE",
    "electricity_per_kwh": "the electricity price",
    "colo_per_kw_month": "the colocation price",
    "staff_per_year": "staff",
    "staff_per_node_year": "staff",
    "support_fraction_per_year": "support",
    "support_per_node_year": "support subscriptions",
    "lifetime_years": "the depreciation life",
    "interest_rate": "the cost of capital",
    "residual_fraction": "the resale value",
}


def pick(ev: Evaluation, o: int) -> Pick:
    """The exact thing to rent or buy: row `o` at its chosen node count, with its cost range."""
    row, k = ev.rows[o], int(ev.chosen[o])
    return Pick(
        side="cloud" if row.kind == "cloud" else "build",
        name=row.label,
        provider=row.provider,
        instance_type=row.instance_type,
        region=row.region,
        pricing=row.pricing,
        nodes=int(ev.nodes[k]),
        gpus_per_node=int(row.numbers.gpus_per_node),
        gpu=row.gpu_name,
        cost_per_run=float(ev.run_cost[o, k]),
        cost_per_run_low=float(ev.run_cost_low[o, k]),
        cost_per_run_high=float(ev.run_cost_high[o, k]),
        billed_hours=float(ev.billed_hours[o, k]),
        run_hours=ev.hours(o, k),
        currency=ev.currency,
    )


def saving(build_cost: float, cloud_cost: float) -> float:
    """Signed share saved by building: +0.3 = build 30% cheaper than the cloud, -0.2 = cloud 20% cheaper."""
    if build_cost <= cloud_cost:
        return 1.0 - build_cost / cloud_cost if cloud_cost > 0 else 0.0
    return -(1.0 - cloud_cost / build_cost)


def _span(a: float, b: float) -> str:
    lo, hi = sorted((abs(a), abs(b)))
    return f"{lo:.0%}" if round(lo, 2) == round(hi, 2) else f"{lo * 100:.0f}–{hi:.0%}"


def range_phrase(best: float, worst: float, drivers: list[str]) -> str:
    """'build is 30–55% cheaper', 'cloud is 5–20% cheaper', or 'it depends ...' when the range crosses 0."""
    if best >= 0 and worst >= 0:
        return f"build is {_span(best, worst)} cheaper"
    if best <= 0 and worst <= 0:
        return f"cloud is {_span(best, worst)} cheaper"
    if not drivers:
        return f"it depends on the on-prem costs (build {best:.0%} cheaper at their low end, cloud {-worst:.0%} at their high end)"
    return (
        f"it depends on {' and '.join(drivers[:2])}: build is {best:.0%} cheaper at the low end of "
        f"the on-prem costs, cloud {-worst:.0%} cheaper at the high end"
    )


def drivers(ev: Evaluation, build: int) -> list[str]:
    """The on-prem inputs that move this build's cost range most, in words, largest first."""
    row, k = ev.rows[build], int(ev.chosen[build])
    if not row.onprem_cases:
        return []
    out: list[str] = []
    for name, _share in range_drivers(row.onprem_cases, int(ev.nodes[k])):
        label = INPUT_LABELS.get(name, name)
        if label not in out:
            out.append(label)
    return out


def _fetch_hint(providers: set[str]) -> str:
    fetchable = sorted(p for p in providers if (prov := get_provider(p)) is not None and prov.fetcher)
    hints = ["give prices with an offers file (cloud.offers_dirs in the options file)"]
    hints += [f"`gpuwise catalog fetch {p}`" for p in fetchable]
    return " or ".join(hints)


# (text, short label, numbers, settled): settled = the other side can be recommended without this one.
Missing = tuple[str, str, dict[str, float], bool]


def no_cloud(ev: Evaluation) -> Missing:
    """Why no cloud offer qualifies, most specific cause first."""
    cloud = [o for o, r in enumerate(ev.rows) if r.kind == "cloud"]
    if not ev.cloud_compared:
        return (
            "cloud offers were not compared (options file: cloud.include: false)",
            "cloud left out",
            {},
            True,
        )
    if not cloud and ev.unpriced:
        where: dict[str, set[str]] = defaultdict(set)
        for u in ev.unpriced:
            where[u.gpu].add(u.region or "any region")
        what = "; ".join(f"{gpu} in {', '.join(sorted(regions))}" for gpu, regions in sorted(where.items()))
        text = f"no priced cloud offer for {what}; {_fetch_hint({u.provider for u in ev.unpriced})}"
        return text, f"no priced cloud offer for {what}", {"unpriced_offers": float(len(ev.unpriced))}, False
    if not cloud:
        return (
            "no cloud offer in the catalog matches the options file's cloud filters "
            "(providers, gpus, regions, min_gpus_per_node); widen them or add an offers file",
            "no matching cloud offer",
            {},
            False,
        )
    if all(not ev.convertible[o] for o in cloud):
        ccys = sorted({ev.rows[o].currency for o in cloud})
        return (
            f"cloud prices are in {', '.join(ccys)} and there is no exchange rate to {ev.currency}; "
            f"add exchange_rates (e.g. {ccys[0]}: 0.14) to compare them",
            f"no exchange rate from {', '.join(ccys)}",
            {},
            False,
        )
    why: dict[str, int] = defaultdict(int)
    for o in cloud:
        for k in range(len(ev.nodes)):
            for r in ev.reasons(o, k):
                why[r] += 1
    top = sorted(why, key=lambda r: -why[r])[:2]
    return (
        "no cloud offer can be used for this run at any node count swept: " + "; ".join(top),
        "no cloud offer can be used for this run",
        {"cloud_options": float(len(cloud))},
        True,
    )


def no_build(ev: Evaluation) -> Missing:
    """Why no on-prem build qualifies."""
    builds = [o for o, r in enumerate(ev.rows) if r.kind == "onprem"]
    if not ev.builds_compared:
        return "no on-prem build was compared (options file: onprem: [])", "builds left out", {}, True
    if not builds:
        return (
            "no on-prem build could be priced: the catalog has no server price for the default builds; "
            "add a build with costs.server_price_per_node under onprem: in an options file",
            "no priced build",
            {},
            False,
        )
    if all(not ev.convertible[o] for o in builds):
        ccy = ev.rows[builds[0]].currency
        return (
            f"build costs are in {ccy} and there is no exchange rate to {ev.currency}; "
            "add exchange_rates to compare them",
            f"no exchange rate from {ccy}",
            {},
            False,
        )
    why = sorted({r for o in builds for k in range(len(ev.nodes)) for r in ev.reasons(o, k)})
    return (
        "no on-prem build can run this workload at any node count swept: " + "; ".join(why[:2]),
        "no build can run this workload",
        {"builds": float(len(builds))},
        True,
    )
