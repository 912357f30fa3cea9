"""On-prem builds: nodes of one GPU class joined by a fabric, costed with the catalog's TCO defaults.

Cost inputs resolve per field: the options file's `costs:` value, else the catalog's on-prem
default, else an error that names the field (never a silent guess). Each build is costed three
times, from the low, typical and high ends of every sourced default (`cost_inputs`), so the plan can
say "build is 30-55% cheaper" and which inputs the range comes from (`range_drivers`).
"""

from __future__ import annotations

from dataclasses import replace

from gpuwise.errors import DataValidationError
from gpuwise.i18n import msg
from gpuwise.plan import catalog_bridge as cat
from gpuwise.plan.calibrate import Calibration
from gpuwise.plan.catalog_bridge import GpuSpec
from gpuwise.plan.cost import OnpremCostInputs
from gpuwise.plan.defaults import PlanDefaults
from gpuwise.plan.options import Hardware, OptionRow, network, node_numbers
from gpuwise.plan.options_file import OnpremBuild
from gpuwise.plan.provenance import Kind, Provenance, Source
from gpuwise.plan.workload import Workload

# Our field -> the catalog's on-prem default (gpuwise/catalog/data/onprem_costs.yaml) it comes from.
CATALOG_NAMES = {
    "network_cost_fraction": "interconnect_cost_fraction",
    "management_network_cost_per_node": "management_network_cost_per_node",
    "storage_cost_per_node": "storage_cost_per_node",
    "spares_fraction": "spares_fraction",
    "load_fraction": "average_load_fraction",
    "pue": "pue",
    "electricity_per_kwh": "electricity_price_per_kwh",
    "colo_per_kw_month": "colocation_price_per_kw_month",
    "staff_fte_per_node": "staff_fte_per_node",
    "staff_cost_per_fte_year": "staff_cost_per_fte_year",
    "support_per_gpu_year": "support_per_gpu_year",
    "lifetime_years": "depreciation_years",
    "interest_rate": "interest_rate",
    "residual_fraction_quoted": "residual_value_fraction",
    "residual_quoted_years": "residual_value_quoted_years",
}
# Inputs for which a larger number means a cheaper build (the low-cost case takes their high end).
CHEAPER_WHEN_HIGHER = {"lifetime_years", "residual_fraction_quoted", "residual_fraction"}
# What the user can set instead of the per-node defaults (a cluster-wide staff bill, support as % of capex).
ZERO_UNLESS_GIVEN = {
    "staff_per_year": "0: staff costed per node (staff_fte_per_node × staff_cost_per_fte_year)",
    "support_fraction_per_year": "0: support costed per GPU (support_per_gpu_year)",
}

Triple = tuple[float, float, float]  # (low-cost case, typical, high-cost case)


def _triple(name: str, low: float | None, value: float, high: float | None) -> Triple:
    lo = value if low is None else low
    hi = value if high is None else high
    if name in CHEAPER_WHEN_HIGHER:
        lo, hi = hi, lo
    return (float(lo), float(value), float(hi))


def gpu_class(spec: GpuSpec) -> str:
    """The catalog key ('A100-SXM-80GB'); the cost tables match it most-specific-first (A100-SXM, A100)."""
    return spec.key.upper()


def catalog_defaults_for(build: OnpremBuild, spec: GpuSpec, rdma: bool) -> tuple[dict, Provenance]:
    """(values, provenance) from the catalog's on-prem defaults for this build's GPU class and fabric.
    Numbers are (low-cost, typical, high-cost) triples; "currency" is a string."""
    raw = cat.onprem_defaults()
    cls = gpu_class(spec)
    vals: dict = {"currency": raw.currency}
    prov = Provenance({"currency": Source(Kind.CATALOG, "catalog on-prem defaults")})

    def take(ours, entry, source, scale: float = 1.0):
        if entry is not None and entry.value is not None:
            vals[ours] = tuple(v * scale for v in _triple(ours, entry.low, entry.value, entry.high))
            prov[ours] = Source(Kind.CATALOG, source)

    for ours, theirs in CATALOG_NAMES.items():
        entry = raw.entry(theirs)
        take(ours, entry, f"catalog {theirs}: {entry.source}" if entry else "")
    price = raw.entry("server_price_per_node", cls)
    take("server_price_per_node", price, f"catalog server price {cls}: {price.source}" if price else "")
    power = raw.node_power_kw(cls, build.gpus_per_node, spec.tdp_watts)
    if power is not None:
        vals["power_kw_per_node"] = (power, power, power)
        prov["power_kw_per_node"] = Source(
            Kind.CATALOG, f"catalog node power for {cls} ({build.gpus_per_node} GPUs)"
        )
    fabric = raw.entry("infiniband_fabric_cost_per_node" if rdma else "ethernet_fabric_cost_per_node")
    take(
        "network_cost_per_node",
        fabric,
        f"catalog: {fabric.source}" if fabric else "",
        build.gpus_per_node / 8,
    )
    return vals, prov


def cost_inputs(
    build: OnpremBuild, spec: GpuSpec, rdma: bool, d: PlanDefaults
) -> tuple[tuple[OnpremCostInputs, OnpremCostInputs, OnpremCostInputs], float, Provenance]:
    """((low-cost, typical, high-cost) inputs, lead time days, provenance) for one build:
    options file > catalog > error. A number from the options file is a point: low = typical = high."""
    given = {k: v for k, v in build.costs.model_dump().items() if v is not None}
    base, base_prov = catalog_defaults_for(build, spec, rdma)
    prov = Provenance()

    def pick(name) -> Triple:
        if name in given:
            prov[name] = Source(Kind.OPTIONS, "options file")
            return (float(given[name]),) * 3
        if name in base:
            prov[name] = base_prov.source(name)
            return base[name]
        if name in ZERO_UNLESS_GIVEN:
            prov[name] = Source(Kind.FALLBACK, ZERO_UNLESS_GIVEN[name])
            return (0.0, 0.0, 0.0)
        raise DataValidationError(
            msg(
                "on-prem build '{name}': no value for costs.{name2} and the catalog has no default for "
                "{value}"
            ).format(name=build.name, name2=name, value=gpu_class(spec) or build.gpu),
            msg("set costs.{name} for build '{name2}' in the options file").format(
                name=name, name2=build.name
            ),
        )

    server = pick("server_price_per_node")
    if "network_cost_per_node" in given or "network_cost_per_node" in base:
        network_cost = pick("network_cost_per_node")
    else:
        frac = pick("network_cost_fraction")  # network = frac of (server + network)
        network_cost = tuple(s * f / (1.0 - f) for s, f in zip(server, frac, strict=True))
        prov["network_cost_per_node"] = Source(
            Kind.DERIVED, f"{frac[1]:.0%} of cluster capex ({prov['network_cost_fraction']})"
        )
    staff_cluster = pick("staff_per_year")
    if "staff_per_year" in given:  # the user's cluster-wide figure replaces the per-node default
        staff_node: Triple = (0.0, 0.0, 0.0)
        prov["staff_per_node_year"] = Source(
            Kind.OPTIONS, "0: the options file gives staff_per_year for the whole cluster"
        )
    else:
        fte, cost = pick("staff_fte_per_node"), pick("staff_cost_per_fte_year")
        staff_node = tuple(f * c for f, c in zip(fte, cost, strict=True))
    support_fraction = pick("support_fraction_per_year")
    if "support_fraction_per_year" in given:
        support_node: Triple = (0.0, 0.0, 0.0)
    else:
        support_node = tuple(v * build.gpus_per_node for v in pick("support_per_gpu_year"))
    life = pick("lifetime_years")
    if "residual_fraction" in given:
        residual = pick("residual_fraction")
    else:  # quoted at `residual_quoted_years`: a constant yearly decline to the end of the life
        quoted, at_years = pick("residual_fraction_quoted"), pick("residual_quoted_years")
        residual = tuple(q ** (lv / y) for q, lv, y in zip(quoted, life, at_years, strict=True))
        prov["residual_fraction"] = Source(
            Kind.DERIVED,
            f"{quoted[1]:.0%} at {at_years[1]:g} years, {residual[1]:.0%} at {life[1]:g} "
            f"({prov['residual_fraction_quoted']})",
        )
    fields = {
        "server_price_per_node": server,
        "network_cost_per_node": network_cost,
        "management_network_per_node": pick("management_network_cost_per_node"),
        "storage_cost_per_node": pick("storage_cost_per_node"),
        "spares_fraction": pick("spares_fraction"),
        "power_kw_per_node": pick("power_kw_per_node"),
        "load_fraction": pick("load_fraction"),
        "pue": pick("pue"),
        "electricity_per_kwh": pick("electricity_per_kwh"),
        "colo_per_kw_month": pick("colo_per_kw_month"),
        "staff_per_year": staff_cluster,
        "staff_per_node_year": staff_node,
        "support_fraction_per_year": support_fraction,
        "support_per_node_year": support_node,
        "lifetime_years": life,
        "interest_rate": pick("interest_rate"),
        "residual_fraction": residual,
    }
    ccy = str(given.get("currency") or base["currency"]).upper()
    cases = tuple(OnpremCostInputs(**{k: v[i] for k, v in fields.items()}, currency=ccy) for i in range(3))
    if "lead_time_days" in given:
        lead, prov["lead_time_days"] = float(given["lead_time_days"]), Source(Kind.OPTIONS, "options file")
    else:
        lead = float(d.value("lead_time_days.onprem_build"))
        prov["lead_time_days"] = Source(Kind.PUBLISHED, d.source("lead_time_days.onprem_build"))
    return cases, lead, prov


def range_drivers(cases: tuple[OnpremCostInputs, ...], nodes: int = 1) -> list[tuple[str, float]]:
    """Which inputs move the yearly cost most between the low- and high-cost cases: (field, swing),
    largest first. Each input moves from its low-cost to its high-cost value with the rest typical."""
    low, typical, high = cases
    base = typical.annual_per_node() * nodes + typical.staff_per_year
    out = []
    for name in typical.as_dict():
        a, b = getattr(low, name), getattr(high, name)
        if name == "currency" or a == b:
            continue
        lo = replace(typical, **{name: a})
        hi = replace(typical, **{name: b})
        swing = (hi.annual_per_node() - lo.annual_per_node()) * nodes + hi.staff_per_year - lo.staff_per_year
        if base > 0 and swing > 0:
            out.append((name, swing / base))
    return sorted(out, key=lambda x: -x[1])


def onprem_row(wl: Workload, build: OnpremBuild, d: PlanDefaults, cal: Calibration | None) -> OptionRow:
    spec = cat.match_gpu(build.gpu)
    if spec is None:
        raise DataValidationError(
            msg("on-prem build '{name}': GPU '{gpu}' is not in the catalog").format(
                name=build.name, gpu=build.gpu
            ),
            msg("use a name from `gpuwise catalog gpus`, e.g. H100-SXM or A100-SXM-80GB"),
        )
    hw = Hardware(build.gpu, spec, build.gpus_per_node)
    gbps = build.network_gbps
    if gbps is None and build.fabric:
        fab = cat.get_fabric(build.fabric)
        if fab is None:
            raise DataValidationError(
                msg("on-prem build '{name}': unknown fabric '{fabric}'").format(
                    name=build.name, fabric=build.fabric
                ),
                msg("use a key from `gpuwise catalog fabrics` (e.g. ib-ndr, ib-hdr, roce-200g)"),
            )
        gbps = fab.bandwidth_gbps * build.nics_per_node
    net = network(
        gbps, build.fabric, d, build.network_latency_us, build.network_achieved_fraction, build.rdma
    )
    if net.bytes_s and (build.network_gbps is not None or build.network_achieved_fraction is not None):
        net = replace(net, kind=Kind.OPTIONS)  # the options file's line rate or achieved fraction
    prov = Provenance()
    nums = node_numbers(wl, hw, d, cal, net, build.storage, 0.0, prov)
    cases, lead, cost_prov = cost_inputs(build, spec, net.rdma, d)
    inputs = cases[1]
    for key in cost_prov:
        prov[f"cost.{key}"] = cost_prov.source(key)
    return OptionRow(
        key=f"onprem {build.name}",
        kind="onprem",
        pricing="owned",
        label=build.name,
        gpu_name=spec.key,
        currency=inputs.currency,
        numbers=nums,
        pays_idle=True,
        onprem=inputs,
        onprem_cases=cases,
        lead_time_days=lead,
        network=prov["network"],
        provenance=prov,
    )
