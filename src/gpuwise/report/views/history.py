"""`gpuwise history list | show | trend` as Documents (the models are store.history's Run and Metric)."""

from __future__ import annotations

from gpuwise import units
from gpuwise.documents.ids import HISTORY_SCHEMA as SCHEMA
from gpuwise.i18n import C_, _, shows
from gpuwise.report.document import Chart, Column, Document, Heading, KeyValues, Paragraph, Series, Table
from gpuwise.store.history import Metric, Run


def _num(value: float | None) -> str:
    return units.number(value)  # the rounding every other view uses, so a figure reads the same everywhere


def _run_json(run: Run) -> dict:
    return {
        "id": run.id,
        "kind": run.kind,
        "created_at": run.created_at,
        "host": run.host,
        "gpu": run.gpu,
        "origin": run.origin,
        "facts_digest": run.facts_digest,
        "facts": run.facts,
        "metrics": [vars(m) for m in run.metrics],
    }


@shows
def list_view(runs: list[Run], path: str) -> Document:
    rows = [
        [
            str(r.id),
            r.created_at[:19].replace("T", " "),
            r.kind,
            r.host,
            r.gpu or "—",
            r.origin,
            r.facts_digest[:8],
            str(len(r.metrics)),
        ]
        for r in runs
    ]
    columns = [Column("id", "right"), Column(_("time (UTC)")), Column(C_("run", "kind")), Column(_("host")),
               Column("GPU"), Column(_("origin")), Column(_("facts")), Column(_("metrics"), "right")]  # fmt: skip
    title = _("Recorded runs")
    blocks = [Heading(title), Paragraph(_("history: {path}").format(path=path), "dim")]
    blocks.append(Table(columns, rows) if rows else Paragraph(_("no runs recorded yet")))
    return Document(title, blocks, {"schema": SCHEMA, "path": path, "runs": [_run_json(r) for r in runs]})


def metrics_table(metrics: list[Metric]) -> Table:
    columns = [Column(_("metric")), Column(_("median"), "right"), Column(_("min"), "right"),
               Column(_("max"), "right"), Column(_("unit")), Column(_("repeats"), "right")]  # fmt: skip
    rows = [
        [m.name, _num(m.value), _num(m.low), _num(m.high), m.unit, str(m.repeats or "—")] for m in metrics
    ]
    return Table(columns, rows)


@shows
def show_view(run: Run) -> Document:
    title = _("Run {id}: {kind} on {host}").format(id=run.id, kind=run.kind, host=run.host)
    facts = [(k, str(v)) for k, v in run.facts.items()]
    blocks = [
        Heading(title),
        KeyValues(
            [
                (_("time (UTC)"), run.created_at),
                ("GPU", run.gpu or "—"),
                (_("origin"), run.origin),
                (_("facts digest"), run.facts_digest),
            ]
        ),
        KeyValues(facts, title=_("Facts")) if facts else Paragraph(_("no facts recorded")),
        metrics_table(run.metrics),
    ]
    data = {"schema": SCHEMA, "run": _run_json(run), "document": run.document}
    return Document(title, blocks, data)


def series_label(run: Run) -> str:
    """host · GPU model (· replay): the runs of one label are one series."""
    parts = [run.host] + ([run.gpu] if run.gpu else []) + ([run.origin] if run.origin != "live" else [])
    return " · ".join(parts)


@shows
def trend_view(
    metric: str, points: list[tuple[Run, Metric]], host: str | None, label: str | None = None
) -> Document:
    """One table and one chart line per series (host, GPU model, origin), never one line across them."""
    where = label or host
    title = (
        _("Trend of {metric} on {host}").format(metric=metric, host=where)
        if where
        else _("Trend of {metric}").format(metric=metric)
    )
    unit = points[0][1].unit if points else ""
    by_series: dict[tuple[str, str, str], list[tuple[Run, Metric]]] = {}
    for r, m in points:
        by_series.setdefault(r.series, []).append((r, m))
    columns = [Column(C_("noun", "run"), "right"), Column(_("time (UTC)")), Column(_("median"), "right"),
               Column(_("min"), "right"), Column(_("max"), "right"), Column(_("unit"))]  # fmt: skip
    blocks: list = [Heading(title)]
    series = []
    for mine in by_series.values():
        name = series_label(mine[0][0])
        rows = [
            [str(r.id), r.created_at[:19].replace("T", " "), _num(m.value), _num(m.low), _num(m.high), unit]
            for r, m in mine
        ]
        blocks.append(Table(columns, rows, title=name))
        series.append(Series(name, [f"{r.id}: {r.created_at[:10]}" for r, _m in mine],
                             [m.value for _r, m in mine], err=[_half_range(m) for _r, m in mine]))  # fmt: skip
    if len(points) > 1:
        blocks.append(Chart("line", title, C_("noun", "run"), f"{metric} ({unit})", series))
    data = {
        "schema": SCHEMA,
        "metric": metric,
        "host": host,
        "series": [
            {"host": k[0], "gpu": k[1], "origin": k[2], "runs": [r.id for r, _m in v]}
            for k, v in by_series.items()
        ],
        "points": [
            {
                "run": r.id,
                "created_at": r.created_at,
                "host": r.host,
                "gpu": r.gpu,
                "origin": r.origin,
                **vars(m),
            }
            for r, m in points
        ],
    }
    return Document(title, blocks, data)


def _half_range(m: Metric) -> float | None:
    """The error bar: half the min..max range of the repeats (around the median, approximately)."""
    return None if m.low is None or m.high is None else (m.high - m.low) / 2
