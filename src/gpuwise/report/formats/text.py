"""--format text: the terminal view (Rich). Nothing is ever cut: long text wraps at spaces, and a table
too wide for the width is shown as one record per row instead of squeezing (or truncating) its cells.

Every string from a Document prints literally (no Rich markup is parsed): facts, names and reasons can
hold '[...]'.
"""

from __future__ import annotations

from functools import cache
from io import StringIO

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

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

STYLES = {
    "fail": "bold red",
    "warn": "yellow",
    "info": "cyan",
    "ok": "green",
    "dim": "dim",
    "bold": "bold",
    "accent": "magenta",
}
CODE_INDENT = "    "


def _text(cell: Cell, style=None) -> Text:
    return Text(cell_text(cell), style=STYLES.get(cell_style(cell) or style, ""))


def _lines(cell: Cell) -> list[str]:
    return cell_text(cell).split("\n")


def _widest_line(cell: Cell) -> int:
    return max(cell_len(line) for line in _lines(cell))


def _widest_word(cell: Cell) -> int:
    return max((cell_len(w) for line in _lines(cell) for w in line.split()), default=0)


def _keyvalues(rows: list[tuple[str, Cell]], width: int) -> RichTable:
    grid = RichTable.grid(padding=(0, 2))
    # keys never wrap (they are short labels); the values wrap at spaces in the remaining width
    key_width = min(max((cell_len(k) for k, _ in rows), default=0), max(width // 3, 12))
    grid.add_column(width=key_width, style="bold", overflow="fold")
    grid.add_column(overflow="fold")
    for key, value in rows:
        grid.add_row(Text(key), _text(value))
    return grid


def _new_table() -> RichTable:
    # a rule under the header, one space either side of a column, no outer edge
    return RichTable(
        box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1), collapse_padding=True
    )


def _rich_table(block: Table, widths: list[int]) -> RichTable:
    t = _new_table()
    for col, w in zip(block.columns, widths, strict=True):
        t.add_column(Text(col.header), justify=col.align, width=w, overflow="fold")
    for row in block.rows:
        t.add_row(*(_text(c) for c in row))
    return t


@cache
def _overhead(columns: int) -> int:
    """Columns of padding and borders a table with this many columns adds (measured on Rich itself)."""
    probe = _new_table()
    for _ in range(columns):
        probe.add_column("x", width=1)
    probe.add_row(*["x"] * columns)
    buf = StringIO()
    Console(file=buf, width=10_000, no_color=True).print(probe)
    return max(cell_len(line) for line in buf.getvalue().splitlines()) - columns


def _fit(block: Table, width: int) -> list[int] | None:
    """Column widths that fit `width` without cutting a word or a number, or None if none exist.

    Right-aligned columns hold numbers and never wrap; left-aligned ones may wrap at spaces. The widest
    wrappable column gives up space first, as Rich does, but never below its longest word."""
    n = len(block.columns)
    all_rows = [[c.header for c in block.columns], *block.rows]
    cols = [[row[i] if i < len(row) else "" for row in all_rows] for i in range(n)]
    most = [max(_widest_line(c) for c in col) for col in cols]
    least = [
        max(_widest_word(c) for c in col)
        if spec.align == "left"
        else max(_widest_word(col[0]), *(_widest_line(c) for c in col[1:]))
        for spec, col in zip(block.columns, cols, strict=True)
    ]
    least = [max(x, 1) for x in least]
    most = [max(x, y) for x, y in zip(most, least, strict=True)]
    room = width - _overhead(n)
    if sum(least) > room:
        return None
    widths = list(most)
    while sum(widths) > room:
        shrinkable = [i for i in range(n) if widths[i] > least[i]]
        widest = max(shrinkable, key=lambda i: widths[i])
        widths[widest] -= 1
    return widths


def _records(block: Table, width: int) -> list:
    """A table too wide for the terminal: each row as a record, its first cell as the record's name."""
    out: list = []
    headers = [c.header for c in block.columns]
    for n, row in enumerate(r for r in block.rows if r):
        if n:
            out.append(Text(""))
        out.append(_text(row[0], "bold"))
        pairs = [(h, c) for h, c in zip(headers[1:], row[1:], strict=False) if cell_text(c).strip()]
        grid = _keyvalues([(f"  {h}", c) for h, c in pairs], width)
        out.append(grid)
    return out


def _table(block: Table, width: int) -> list:
    widths = _fit(block, width) if block.columns else None
    if widths is not None:
        return [_rich_table(block, widths)]
    return _records(block, width)


def render_text(doc: Document, *, width: int = 100, color: bool = False) -> str:
    """The Document for a terminal `width` columns wide; ANSI colours only with color=True."""
    buf = StringIO()
    console = Console(
        file=buf,
        width=width,
        force_terminal=color,
        no_color=not color,
        color_system="standard" if color else None,
        highlight=False,
        emoji=False,
        markup=False,
        soft_wrap=False,
    )
    first = True
    for block in doc.blocks:
        gap = not first
        items: list = []
        if isinstance(block, Heading):
            style = "bold underline" if block.level == 2 else "bold"
            gap = gap and block.level <= 2
            items = [Text(block.text, style=style)]
        elif isinstance(block, Paragraph):
            gap = False
            items = [_text(block.text, block.style)]
        elif isinstance(block, KeyValues):
            gap = gap and bool(block.title)
            items = ([Text(block.title, style="bold")] if block.title else []) + [
                _keyvalues(block.rows, width)
            ]
        elif isinstance(block, Table):
            items = [Text(block.title, style="bold")] if block.title else []
            items += _table(block, width)
            if block.caption:
                items.append(Text(block.caption, style="dim"))
        elif isinstance(block, Code):
            gap = False
            for line in block.lines:  # copied as they are: never wrapped or folded
                console.print(Text(CODE_INDENT + line), soft_wrap=True)
            first = False
            continue
        elif isinstance(block, Bullets):
            gap = False
            grid = RichTable.grid(padding=(0, 1))
            grid.add_column(width=1)
            grid.add_column(overflow="fold")
            for item in block.items:
                grid.add_row("•", _text(item))
            items = [grid]
        else:
            continue  # charts: drawn by graphical formats only (their numbers are in a table too)
        if gap:
            console.print()
        for item in items:
            console.print(item)
        first = False
    text = buf.getvalue()
    # Rich pads grid cells to the column width; trailing spaces are noise in a file or a diff
    return text if color else "\n".join(line.rstrip() for line in text.split("\n"))


RENDERER = Renderer(name="text", media_type="text/plain", render=render_text)
