"""On-prem builds: nodes of one GPU class joined by a fabric, costed with the catalog's TCO defaults.

Cost inputs resolve per field: the options file's `costs:` value, else the catalog's on-prem
default, else an error that names the field (never a silent guess).
"""

from __future__ import annotations

from gpuwise.errors import DataValidationError
from gpuwise.i18n import _
from gpuwise.plan import catalog_bridge as cat
from gpuwise.plan.calibrate import Calibration
from gpuwise.plan.catalog_bridge import GpuSpec
from gpuwise.plan.cost import OnpremCostInputs
from gpuwise.plan.defaults import PlanDefaults
from gpuwise.plan.options import Hardware, OptionRow, network, node_numbers
from gpuwise.plan.options_file import OnpremBuild
from gpuwise.plan.workload import Workload

# Our field -> the catalog's on-prem default (gpuwise/catalog/data/onprem_costs.yaml) it comes from.
CATALOG_NAMES = {
    "network_cost_fraction": "interconnect_cost_fraction",
    "spares_fraction": "spares_fraction",
    "load_fraction": "average_load_fraction",
    "pue": "pue",
    "electricity_per_kwh": "electricity_price_per_kwh",
    "colo_per_kw_month": "colocation_price_per_kw_month",
    "staff_per_year": "staff_cost_per_year",
    "support_fraction_per_year": "support_fraction_per_year",
    "lifetime_years": "depreciation_years",
    "residual_fraction": "residual_value_fraction",
}
# Inputs no source gives a default for: counted as 0 and said so, rather than blocking every plan.
OPTIONAL_ZERO = {
    "storage_cost_per_node": "not costed: no sourced default (set costs.storage_cost_per_node)",
    "support_fraction_per_year": "not costed: no sourced default (set costs.support_fraction_per_year)",
    "interest_rate": "0: straight-line depreciation (set costs.interest_rate for a capital-recovery factor)",
}


def gpu_class(spec: GpuSpec) -> str:
    """The catalog key ('A100-SXM-80GB'); the cost tables match it most-specific-first (A100-SXM, A100)."""
    return spec.key.upper()


def catalog_defaults_for(
    build: OnpremBuild, spec: GpuSpec, rdma: bool
) -> tuple[dict[str, float | str], dict[str, str]]:
    """(values, provenance) from the catalog's on-prem defaults for this build's GPU class and fabric."""
    raw = cat.onprem_defaults()
    cls = gpu_class(spec)
    vals: dict[str, float | str] = {"currency": raw.currency}
    prov: dict[str, str] = {"currency": "catalog on-prem defaults"}

    def take(ours, value, source):
        if value is not None:
            vals[ours], prov[ours] = value, source

    for ours, theirs in CATALOG_NAMES.items():
        entry = raw.entry(theirs)
        take(ours, entry.value if entry else None, f"catalog {theirs}: {entry.source}" if entry else "")
    price = raw.entry("server_price_per_node", cls)
    take(
        "server_price_per_node",
        price.value if price else None,
        f"catalog server price {cls}: {price.source}" if price else "",
    )
    power = raw.node_power_kw(cls, build.gpus_per_node, spec.tdp_watts)
    take("power_kw_per_node", power, f"catalog node power for {cls} ({build.gpus_per_node} GPUs)")
    fabric_entry = raw.entry("infiniband_fabric_cost_per_node" if rdma else "ethernet_fabric_cost_per_node")
    if fabric_entry and fabric_entry.value is not None:
        take(
            "network_cost_per_node",
            fabric_entry.value * build.gpus_per_node / 8,
            f"catalog: {fabric_entry.source}",
        )
    return vals, prov


def cost_inputs(
    build: OnpremBuild, spec: GpuSpec, rdma: bool, d: PlanDefaults
) -> tuple[OnpremCostInputs, float, dict[str, str]]:
    """(cost inputs, lead time days, provenance) for one build: options file > catalog > error."""
    given = {k: v for k, v in build.costs.model_dump().items() if v is not None}
    base, base_prov = catalog_defaults_for(build, spec, rdma)
    prov: dict[str, str] = {}

    def pick(name, fallback=None):
        if name in given:
            prov[name] = "options file"
            return given[name]
        if name in base:
            prov[name] = base_prov[name]
            return base[name]
        if name in OPTIONAL_ZERO:
            prov[name] = OPTIONAL_ZERO[name]
            return 0.0
        if fallback is not None:
            prov[name] = fallback[1]
            return fallback[0]
        raise DataValidationError(
            _(
                "on-prem build '{name}': no value for costs.{name2} and the catalog has no default for "
                "{value}"
            ).format(name=build.name, name2=name, value=gpu_class(spec) or build.gpu),
            _("set costs.{name} for build '{name2}' in the options file").format(name=name, name2=build.name),
        )

    server = pick("server_price_per_node")
    if "network_cost_per_node" in given or "network_cost_per_node" in base:
        network_cost = pick("network_cost_per_node")
    else:
        frac = pick("network_cost_fraction")
        network_cost = server * frac / (1.0 - frac)  # network = frac of (server + network)
        prov["network_cost_per_node"] = f"{frac:.0%} of cluster capex ({prov['network_cost_fraction']})"
    inputs = OnpremCostInputs(
        server_price_per_node=server,
        network_cost_per_node=network_cost,
        storage_cost_per_node=pick("storage_cost_per_node"),
        spares_fraction=pick("spares_fraction"),
        power_kw_per_node=pick("power_kw_per_node"),
        load_fraction=pick("load_fraction"),
        pue=pick("pue"),
        electricity_per_kwh=pick("electricity_per_kwh"),
        colo_per_kw_month=pick("colo_per_kw_month"),
        staff_per_year=pick("staff_per_year"),
        support_fraction_per_year=pick("support_fraction_per_year"),
        lifetime_years=pick("lifetime_years"),
        interest_rate=pick("interest_rate"),
        residual_fraction=pick("residual_fraction"),
        currency=str(pick("currency")).upper(),
    )
    lead = pick(
        "lead_time_days", (d.value("lead_time_days.onprem_build"), d.source("lead_time_days.onprem_build"))
    )
    return inputs, float(lead), prov


def onprem_row(wl: Workload, build: OnpremBuild, d: PlanDefaults, cal: Calibration | None) -> OptionRow:
    spec = cat.match_gpu(build.gpu)
    if spec is None:
        raise DataValidationError(
            _("on-prem build '{name}': GPU '{gpu}' is not in the catalog").format(
                name=build.name, gpu=build.gpu
            ),
            _("use a name from `gpuwise catalog gpus`, e.g. H100-SXM or A100-SXM-80GB"),
        )
    hw = Hardware(build.gpu, spec, build.gpus_per_node)
    gbps = build.network_gbps
    if gbps is None and build.fabric:
        fab = cat.get_fabric(build.fabric)
        if fab is None:
            raise DataValidationError(
                _("on-prem build '{name}': unknown fabric '{fabric}'").format(
                    name=build.name, fabric=build.fabric
                ),
                _("use a key from `gpuwise catalog fabrics` (e.g. ib-ndr, ib-hdr, roce-200g)"),
            )
        gbps = fab.bandwidth_gbps * build.nics_per_node
    net = network(
        gbps, build.fabric, d, build.network_latency_us, build.network_achieved_fraction, build.rdma
    )
    prov: dict[str, str] = {}
    nums = node_numbers(wl, hw, d, cal, net, build.storage, 0.0, prov)
    inputs, lead, cost_prov = cost_inputs(build, spec, net.rdma, d)
    prov.update({f"cost.{k}": v for k, v in cost_prov.items()})
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
        lead_time_days=lead,
        network=net.description,
        provenance=prov,
    )
