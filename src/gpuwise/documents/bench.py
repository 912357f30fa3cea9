"""Measurement and BenchReport: what a benchmark returns, the bench document (BENCH_SCHEMA).

Doctor (`--bench-results`), plan (`--calibrate`), compare, fleet and history read these, so the field
names are a contract; the writer (gpuwise.bench) and every reader share this one model. Units go in `unit` ("TFLOP/s", "GB/s", "IOPS", "us", "samples/s", ...).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import ConfigDict, Field, model_validator

from gpuwise.documents.ids import BENCH_SCHEMA
from gpuwise.textmodel import TextModel

Status = Literal["ok", "failed", "skipped", "invalid"]
PeakKind = Literal["catalog", "derived", "none"]


class PeakSource(TextModel):
    """Where a measurement's peak came from: `kind` and `key` for code, `text` for people (never parsed).

    kind "catalog": a published figure, `key` the catalog row (e.g. "H200"); "derived": computed by
    gpuwise (the CPU peak), `key` the ISA flag whose FMA rate it uses; "none": no peak, `text` says why.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_extra=lambda s: _or_old_string(s))

    kind: PeakKind
    text: str
    key: str | None = None
    source: str | None = None  # the document behind the figure (the catalog row's source), when known

    @model_validator(mode="before")
    @classmethod
    def _from_old_string(cls, data: Any) -> Any:
        # Bench files written before peak sources were structured hold one string: read them still.
        return legacy_peak_source(data) if isinstance(data, str) else data

    def __str__(self) -> str:
        return self.text


def _or_old_string(schema: dict[str, Any]) -> None:
    """The JSON Schema of a peak source: the structure, or the one string of files from older versions."""
    structured = dict(schema)
    schema.clear()
    schema["anyOf"] = [
        structured,
        {"type": "string", "description": "written by gpuwise before peak_source was structured"},
    ]


def legacy_peak_source(text: str) -> dict[str, Any]:
    """The fields of an old `peak_source` string ("catalog: H200, dense bf16", "derived: ... flag avx2: ...").

    Only for reading files from older gpuwise versions; new results carry the structure itself.
    """
    head, _, rest = text.partition(":")
    if head == "catalog" and rest.strip():
        return {"kind": "catalog", "text": text, "key": re.split(r"[,;]", rest.strip(), maxsplit=1)[0]}
    if head == "derived":
        flag = re.search(r"flag (\S+?):", rest)
        return {"kind": "derived", "text": text, "key": flag.group(1) if flag else None}
    return {"kind": "none", "text": text}


class Stats(TextModel):
    """The timed repeats (after warm-up) behind a result: its headline statistic, min and max.

    A Measurement's `value` is `stats.median` (`statistic`) of one set of samples, so it always lies
    in [min, max]. When a benchmark timed several sets (sizes, shapes, worker counts), `of` names the
    one the headline comes from ("16 MiB", "8192x8192x8192", "num_workers=4").
    """

    model_config = ConfigDict(extra="forbid")
    median: float
    min: float
    max: float
    repeats: int
    warmup: int = 0
    statistic: Literal["median"] = "median"  # which statistic of the samples the headline `value` is
    of: str | None = None  # which set of samples, when the benchmark timed several

    def headline(self) -> float:
        """The declared statistic of the samples: what `Measurement.value` must be."""
        return self.median

    def contains(self, value: float, rel: float = 1e-9) -> bool:
        """Is `value` inside [min, max] (up to float rounding)?"""
        slack = rel * max(abs(self.min), abs(self.max))
        return self.min - slack <= value <= self.max + slack


class Measurement(TextModel):
    model_config = ConfigDict(extra="forbid")

    name: str  # "matmul_bf16", "allreduce_busbw", "h2d_pinned", "fio_randread_4k", ...
    layer: str  # "compute", "memory", "host-device", "gpu-gpu", "collective", "storage", "dataloader", "training"
    value: float | None = None
    unit: str = ""
    peak: float | None = None  # catalog or derived peak in the same unit
    peak_source: PeakSource | None = None  # where `peak` came from, or why there is none
    percent_of_peak: float | None = None
    achievable_fraction: float | None = None  # typical achievable fraction of peak, when the catalog knows it
    percent_of_achievable: float | None = None
    status: Status = "ok"
    reason: str | None = None  # why failed / skipped / invalid
    missing_tool: str | None = None  # skipped because this tool is not installed ("fio"): bench exits 5
    device: str | None = None  # "cuda:0", "cpu", "GPU0->GPU1", a path for storage
    stats: Stats | None = None  # the samples behind `value`: value is their headline (stats.headline())
    params: dict[str, Any] = Field(default_factory=dict)
    extra: dict[str, Any] = Field(default_factory=dict)  # per-size tables, per-rank times, percentiles

    @model_validator(mode="after")
    def _value_from_stats(self) -> Measurement:
        # one statistic per result: a benchmark gives its samples' Stats and the headline follows
        if self.value is None and self.stats is not None and self.status == "ok":
            self.value = self.stats.headline()
        return self

    def headline_outside_stats(self) -> bool:
        """A value that its own samples cannot have produced (outside their [min, max])."""
        return self.value is not None and self.stats is not None and not self.stats.contains(self.value)


class BenchReport(TextModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: str = Field(BENCH_SCHEMA, alias="schema")
    created_at: str | None = None
    hostname: str | None = None
    mode: str = "quick"  # "quick" or "full"
    environment: dict[str, Any] = Field(default_factory=dict)  # versions, clocks, device names in effect
    results: list[Measurement] = Field(default_factory=list)

    def to_json_dict(self) -> dict:
        return self.model_dump(mode="json", by_alias=True)

    def host(self) -> str | None:
        """The host it ran on: `hostname`, or (files of older versions) its environment's."""
        return self.hostname or self.environment.get("hostname")

    def gpu_names(self) -> list[str]:
        """The GPU models it ran on (its environment's `gpus`; empty for a CPU-only run)."""
        gpus = self.environment.get("gpus")
        return [str(g) for g in gpus if g] if isinstance(gpus, list) else []

    def find(self, name: str) -> Measurement | None:
        return next((m for m in self.results if m.name == name), None)
