"""What the history reads back from a stability result (STABILITY_SCHEMA, written by
stability/model.py's StabilityReport, which doctor and plan validate it with): per metric its median,
spread and cv, and the verdict of each layer."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpuwise.documents.ids import STABILITY_SCHEMA
from gpuwise.documents.view import View


class MetricName(View):
    name: str
    unit: str = ""


class MetricSummary(View):
    n: int | None = None
    median: float | None = None
    p5: float | None = None
    p95: float | None = None
    cv: float | None = None
    cv_ci: tuple[float, float] | None = None


class StabilityMetric(View):
    info: MetricName
    summary: MetricSummary = Field(default_factory=MetricSummary)


class StabilityLayer(View):
    layer: str
    verdict: str


class StabilityDocument(View):
    schema_: Literal[STABILITY_SCHEMA] = Field(alias="schema")  # type: ignore[valid-type]
    device: str | None = None
    gpu_name: str | None = None
    interval_s: float | None = None
    duration_s: float | None = None
    results: list[StabilityMetric] = Field(default_factory=list)
    layers: list[StabilityLayer] = Field(default_factory=list)
