"""What `fleet report` reads back from the fleet link test's result (LINKS_SCHEMA, `links.json`,
written by fleet/linktest.py): per directed pair of nodes, the median and best GB/s of its transfers."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from gpuwise.documents.ids import LINKS_SCHEMA
from gpuwise.documents.view import View


class LinkPair(View):
    src: str  # the sending node
    dst: str  # the receiving node
    gb_s: float = Field(allow_inf_nan=False)  # the median of its transfers
    best_gb_s: float | None = Field(
        None, allow_inf_nan=False
    )  # the fastest (files of older versions: absent)

    @model_validator(mode="after")
    def _best_defaults_to_median(self) -> LinkPair:
        if self.best_gb_s is None:
            self.best_gb_s = self.gb_s
        return self


class LinksDocument(View):
    schema_: Literal[LINKS_SCHEMA] = Field(alias="schema")  # type: ignore[valid-type]
    pairs: list[LinkPair] = Field(default_factory=list)
