"""`gpuwise compare`: facts that differ by layer, measurements with B/A, findings in only one file."""

from __future__ import annotations

from gpuwise import units
from gpuwise.i18n import N_, _, shows, worded
from gpuwise.report.compare import (
    IMPROVEMENT,
    NO_NOISE_BOUND,
    REGRESSION,
    WITHIN_NOISE,
    Comparison,
    MeasurementDiff,
)
from gpuwise.report.document import Block, Column, Document, Heading, KeyValues, Paragraph, Table
from gpuwise.report.views.charts import compare_charts


def _ratio(x: float | None) -> str:
    return units.UNKNOWN if not x else f"{x:.2f}x"


VERDICT_LABELS = {
    IMPROVEMENT: N_("improvement"),
    REGRESSION: N_("regression"),
    WITHIN_NOISE: N_("within noise"),
    NO_NOISE_BOUND: N_("no noise bound"),
}


def _verdict(m: MeasurementDiff) -> str:
    if m.verdict is None:
        return units.UNKNOWN
    label = _(VERDICT_LABELS[m.verdict])
    return label if m.p_value is None else f"{label} (p={m.p_value:.2g})"


def _noise_summary(c: Comparison) -> Paragraph:
    counts = {v: c.verdicts.get(v, 0) for v in VERDICT_LABELS}
    if counts[NO_NOISE_BOUND] == len(c.in_common):
        return Paragraph(
            _(
                "no noise bound: neither run repeated these measurements on both sides (stats.repeats < 2), "
                "so a ratio B/A cannot be told from noise"
            ),
            "warn",
        )
    text = _(
        "{regression} regression(s), {improvement} improvement(s), {within} within noise, {unbounded} "
        "without a noise bound. Rule: a measurement repeated in both runs is within noise when the ranges "
        "[min, max] of its repeats overlap (with 5+ samples on each side: a two-sided Mann-Whitney U test, "
        "p < 0.05); a single repeat gives no noise bound."
    ).format(
        regression=counts[REGRESSION],
        improvement=counts[IMPROVEMENT],
        within=counts[WITHIN_NOISE],
        unbounded=counts[NO_NOISE_BOUND],
    )
    return Paragraph(text, "warn" if counts[REGRESSION] else "dim")


@shows
def compare_view(c: Comparison) -> Document:
    data = c.model_dump(
        mode="json", by_alias=True
    )  # from the model as it is: JSON stays English under every --lang
    c = worded(c)
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
        cols.append(Column(_("noise")))
        rows = [
            [
                m.name,
                m.device or "",
                m.unit,
                units.number(m.a),
                units.number(m.b),
                _ratio(m.ratio),
                _verdict(m),
            ]
            for m in c.measurements
        ]
        blocks.append(Table(cols, rows, title=_("Measurements")))
        if c.in_common:
            blocks.append(_noise_summary(c))
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
    return Document(title=_("gpuwise compare"), blocks=blocks, data=data)
