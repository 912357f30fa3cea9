"""Charts as inline SVG, drawn in Python for the html format (see formats/html.py for why).

`chart_svg(chart)` returns one `<svg>` element: axes with ticks, axis labels, a legend of the series,
bars (grouped per x), lines or points, error bars from `Series.err` and a shaded `band`. Every text
is escaped. The x axis is numeric when every x of every series is a number (line and scatter), else
categorical (one slot per distinct x, in order of first appearance).
"""

from __future__ import annotations

import itertools
import math
from html import escape

from rich.cells import cell_len

from gpuwise.i18n import _
from gpuwise.report.document import Chart
from gpuwise.report.formats._cjk import break_offsets

WIDTH, HEIGHT = 720, 340
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 44, 56
TITLE_CELLS = (
    88  # a 14 px bold title fits ~88 cells across WIDTH (~7.8 px per cell; a CJK character is 2 cells)
)
TITLE_LINE = 18  # px per title line; a longer title wraps and moves the legend and plot down
MAX_LABEL = 28  # longer x labels are cut (the full name is in the tooltip and in the view's table)
# Colour-blind-safe palette (Okabe & Ito, "Color Universal Design", https://jfly.uni-koeln.de/color/)
SPREAD = [0, 1, -1, 2, -2, 3, -3]  # a categorical scatter's offsets within a slot, in steps of 6% of it
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About `count` round tick values covering [low, high] (1, 2 or 5 times a power of ten apart)."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        high = low + 1.0
    raw = (high - low) / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    start = math.floor(low / step) * step
    ticks, value = [], start
    while value <= high + step * 1e-9:
        ticks.append(round(value, 12))
        value += step
    if ticks[-1] < high:
        ticks.append(round(ticks[-1] + step, 12))
    return ticks


def _fmt(value: float) -> str:
    return f"{value:.6g}"


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _y_extent(chart: Chart) -> tuple[float, float]:
    values: list[float] = []
    for series in chart.series:
        errs = series.err or [None] * len(series.y)
        for y, err in zip(series.y, errs, strict=False):
            if _is_number(y):
                values += [y - (err or 0), y + (err or 0)]
    if chart.band:
        values += list(chart.band)
    low = min([0.0, *values]) if chart.kind == "bar" or not values else min(values)
    high = max(values) if values else 1.0
    if chart.kind != "bar" and low > 0 and low < 0.5 * high:
        low = 0.0
    return low, high


def chart_svg(chart: Chart) -> str:
    """One self-contained <svg> element for `chart`."""
    if chart.horizontal:
        from gpuwise.report.formats._svg_bars import horizontal_bars_svg

        return horizontal_bars_svg(chart)
    all_x = [x for s in chart.series for x in s.x]
    numeric_x = chart.kind != "bar" and bool(all_x) and all(_is_number(x) for x in all_x)
    categories = list(dict.fromkeys(str(x) for x in all_x)) if not numeric_x else []
    rotate = len(categories) > 6 or any(len(c) > 10 for c in categories)
    heading, shift = title_svg(chart.title)
    legend, legend_rows = _legend(chart, shift)
    top = TOP + shift + 16 * (legend_rows - 1)  # a long title or legend wraps onto more lines above the plot
    labels = [c if len(c) <= MAX_LABEL else c[: MAX_LABEL - 1] + "…" for c in categories]
    # a label turned by -35° reaches ~3.8 px down and ~5.4 px left per character (11 px font)
    extra = int(max(map(len, labels), default=0) * 3.8) - 16 if rotate else 0
    left = LEFT
    if rotate and labels:
        left = max(LEFT, int(len(labels[0]) * 5.4 - (WIDTH - LEFT - RIGHT) / len(labels) / 2 + 8))
    bottom = BOTTOM + max(extra, 0)
    height = HEIGHT + max(extra, 0) + top - TOP
    plot_w, plot_h = WIDTH - left - RIGHT, height - top - bottom

    y_ticks = nice_ticks(*_y_extent(chart))
    y_lo, y_hi = y_ticks[0], y_ticks[-1]

    def sy(y: float) -> float:
        return top + plot_h - (y - y_lo) / (y_hi - y_lo) * plot_h

    if numeric_x:
        x_ticks = nice_ticks(min(all_x), max(all_x))
        x_lo, x_hi = x_ticks[0], x_ticks[-1]

        def sx(x) -> float:
            return left + (x - x_lo) / (x_hi - x_lo) * plot_w
    else:
        slot = plot_w / max(len(categories), 1)

        def sx(x) -> float:
            return left + (categories.index(str(x)) + 0.5) * slot

    title = escape(chart.title)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-label="{title}" class="chart-svg">',
        f"<title>{title}</title>",
        *heading,
    ]
    if chart.band:
        top, bot = sy(max(chart.band)), sy(min(chart.band))
        out.append(
            f'<rect class="band" x="{left}" y="{top:.1f}" width="{plot_w}" height="{bot - top:.1f}" '
            f'fill="#999" fill-opacity="0.18"><title>band {_fmt(min(chart.band))}–'
            f"{_fmt(max(chart.band))}</title></rect>"
        )
    if numeric_x:
        out += _x_bands(chart, sx, top, plot_h, x_lo, x_hi)
    for tick in y_ticks:  # horizontal grid and y tick labels
        y = sy(tick)
        out.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" class="tick">{_fmt(tick)}</text>')
    base = top + plot_h
    if numeric_x:
        for tick in x_ticks:
            x = sx(tick)
            out.append(
                f'<text x="{x:.1f}" y="{base + 16}" text-anchor="middle" class="tick">{_fmt(tick)}</text>'
            )
    else:
        for cat, short in zip(categories, labels, strict=True):
            x = sx(cat)
            label = escape(short) + (f"<title>{escape(cat)}</title>" if short != cat else "")
            if rotate:
                out.append(
                    f'<text transform="translate({x:.1f},{base + 12}) rotate(-35)" text-anchor="end" '
                    f'class="tick">{label}</text>'
                )
            else:
                out.append(
                    f'<text x="{x:.1f}" y="{base + 16}" text-anchor="middle" class="tick">{label}</text>'
                )
    out.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{base}" y2="{base}" stroke="#333"/>')
    out.append(f'<line x1="{left}" x2="{left}" y1="{top}" y2="{base}" stroke="#333"/>')
    out.append(
        f'<text x="{left + plot_w / 2}" y="{height - 8}" text-anchor="middle" class="axis-label">'
        f"{escape(chart.x_label)}</text>"
    )
    out.append(
        f'<text transform="translate(16,{top + plot_h / 2}) rotate(-90)" text-anchor="middle" '
        f'class="axis-label">{escape(chart.y_label)}</text>'
    )
    out += _marks(chart, sx, sy, base, 0 if numeric_x else plot_w / max(len(categories), 1))
    out += legend
    out.append("</svg>")
    return "\n".join(out)


def _x_bands(chart: Chart, sx, top: float, plot_h: float, x_lo: float, x_hi: float) -> list[str]:
    """Chart.x_bands: shaded spans of a numeric x axis (clipped to it), each with its label as tooltip."""
    out = []
    for start, end, label in chart.x_bands:
        a, b = sx(max(min(start, end), x_lo)), sx(min(max(start, end), x_hi))
        out.append(
            f'<rect class="x-band" x="{a:.1f}" y="{top:.1f}" width="{max(b - a, 1.0):.1f}" height="{plot_h:.1f}" '
            f'fill="#D55E00" fill-opacity="0.15"><title>{escape(label)}</title></rect>'
        )
    return out


def _marks(chart: Chart, sx, sy, base: float, slot: float) -> list[str]:
    out: list[str] = []
    n = max(len(chart.series), 1)
    bar_w = slot * 0.8 / n
    for i, series in enumerate(chart.series):
        color = PALETTE[i % len(PALETTE)]
        name = escape(series.name)
        errs = series.err or [None] * len(series.y)
        tags = series.labels or [None] * len(series.y)
        points = [
            (x, y, e, t) for x, y, e, t in zip(series.x, series.y, errs, tags, strict=False) if _is_number(y)
        ]
        out.append(f'<g class="series" data-series="{name}" fill="{color}" stroke="{color}">')
        if chart.kind == "line" and len(points) > 1:
            path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y, _err, _label in points)
            out.append(f'<polyline points="{path}" fill="none" stroke-width="2"/>')
        seen: dict[str, int] = {}  # points so far per category, to spread a scatter's column of points
        for x, y, err, tag in points:
            tip = (
                f"<title>{name} · {escape(str(x))}{f' · {escape(tag)}' if tag else ''}: {_fmt(y)}"
                + (f" ± {_fmt(err)}" if err else "")
                + "</title>"
            )
            cx = sx(x) if chart.kind != "bar" else sx(x) - slot * 0.4 + bar_w * (i + 0.5)
            if chart.kind == "scatter" and slot:  # categorical: spread a column of points sideways
                k = seen[str(x)] = seen.get(str(x), -1) + 1
                cx += slot * 0.06 * SPREAD[k % len(SPREAD)]
            if chart.kind == "bar":
                zero = min(sy(0.0), base)  # bars grow from zero (from the axis when zero is below it)
                top, bot = min(sy(y), zero), max(sy(y), zero)
                out.append(
                    f'<rect x="{cx - bar_w / 2:.1f}" y="{top:.1f}" width="{bar_w:.1f}" '
                    f'height="{max(bot - top, 0.5):.1f}" stroke="none">{tip}</rect>'
                )
            else:
                out.append(f'<circle cx="{cx:.1f}" cy="{sy(y):.1f}" r="4">{tip}</circle>')
            if err:
                y1, y2, cap = sy(y - err), sy(y + err), 4
                out.append(
                    f'<path class="err" d="M{cx:.1f},{y1:.1f}V{y2:.1f}M{cx - cap:.1f},{y1:.1f}H{cx + cap:.1f}'
                    f'M{cx - cap:.1f},{y2:.1f}H{cx + cap:.1f}" stroke="#222" fill="none" stroke-width="1.2"/>'
                )
        out.append("</g>")
    return out


def title_svg(title: str) -> tuple[list[str], int]:
    """The title as centred <text> lines, wrapped at TITLE_CELLS, and the px its extra lines take."""
    cuts = [0, *break_offsets(title, TITLE_CELLS), len(title)]
    lines = [part for a, b in itertools.pairwise(cuts) if (part := title[a:b].strip())] or [""]
    out = [
        f'<text x="{WIDTH / 2}" y="{18 + i * TITLE_LINE}" text-anchor="middle" class="chart-title">'
        f"{escape(line)}</text>"
        for i, line in enumerate(lines)
    ]
    return out, TITLE_LINE * (len(lines) - 1)


def _legend(chart: Chart, shift: int = 0) -> tuple[list[str], int]:
    """The legend's SVG elements, `shift` px below a one-line title, and its number of lines (entries wrap
    at the chart's right edge)."""
    entries = [(PALETTE[i % len(PALETTE)], "1", s.name) for i, s in enumerate(chart.series)]
    if chart.band:
        entries.append(("#999", "0.3", _("typical range")))
    if chart.x_bands:
        entries.append(("#D55E00", "0.3", _("slow window")))
    out, x, y = ['<g class="legend">'], LEFT, 28 + shift
    for color, opacity, name in entries:
        width = 24 + 6.5 * cell_len(name)  # about 6.5 px per cell at 12 px (a CJK character is 2 cells)
        if x > LEFT and x + width > WIDTH - RIGHT:
            x, y = LEFT, y + 16
        out.append(f'<rect x="{x}" y="{y}" width="10" height="10" fill="{color}" fill-opacity="{opacity}"/>')
        out.append(f'<text x="{x + 14}" y="{y + 9}" class="legend-label">{escape(name)}</text>')
        x += width
    out.append("</g>")
    return out, (y - 28 - shift) // 16 + 1
