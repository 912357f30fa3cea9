"""What can serve the model: cloud offers (on-demand, reserved, spot prices) and owned builds, each
with its capacity per node. Offers and builds come from the same catalog and options file as training
plans; prices in another currency convert with the workload's or options file's exchange rates.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from gpuwise.i18n import N_, msg
from gpuwise.plan import catalog_bridge as cat
from gpuwise.plan.commitments import block_billing
from gpuwise.plan.cost import HOURS_PER_YEAR
from gpuwise.plan.currency import conversion, describe
from gpuwise.plan.defaults import PlanDefaults
from gpuwise.plan.onprem import cost_inputs
from gpuwise.plan.options import _wanted, offer_price
from gpuwise.plan.options_file import OnpremBuild, OptionsFile
from gpuwise.plan.planner import default_builds
from gpuwise.plan.region import Exclusion
from gpuwise.plan.serving.capacity import Capacity, gpu_figures, llm_capacity, other_capacity
from gpuwise.plan.serving.defaults import ServingDefaults
from gpuwise.plan.serving.workload import InferenceWorkload

HOURS_PER_MONTH = HOURS_PER_YEAR / 12.0


@dataclass
class Hardware:
    """One node type: a cloud instance type (with its prices per node-hour) or an owned build."""

    key: str
    label: str
    kind: str  # "cloud" or "owned"
    gpu: str
    capacity: Capacity
    on_demand: float | None = None  # plan currency per node-hour
    reserved: float | None = None  # 1-year commitment per node-hour (3-year when only that is wanted)
    spot: float | None = None
    owned_per_month: float | None = None  # capital + opex per node, plan currency
    staff_per_month: float = 0.0  # whole owned fleet
    lead_time_days: float = 0.0
    sources: dict[str, str] = field(default_factory=dict)


def _capacity(
    wl: InferenceWorkload, gpu: str, gpus_per_node: int, d: ServingDefaults, rps_per_gpu: float | None
) -> Capacity:
    spec = cat.match_gpu(gpu)
    if spec is None:
        return Capacity(gpu, gpus_per_node, reason=msg("GPU '{gpu}' is not in the catalog").format(gpu=gpu))
    if not wl.is_llm:
        measured_on = cat.match_gpu(wl.model.gpu) if wl.model.gpu else None
        if wl.model.gpu and (measured_on is None or measured_on.key != spec.key):
            return Capacity(
                spec.key,
                gpus_per_node,
                reason=msg("throughput is given for {gpu} only").format(gpu=wl.model.gpu),
            )
        return other_capacity(wl, spec, gpus_per_node, rps_per_gpu, d)
    figures = gpu_figures(spec, wl.model.precision, d, wl.model.kv_precision)
    if isinstance(figures, str):
        return Capacity(spec.key, gpus_per_node, reason=figures)
    return llm_capacity(wl, figures, gpus_per_node, d)


COMMUNITY_RULE = "community-cloud"
COMMUNITY_REASON = N_(
    "a community / unsecured marketplace offer (third-party hosts, no data-centre SLA) is left out of "
    "production serving unless org.allow_community_cloud is true"
)


def community_exclusion(offer) -> Exclusion:
    region = f" {offer.region}" if offer.region else ""
    return Exclusion(
        "offer", f"{offer.provider} {offer.instance_type}{region}", COMMUNITY_RULE,
        msg("Tier=community in {file}").format(file=os.path.basename(offer.file) or "offers.csv"),
        COMMUNITY_REASON, offer.price_source or "",
    )  # fmt: skip


def cloud_hardware(
    wl: InferenceWorkload,
    opts: OptionsFile,
    d: ServingDefaults,
    rates: dict[str, float],
    rps_per_gpu: float | None,
    notes: list[str],
    plan_defaults: PlanDefaults,
    excluded: list[Exclusion] | None = None,
) -> list[Hardware]:
    """Every cloud offer that can serve, priced in the plan's currency; offers left out by policy go to
    `excluded` with the reason (a community marketplace without org.allow_community_cloud)."""
    sel = opts.cloud
    out: list[Hardware] = []
    if not sel.include:
        return out
    booked_ahead = block_billing(plan_defaults)  # capacity sold in whole days, booked in advance
    for offer in cat.load_offers(sel.offers_dirs):
        gpus = int(offer.accelerator_count or 0)
        if gpus < 1 or not _wanted(offer, sel) or not (offer.gpu_key or offer.accelerator_name):
            continue
        if offer.tier == "community" and not wl.org.allow_community_cloud:
            if excluded is not None:
                excluded.append(community_exclusion(offer))
            continue
        if offer.provider.lower() in booked_ahead:
            line = msg(
                "{provider}: left out; blocks are booked days ahead and billed in whole days, "
                "so they cannot follow traffic hour by hour"
            ).format(provider=offer.provider)
            if line not in notes:
                notes.append(line)
            continue
        wanted = set(sel.pricing)  # the options file's pricing filter applies here too
        od, od_src = (
            offer_price(offer, "on_demand", sel.derive_missing_prices)
            if "on_demand" in wanted
            else (None, "")
        )
        term = "reserved_1y" if "reserved_1y" in wanted else "reserved_3y"
        reserved, res_src = (
            offer_price(offer, term, sel.derive_missing_prices) if term in wanted else (None, "")
        )
        spot, spot_src = (
            offer_price(offer, "spot", sel.derive_missing_prices) if "spot" in wanted else (None, "")
        )
        if od is None and reserved is None:
            continue
        fx = _rate(offer.currency, wl.org.currency, rates, notes)
        if fx is None:
            notes.append(
                msg("{provider} {instance}: prices in {currency} left out (no exchange rate)").format(
                    provider=offer.provider, instance=offer.instance_type, currency=offer.currency
                )
            )
            continue
        od, reserved, spot = (None if p is None else p * fx for p in (od, reserved, spot))
        gpu = offer.gpu_key or offer.accelerator_name
        region = f" {offer.region}" if offer.region else ""
        out.append(
            Hardware(
                key=f"{offer.provider} {offer.instance_type}{region}",
                label=f"{offer.provider} {offer.instance_type} ({gpus}× {gpu})",
                kind="cloud",
                gpu=gpu,
                capacity=_capacity(wl, gpu, gpus, d, rps_per_gpu),
                on_demand=od,
                reserved=reserved,
                spot=spot,
                sources={"on_demand": od_src, term: res_src, "spot": spot_src},
            )
        )
    return out


def owned_hardware(
    wl: InferenceWorkload,
    opts: OptionsFile,
    d: ServingDefaults,
    rates: dict[str, float],
    rps_per_gpu: float | None,
    notes: list[str],
    plan_defaults: PlanDefaults,
) -> list[Hardware]:
    builds: list[OnpremBuild] = default_builds(plan_defaults, notes) if opts.onprem is None else opts.onprem
    out = []
    for build in builds:
        spec = cat.match_gpu(build.gpu)
        if spec is None:
            notes.append(
                msg("on-prem build {name}: GPU '{gpu}' is not in the catalog").format(
                    name=build.name, gpu=build.gpu
                )
            )
            continue
        fabric = cat.get_fabric(build.fabric)
        rdma = build.rdma if fabric is None else fabric.kind in ("infiniband", "roce", "efa")
        cases, lead, prov = cost_inputs(build, spec, rdma, plan_defaults)
        inputs = cases[1]  # typical (cost_inputs also gives the low- and high-cost ends)
        fx = _rate(inputs.currency, wl.org.currency, rates, notes)
        if fx is None:
            notes.append(
                msg("on-prem build {name}: costs in {currency} left out (no exchange rate)").format(
                    name=build.name, currency=inputs.currency
                )
            )
            continue
        out.append(
            Hardware(
                key=f"owned {build.name}",
                label=msg("owned {name}").format(name=build.name),
                kind="owned",
                gpu=spec.key,
                capacity=_capacity(wl, spec.key, build.gpus_per_node, d, rps_per_gpu),
                owned_per_month=inputs.annual_per_node() / 12.0 * fx,
                staff_per_month=inputs.staff_per_year / 12.0 * fx,
                lead_time_days=lead,
                sources={f"cost.{k}": v for k, v in prov.items()},
            )
        )
    return out


def _rate(currency: str, target: str, rates: dict[str, float], notes: list[str]) -> float | None:
    """Units of `target` per unit of `currency` (the user's rate, else the dated default); the rate used is noted once."""
    rate = conversion(currency, target, rates)
    if rate is None:
        return None
    line = describe(rate)
    if rate.currency != rate.target and line not in notes:
        notes.append(line)
    return rate.value
