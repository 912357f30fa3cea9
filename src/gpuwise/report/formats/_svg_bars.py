"""Horizontal bar charts as inline SVG (a Chart with horizontal=True), e.g. a tornado chart.

Categories run down the chart, one row each, values along it. Without `base`, bars grow from zero
and the series of a row sit side by side; with `base`, bars grow from the base value and share the
row (a tornado: each input's low and high bar point away from the baseline in opposite directions).
`rules` are dashed vertical reference lines with their label on top. Every text is escaped.
"""

from __future__ import annotations

from html import escape

from gpuwise.report.document import Chart
from gpuwise.report.formats._svg import (
    PALETTE,
    RIGHT,
    WIDTH,
    _fmt,
    _is_number,
    _legend,
    nice_ticks,
    title_svg,
)

ROW_H = 30  # pixels per category
TOP, BOTTOM = 60, 50
MAX_LABEL = 44  # longer category labels are cut (the full text is in the tooltip and the view's table)


def _extent(chart: Chart) -> tuple[float, float]:
    base = chart.base if chart.base is not None else 0.0
    values = [y for s in chart.series for y in s.y if _is_number(y)]
    values += [base, *(value for value, _ in chart.rules)]
    return min(values), max(values)


def horizontal_bars_svg(chart: Chart) -> str:
    categories = list(dict.fromkeys(str(x) for s in chart.series for x in s.x))
    labels = [c if len(c) <= MAX_LABEL else c[: MAX_LABEL - 1] + "…" for c in categories]
    heading, shift = title_svg(chart.title)
    legend, legend_rows = _legend(chart, shift)
    top = TOP + shift + 16 * (legend_rows - 1) + (14 if chart.rules else 0)
    left = max(90, int(max(map(len, labels), default=0) * 6.2) + 16)  # ~6.2 px per character at 11 px
    plot_w = WIDTH - left - RIGHT
    plot_h = ROW_H * max(len(categories), 1)
    height = top + plot_h + BOTTOM
    ticks = nice_ticks(*_extent(chart))
    lo, hi = ticks[0], ticks[-1]

    def sx(value: float) -> float:
        return left + (value - lo) / (hi - lo) * plot_w

    def row_y(category: str) -> float:
        return top + (categories.index(category) + 0.5) * ROW_H

    title = escape(chart.title)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-label="{title}" class="chart-svg">',
        f"<title>{title}</title>",
        *heading,
    ]
    base_y = top + plot_h
    for tick in ticks:  # vertical grid and value labels
        x = sx(tick)
        out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{base_y}" stroke="#ddd"/>')
        out.append(
            f'<text x="{x:.1f}" y="{base_y + 16}" text-anchor="middle" class="tick">{_fmt(tick)}</text>'
        )
    for category, short in zip(categories, labels, strict=True):
        tip = f"<title>{escape(category)}</title>" if short != category else ""
        out.append(
            f'<text x="{left - 6}" y="{row_y(category) + 4:.1f}" text-anchor="end" class="tick">'
            f"{escape(short)}{tip}</text>"
        )
    out.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{base_y}" y2="{base_y}" stroke="#333"/>')
    out.append(f'<line x1="{left}" x2="{left}" y1="{top}" y2="{base_y}" stroke="#333"/>')
    out.append(
        f'<text x="{left + plot_w / 2}" y="{height - 8}" text-anchor="middle" class="axis-label">'
        f"{escape(chart.y_label)}</text>"
    )
    out.append(
        f'<text transform="translate(14,{top + plot_h / 2}) rotate(-90)" text-anchor="middle" '
        f'class="axis-label">{escape(chart.x_label)}</text>'
    )
    out += _bars(chart, sx, row_y)
    if chart.base is not None:  # the baseline the bars grow from
        x = sx(chart.base)
        out.append(
            f'<line class="base" x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{base_y}" stroke="#222" '
            f'stroke-width="1.5"><title>base {_fmt(chart.base)}</title></line>'
        )
    for value, label in chart.rules:
        x = sx(value)
        anchor = "end" if x > WIDTH - RIGHT - 60 else "start" if x < left + 60 else "middle"
        out.append(
            f'<g class="rule"><line x1="{x:.1f}" x2="{x:.1f}" y1="{top - 4}" y2="{base_y}" stroke="#b42318" '
            f'stroke-dasharray="5 3" stroke-width="1.5"/><text x="{x:.1f}" y="{top - 8}" '
            f'text-anchor="{anchor}" class="legend-label">{escape(label)}</text></g>'
        )
    out += legend
    out.append("</svg>")
    return "\n".join(out)


def _bars(chart: Chart, sx, row_y) -> list[str]:
    shared = chart.base is not None  # a tornado: every series in the same row
    base = chart.base if shared else 0.0
    n = 1 if shared else max(len(chart.series), 1)
    bar_h = ROW_H * 0.7 / n
    out: list[str] = []
    for i, series in enumerate(chart.series):
        color = PALETTE[i % len(PALETTE)]
        name = escape(series.name)
        out.append(f'<g class="series" data-series="{name}" fill="{color}">')
        for x, y in zip(series.x, series.y, strict=False):
            if not _is_number(y):
                continue
            center = row_y(str(x)) - ROW_H * 0.35 + bar_h * ((0 if shared else i) + 0.5)
            x0, x1 = sorted((sx(base), sx(y)))
            out.append(
                f'<rect x="{x0:.1f}" y="{center - bar_h / 2:.1f}" width="{max(x1 - x0, 0.5):.1f}" '
                f'height="{bar_h:.1f}"><title>{name} · {escape(str(x))}: {_fmt(y)}</title></rect>'
            )
        out.append("</g>")
    return out
