"""Line breaking for Chinese (and other CJK) text in the terminal renderer.

Rich breaks lines only at spaces, so a Chinese sentence is one "word" to it: it either moves whole to the
next line or is folded at the column edge, even through a Latin word inside it ("Dat|aLoader"). CJK text
may break between any two characters (except before closing punctuation, which stays on the line it
closes, and after opening punctuation, which moves to the line it opens), and Latin words inside it keep
breaking at spaces. WrapText applies that rule and measures such text by its longest unbreakable piece;
text without CJK characters takes Rich's own path unchanged.
Widths are terminal cells (Rich's cell_len: a CJK character takes two).
"""

from __future__ import annotations

import re

from rich.cells import cell_len, chop_cells
from rich.measure import Measurement
from rich.text import Lines, Text

# CJK ideographs, kana, Hangul, and the full-width forms and punctuation that go with them
_CJK = "\u2e80-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"
_CLOSING = "，。、；：？！）》」』】〉”’%,.;:?!)]}"  # never starts a line
_OPENING = "（《「『【〈“‘"  # never ends a line
HAS_CJK = re.compile(f"[{_CJK}]")
# one unbreakable piece and the spaces after it: a CJK character, or a run of other non-space characters,
# with the opening punctuation before it and the closing punctuation after it
_PIECE = re.compile(
    f"[{_OPENING}]*[{_CJK}][{re.escape(_CLOSING)}]*\\s*"
    f"|[{_OPENING}]*[^\\s{_CJK}]+[{re.escape(_CLOSING)}]*\\s*|\\s+"
)


def pieces(line: str) -> list[str]:
    """The unbreakable pieces of one line, each with its trailing spaces."""
    return _PIECE.findall(line)


def widest_piece(line: str) -> int:
    """The cells of the longest piece a line can never be broken inside (a word, or a CJK character)."""
    return max((cell_len(p.rstrip()) for p in pieces(line)), default=0)


def break_offsets(line: str, width: int) -> list[int]:
    """Character offsets to break `line` at so each part fits `width` cells (a piece wider than the
    width is folded, as Rich does)."""
    offsets: list[int] = []
    position, used = 0, 0
    for piece in pieces(line):
        size = cell_len(piece.rstrip())
        if used and used + size > width:
            offsets.append(position)
            used = 0
        if size > width:
            parts = chop_cells(piece, width)
            for part in parts[:-1]:
                position += len(part)
                offsets.append(position)
            used = cell_len(parts[-1])
            position += len(parts[-1])
            continue
        used += cell_len(piece)
        position += len(piece)
    return [o for o in offsets if 0 < o < len(line)]


class WrapText(Text):
    """A Rich Text that may also break between CJK characters (see the module docstring)."""

    # Rich's copies (a + b, join, split) are plain Text; these keep the CJK line breaking on what they build
    def blank_copy(self, plain: str = "") -> Text:
        return WrapText(plain, style=self.style, justify=self.justify, overflow=self.overflow,
                        no_wrap=self.no_wrap, end=self.end, tab_size=self.tab_size)  # fmt: skip

    def copy(self) -> Text:
        out = self.blank_copy(self.plain)
        out._spans[:] = self._spans
        return out

    def wrap(self, console, width, *, justify=None, overflow=None, tab_size=8, no_wrap=None) -> Lines:
        if no_wrap or not HAS_CJK.search(self.plain):
            return super().wrap(
                console, width, justify=justify, overflow=overflow, tab_size=tab_size, no_wrap=no_wrap
            )
        lines = Lines()
        for line in self.split(allow_blank=True):
            for part in line.divide(break_offsets(line.plain, width)):
                part.rstrip_end(width)
                lines.append(part)
        return lines

    def __rich_measure__(self, console, options) -> Measurement:
        if not HAS_CJK.search(self.plain):
            return super().__rich_measure__(console, options)
        lines = self.plain.split("\n")
        widest = max((cell_len(line) for line in lines), default=0)
        return Measurement(max((widest_piece(line) for line in lines), default=0), widest)
