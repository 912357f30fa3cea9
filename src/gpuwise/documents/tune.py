"""What gpuwise reads back from a tune result (TUNE_SCHEMA, written by tune/model.py's TuneResult):
the history records the baseline's and the winner's throughput and the search's settings."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpuwise.documents.ids import TUNE_SCHEMA
from gpuwise.documents.view import View


class TuneTrial(View):
    number: int
    role: str  # "baseline", "search", "neighbour", "reduction", ...
    samples_per_s: float | None = None
    samples_per_s_low: float | None = None
    samples_per_s_high: float | None = None
    speedup: float | None = None
    speedup_low: float | None = None
    speedup_high: float | None = None


class TuneDocument(View):
    schema_: Literal[TUNE_SCHEMA] = Field(alias="schema")  # type: ignore[valid-type]
    workload: str | None = None
    device: str | None = None
    nproc: int | None = None
    batch_size: int | None = None
    warmup_steps: int | None = None
    timed_steps: int | None = None
    keep_numerics: bool | None = None
    winner: int | None = None  # the number of the winning trial; null: nothing beat the baseline
    trials: list[TuneTrial] = Field(default_factory=list)

    def trial(self, number: int | None) -> TuneTrial | None:
        return next((t for t in self.trials if t.number == number), None) if number is not None else None

    def baseline(self) -> TuneTrial | None:
        return next((t for t in self.trials if t.role == "baseline"), None)
