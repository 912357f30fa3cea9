"""--format text: the terminal view (Rich). Nothing is ever cut: long text wraps at spaces (Chinese text
also between characters, formats/_cjk.py), and a table
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
from rich.padding import Padding
from rich.rule import Rule
from rich.table import Table as RichTable

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
from gpuwise.report.formats._cjk import HAS_CJK, widest_piece
from gpuwise.report.formats._cjk import WrapText as Text  # breaks Chinese text between characters too

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
SECTION_INDENT = 3  # blocks under a level-3 heading
RECORD_INDENT, RECORD_SEP = "  ", " · "  # a table row shown as a record
# a column of Chinese text is not squeezed below five characters (or its widest line, when shorter):
# Chinese breaks between any two characters, so a narrower column would stack its words a character a line
CJK_MIN_CELLS = 10


def _text(cell: Cell, style=None) -> Text:
    return Text(cell_text(cell), style=STYLES.get(cell_style(cell) or style, ""))


def _lines(cell: Cell) -> list[str]:
    return cell_text(cell).split("\n")


def _widest_line(cell: Cell) -> int:
    return max(cell_len(line) for line in _lines(cell))


def _widest_word(cell: Cell) -> int:
    """The longest piece a line may not break inside: a word, or one CJK character."""
    return max((widest_piece(line) for line in _lines(cell)), default=0)


def _widest_number_line(cell: Cell) -> int:
    """In a right-aligned (number) column a line holding a digit never wraps; other text may."""
    return max(
        (cell_len(line) if any(ch.isdigit() for ch in line) else _widest_word(line) for line in _lines(cell)),
        default=0,
    )


def _keyvalues(rows: list[tuple[str, Cell]], width: int, key_width: int = 0) -> list:
    """Aligned `key: value` rows; values wrap at spaces. A value with a word too long for the value
    column (a long path or URL) goes on its own line under its key instead of being folded."""
    keys = [_key_label(k) for k, _ in rows]
    # keys are short labels, wrapped only past a third of the width
    key_width = min(max(key_width, *(cell_len(k) for k in keys)) if keys else key_width, max(width // 3, 12))
    out: list = []
    grid = None
    for key, (_, value) in zip(keys, rows, strict=True):
        if _widest_word(value) > width - key_width - 1:
            grid = None
            out += [Text(key, style="bold"), Padding(_text(value), (0, 0, 0, len(RECORD_INDENT)))]
            continue
        if grid is None:
            grid = RichTable.grid(padding=(0, 1))
            grid.add_column(width=key_width, style="bold", overflow="fold")
            grid.add_column(overflow="fold")
            out.append(grid)
        grid.add_row(Text(key), _text(value))
    return out


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

    Left-aligned columns may wrap at spaces; in right-aligned ones (numbers) a line with a digit never
    wraps. The widest column gives up space first, as Rich does, but never below its longest word."""
    n = len(block.columns)
    all_rows = [[c.header for c in block.columns], *block.rows]
    cols = [[row[i] if i < len(row) else "" for row in all_rows] for i in range(n)]
    most = [max(_widest_line(c) for c in col) for col in cols]
    least = [
        max(_widest_word(c) if spec.align == "left" else _widest_number_line(c) for c in col)
        for spec, col in zip(block.columns, cols, strict=True)
    ]
    least = [
        max(x, min(CJK_MIN_CELLS, m)) if any(HAS_CJK.search(cell_text(c)) for c in col) else x
        for x, m, col in zip(least, most, cols, strict=True)
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
    """A table too wide for the terminal: each row as a record named by its first cell, its other cells
    as `header: value` items packed onto indented lines. An item is split only if it alone is too wide."""
    out: list = []
    headers = [c.header for c in block.columns]
    room = width - len(RECORD_INDENT)
    for n, row in enumerate(r for r in block.rows if r):
        if n:
            out.append(Text(""))
        out.append(_text(row[0], "bold"))
        line = Text()
        for header, cell in zip(headers[1:], row[1:], strict=False):
            if not cell_text(cell).strip():
                continue
            item = Text(f"{header}: " if header else "") + _text(cell)
            item = Text(" ").join(item.split("\n"))  # a multi-line cell is one item
            if line and cell_len(line.plain) + len(RECORD_SEP) + cell_len(item.plain) > room:
                out.append(Padding(line, (0, 0, 0, len(RECORD_INDENT))))
                line = Text()
            line = line + Text(RECORD_SEP) + item if line else item
        if line:
            out.append(Padding(line, (0, 0, 0, len(RECORD_INDENT))))
    return out


def _table(block: Table, width: int) -> list:
    widths = _fit(block, width) if block.columns else None
    if widths is not None:
        return [_rich_table(block, widths)]
    return _records(block, width)


def _key_label(key: str) -> str:
    return f"{key}:" if key.strip() else key


def _section_key_widths(blocks: list) -> list[int]:
    """Per block: the key width shared by all key/value lists up to the next heading, so they align."""
    widths, start = [0] * len(blocks), 0
    for i in range(len(blocks) + 1):
        if i == len(blocks) or isinstance(blocks[i], Heading):
            keys = [
                cell_len(_key_label(k))
                for b in blocks[start:i]
                if isinstance(b, KeyValues)
                for k, _ in b.rows
            ]
            widths[start:i] = [max(keys, default=0)] * (i - start)
            start = i
    return widths


def _block_items(block, width: int, key_width: int) -> list:
    """The Rich renderables of one block at `width` (charts: none, they are for graphical formats)."""
    if isinstance(block, Heading):  # level 2: a rule, so sections show without colour too
        if block.level == 2 and cell_len(block.text) + 6 <= width:  # a longer title would be cut
            return [Rule(Text(block.text, style="bold"), align="left", characters="─")]
        head, _, rest = block.text.partition(" ")
        if block.level >= 3 and rest and cell_len(head) <= 4:  # '12. Title': the number hangs
            grid = RichTable.grid()
            grid.add_column(width=cell_len(head) + 1, no_wrap=True)
            grid.add_column(overflow="fold")
            grid.add_row(Text(head, style="bold"), Text(rest, style="bold"))
            return [grid]
        return [Text(block.text, style="bold")]
    if isinstance(block, Paragraph):
        return [_text(block.text, block.style)]
    if isinstance(block, KeyValues):
        title = [Text(block.title, style="bold")] if block.title else []
        return title + _keyvalues(block.rows, width, key_width)
    if isinstance(block, Table):
        items = [Text(block.title, style="bold")] if block.title else []
        items += _table(block, width)
        return items + ([Text(block.caption, style="dim")] if block.caption else [])
    if isinstance(block, Code):  # copied as they are: never wrapped or folded (printed with soft_wrap)
        prompt = "$ " if block.lang == "sh" else ""  # shell commands show a prompt, config lines do not
        return [Text(CODE_INDENT + prompt + line) for line in block.lines]
    if isinstance(block, Bullets):
        grid = RichTable.grid(padding=(0, 1))
        grid.add_column(width=1)
        grid.add_column(overflow="fold")
        for item in block.items:
            grid.add_row("•", _text(item))
        return [grid]
    return []


def render_text(doc: Document, *, width: int = 100, color: bool = False) -> str:
    """The Document for a terminal `width` columns wide; ANSI colours only with color=True.

    A blank line goes before each heading, table and titled key/value list; the blocks under a
    heading of level 3 or more (e.g. one doctor finding) are indented under it."""
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
    indent = 0
    for n, (block, key_width) in enumerate(zip(doc.blocks, _section_key_widths(doc.blocks), strict=True)):
        if isinstance(block, Heading):
            indent = SECTION_INDENT if block.level >= 3 else 0
        here = 0 if isinstance(block, Heading) else indent
        items = _block_items(block, width - here, key_width)
        if not items:
            continue
        gap = isinstance(block, (Heading, Table)) or (isinstance(block, KeyValues) and block.title)
        if gap and n:
            console.print()
        for item in items:
            if isinstance(block, Code):
                console.print(Text(" " * here) + item, soft_wrap=True)
            elif here or (isinstance(item, Text) and HAS_CJK.search(item.plain)):
                # through Padding, a Text keeps its own line breaking (console.print joins bare Texts
                # into a plain Rich Text, which breaks Chinese only at spaces)
                console.print(Padding(item, (0, 0, 0, here)))
            else:
                console.print(item)
    text = buf.getvalue()
    # Rich pads grid cells to the column width; trailing spaces are noise in a file or a diff
    return text if color else "\n".join(line.rstrip() for line in text.split("\n"))


RENDERER = Renderer(name="text", media_type="text/plain", render=render_text)
