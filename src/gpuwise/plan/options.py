"""Turn catalog offers and on-prem builds into option rows the vectorised models can stack.

One `OptionRow` is one way to get nodes: a cloud instance type at one pricing (on-demand, spot,
1-year or 3-year reserved), or an owned build. Each row records where each number came from
(`provenance`), so the plan can say "MFU 45.8% (derived from catalog MAMF 0.803 × 0.57)".
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from dataclasses import dataclass, field

from gpuwise.i18n import msg
from gpuwise.plan import catalog_bridge as cat
from gpuwise.plan.calibrate import Calibration
from gpuwise.plan.catalog_bridge import GpuSpec, Offer
from gpuwise.plan.cost import OnpremCostInputs
from gpuwise.plan.defaults import PlanDefaults
from gpuwise.plan.options_file import CloudSelection, Pricing
from gpuwise.plan.perf import NodeNumbers
from gpuwise.plan.provenance import Kind, Provenance, Source
from gpuwise.plan.spot import spot_terms
from gpuwise.plan.workload import Workload

NAN = float("nan")
PRICE_ATTR = {
    "on_demand": "price",
    "spot": "spot_price",
    "reserved_1y": "reserved_1y_price",
    "reserved_3y": "reserved_3y_price",
}
RDMA_KINDS = {"infiniband", "roce", "efa"}
SINGLE_NODE_FABRIC = "single-node"  # an offer whose provider documents no multi-node fabric


@dataclass
class OptionRow:
    key: str
    kind: str  # "cloud" or "onprem"
    pricing: str  # on_demand, spot, reserved_1y, reserved_3y, owned
    label: str
    gpu_name: str
    currency: str
    numbers: NodeNumbers  # what the perf model needs about this option's nodes
    node_hour_price: float = NAN
    pays_idle: bool = False
    onprem: OnpremCostInputs | None = None  # typical
    onprem_cases: tuple[OnpremCostInputs, ...] | None = None  # (low-cost, typical, high-cost)
    lead_time_days: float = 0.0
    provider: str | None = None
    instance_type: str | None = None
    region: str | None = None
    network: str = ""
    provenance: Provenance = field(default_factory=Provenance)
    price_as_of: dt.date | None = None  # the cloud price's date (None: undated or owned)
    tcp: bool = False  # inter-node traffic is NCCL over TCP sockets (its range is untuned–tuned sockets)

    @property
    def price_age_days(self) -> int | None:
        return (dt.date.today() - self.price_as_of).days if self.price_as_of else None


@dataclass(frozen=True)
class UnpricedOffer:
    """An offer that matched the selection but has no price for any pricing asked for: said, not dropped."""

    provider: str
    instance_type: str
    gpu: str
    region: str | None
    currency: str


@dataclass(frozen=True)
class NetworkLink:
    """A node's inter-node network as the perf model sees it."""

    bytes_s: float  # achieved per-node bandwidth; 0 = unknown
    latency_s: float  # NaN = unknown
    rdma: bool
    description: str
    bytes_s_low: float = 0.0  # the same at the low / high end of the transport's achieved-fraction range
    bytes_s_high: float = 0.0
    kind: Kind = Kind.CATALOG  # where the bandwidth came from (UNKNOWN: no estimate; CALIBRATED: measured)


@dataclass
class Hardware:
    """What the perf model needs about one node type, with provenance."""

    gpu_name: str
    spec: GpuSpec | None
    gpus_per_node: int


def _gpu_matches(spec: GpuSpec | None, name: str | None) -> bool:
    if not name or spec is None:
        return False
    other = cat.match_gpu(name)
    return other is not None and other.key == spec.key


def resolve_mfu(wl: Workload, hw: Hardware, d: PlanDefaults, cal: Calibration | None) -> tuple[float, Source]:
    """MFU by priority: workload > calibration (same GPU) > per-class default > catalog MAMF × ratio > fallback."""
    if wl.model.mfu is not None:
        return wl.model.mfu, Source(Kind.WORKLOAD, "workload model.mfu")
    ratio = d.value("mfu.mfu_over_mamf")
    if cal and _gpu_matches(hw.spec, cal.gpu_name):
        if cal.training_mfu:
            return cal.training_mfu, Source(
                Kind.CALIBRATED, f"calibrated: measured training MFU on {cal.gpu_name}"
            )
        if cal.mamf_fraction:
            return (
                cal.mamf_fraction * ratio,
                Source(
                    Kind.CALIBRATED, f"calibrated: measured matmul {cal.mamf_fraction:.1%} of peak × {ratio}"
                ),
            )
    spec, via = hw.spec, ""
    twin = (d.data["mfu"].get("same_compute_as") or {}).get(spec.key) if spec else None
    if twin and cat.get_gpu(twin["gpu"]) is not None:
        spec = cat.get_gpu(twin["gpu"])
        via = f"{hw.spec.key} as {spec.key} ({twin['source']}): "
    name = f"{hw.gpu_name if spec is hw.spec else spec.name} {spec.key if spec else ''}".lower()
    for entry in d.mfu_per_gpu_class():
        if entry.gpu_class.lower() in name:
            return entry.value, Source(Kind.PUBLISHED, f"{via}default for {entry.gpu_class}: {entry.source}")
    mamf = spec.mamf_fraction if spec else None
    if mamf:
        return mamf * ratio, Source(
            Kind.CATALOG, f"{via}catalog MAMF {mamf:.3f} × {ratio} ({d.source('mfu.mfu_over_mamf')})"
        )
    return d.value("mfu.fallback_mfu"), Source(Kind.FALLBACK, f"fallback: {d.source('mfu.fallback_mfu')}")


def intra_node(hw: Hardware, d: PlanDefaults, cal: Calibration | None) -> tuple[float, float, Source]:
    """(all-reduce busbw bytes/s, latency s, source) inside one node."""
    lat = d.value("communication.nvlink_latency_us") * 1e-6
    if cal and cal.intra_busbw_gb_s and _gpu_matches(hw.spec, cal.gpu_name):
        return (
            cal.intra_busbw_gb_s * 1e9,
            lat,
            Source(Kind.CALIBRATED, "calibrated: measured all-reduce busbw"),
        )
    nvlink = hw.spec.nvlink_bandwidth_gb_s if hw.spec else None
    if nvlink:
        frac = d.value("communication.intra_node_busbw_fraction")
        return (
            nvlink / 2 * frac * 1e9,
            lat,
            Source(Kind.CATALOG, f"catalog NVLink {nvlink:g} GB/s bidirectional / 2 × {frac} busbw"),
        )
    spec = hw.spec
    link = cat.pcie_x16(spec.pcie_gen) if spec and spec.pcie_gen else None
    if spec is not None and link is not None:
        frac = spec.pcie_fraction or link.achieved_fraction or d.value("communication.pcie_achieved_fraction")
        return (
            link.bandwidth_gb_s * frac * 1e9,
            lat,
            Source(
                Kind.CATALOG,
                f"no NVLink: catalog PCIe gen{spec.pcie_gen} x16 {link.bandwidth_gb_s:g} GB/s per direction × {frac:g}",
            ),
        )
    return (
        d.value("communication.pcie_fallback_gb_s") * 1e9,
        lat,
        Source(Kind.FALLBACK, "no NVLink: " + d.source("communication.pcie_fallback_gb_s")),
    )


def transport(rdma: bool) -> str:
    return "rdma" if rdma else "tcp"


def tcp_sockets(d: PlanDefaults, provider: str | None = None) -> tuple[int, int, int]:
    """(untuned, provider default, tuned) NCCL sockets per connection: NCCL_SOCKET_NTHREADS × NCCL_NSOCKS_PERTHREAD."""
    by_provider = d.data["tcp_sockets"].get("providers") or {}
    key = str(provider or "").lower()
    here = by_provider[key]["value"] if key in by_provider else d.value("tcp_sockets.sockets_default")
    return int(d.value("tcp_sockets.sockets_default")), int(here), int(d.value("tcp_sockets.sockets_tuned"))


def tcp_fraction(d: PlanDefaults, gbps: float, sockets: int, per_flow_gbps: float | None = None) -> float:
    """Large-message NCCL all-reduce busbw over TCP / line rate: the smallest of the wire, the flows NCCL
    opens (channels × sockets, each at most the per-flow limit) and the host's socket-copy ceiling."""
    flow = per_flow_gbps if per_flow_gbps is not None else d.value("tcp_sockets.per_flow_gbps")
    flows = d.value("tcp_sockets.channels") * max(int(sockets), 1)
    achieved = min(
        gbps * d.value("tcp_sockets.wire_efficiency"), flows * flow, d.value("tcp_sockets.host_cap_gbps")
    )
    return achieved / gbps


def achieved_range(
    d: PlanDefaults, rdma: bool, gbps: float = 0.0, provider: str | None = None
) -> tuple[float, float, float]:
    """(low, typical, high) large-message all-reduce busbw / NIC line rate. RDMA: sourced fractions (low =
    no GPUDirect RDMA). TCP at `gbps`: untuned NCCL sockets outside a placement group, the provider's NCCL
    defaults, tuned sockets (NCCL_SOCKET_NTHREADS × NCCL_NSOCKS_PERTHREAD = 64)."""
    if rdma:
        key = "network_achieved_fraction.rdma"
        return tuple(float(d.value(f"{key}.{end}")) for end in ("low", "typical", "high"))  # type: ignore[return-value]
    if gbps <= 0:
        raise ValueError("achieved_range over TCP needs the line rate (gbps)")
    untuned, default, tuned = tcp_sockets(d, provider)
    return (
        tcp_fraction(d, gbps, untuned, d.value("tcp_sockets.per_flow_gbps_low_end")),
        tcp_fraction(d, gbps, default),
        tcp_fraction(d, gbps, tuned),
    )


def socket_advice(d: PlanDefaults, gbps: float, provider: str | None = None) -> str:
    """What NCCL socket settings close the gap on this NIC, from the same model ("" when nothing does)."""
    _untuned, default, tuned = tcp_sockets(d, provider)
    now, best = tcp_fraction(d, gbps, default), tcp_fraction(d, gbps, tuned)
    if best <= now * 1.02:
        return ""
    for threads, socks in ((2, 4), (4, 4), (4, 8), (8, 8)):
        if tcp_fraction(d, gbps, threads * socks) >= best * 0.99:
            break
    return msg(
        "NCCL over TCP on {gbps:g} Gbit/s: NCCL_SOCKET_NTHREADS={threads} NCCL_NSOCKS_PERTHREAD={socks} "
        "should raise the all-reduce from {now:.0%} to {best:.0%} of line rate; `gpuwise tune` measures it"
    ).format(gbps=gbps, threads=threads, socks=socks, now=now, best=best)


def network(
    gbps: float | None,
    fabric_key: str | None,
    d: PlanDefaults,
    latency_us: float | None = None,
    achieved: float | None = None,
    rdma: bool | None = None,
    label: str | None = None,
    provider: str | None = None,
    gpudirect: bool = True,
) -> NetworkLink:
    """A node's inter-node network: achieved bytes/s per node (with its range), latency, RDMA or not.
    Over RDMA without GPUDirect RDMA (NIC behind the CPU) the typical fraction is the range's low end."""
    fab = cat.get_fabric(fabric_key)
    kind = fab.kind if fab else None
    is_rdma = bool(rdma if rdma is not None else kind in RDMA_KINDS)
    if gbps is None and fab is not None:
        gbps = fab.bandwidth_gbps
    if not gbps:
        return NetworkLink(0.0, NAN, is_rdma, "no network bandwidth known", kind=Kind.UNKNOWN)
    low, typical, high = achieved_range(d, is_rdma, gbps, provider)
    if is_rdma and not gpudirect:
        typical = low
    frac = achieved or (fab.achieved_fraction if fab else None) or typical
    lat_key = (
        "communication.default_rdma_latency_us" if is_rdma else "communication.default_network_latency_us"
    )
    lat_us = latency_us or (fab.latency_us if fab else None) or d.value(lat_key)
    name = fabric_key or label or ("RDMA" if is_rdma else "TCP")
    desc = (
        f"{gbps:g} Gbit/s {name} × {frac:.2g} achieved ({transport(is_rdma)} range {low:.2g}–{high:.2g}), "
        f"{lat_us:g} us"
    )
    line = gbps / 8.0 * 1e9
    return NetworkLink(
        line * frac, lat_us * 1e-6, is_rdma, desc, line * min(low, frac), line * max(high, frac)
    )


def tcpx_network(gbps: float | None, d: PlanDefaults, source: str) -> NetworkLink:
    """GPUDirect-TCPX(O) (GCP A3 High / A3 Mega): GPU memory over TCP without the host copy, so neither the socket
    model nor an RDMA fraction describes it; its achieved share of line rate is the measured one in
    plan_defaults.yaml `network_achieved_fraction.tcpx`. Planned as TCP for latency and stragglers."""
    if not gbps:
        return NetworkLink(
            0.0, NAN, False, msg("GPUDirect-TCPX(O): no line rate in the catalog"), kind=Kind.UNKNOWN
        )
    key = "network_achieved_fraction.tcpx"
    low, typical, high = (float(d.value(f"{key}.{end}")) for end in ("low", "typical", "high"))
    lat_us = d.value("communication.default_network_latency_us")
    line = gbps / 8.0 * 1e9
    desc = msg(
        "{gbps:g} Gbit/s GPUDirect-TCPX(O) × {frac:.2g} achieved (measured range {low:.2g}–{high:.2g}: {measured}), "
        "{lat:g} us; {source}"
    ).format(
        gbps=gbps,
        frac=typical,
        low=low,
        high=high,
        measured=d.source(f"{key}.typical"),
        lat=lat_us,
        source=source,
    )
    return NetworkLink(line * typical, lat_us * 1e-6, False, desc, line * low, line * high)


def node_numbers(
    wl: Workload,
    hw: Hardware,
    d: PlanDefaults,
    cal: Calibration | None,
    net: NetworkLink,
    storage: str,
    time_overhead: float,
    prov: Provenance,
) -> NodeNumbers:
    """The perf model's inputs for one node type; records where each came from in `prov`."""
    mfu, prov["mfu"] = resolve_mfu(wl, hw, d, cal)
    intra_bw, intra_lat, prov["intra_node"] = intra_node(hw, d, cal)
    prov["network"] = Source(net.kind, net.description)
    peak = cat.peak_flops(hw.spec, wl.training.precision)
    prov["peak"] = (
        Source(Kind.CATALOG, f"catalog {hw.spec.key} {wl.training.precision}")
        if peak and hw.spec
        else Source(Kind.UNKNOWN, "unknown")
    )
    st = d.storage(storage)
    prov["storage"] = Source(Kind.PUBLISHED, f"{storage}: {st.source}")
    cv_key = "stragglers.network_cv_rdma" if net.rdma else "stragglers.network_cv_ethernet"
    compute_cv, network_cv = d.value("stragglers.compute_cv"), d.value(cv_key)
    cv_low_end, cv_high_end = d.value("stragglers.compute_cv_low_end"), 0.0  # measured spread: both ends
    net = calibrated_network(net, hw, cal, intra_bw, intra_lat, prov, wl.training.bucket_mb * 2**20)
    if cal and _gpu_matches(hw.spec, cal.gpu_name):
        spread = "stability run sample" if cal.from_stability else None
        measured = Kind.STABILITY if cal.from_stability else Kind.CALIBRATED
        if cal.compute_cv is not None:
            compute_cv = cv_low_end = cv_high_end = cal.compute_cv
            what = spread or "per-node step-time"
            prov["compute_cv"] = Source(measured, f"calibrated: {what} spread cv {compute_cv:.3f}")
        if cal.network_cv is not None:
            network_cv = cal.network_cv
            what = spread or "per-rank all-reduce time"
            prov["network_cv"] = Source(measured, f"calibrated: {what} spread cv {network_cv:.3f}")
    return NodeNumbers(
        gpus_per_node=hw.gpus_per_node,
        peak_flops=peak or NAN,
        mfu=mfu,
        gpu_memory_bytes=cat.gpu_memory_bytes(hw.spec) or NAN,
        intra_bytes_s=intra_bw,
        intra_latency_s=intra_lat,
        inter_bytes_s=net.bytes_s,
        inter_latency_s=net.latency_s if not math.isnan(net.latency_s) else 0.0,
        compute_cv=compute_cv,
        network_cv=network_cv,
        storage_bytes_s=st.read_gb_s * 1e9,
        storage_iops=st.iops,
        storage_shared=st.shared,
        time_overhead=time_overhead,
        usable_memory_fraction=d.value("memory.usable_fraction"),
        inter_bytes_s_low=net.bytes_s_low,
        inter_bytes_s_high=net.bytes_s_high,
        compute_cv_low_end=max(cv_low_end, compute_cv),
        compute_cv_high_end=cv_high_end,
    )


def calibrated_network(
    net: NetworkLink,
    hw: Hardware,
    cal: Calibration | None,
    intra_bytes_s: float,
    intra_latency_s: float,
    prov: Provenance,
    bucket_bytes: float | None = None,
) -> NetworkLink:
    """The measured inter-node all-reduce in place of the nominal network, for options it describes: the
    same GPU, and the same transport (RDMA or TCP) when the measurement says which."""
    fit = cal.network if cal else None
    if fit is None or not _gpu_matches(hw.spec, cal.gpu_name):
        return net
    if fit.transport is not None and fit.transport != transport(net.rdma):
        return net
    bytes_s, latency_s = fit.inter_for(intra_bytes_s, intra_latency_s, bucket_bytes)
    at = f" at the {bucket_bytes / 2**20:g} MiB bucket size" if bucket_bytes else ""
    desc = (
        f"calibrated: {bytes_s / 1e9:.2f} GB/s per node{at}, {latency_s * 1e6:.1f} us per step, "
        f"from {fit.describe()}"
    )
    prov["network"] = Source(Kind.CALIBRATED, desc)
    return NetworkLink(bytes_s, latency_s, net.rdma, desc, bytes_s, bytes_s, Kind.CALIBRATED)


def _wanted(offer: Offer, sel: CloudSelection) -> bool:
    def match(value, wanted):
        return not wanted or any(w.lower() in str(value or "").lower() for w in wanted)

    # GPUs match as in `gpuwise catalog offers --gpu`: "A10" must not select A100 offers.
    gpu_ok = not sel.gpus or any(cat.offer_matches_gpu(offer, gpu) for gpu in sel.gpus)
    return (
        match(offer.provider, sel.providers)
        and match(offer.instance_type, sel.instance_types)
        and gpu_ok
        and match(offer.region, sel.regions)
        and (offer.accelerator_count or 0) >= sel.min_gpus_per_node
    )


def price_of(offer: Offer, pricing: Pricing, derive: bool) -> tuple[float | None, Source | None]:
    """(price per node-hour, source). A missing reserved price is derived from on-demand with the catalog's
    per-provider commitment discount when `derive` is on, and labelled as derived (Kind.DERIVED)."""
    price = getattr(offer, PRICE_ATTR[pricing], None)
    src = f"{offer.price_source or 'catalog'} (as of {offer.as_of or 'an unknown date'})"
    if price is not None and price > 0:
        return float(price), Source(Kind.CATALOG, src)
    on_demand = offer.price
    if not derive or pricing == "on_demand" or not on_demand:
        return None, None
    if pricing == "spot":  # spot exists only where the provider sells it: no generic estimate
        return None, None
    raw = cat.onprem_defaults()
    disc = raw.cloud_commitment_discounts.get(str(offer.provider).lower())
    if disc is None:
        return None, None
    cut = disc.one_year if pricing == "reserved_1y" else disc.three_year
    return on_demand * (1 - cut), Source(
        Kind.DERIVED, f"derived: on-demand × (1 − {cut:g}) ({raw.cloud_commitment_discounts_source})"
    )


def offer_price(offer: Offer, pricing: Pricing, derive: bool) -> tuple[float | None, str]:
    """(price per node-hour, source text) as `price_of` gives them; "" when there is no price."""
    price, source = price_of(offer, pricing, derive)
    return price, source.text if source is not None else ""


def cloud_rows(
    wl: Workload,
    sel: CloudSelection,
    d: PlanDefaults,
    cal: Calibration | None,
    unpriced: list[UnpricedOffer] | None = None,
) -> list[OptionRow]:
    """One row per (offer, pricing) with a price; offers without GPUs are skipped. Offers that match but
    have no price are appended to `unpriced` so the decision can say why no cloud option qualifies.
    Providers that sell blocks (plan_defaults.yaml `block_billing:`) give one row priced per block."""
    rows: list[OptionRow] = []
    if not sel.include:
        return rows
    blocks = d.data.get("block_billing") or {}
    for offer in cat.load_offers(sel.offers_dirs):
        if not offer.accelerator_count or not _wanted(offer, sel):
            continue
        spec = offer.gpu_spec()
        hw = Hardware(offer.accelerator_name, spec, int(offer.accelerator_count))
        rdma_gbps = offer.rdma_gbps
        single_node = (offer.fabric or "").lower() == SINGLE_NODE_FABRIC
        # Offer.fabric is a category (vpc-tcp, roce, infiniband, efa, tcpx), not a fabrics.csv key.
        if single_node:
            net = NetworkLink(
                0.0,
                NAN,
                False,
                msg("single node only: {source}").format(
                    source=offer.network_source or msg("the provider documents no multi-node fabric")
                ),
            )
        elif (offer.fabric or "").lower() == "tcpx":
            net = tcpx_network(offer.network_gbps, d, offer.network_source or offer.provider)
        elif rdma_gbps and (offer.fabric or "").lower() in RDMA_KINDS:
            net = network(rdma_gbps, None, d, rdma=True, label=offer.fabric)
        else:
            net = network(
                offer.network_gbps, None, d, rdma=False, label=offer.fabric or "tcp", provider=offer.provider
            )
        if net.bytes_s and not net.rdma:
            advice = socket_advice(d, float(offer.network_gbps or 0), offer.provider)
            if advice:
                net = dataclasses.replace(net, description=f"{net.description}; {advice}")
        if not net.bytes_s and not single_node and offer.network_source:
            net = dataclasses.replace(net, description=f"{net.description}: {offer.network_source}")
        where = f"{offer.provider} {offer.instance_type} {offer.region or ''}".strip()
        block = blocks.get(str(offer.provider).lower())
        priced = 0
        for pricing in sel.pricing:
            if block is not None and pricing != "on_demand":
                continue  # a block's price is its only price: no spot, no reserved derived from it
            price, price_src = price_of(offer, pricing, sel.derive_missing_prices)
            if price is None or price_src is None:
                continue
            priced += 1
            model = str(block["pricing_model"]) if block is not None else pricing
            prov = Provenance({"price": price_src})
            if block is not None:
                prov["billing"] = Source(Kind.PUBLISHED, block["source"])
            nums = node_numbers(wl, hw, d, cal, net, sel.storage, 0.0, prov)
            if single_node:
                nums = dataclasses.replace(nums, max_nodes=1.0)
            if pricing == "spot":
                spot = spot_terms(offer.provider, wl, d)
                prov["spot"] = Source(Kind.PUBLISHED, spot.description)
                prov["spot_short"] = Source(Kind.PUBLISHED, spot.short)
                prov["spot_clusters"] = Source(Kind.PUBLISHED, spot.multi_node_source)
                nums = dataclasses.replace(
                    nums,
                    interruptions_per_node_hour=spot.interruptions_per_node_hour,
                    interruption_cost_h=spot.lost_hours,
                    spot_max_nodes=spot.max_nodes,
                )
            rows.append(
                OptionRow(
                    key=f"{where} {model}",
                    kind="cloud",
                    pricing=model,
                    label=f"{offer.provider} {offer.instance_type}",
                    gpu_name=offer.accelerator_name,
                    currency=(offer.currency or "USD").upper(),
                    numbers=nums,
                    node_hour_price=float(price),
                    pays_idle=pricing.startswith("reserved"),
                    lead_time_days=d.value("lead_time_days.cloud"),
                    provider=offer.provider,
                    instance_type=offer.instance_type,
                    region=offer.region,
                    network=prov["network"],
                    tcp=bool(net.bytes_s) and not net.rdma,
                    provenance=prov,
                    price_as_of=offer.as_of if price_src.kind is Kind.CATALOG else None,
                )
            )
        if not priced and unpriced is not None:
            unpriced.append(
                UnpricedOffer(
                    offer.provider,
                    offer.instance_type,
                    offer.accelerator_name or "?",
                    offer.region,
                    (offer.currency or "USD").upper(),
                )
            )
    return rows
