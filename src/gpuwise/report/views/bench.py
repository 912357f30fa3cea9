"""`gpuwise bench`: one table per layer, every result with its % of peak or the reason it has none."""

from __future__ import annotations

from gpuwise import units
from gpuwise.bench.registry import titles
from gpuwise.documents.bench import BenchReport, Measurement
from gpuwise.i18n import N_, _, shows, worded
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
STATUS_WORD = {"ok": N_("ok"), "failed": N_("failed"), "skipped": N_("skipped"), "invalid": N_("invalid")}


def _details(m: Measurement) -> str:
    """The one or two extra facts that make a row readable without the JSON."""
    e, p = m.extra, m.params
    if m.layer == "compute" and "best_shape" in p:
        return _("best shape {shape}").format(shape="x".join(map(str, p["best_shape"])))
    if m.layer == "collective" and e.get("table"):
        return _collective_details(p, e, m.stats.of if m.stats else None)
    if m.layer == "storage":
        lat = e.get("latency_us", {})
        how = _("direct") if p.get("direct") else _("buffered")
        return _("p99 {p99} us; {how} on {filesystem}").format(
            p99=units.number(lat.get("p99_us")), how=how, filesystem=p.get("filesystem")
        )
    if m.layer == "dataloader":
        return _("saturates at {workers} workers (best {best})").format(
            workers=e.get("saturating_workers"), best=e.get("best_workers")
        )
    if m.layer == "training":
        tok = f", {units.number(e['tokens_per_s'])} tok/s" if e.get("tokens_per_s") else ""
        return f"{units.number(e.get('samples_per_s'))} samples/s{tok}"
    if m.layer == "gpu-gpu":
        return _("link {link}").format(link=e.get("link"))
    return ""


def _collective_details(p: dict, e: dict, size: str | None = None) -> str:
    """Ranks, the size the headline is the median at, algbw plateau, slowest rank and nccl-tests' own average:
    each only when the run reported it (files from before headlines named their samples have no size)."""
    parts = []
    if p.get("world_size"):
        parts.append(
            _("{ranks} ranks {backend}").format(ranks=p["world_size"], backend=p.get("backend") or "")
        )
    if size:
        parts.append(_("median at {size}").format(size=size))
    if e.get("algbw_plateau_gb_s") is not None:
        parts.append(_("algbw {algbw} GB/s").format(algbw=units.number(e["algbw_plateau_gb_s"])))
    if e.get("slowest_rank") is not None:
        parts.append(_("slowest rank {slowest}").format(slowest=e["slowest_rank"]))
    if e.get("avg_busbw_gb_s") is not None:
        parts.append(
            _("nccl-tests Avg bus bandwidth {avg} GB/s (mean over all sizes)").format(
                avg=units.number(e["avg_busbw_gb_s"])
            )
        )
    return "; ".join(x.strip() for x in parts)


def _peak_cell(m: Measurement) -> str | Styled:
    if m.percent_of_peak is not None:
        # the "%" goes in with the number: a msgid with "% of" reads as a printf placeholder to Babel's checks
        cell = _("{percent} of {peak}").format(percent=f"{m.percent_of_peak:.0f}%", peak=units.number(m.peak))
        if m.percent_of_achievable is not None:
            cell += "\n" + _("{percent} of typical").format(percent=f"{m.percent_of_achievable:.0f}%")
        return cell
    return Styled(_("no peak"), "dim") if m.value is not None else ""


def layer_table(layer: str, results: list[Measurement]) -> Table:
    columns = [
        Column(_("benchmark")),
        Column(_("value"), "right"),
        Column(_("{percent_sign} of peak").format(percent_sign="%"), "right"),
        Column(_("status")),
        Column(_("details / reason")),
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
                Styled(_(STATUS_WORD.get(m.status, m.status)), STATUS_STYLE.get(m.status)),
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
    cols = [Column(_("message"), "right")] + [Column(m.name.removesuffix("_busbw"), "right") for m in runs]
    chart = Chart(
        "line",
        _("Collective busbw by message size"),
        _("message size (bytes)"),
        _("busbw (GB/s)"),
        [Series(m.name, sizes, [by_op[m.name].get(size) for size in sizes]) for m in runs],
    )
    return [Table(cols, rows, title=_("Collectives: busbw in GB/s by message size")), chart]


@shows
def bench_view(report: BenchReport) -> Document:
    """The environment, then one table per layer in run order, then the status counts."""
    data = report.to_json_dict()  # from the model as it is: JSON stays English under every --lang
    report = worded(report)
    env = report.environment
    versions = ", ".join(f"{k} {env[k]}" for k in ("torch", "cuda", "nccl") if env.get(k))
    devices = ", ".join(map(str, env.get("gpus") or [])) or _("CPU only ({cpu}, {cores} cores)").format(
        cpu=env.get("cpu_model", _("unknown CPU")), cores=env.get("cpu_cores")
    )
    title = _("gpuwise bench — {host}").format(host=report.hostname or _("unknown host"))
    blocks: list[Block] = [
        Heading(title),
        KeyValues(
            [
                (_("mode"), str(report.mode)),
                (_("devices"), devices),
                (_("versions"), versions or units.UNKNOWN),
            ]
        ),
    ]
    blocks += [Paragraph(_("note: {warning}").format(warning=w), "warn") for w in env.get("warnings", [])]
    layers: dict[str, list[Measurement]] = {}
    for m in report.results:
        layers.setdefault(m.layer, []).append(m)
    for layer, results in layers.items():
        blocks.append(layer_table(layer, results))
        if layer == "collective":
            blocks += collective_sizes(results)
    blocks += bench_peak_chart(report)  # drawn by html only; its numbers are in the tables above
    counts = {s: sum(1 for m in report.results if m.status == s) for s in STATUS_STYLE}
    blocks.append(
        Paragraph(
            ", ".join(_("{n} {status}").format(n=n, status=_(STATUS_WORD[s])) for s, n in counts.items() if n)
            or _("no results")
        )
    )
    return Document(title=title, blocks=blocks, data=data)
