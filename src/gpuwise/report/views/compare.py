"""`gpuwise compare`: facts that differ by layer, measurements with B/A, findings in only one file."""

from __future__ import annotations

from gpuwise import units
from gpuwise.i18n import _
from gpuwise.report.compare import Comparison
from gpuwise.report.document import Block, Column, Document, Heading, KeyValues, Paragraph, Table
from gpuwise.report.views.charts import compare_charts


def _ratio(x: float | None) -> str:
    return units.UNKNOWN if not x else f"{x:.2f}x"


def compare_view(c: Comparison) -> Document:
    reports = c.kind_a == c.kind_b == "report"
    blocks: list[Block] = [
        Heading(_("gpuwise compare")),
        KeyValues(
            [
                (
                    "A",
                    _("{file} ({kind}, host {host})").format(
                        file=c.a, kind=c.kind_a, host=c.host_a or units.UNKNOWN
                    ),
                ),
                (
                    "B",
                    _("{file} ({kind}, host {host})").format(
                        file=c.b, kind=c.kind_b, host=c.host_b or units.UNKNOWN
                    ),
                ),
            ]
        ),
        *compare_charts(c),  # drawn by html only, first: the measurements' B/A at a glance (table below)
    ]
    if reports and c.facts:
        for layer in sorted({d.layer for d in c.facts}):
            rows = [[d.path, units.value(d.a), units.value(d.b)] for d in c.facts if d.layer == layer]
            blocks.append(
                Table(
                    [Column(_("fact")), Column("A"), Column("B")],
                    rows,
                    title=_("Facts that differ — {layer}").format(layer=layer),
                )
            )
    elif reports:
        blocks.append(
            Paragraph(_("facts: no differences (ignoring volatile readings such as temperatures and clocks)"))
        )
    if c.measurements:
        cols = [Column(_("name")), Column(_("device")), Column(_("unit"))] + [
            Column(h, "right") for h in ("A", "B", "B/A")
        ]
        rows = [
            [m.name, m.device or "", m.unit, units.number(m.a), units.number(m.b), _ratio(m.ratio)]
            for m in c.measurements
        ]
        blocks.append(Table(cols, rows, title=_("Measurements")))
    else:
        blocks.append(Paragraph(_("measurements: none in either file")))
    if reports and c.findings:
        rows = [[f.id, f.title, f.status_a or units.UNKNOWN, f.status_b or units.UNKNOWN] for f in c.findings]
        blocks.append(
            Table(
                [Column("id"), Column(_("title")), Column("A"), Column("B")],
                rows,
                title=_("Findings that differ"),
            )
        )
    elif reports:
        blocks.append(Paragraph(_("findings: the same in both")))
    return Document(title=_("gpuwise compare"), blocks=blocks, data=c.model_dump(mode="json", by_alias=True))
