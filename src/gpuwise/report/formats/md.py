"""--format md: Markdown for tickets, pull requests and wikis (GitHub-flavoured pipe tables)."""

from __future__ import annotations

from gpuwise.report.document import (
    Bullets,
    Cell,
    Code,
    Document,
    Heading,
    KeyValues,
    Paragraph,
    Table,
    cell_style,
    cell_text,
)
from gpuwise.report.formats import Renderer


def _escape_plain(text: str) -> str:
    return text.replace("\\", "\\\\").replace("*", "\\*").replace("<", "&lt;")


def _escape(text: str) -> str:
    """Characters Markdown would read as emphasis or a tag ('NCCL_* environment', '<none>'); code
    spans are kept as they are, as messages quote commands in backticks on purpose."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: no code spans
        return _escape_plain(text).replace("`", "\\`")
    return "`".join(part if i % 2 else _escape_plain(part) for i, part in enumerate(parts))


def _inline(text: str, style=None) -> str:
    """Text in running Markdown: emphasis for bold and failures; newlines become spaces."""
    text = _escape(" ".join(text.split("\n")))
    if style in ("bold", "fail") and text.strip():
        return f"**{text}**"
    return text


def _cell(cell: Cell) -> str:
    """A pipe-table cell: pipes escaped, line breaks as <br> (they separate values in one cell)."""
    text = _escape(cell_text(cell)).replace("|", "\\|").replace("\n", "<br>")
    return f"**{text}**" if cell_style(cell) in ("bold", "fail") and text.strip() else text


def _table(block: Table) -> list[str]:
    out = [f"**{_inline(block.title)}**", ""] if block.title else []
    out.append("| " + " | ".join(_cell(c.header) for c in block.columns) + " |")
    out.append("|" + "|".join("---:" if c.align == "right" else "---" for c in block.columns) + "|")
    width = len(block.columns)
    for row in block.rows:
        cells = [_cell(c) for c in row] + [""] * (width - len(row))
        out.append("| " + " | ".join(cells[:width]) + " |")
    if block.caption:
        out += ["", f"*{_inline(block.caption)}*"]
    return out


def render_md(doc: Document, *, width: int = 100, color: bool = False) -> str:
    """Markdown; `width` and `color` do not apply (Markdown viewers wrap and style themselves)."""
    out: list[str] = []
    for block in doc.blocks:
        if isinstance(block, Heading):
            out.append(f"{'#' * min(max(block.level, 1), 6)} {_inline(block.text)}")
        elif isinstance(block, Paragraph):
            out.append(_inline(block.text, block.style))
        elif isinstance(block, KeyValues):
            if block.title:
                out += [f"**{_inline(block.title)}**", ""]
            out += [f"- {_inline(key)}: {_inline(cell_text(v), cell_style(v))}" for key, v in block.rows]
        elif isinstance(block, Table):
            out += _table(block)
        elif isinstance(block, Code):
            fence = "````" if any("```" in line for line in block.lines) else "```"
            out += [fence + block.lang, *block.lines, fence]
        elif isinstance(block, Bullets):
            out += [f"- {_inline(cell_text(i), cell_style(i))}" for i in block.items]
        else:
            continue  # charts: drawn by graphical formats only (their numbers are in a table too)
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


RENDERER = Renderer(name="md", media_type="text/markdown", render=render_md)
