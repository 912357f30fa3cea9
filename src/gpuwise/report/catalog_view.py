"""Rich tables and JSON-ready dicts for `gpuwise catalog`. Formatting only: no loading, no judging."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from gpuwise.catalog.fabrics import Fabric
from gpuwise.catalog.gpus import GpuSpec
from gpuwise.catalog.offers import Offer

_CURRENCY = {"USD": "$", "CNY": "¥", "EUR": "€"}


def _num(value: float | None, digits: int = 1, suffix: str = "") -> str:
    if value is None:
        return "[dim]-[/]"
    text = f"{value:,.{digits}f}".rstrip("0").rstrip(".") if digits else f"{value:,.0f}"
    return text + suffix


def _money(value: float | None, currency: str) -> str:
    return "[dim]-[/]" if value is None else escape(f"{_CURRENCY.get(currency, currency + ' ')}{value:,.2f}")


def _t(value) -> str:
    """Catalog text (names, notes, sources, user CSV cells) as a cell that prints literally."""
    return "" if value is None else escape(str(value))


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


def _compact(title: str) -> Table:
    # Light borders and one-space padding so the tables fit an 80-column terminal.
    return Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False)


def gpus_table(specs: Iterable[GpuSpec]) -> Table:
    table = _compact("GPU specs: dense peak TFLOPS (- = no sourced figure)")
    table.add_column("key", no_wrap=True)
    for header in (
        "fp32",
        "tf32",
        "bf16",
        "fp8",
        "GiB",
        "mem GB/s",
        "NVLink GB/s",
        "TDP W",
        "MAMF",
        "verified",
    ):
        table.add_column(header, justify="right", no_wrap=True)
    for s in specs:
        table.add_row(
            _t(s.key),
            _num(s.fp32_tflops),
            _num(s.tf32_tflops),
            _num(s.bf16_tflops),
            _num(s.fp8_tflops),
            _num(s.memory_gib, 0),
            _num(s.memory_bandwidth_gb_s, 0),
            _num(s.nvlink_bandwidth_gb_s, 0),
            _num(s.tdp_watts, 0),
            "[dim]-[/]" if s.mamf_fraction is None else f"{s.mamf_fraction:.0%}",
            "yes" if s.verified else "[yellow]no[/]",
        )
    table.caption = "NVLink: per-GPU bidirectional total. Sources and dates: `gpuwise catalog show KEY`."
    return table


def fabrics_table(rows: Iterable[Fabric]) -> Table:
    table = _compact("Links and fabrics: nominal bandwidth per direction (- = no sourced figure)")
    table.add_column("key", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    for header in ("Gbit/s", "GB/s", "latency µs", "achieved", "verified"):
        table.add_column(header, justify="right", no_wrap=True)
    table.add_column("notes")
    for f in rows:
        table.add_row(
            _t(f.key),
            _t(f.kind),
            _num(f.bandwidth_gbps, 1),
            _num(f.bandwidth_gb_s, 2),
            _num(f.latency_us, 2),
            "[dim]-[/]" if f.achieved_fraction is None else f"{f.achieved_fraction:.0%}",
            "yes" if f.verified else "[yellow]no[/]",
            _t(f.notes),
        )
    table.caption = "Sources and dates: `gpuwise catalog show KEY` or --json."
    return table


def offers_table(offers: Iterable[Offer]) -> Table:
    table = _compact("Cloud GPU offers: price per instance-hour (- = no sourced price)")
    table.add_column("provider", no_wrap=True)
    table.add_column("instance", no_wrap=True)
    table.add_column("GPUs", no_wrap=True)
    table.add_column("vCPU", justify="right", no_wrap=True)
    table.add_column("net Gb/s", justify="right", no_wrap=True)
    table.add_column("RDMA", justify="right", no_wrap=True)
    table.add_column("price", justify="right", no_wrap=True)
    table.add_column("/GPU-h", justify="right", no_wrap=True)
    table.add_column("region", no_wrap=True)
    for o in offers:
        count = "" if o.accelerator_count is None else f"{o.accelerator_count:g}×"
        network = _num(o.network_gbps, 1)
        if o.fabric:
            network += f" {_t(o.fabric)}"
        where = _t(o.zone or o.region) or "[dim]any[/]"
        if o.status == "sold-out":
            where += " [red](sold out)[/]"
        table.add_row(
            _t(o.provider),
            _t(o.instance_type),
            f"{count}{_t(o.accelerator_name or '?')}",
            _num(o.vcpus, 0),
            network,
            _num(o.rdma_gbps, 0),
            _money(o.price, o.currency),
            _money(o.price_per_gpu_hour, o.currency),
            where,
        )
    table.caption = "Spot, reserved, sources and dates: `gpuwise catalog show INSTANCE` or --json."
    return table


def _detail(title: str, rows: list[tuple[str, str]]) -> Table:
    table = Table(title=title, title_justify="left", show_header=False, box=None, padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    for key, value in rows:
        table.add_row(key, value)
    return table


def gpu_detail(spec: GpuSpec, reported_name: str | None = None) -> Table:
    rows = [("key", _t(spec.key)), ("name", _t(spec.name))]
    if reported_name and reported_name != spec.key:
        rows.insert(0, ("resolved from", _t(repr(reported_name))))
    rows += [
        ("vendor", _t(spec.vendor)),
        *[
            (f"{d} peak", _num(spec.peak_tflops(d), 1, " TFLOPS"))
            for d in ("fp32", "tf32", "fp16", "bf16", "fp8")
        ],
        ("memory", _num(spec.memory_gib, 0, " GiB") if spec.memory_gib else "[dim]-[/]"),
        ("memory bandwidth", _num(spec.memory_bandwidth_gb_s, 0, " GB/s")),
        ("NVLink (bidir, per GPU)", _num(spec.nvlink_bandwidth_gb_s, 0, " GB/s")),
        ("PCIe gen", _num(spec.pcie_gen, 0)),
        ("TDP", _num(spec.tdp_watts, 0, " W")),
        ("MAMF fraction", _num(spec.mamf_fraction, 3)),
        ("memcpy fraction", _num(spec.memcpy_fraction, 2)),
        ("PCIe fraction", _num(spec.pcie_fraction, 2)),
        ("NVLink fraction", _num(spec.nvlink_fraction, 2)),
        ("verified", "yes" if spec.verified else "[yellow]no[/]"),
        ("source", _t(spec.source)),
        ("as of", spec.as_of.isoformat()),
        ("match patterns", _t("; ".join(spec.patterns))),
    ]
    if spec.notes:
        rows.append(("notes", _t(spec.notes)))
    return _detail(f"GPU {_t(spec.key)}", rows)


def offer_detail(offer: Offer) -> Table:
    spec = offer.gpu_spec()
    c = offer.currency
    rows = [
        ("provider", _t(offer.provider)),
        (
            "GPUs",
            f"{offer.accelerator_count or 0:g} × {_t(offer.accelerator_name or '?')}"
            + (f"  (catalog: {_t(spec.key)})" if spec else "  [dim](no spec row)[/]"),
        ),
        ("vCPUs / RAM", f"{_num(offer.vcpus, 0)} / {_num(offer.memory_gib, 0, ' GiB')}"),
        ("network", f"{_num(offer.network_gbps, 1, ' Gb/s')} {_t(offer.fabric)}".rstrip()),
        ("RDMA", _num(offer.rdma_gbps, 0, " Gb/s")),
        (
            "on-demand",
            _money(offer.price, c)
            + (f"  ({_money(offer.price_per_gpu_hour, c)} per GPU-hour)" if offer.price_per_gpu_hour else ""),
        ),
        ("spot", _money(offer.spot_price, c)),
        (
            "reserved 1 yr / 3 yr",
            f"{_money(offer.reserved_1y_price, c)} / {_money(offer.reserved_3y_price, c)}",
        ),
        ("region / zone", _t(f"{offer.region or 'any'} / {offer.zone or 'any'}")),
        ("status", _t(offer.status) or "[dim]unknown[/]"),
        ("price source", _t(offer.price_source) or "[dim]none[/]"),
        ("as of", offer.as_of.isoformat() if offer.as_of else "[dim]unknown[/]"),
        ("file", _t(f"{offer.file}:{offer.line}") if offer.file else ""),
    ]
    if offer.notes:
        rows.append(("notes", _t(offer.notes)))
    return _detail(f"Offer {_t(offer.instance_type)}", rows)


def fabric_detail(fabric: Fabric) -> Table:
    rows = [
        ("kind", _t(fabric.kind)),
        (
            "bandwidth (per direction)",
            f"{_num(fabric.bandwidth_gbps, 2, ' Gbit/s')} = {_num(fabric.bandwidth_gb_s, 2, ' GB/s')}",
        ),
        ("latency", _num(fabric.latency_us, 2, " µs")),
        ("typical achieved fraction", _num(fabric.achieved_fraction, 2)),
        ("verified", "yes" if fabric.verified else "[yellow]no[/]"),
        ("source", _t(fabric.source)),
        ("as of", fabric.as_of.isoformat()),
    ]
    if fabric.notes:
        rows.append(("notes", _t(fabric.notes)))
    return _detail(f"Fabric {_t(fabric.key)}", rows)


def print_tables(*tables: Table) -> None:
    console = Console()
    if not console.is_terminal:
        # Piped or captured output has no width; Rich would assume 80 and truncate the cells.
        console = Console(width=max(console.width, 160))
    for table in tables:
        console.print(table)
