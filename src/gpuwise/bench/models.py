"""Measurement and BenchReport: what a benchmark returns (schema gpuwise-bench/1).

Doctor (`--bench-results`), plan (`--calibrate`) and compare read these, so the field names are a
contract. Units go in `unit` ("TFLOP/s", "GB/s", "IOPS", "us", "samples/s", ...).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

BENCH_SCHEMA = "gpuwise-bench/1"
Status = Literal["ok", "failed", "skipped", "invalid"]


class Stats(BaseModel):
    """Median with min and max over the timed repeats (after warm-up)."""

    model_config = ConfigDict(extra="forbid")
    median: float
    min: float
    max: float
    repeats: int
    warmup: int = 0


class Measurement(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str  # "matmul_bf16", "allreduce_busbw", "h2d_pinned", "fio_randread_4k", ...
    layer: str  # "compute", "memory", "host-device", "gpu-gpu", "collective", "storage", "dataloader", "training"
    value: float | None = None
    unit: str = ""
    peak: float | None = None  # catalog or derived peak in the same unit
    peak_source: str | None = (
        None  # e.g. "catalog: H100-SXM (NVIDIA datasheet)", "derived: cores x GHz x FMA width"
    )
    percent_of_peak: float | None = None
    achievable_fraction: float | None = None  # typical achievable fraction of peak, when the catalog knows it
    percent_of_achievable: float | None = None
    status: Status = "ok"
    reason: str | None = None  # why failed / skipped / invalid
    device: str | None = None  # "cuda:0", "cpu", "GPU0->GPU1", a path for storage
    stats: Stats | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    extra: dict[str, Any] = Field(default_factory=dict)  # per-size tables, per-rank times, percentiles


class BenchReport(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: str = Field(BENCH_SCHEMA, alias="schema")
    created_at: str | None = None
    hostname: str | None = None
    mode: str = "quick"  # "quick" or "full"
    environment: dict[str, Any] = Field(default_factory=dict)  # versions, clocks, device names in effect
    results: list[Measurement] = Field(default_factory=list)

    def to_json_dict(self) -> dict:
        return self.model_dump(mode="json", by_alias=True)

    def find(self, name: str) -> Measurement | None:
        return next((m for m in self.results if m.name == name), None)
