"""`gpuwise catalog`: GPU, fabric and offer rows as tables or one-row details, and their JSON forms.
Formatting only: no loading, no judging."""

from __future__ import annotations

import dataclasses
import datetime as dt

from gpuwise import units
from gpuwise.catalog.fabrics import Fabric
from gpuwise.catalog.gpus import GpuSpec
from gpuwise.catalog.offers import Offer
from gpuwise.documents.ids import CATALOG_SCHEMA
from gpuwise.i18n import C_, _, shows
from gpuwise.report.document import Block, Column, Document, Heading, KeyValues, Paragraph, Styled, Table


def _jsonable(obj) -> dict:
    data = dataclasses.asdict(obj)
    for key, value in list(data.items()):
        if isinstance(value, dt.date):
            data[key] = value.isoformat()
        if isinstance(value, tuple):
            data[key] = list(value)
    return data


def gpu_dict(spec: GpuSpec) -> dict:
    """JSON form of a GPU row (match patterns included, dates as ISO strings)."""
    return _jsonable(spec)


def offer_dict(offer: Offer) -> dict:
    """JSON form of an offer, with its resolved GPU key and price per GPU-hour."""
    data = _jsonable(offer)
    spec = offer.gpu_spec()
    data["resolved_gpu"] = spec.key if spec else None
    data["price_per_gpu_hour"] = offer.price_per_gpu_hour
    return data


def fabric_dict(fabric: Fabric) -> dict:
    return _jsonable(fabric)


def _doc(title: str, blocks: list[Block], data: dict) -> Document:
    return Document(title=title, blocks=[Heading(title), *blocks], data={"schema": CATALOG_SCHEMA, **data})


UNVERIFIED = "*"  # a mark column instead of a "verified" column: the tables then fit 80 columns


def _verified(flag: bool) -> str | Styled:
    return C_("boolean", "yes") if flag else Styled(C_("boolean", "no"), "warn")


def _mark(flag: bool) -> str | Styled:
    return "" if flag else Styled(UNVERIFIED, "warn")


def _memory_cell(spec: GpuSpec) -> str:
    """The GiB column: as devices report it (units.gib of the recorded bytes), else the vendor's figure."""
    from gpuwise.catalog.gpu_memory import reported_memory

    recorded = reported_memory(spec.key)
    if recorded is not None:
        return units.gib(recorded.total_bytes, unit=False)
    return units.gib(spec.memory_bytes, unit=False)


def _memory_rows(spec: GpuSpec) -> list[tuple[str, str]]:
    """'140.4 GiB as nvidia-smi reports it (143,771 MiB; source)' and the vendor's '141 GB' beside it."""
    from gpuwise.catalog.gpu_memory import reported_memory

    vendor = (
        _(
            "{gb} GB (vendor's figure, binary like every GPU memory figure: {gib}; devices report a little less)"
        ).format(gb=units.number(spec.memory_gib, 1), gib=units.gib(spec.memory_bytes))
        if spec.memory_bytes
        else units.UNKNOWN
    )
    recorded = reported_memory(spec.key)
    if recorded is None:
        return [(C_("gpu", "memory"), vendor)]
    reported = _("{gib} as nvidia-smi reports it ({mib} MiB, driver {driver}; {source})").format(
        gib=units.gib(recorded.total_bytes),
        mib=units.number(recorded.reported_mib),
        driver=recorded.driver,
        source=recorded.source,
    )
    return [(C_("gpu", "memory"), reported), (_("memory (vendor)"), vendor)]


@shows
def gpus_view(specs: list[GpuSpec]) -> Document:
    headers = ("fp32", "tf32", "bf16", "fp8", "GiB", _("mem GB/s"), "NVLink GB/s", "TDP W", "MAMF")
    cols = [Column(_("key")), Column("")] + [Column(h, "right") for h in headers]
    n = units.number
    rows = [
        [
            s.key,
            _mark(s.verified),
            n(s.fp32_tflops, 1),
            n(s.tf32_tflops, 1),
            n(s.bf16_tflops, 1),
            n(s.fp8_tflops, 1),
            _memory_cell(s),
            n(s.memory_bandwidth_gb_s, 0),
            n(s.nvlink_bandwidth_gb_s, 0),
            n(s.tdp_watts, 0),
            units.percent(s.mamf_fraction),
        ]
        for s in specs
    ]
    table = Table(
        cols,
        rows,
        title=_("Dense peak TFLOPS, memory, links and power"),
        caption=_(
            "{dash} = no sourced figure; {mark} = not verified. NVLink: per-GPU bidirectional total. "
            "GiB: the total a device reports (`nvidia-smi`), where one was recorded; otherwise the "
            "vendor's figure (its GB, binary: the physical memory). Sources and dates: "
            "`gpuwise catalog show KEY`."
        ).format(dash=units.UNKNOWN, mark=UNVERIFIED),
    )
    return _doc(_("GPU specs"), [table], {"kind": "gpus", "gpus": [gpu_dict(s) for s in specs]})


@shows
def fabrics_view(rows: list[Fabric]) -> Document:
    cols = [Column(_("key")), Column(""), Column(_("kind"))]
    cols += [Column(h, "right") for h in ("Gbit/s", "GB/s", _("latency µs"), _("achieved"))]
    cols.append(Column(_("notes")))
    n = units.number
    body = [
        [
            f.key,
            _mark(f.verified),
            f.kind,
            n(f.bandwidth_gbps, 1),
            n(f.bandwidth_gb_s, 2),
            n(f.latency_us, 2),
            units.percent(f.achieved_fraction),
            f.notes or "",
        ]
        for f in rows
    ]
    table = Table(
        cols,
        body,
        title=_("Nominal bandwidth per direction"),
        caption=_(
            "{dash} = no sourced figure; {mark} = not verified. "
            "Sources and dates: `gpuwise catalog show KEY` or --json."
        ).format(dash=units.UNKNOWN, mark=UNVERIFIED),
    )
    return _doc(
        _("Links and fabrics"), [table], {"kind": "fabrics", "fabrics": [fabric_dict(f) for f in rows]}
    )


@shows
def offers_view(offers: list[Offer]) -> Document:
    data = {"kind": "offers", "offers": [offer_dict(o) for o in offers]}
    if not offers:
        hint = _("no offers match (try without filters; `gpuwise catalog offers --json` lists every field)")
        return _doc(_("Cloud GPU offers"), [Paragraph(hint)], data)
    cols = [Column(_("instance")), Column(_("provider")), Column("GPUs"), Column("vCPU", "right")]
    cols += [Column(_("net Gb/s"), "right"), Column("RDMA", "right"), Column(_("price"), "right")]
    cols += [Column(_("/GPU-h"), "right"), Column(_("region"))]
    rows = []
    for o in offers:
        count = "" if o.accelerator_count is None else f"{units.number(o.accelerator_count, 1)}×"
        network = units.number(o.network_gbps, 1) + (f" {o.fabric}" if o.fabric else "")
        where = o.zone or o.region or _("any")
        rows.append(
            [
                o.instance_type,
                o.provider,
                f"{count}{o.accelerator_name or units.UNKNOWN}",
                units.number(o.vcpus, 0),
                network,
                units.number(o.rdma_gbps, 0),
                units.money(o.price, o.currency),
                units.money(o.price_per_gpu_hour, o.currency),
                Styled(_("{where} (sold out)").format(where=where), "fail")
                if o.status == "sold-out"
                else where,
            ]
        )
    table = Table(
        cols,
        rows,
        title=_("Price per instance-hour"),
        caption=_(
            "{dash} = no sourced price. Spot, reserved, sources and dates: "
            "`gpuwise catalog show INSTANCE` or --json."
        ).format(dash=units.UNKNOWN),
    )
    return _doc(_("Cloud GPU offers"), [table], data)


def _gpu_rows(spec: GpuSpec, reported_name: str | None) -> list[tuple[str, str | Styled]]:
    n = units.number
    rows: list[tuple[str, str | Styled]] = [(_("key"), spec.key), (_("name"), spec.name)]
    if reported_name and reported_name != spec.key:
        rows.insert(0, (_("resolved from"), repr(reported_name)))
    rows += [
        (_("vendor"), spec.vendor),
        *[
            (_("{dtype} peak").format(dtype=d), n(spec.peak_tflops(d), 1, "TFLOPS"))
            for d in ("fp32", "tf32", "fp16", "bf16", "fp8")
        ],
        *_memory_rows(spec),
        (_("memory bandwidth"), n(spec.memory_bandwidth_gb_s, 0, "GB/s")),
        (_("NVLink (bidir, per GPU)"), n(spec.nvlink_bandwidth_gb_s, 0, "GB/s")),
        (_("PCIe gen"), n(spec.pcie_gen, 0)),
        ("TDP", n(spec.tdp_watts, 0, "W")),
        (_("MAMF fraction"), n(spec.mamf_fraction, 3)),
        (_("memcpy fraction"), n(spec.memcpy_fraction, 2)),
        (_("PCIe fraction"), n(spec.pcie_fraction, 2)),
        (_("NVLink fraction"), n(spec.nvlink_fraction, 2)),
        (_("verified"), _verified(spec.verified)),
        (_("source"), spec.source),
        (_("as of"), spec.as_of.isoformat()),
        (_("match patterns"), "; ".join(spec.patterns)),
    ]
    return rows + ([(_("notes"), spec.notes)] if spec.notes else [])


@shows
def gpu_view(spec: GpuSpec, query: str) -> Document:
    blocks: list[Block] = [KeyValues(_gpu_rows(spec, query))]
    return _doc(f"GPU {spec.key}", blocks, {"kind": "gpu", "query": query, "gpu": gpu_dict(spec)})


def _offer_rows(offer: Offer) -> list[tuple[str, str | Styled]]:
    spec, c, n = offer.gpu_spec(), offer.currency, units.number
    per_gpu, any_ = units.money(offer.price_per_gpu_hour, c), _("any")
    return [
        (_("provider"), offer.provider),
        (
            "GPUs",
            f"{n(offer.accelerator_count or 0, 1)} × {offer.accelerator_name or units.UNKNOWN}  "
            + (_("(catalog: {key})").format(key=spec.key) if spec else _("(no spec row)")),
        ),
        (
            _("vCPUs / RAM"),
            f"{n(offer.vcpus, 0)} / {units.gib(None if offer.memory_gib is None else offer.memory_gib * units.GIB)}",
        ),
        (C_("offer", "network"), f"{n(offer.network_gbps, 1, 'Gb/s')} {offer.fabric or ''}".rstrip()),
        ("RDMA", n(offer.rdma_gbps, 0, "Gb/s")),
        (
            _("on-demand"),
            units.money(offer.price, c)
            + ("  " + _("({price} per GPU-hour)").format(price=per_gpu) if offer.price_per_gpu_hour else ""),
        ),
        (_("spot"), units.money(offer.spot_price, c)),
        (
            _("reserved 1 yr / 3 yr"),
            f"{units.money(offer.reserved_1y_price, c)} / {units.money(offer.reserved_3y_price, c)}",
        ),
        *(
            [
                (
                    _("monthly subscription"),
                    _("{price} per instance-month").format(price=units.money(offer.monthly_price, c)),
                )
            ]
            if offer.monthly_price is not None
            else []
        ),
        (_("region / zone"), f"{offer.region or any_} / {offer.zone or any_}"),
        (_("status"), offer.status or units.UNKNOWN),
        (_("price source"), offer.price_source or C_("list", "none")),
        (_("as of"), offer.as_of.isoformat() if offer.as_of else units.UNKNOWN),
        (_("file"), f"{offer.file}:{offer.line}" if offer.file else ""),
        *([(_("notes"), offer.notes)] if offer.notes else []),
    ]


@shows
def offer_view(offers: list[Offer], query: str) -> Document:
    blocks: list[Block] = []
    any_region = _("any region")
    for o in offers:
        blocks += [
            Heading(f"{o.instance_type} ({o.region or any_region})", level=2),
            KeyValues(_offer_rows(o)),
        ]
    data = {"kind": "offer", "query": query, "offers": [offer_dict(o) for o in offers]}
    return _doc(_("Offer {instance}").format(instance=offers[0].instance_type), blocks, data)


@shows
def fabric_view(fabric: Fabric, query: str) -> Document:
    n = units.number
    rows: list[tuple[str, str | Styled]] = [
        (_("kind"), fabric.kind),
        (
            _("bandwidth (per direction)"),
            f"{n(fabric.bandwidth_gbps, 2, 'Gbit/s')} = {n(fabric.bandwidth_gb_s, 2, 'GB/s')}",
        ),
        (_("latency"), n(fabric.latency_us, 2, "µs")),
        (_("typical achieved fraction"), n(fabric.achieved_fraction, 2)),
        (_("verified"), _verified(fabric.verified)),
        (_("source"), fabric.source),
        (_("as of"), fabric.as_of.isoformat()),
        *([(_("notes"), fabric.notes)] if fabric.notes else []),
    ]
    data = {"kind": "fabric", "query": query, "fabric": fabric_dict(fabric)}
    return _doc(_("Fabric {key}").format(key=fabric.key), [KeyValues(rows)], data)
