"""`gpuwise history list | show | trend` as Documents (the models are store.history's Run and Metric)."""

from __future__ import annotations

from gpuwise import units
from gpuwise.i18n import C_, _
from gpuwise.report.document import Chart, Column, Document, Heading, KeyValues, Paragraph, Series, Table
from gpuwise.store.history import Metric, Run

SCHEMA = "gpuwise-history/1"


def _num(value: float | None) -> str:
    return units.number(value)  # the rounding every other view uses, so a figure reads the same everywhere


def _run_json(run: Run) -> dict:
    return {
        "id": run.id,
        "kind": run.kind,
        "created_at": run.created_at,
        "host": run.host,
        "facts_digest": run.facts_digest,
        "facts": run.facts,
        "metrics": [vars(m) for m in run.metrics],
    }


def list_view(runs: list[Run], path: str) -> Document:
    rows = [
        [
            str(r.id),
            r.created_at[:19].replace("T", " "),
            r.kind,
            r.host,
            r.facts_digest[:8],
            str(len(r.metrics)),
        ]
        for r in runs
    ]
    columns = [Column("id", "right"), Column(_("time (UTC)")), Column(C_("run", "kind")), Column(_("host")),
               Column(_("facts")), Column(_("metrics"), "right")]  # fmt: skip
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


def show_view(run: Run) -> Document:
    title = _("Run {id}: {kind} on {host}").format(id=run.id, kind=run.kind, host=run.host)
    facts = [(k, str(v)) for k, v in run.facts.items()]
    blocks = [
        Heading(title),
        KeyValues([(_("time (UTC)"), run.created_at), (_("facts digest"), run.facts_digest)]),
        KeyValues(facts, title=_("Facts")) if facts else Paragraph(_("no facts recorded")),
        metrics_table(run.metrics),
    ]
    data = {"schema": SCHEMA, "run": _run_json(run), "document": run.document}
    return Document(title, blocks, data)


def trend_view(metric: str, points: list[tuple[Run, Metric]], host: str | None) -> Document:
    title = (
        _("Trend of {metric} on {host}").format(metric=metric, host=host)
        if host
        else _("Trend of {metric}").format(metric=metric)
    )
    unit = points[0][1].unit if points else ""
    rows = [
        [
            str(r.id),
            r.created_at[:19].replace("T", " "),
            r.host,
            _num(m.value),
            _num(m.low),
            _num(m.high),
            unit,
        ]
        for r, m in points
    ]
    columns = [Column(C_("noun", "run"), "right"), Column(_("time (UTC)")), Column(_("host")),
               Column(_("median"), "right"), Column(_("min"), "right"), Column(_("max"), "right"),
               Column(_("unit"))]  # fmt: skip
    blocks = [Heading(title), Table(columns, rows)]
    if len(points) > 1:
        series = []
        for host_id in dict.fromkeys(r.host for r, _m in points):
            mine = [(r, m) for r, m in points if r.host == host_id]
            series.append(Series(host_id, [f"{r.id}: {r.created_at[:10]}" for r, _m in mine],
                                 [m.value for _r, m in mine],
                                 err=[_half_range(m) for _r, m in mine]))  # fmt: skip
        blocks.append(Chart("line", title, C_("noun", "run"), f"{metric} ({unit})", series))
    data = {
        "schema": SCHEMA,
        "metric": metric,
        "host": host,
        "points": [{"run": r.id, "created_at": r.created_at, "host": r.host, **vars(m)} for r, m in points],
    }
    return Document(title, blocks, data)


def _half_range(m: Metric) -> float | None:
    """The error bar: half the min..max range of the repeats (around the median, approximately)."""
    return None if m.low is None or m.high is None else (m.high - m.low) / 2
