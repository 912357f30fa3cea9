"""`gpuwise bench`: one table per layer, every result with its % of peak or the reason it has none."""

from __future__ import annotations

from gpuwise import units
from gpuwise.bench.models import BenchReport, Measurement
from gpuwise.bench.registry import titles
from gpuwise.report.document import (
    Block,
    Chart,
    Column,
    Document,
    Heading,
    KeyValues,
    Paragraph,
    Series,
    Styled,
    Table,
)
from gpuwise.report.views.charts import bench_peak_chart

STATUS_STYLE = {"ok": "ok", "failed": "fail", "skipped": "warn", "invalid": "accent"}


def _details(m: Measurement) -> str:
    """The one or two extra facts that make a row readable without the JSON."""
    e, p = m.extra, m.params
    if m.layer == "compute" and "best_shape" in p:
        return "best shape " + "x".join(map(str, p["best_shape"]))
    if m.layer == "collective" and e.get("table"):
        return (
            f"{p.get('world_size')} ranks {p.get('backend')}; "
            f"algbw {units.number(e.get('algbw_plateau_gb_s'))} GB/s; slowest rank {e.get('slowest_rank')}"
        )
    if m.layer == "storage":
        lat = e.get("latency_us", {})
        how = "direct" if p.get("direct") else "buffered"
        return f"p99 {units.number(lat.get('p99_us'))} us; {how} on {p.get('filesystem')}"
    if m.layer == "dataloader":
        return f"saturates at {e.get('saturating_workers')} workers (best {e.get('best_workers')})"
    if m.layer == "training":
        tok = f", {units.number(e['tokens_per_s'])} tok/s" if e.get("tokens_per_s") else ""
        return f"{units.number(e.get('samples_per_s'))} samples/s{tok}"
    if m.layer == "gpu-gpu":
        return f"link {e.get('link')}"
    return ""


def _peak_cell(m: Measurement) -> str | Styled:
    if m.percent_of_peak is not None:
        cell = f"{m.percent_of_peak:.0f}% of {units.number(m.peak)}"
        if m.percent_of_achievable is not None:
            cell += f"\n{m.percent_of_achievable:.0f}% of typical"
        return cell
    return Styled("no peak", "dim") if m.value is not None else ""


def layer_table(layer: str, results: list[Measurement]) -> Table:
    columns = [
        Column("benchmark"),
        Column("value", "right"),
        Column("% of peak", "right"),
        Column("status"),
        Column("details / reason"),
    ]
    rows = []
    for m in results:
        detail = m.reason or _details(m)
        if m.value is not None and m.peak is None and m.peak_source:
            detail = "; ".join(x for x in (detail, m.peak_source.text) if x)
        value = units.number(m.value, unit=m.unit) if m.value is not None else ""
        rows.append(
            [
                Styled(m.name, "bold"),
                value,
                _peak_cell(m),
                Styled(m.status, STATUS_STYLE.get(m.status)),
                detail,
            ]
        )
    return Table(columns, rows, title=titles().get(layer, str(layer)))


def collective_sizes(results: list[Measurement]) -> list[Block]:
    """busbw by message size for each collective that ran: a table (and the same numbers as a chart)."""
    runs = [m for m in results if m.status == "ok" and m.extra.get("table")]
    if not runs:
        return []
    by_op = {m.name: {row["bytes"]: row.get("busbw_gb_s") for row in m.extra["table"]} for m in runs}
    sizes = sorted({size for table in by_op.values() for size in table})
    rows = [[units.size(size)] + [units.number(by_op[m.name].get(size)) for m in runs] for size in sizes]
    cols = [Column("message", "right")] + [Column(m.name.removesuffix("_busbw"), "right") for m in runs]
    chart = Chart(
        "line",
        "Collective busbw by message size",
        "message size (bytes)",
        "busbw (GB/s)",
        [Series(m.name, sizes, [by_op[m.name].get(size) for size in sizes]) for m in runs],
    )
    return [Table(cols, rows, title="Collectives: busbw in GB/s by message size"), chart]


def bench_view(report: BenchReport) -> Document:
    """The environment, then one table per layer in run order, then the status counts."""
    env = report.environment
    versions = ", ".join(f"{k} {env[k]}" for k in ("torch", "cuda", "nccl") if env.get(k))
    devices = (
        ", ".join(map(str, env.get("gpus") or []))
        or f"CPU only ({env.get('cpu_model', 'unknown CPU')}, {env.get('cpu_cores')} cores)"
    )
    title = f"gpuwise bench — {report.hostname or 'unknown host'}"
    blocks: list[Block] = [
        Heading(title),
        KeyValues(
            [("mode", str(report.mode)), ("devices", devices), ("versions", versions or units.UNKNOWN)]
        ),
    ]
    blocks += [Paragraph(f"note: {w}", "warn") for w in env.get("warnings", [])]
    layers: dict[str, list[Measurement]] = {}
    for m in report.results:
        layers.setdefault(m.layer, []).append(m)
    for layer, results in layers.items():
        blocks.append(layer_table(layer, results))
        if layer == "collective":
            blocks += collective_sizes(results)
    blocks += bench_peak_chart(report)  # drawn by html only; its numbers are in the tables above
    counts = {s: sum(1 for m in report.results if m.status == s) for s in STATUS_STYLE}
    blocks.append(Paragraph(", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no results"))
    return Document(title=title, blocks=blocks, data=report.to_json_dict())
