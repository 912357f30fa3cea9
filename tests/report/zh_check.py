"""The check behind every "this report is Chinese throughout" test: no run of 4 or more English words in
the text gpuwise wrote into a Document.

Exempt is what must stay as it is: commands and config lines (Code blocks, `code` spans), URLs, the rows of
a KeyValues block whose key is one of `skip_keys` (evidence values and citations, which quote the machine or
an English document), and every string in `quoted` (what a report quotes rather than writes: a driver's
error text, a source's title, a user's own names).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from gpuwise import i18n
from gpuwise.report.document import Bullets, Chart, Code, Heading, KeyValues, Paragraph, Table, cell_text

ENGLISH_RUN = re.compile(r"[A-Za-z][A-Za-z'\-]*(?: +[A-Za-z][A-Za-z'\-]*){3,}")


def quoting_keys() -> set[str]:
    """KeyValues keys whose values are quoted, in the active language (evidence and citations)."""
    return {i18n._("fact"), i18n._("measured"), i18n._("source"), i18n._("reference")}


def written_texts(doc, charts: bool = False, skip_keys: Iterable[str] | None = None) -> list[str]:
    """Every text of the Document that gpuwise wrote, minus commands and the values of quoting rows."""
    skip = quoting_keys() if skip_keys is None else set(skip_keys)
    texts: list[str] = []
    for block in doc.blocks:
        if isinstance(block, (Heading, Paragraph)):
            texts.append(block.text)
        elif isinstance(block, KeyValues):
            for key, value in block.rows:
                texts.append(key)
                if key not in skip:
                    texts.append(cell_text(value))
        elif isinstance(block, Bullets):
            texts += [cell_text(item) for item in block.items]
        elif isinstance(block, Table):
            texts += [c.header for c in block.columns] + [cell_text(c) for row in block.rows for c in row]
        elif isinstance(block, Chart):  # drawn by html only; the text formats skip it
            texts += (
                [block.title, block.x_label, block.y_label] + [s.name for s in block.series] if charts else []
            )
        else:
            assert isinstance(block, Code), type(block)  # commands stay as they are
    return texts


def english_runs(doc, quoted: Iterable[str] = (), skip_keys: Iterable[str] | None = None) -> list[str]:
    """The runs of 4+ English words left in `doc` (charts included) once quotes, code and URLs are removed."""
    quotes = sorted({q for q in quoted if q}, key=len, reverse=True)
    runs: list[str] = []
    for text in written_texts(doc, charts=True, skip_keys=skip_keys):
        for q in quotes:
            text = text.replace(q, " ")
        text = re.sub(r"`[^`]*`|https?://\S+", " ", text)
        runs += ENGLISH_RUN.findall(text)
    return runs
