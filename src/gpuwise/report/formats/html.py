"""--format html: one self-contained page to share (mail it, attach it to a ticket, print it).

The page makes no request to any network address when opened: the CSS is inline and there is no
script at all. Charts are inline SVG generated in Python (formats/_svg.py) rather than plotly or
Vega-Lite: embedding either library adds megabytes of JavaScript to every report, a page that needs
JavaScript shows nothing in a mail preview or a locked-down browser, and SVG prints sharply. Every
number a chart draws is also in a table of the same Document, so the text parts read without the
charts. All text from the Document is HTML-escaped.
"""

from __future__ import annotations

from html import escape

from gpuwise.i18n import language
from gpuwise.report.document import (
    Bullets,
    Cell,
    Chart,
    Code,
    Document,
    Heading,
    KeyValues,
    Paragraph,
    Styled,
    Table,
    cell_style,
    cell_text,
)
from gpuwise.report.formats import Renderer
from gpuwise.report.formats._svg import chart_svg

CSS = """
:root { color-scheme: light; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif;
  color: #1b1b1b; background: #fff; max-width: 1100px; margin: 2rem auto; padding: 0 1.2rem; }
h1 { font-size: 1.6rem; border-bottom: 2px solid #0072B2; padding-bottom: .3rem; }
h2 { font-size: 1.25rem; margin-top: 1.8rem; } h3 { font-size: 1.05rem; }
table { border-collapse: collapse; margin: .6rem 0 1rem; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d0d7de; padding: .3rem .6rem; vertical-align: top; white-space: pre-line; }
th { background: #f3f5f7; text-align: left; } .right { text-align: right; }
caption { caption-side: top; text-align: left; font-weight: 600; padding: .2rem 0; }
.table-note { color: #57606a; font-size: .9em; margin-top: -.6rem; }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: .6rem 0; }
dl.kv dt { color: #57606a; } dl.kv dd { margin: 0; white-space: pre-line; }
pre { background: #f6f8fa; border: 1px solid #d0d7de; padding: .6rem .8rem; overflow-x: auto; }
figure.chart { margin: 1rem 0 1.4rem; } figure.chart svg { width: 100%; max-width: 760px; height: auto; }
.chart-title { font-weight: 600; font-size: 14px; } .tick { font-size: 11px; fill: #444; }
.axis-label, .legend-label { font-size: 12px; fill: #222; } svg text { font-family: inherit; }
.s-fail { color: #b42318; font-weight: 600; } .s-warn { color: #9a6700; font-weight: 600; }
.s-ok { color: #1a7f37; } .s-info { color: #0969da; } .s-dim { color: #6e7781; }
.s-bold { font-weight: 700; } .s-accent { color: #8250df; font-weight: 600; }
footer { color: #6e7781; font-size: .85em; margin-top: 2rem; border-top: 1px solid #d0d7de; }
@media print { body { margin: 0; max-width: none; } figure.chart, table, pre { break-inside: avoid; }
  a { color: inherit; text-decoration: none; } }
"""


def _cell(cell: Cell) -> str:
    text = escape(cell_text(cell))
    style = cell_style(cell)
    return f'<span class="s-{style}">{text}</span>' if style and text else text


def _table(block: Table) -> list[str]:
    out = ["<table>"]
    if block.title:
        out.append(f"<caption>{escape(block.title)}</caption>")
    aligns = [' class="right"' if c.align == "right" else "" for c in block.columns]
    out.append(
        "<thead><tr>"
        + "".join(f"<th{a}>{escape(c.header)}</th>" for c, a in zip(block.columns, aligns, strict=True))
        + "</tr></thead>"
    )
    out.append("<tbody>")
    for row in block.rows:
        cells = list(row) + [""] * (len(block.columns) - len(row))
        out.append(
            "<tr>"
            + "".join(
                f"<td{a}>{_cell(c)}</td>" for c, a in zip(cells, aligns + [""] * len(cells), strict=False)
            )
            + "</tr>"
        )
    out.append("</tbody></table>")
    if block.caption:
        out.append(f'<p class="table-note">{escape(block.caption)}</p>')
    return out


def _block(block) -> list[str]:
    if isinstance(block, Heading):
        level = min(max(block.level, 1), 6)
        return [f"<h{level}>{escape(block.text)}</h{level}>"]
    if isinstance(block, Paragraph):
        return [f"<p>{_cell(Styled(block.text, block.style))}</p>"]
    if isinstance(block, KeyValues):
        out = [f"<h4>{escape(block.title)}</h4>"] if block.title else []
        out.append('<dl class="kv">')
        out += [f"<dt>{escape(key)}</dt><dd>{_cell(value)}</dd>" for key, value in block.rows]
        return [*out, "</dl>"]
    if isinstance(block, Table):
        return _table(block)
    if isinstance(block, Code):
        lang = f' class="language-{escape(block.lang)}"' if block.lang else ""
        return [f"<pre><code{lang}>" + escape("\n".join(block.lines)) + "</code></pre>"]
    if isinstance(block, Bullets):
        return ["<ul>", *(f"<li>{_cell(item)}</li>" for item in block.items), "</ul>"]
    if isinstance(block, Chart):
        return [f'<figure class="chart" data-kind="{escape(block.kind)}">', chart_svg(block), "</figure>"]
    raise TypeError(f"html: no rendering for block {type(block).__name__}")


def render_html(doc: Document, *, width: int = 100, color: bool = False) -> str:
    """A complete HTML5 page; `width` and `color` do not apply (the browser lays it out)."""
    from gpuwise import __version__

    body: list[str] = []
    for block in doc.blocks:
        body += _block(block)
    title = escape(doc.title)
    return "\n".join(
        [
            "<!DOCTYPE html>",
            f'<html lang="{escape(language())}"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            # forbid every fetch: a shared report must not call out when opened
            '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
            "style-src 'unsafe-inline'; img-src data:\">",
            f"<title>{title}</title>",
            f"<style>{CSS}</style>",
            "</head><body>",
            *([] if doc.blocks and isinstance(doc.blocks[0], Heading) else [f"<h1>{title}</h1>"]),
            *body,
            f"<footer><p>gpuwise {escape(__version__)}</p></footer>",
            "</body></html>",
            "",
        ]
    )


RENDERER = Renderer(name="html", media_type="text/html", render=render_html)
