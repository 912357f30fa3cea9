"""Words for the decision's data: the named offer to rent and build to buy, cost ranges, and why no cloud
offer or no build qualifies (never a silent fallback). plan/decide.py builds Reasons from these; the
verdict still reads kinds and numbers only.
"""

from __future__ import annotations

from collections import defaultdict

from gpuwise.i18n import N_, joined, msg
from gpuwise.plan.decision import Pick
from gpuwise.plan.evaluation import Evaluation
from gpuwise.plan.onprem import range_drivers
from gpuwise.providers import get as get_provider

# On-prem inputs in words, for "the range comes mostly from ...".
INPUT_LABELS = {
    "server_price_per_node": N_("the server price"),
    "network_cost_per_node": N_("the fabric cost"),
    "management_network_per_node": N_("the management network cost"),
    "storage_cost_per_node": N_("the storage cost"),
    "spares_fraction": N_("spares"),
    "power_kw_per_node": N_("node power"),
    "load_fraction": N_("the load factor"),
    "pue": N_("PUE"),
    "electricity_per_kwh": N_("the electricity price"),
    "colo_per_kw_month": N_("the colocation price"),
    "staff_per_year": N_("staff"),
    "staff_per_node_year": N_("staff"),
    "support_fraction_per_year": N_("support"),
    "support_per_node_year": N_("support subscriptions"),
    "lifetime_years": N_("the depreciation life"),
    "interest_rate": N_("the cost of capital"),
    "residual_fraction": N_("the resale value"),
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
        price_as_of=row.price_as_of.isoformat() if row.price_as_of else None,
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
        return msg("build is {span} cheaper").format(span=_span(best, worst))
    if best <= 0 and worst <= 0:
        return msg("cloud is {span} cheaper").format(span=_span(best, worst))
    if not drivers:
        return msg(
            "it depends on the on-prem costs (build {best} cheaper at their low end, cloud {worst} at their high end)"
        ).format(best=f"{best:.0%}", worst=f"{-worst:.0%}")
    return msg(
        "it depends on {drivers}: build is {best} cheaper at the low end of the on-prem costs, "
        "cloud {worst} cheaper at the high end"
    ).format(drivers=msg(" and ").join(drivers[:2]), best=f"{best:.0%}", worst=f"{-worst:.0%}")


def drivers(ev: Evaluation, build: int) -> list[str]:
    """The on-prem inputs that move this build's cost range most, in words, largest first."""
    row, k = ev.rows[build], int(ev.chosen[build])
    if not row.onprem_cases:
        return []
    out: list[str] = []
    for name, _share in range_drivers(row.onprem_cases, int(ev.nodes[k])):
        label = msg(INPUT_LABELS[name]) if name in INPUT_LABELS else name
        if label not in out:
            out.append(label)
    return out


def _fetch_hint(providers: set[str]) -> str:
    fetchable = sorted(p for p in providers if (prov := get_provider(p)) is not None and prov.fetcher)
    hints = [msg("give prices with an offers file (cloud.offers_dirs in the options file)")]
    hints += [f"`gpuwise catalog fetch {p}`" for p in fetchable]
    return msg(" or ").join(hints)


# (text, short label, numbers, settled): settled = the other side can be recommended without this one.
Missing = tuple[str, str, dict[str, float], bool]


def no_cloud(ev: Evaluation) -> Missing:
    """Why no cloud offer qualifies, most specific cause first."""
    cloud = [o for o, r in enumerate(ev.rows) if r.kind == "cloud"]
    if not ev.cloud_compared:
        return (
            msg("cloud offers were not compared (options file: cloud.include: false)"),
            msg("cloud left out"),
            {},
            True,
        )
    if not cloud and ev.unpriced:
        where: dict[str, set[str]] = defaultdict(set)
        for u in ev.unpriced:
            where[u.gpu].add(u.region or msg("any region"))
        what = joined(
            "; ",
            (
                msg("{gpu} in {regions}").format(gpu=gpu, regions=joined(", ", sorted(regions)))
                for gpu, regions in sorted(where.items())
            ),
        )
        label = msg("no priced cloud offer for {what}").format(what=what)
        text = f"{label}; {_fetch_hint({u.provider for u in ev.unpriced})}"
        return text, label, {"unpriced_offers": float(len(ev.unpriced))}, False
    if not cloud:
        return (
            msg(
                "no cloud offer in the catalog matches the options file's cloud filters "
                "(providers, gpus, regions, min_gpus_per_node); widen them or add an offers file"
            ),
            msg("no matching cloud offer"),
            {},
            False,
        )
    if all(not ev.convertible[o] for o in cloud):
        ccys = sorted({ev.rows[o].currency for o in cloud})
        return (
            msg(
                "cloud prices are in {currencies} and there is no exchange rate to {currency}; "
                "add exchange_rates (e.g. {example}: 0.14) to compare them"
            ).format(currencies=joined(", ", ccys), currency=ev.currency, example=ccys[0]),
            msg("no exchange rate from {currencies}").format(currencies=joined(", ", ccys)),
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
        msg("no cloud offer can be used for this run at any node count swept: {why}").format(
            why=joined("; ", top)
        ),
        msg("no cloud offer can be used for this run"),
        {"cloud_options": float(len(cloud))},
        True,
    )


def no_build(ev: Evaluation) -> Missing:
    """Why no on-prem build qualifies."""
    builds = [o for o, r in enumerate(ev.rows) if r.kind == "onprem"]
    if not ev.builds_compared:
        return (
            msg("no on-prem build was compared (options file: onprem: [])"),
            msg("builds left out"),
            {},
            True,
        )
    if not builds:
        return (
            msg(
                "no on-prem build could be priced: the catalog has no server price for the default builds; "
                "add a build with costs.server_price_per_node under onprem: in an options file"
            ),
            msg("no priced build"),
            {},
            False,
        )
    if all(not ev.convertible[o] for o in builds):
        ccy = ev.rows[builds[0]].currency
        return (
            msg(
                "build costs are in {currencies} and there is no exchange rate to {currency}; "
                "add exchange_rates to compare them"
            ).format(currencies=ccy, currency=ev.currency),
            msg("no exchange rate from {currencies}").format(currencies=ccy),
            {},
            False,
        )
    why = sorted({r for o in builds for k in range(len(ev.nodes)) for r in ev.reasons(o, k)})
    return (
        msg("no on-prem build can run this workload at any node count swept: {why}").format(
            why=joined("; ", why[:2])
        ),
        msg("no build can run this workload"),
        {"builds": float(len(builds))},
        True,
    )
