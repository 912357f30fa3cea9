"""The base of a reader's view: the fields gpuwise reads back from a document, others ignored.

Writers only ever add fields (docs/documents.md), so a view ignores what it does not know and every
field it reads has a default that older documents may lack.
"""

from __future__ import annotations

from pydantic import ConfigDict

from gpuwise.textmodel import TextModel


class View(TextModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)
