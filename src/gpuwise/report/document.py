"""The format-neutral Document every command's view builds, and every renderer (formats/) renders.

A view turns a command's model into a Document: headings, paragraphs, key/value lists, tables, code
lines, bullets and charts, with semantic styles instead of colours. Renderers decide the looks: the
text renderer folds a table that does not fit the terminal instead of cutting it; Markdown writes pipe
tables; JSON prints `data`, which the command builds from its model (never from the blocks). This
module has no Rich and no Typer, so a new output format or a translation touches one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Style = Literal["fail", "warn", "info", "ok", "dim", "bold", "accent"] | None


@dataclass
class Styled:
    """A cell or an inline text with a semantic style (the renderer maps it to colours or markup)."""

    text: str
    style: Style = None


Cell = str | Styled


def cell_text(cell: Cell) -> str:
    """The plain text of a cell, whether styled or not."""
    return cell.text if isinstance(cell, Styled) else str(cell)


def cell_style(cell: Cell) -> Style:
    return cell.style if isinstance(cell, Styled) else None


@dataclass
class Heading:
    text: str
    level: int = 1


@dataclass
class Paragraph:
    text: str
    style: Style = None


@dataclass
class KeyValues:
    rows: list[tuple[str, Cell]]
    title: str | None = None


@dataclass
class Column:
    header: str
    align: Literal["left", "right"] = "left"


@dataclass
class Table:
    columns: list[Column]
    rows: list[list[Cell]]
    title: str | None = None
    caption: str | None = None  # a note under the table (what a mark or a dash means)

    def __post_init__(self) -> None:
        bad = [i for i, row in enumerate(self.rows) if len(row) != len(self.columns)]
        if bad:
            raise ValueError(
                f"table {self.title!r}: row {bad[0]} has {len(self.rows[bad[0]])} cells, "
                f"not {len(self.columns)}"
            )


@dataclass
class Code:
    """Lines to copy as they are: commands, config lines, environment exports. Never re-wrapped.
    lang="sh": shell commands (the text format shows them after a '$ ' prompt)."""

    lines: list[str]
    lang: str = ""


@dataclass
class Bullets:
    items: list[Cell]


@dataclass
class Series:
    name: str
    x: list
    y: list[float | None]
    err: list[float | None] | None = None
    labels: list[str] | None = None  # per point, named in its tooltip (e.g. the node a value came from)


@dataclass
class Chart:
    """Drawn by graphical formats (html); text and md skip it, so its numbers must also be in a Table.

    horizontal (bars only): categories run down the chart and values along it, as in a tornado chart;
    `x_label` names the categories and `y_label` the values either way. `base`: bars grow from this
    value instead of 0 and every series shares its category's row (a tornado's low and high bar).
    `rules`: reference lines across the value axis, each with a label (a baseline, a flip point).
    `x_bands` (numeric x only): spans of the x axis shaded across the plot, each with a label (a window)."""

    kind: Literal["bar", "line", "scatter"]
    title: str
    x_label: str
    y_label: str
    series: list[Series]
    band: tuple[float, float] | None = None  # e.g. a typical-range band
    horizontal: bool = False
    base: float | None = None
    rules: list[tuple[float, str]] = field(default_factory=list)
    x_bands: list[tuple[float, float, str]] = field(default_factory=list)


Block = Heading | Paragraph | KeyValues | Table | Code | Bullets | Chart


@dataclass
class Document:
    title: str
    blocks: list[Block] = field(default_factory=list)
    data: dict = field(default_factory=dict)  # the command's JSON document, with its "schema" key


def cells(doc: Document) -> list[Cell]:
    """Every cell and inline text a reader must see intact: what the 80-column guarantee is checked on."""
    out: list[Cell] = []
    for block in doc.blocks:
        if isinstance(block, (Heading, Paragraph)):
            out.append(block.text)
        elif isinstance(block, KeyValues):
            out += [c for row in block.rows for c in row]
        elif isinstance(block, Table):
            out += [c.header for c in block.columns]
            out += [c for row in block.rows for c in row]
        elif isinstance(block, Bullets):
            out += block.items
    return out
