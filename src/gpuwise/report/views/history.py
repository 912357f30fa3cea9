"""`gpuwise history list | show | trend` as Documents (the models are store.history's Run and Metric)."""

from __future__ import annotations

from gpuwise.report.document import Chart, Column, Document, Heading, KeyValues, Paragraph, Series, Table
from gpuwise.store.history import Metric, Run

SCHEMA = "gpuwise-history/1"


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.4g}"


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
    columns = [Column("id", "right"), Column("time (UTC)"), Column("kind"), Column("host"),
               Column("facts"), Column("metrics", "right")]  # fmt: skip
    blocks = [Heading("Recorded runs"), Paragraph(f"history: {path}", "dim")]
    blocks.append(Table(columns, rows) if rows else Paragraph("no runs recorded yet"))
    return Document(
        "Recorded runs", blocks, {"schema": SCHEMA, "path": path, "runs": [_run_json(r) for r in runs]}
    )


def metrics_table(metrics: list[Metric]) -> Table:
    columns = [Column("metric"), Column("median", "right"), Column("min", "right"), Column("max", "right"),
               Column("unit"), Column("repeats", "right")]  # fmt: skip
    rows = [
        [m.name, _num(m.value), _num(m.low), _num(m.high), m.unit, str(m.repeats or "—")] for m in metrics
    ]
    return Table(columns, rows)


def show_view(run: Run) -> Document:
    title = f"Run {run.id}: {run.kind} on {run.host}"
    facts = [(k, str(v)) for k, v in run.facts.items()]
    blocks = [
        Heading(title),
        KeyValues([("time (UTC)", run.created_at), ("facts digest", run.facts_digest)]),
        KeyValues(facts, title="Facts") if facts else Paragraph("no facts recorded"),
        metrics_table(run.metrics),
    ]
    data = {"schema": SCHEMA, "run": _run_json(run), "document": run.document}
    return Document(title, blocks, data)


def trend_view(metric: str, points: list[tuple[Run, Metric]], host: str | None) -> Document:
    where = f" on {host}" if host else ""
    title = f"Trend of {metric}{where}"
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
    columns = [Column("run", "right"), Column("time (UTC)"), Column("host"), Column("median", "right"),
               Column("min", "right"), Column("max", "right"), Column("unit")]  # fmt: skip
    blocks = [Heading(title), Table(columns, rows)]
    if len(points) > 1:
        series = []
        for host_id in dict.fromkeys(r.host for r, _ in points):
            mine = [(r, m) for r, m in points if r.host == host_id]
            series.append(Series(host_id, [f"{r.id}: {r.created_at[:10]}" for r, _ in mine],
                                 [m.value for _, m in mine],
                                 err=[_half_range(m) for _, m in mine]))  # fmt: skip
        blocks.append(Chart("line", title, "run", f"{metric} ({unit})", series))
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
