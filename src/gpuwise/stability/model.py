"""The stability result document (schema gpuwise-stability/1): samples, per-metric statistics, change
windows and verdicts. doctor (--stability), plan (--calibrate), history and compare read it back."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpuwise.documents.ids import STABILITY_SCHEMA as SCHEMA
from gpuwise.textmodel import TextModel

Verdict = Literal["stable", "variable", "unstable", "unknown"]
VERDICT_ORDER = {"unknown": -1, "stable": 0, "variable": 1, "unstable": 2}


class Sample(TextModel):
    """One probe round: seconds since the run started, each metric's value, and the context signals
    measured over the same seconds the probes ran."""

    t: float
    values: dict[str, float | None] = Field(default_factory=dict)
    errors: dict[str, str] = Field(default_factory=dict)
    context: dict[str, float | None] = Field(default_factory=dict)
    probe_s: float = 0.0  # wall seconds the probes of this round took


class MetricInfo(TextModel):
    name: str  # e.g. "compute.matmul_fp32"
    layer: str
    unit: str
    higher_is_better: bool
    description: str = ""


class Summary(TextModel):
    n: int
    median: float | None = None
    p5: float | None = None
    p95: float | None = None
    p99: float | None = None
    mean: float | None = None
    cv: float | None = None  # std / mean
    cv_ci: tuple[float, float] | None = None  # bootstrap percentile interval of the cv
    robust_cv: float | None = None  # 1.4826 * MAD / median


class ContextMove(TextModel):
    signal: str
    inside: float
    outside: float
    z: float


class Window(TextModel):
    """A stretch of the run where a metric was worse than its baseline."""

    start_s: float
    end_s: float
    median: float
    baseline: float
    change: float  # fraction worse than the baseline (0.3 = 30% worse)
    z: float
    context: list[ContextMove] = Field(default_factory=list)  # strongest first

    @property
    def cause(self) -> str | None:
        return self.context[0].signal if self.context else None


class MetricResult(TextModel):
    info: MetricInfo
    summary: Summary
    windows: list[Window] = Field(default_factory=list)
    verdict: Verdict = "unknown"
    reason: str = ""


class LayerVerdict(TextModel):
    layer: str
    verdict: Verdict
    metric: str  # the metric that decided it (the worst)
    reason: str = ""


class Overhead(TextModel):
    wall_s: float
    probe_s: float
    probe_fraction: float  # probe_s / wall_s
    cpu_s: float  # user+system CPU seconds of gpuwise and its children (fio) during the run
    cpu_fraction_of_one_core: float  # cpu_s / wall_s


class StabilityReport(TextModel):
    schema_: str = Field(SCHEMA, alias="schema")
    host: str
    started_unix: float
    started: str  # ISO 8601 UTC
    duration_s: float
    interval_s: float
    device: str  # "cuda" or "cpu"
    gpu_name: str | None = None
    environment: dict = Field(default_factory=dict)
    signals: dict[str, str] = Field(default_factory=dict)  # context signal id -> what it is
    metrics: list[MetricInfo] = Field(default_factory=list)
    samples: list[Sample] = Field(default_factory=list)
    results: list[MetricResult] = Field(default_factory=list)
    layers: list[LayerVerdict] = Field(default_factory=list)
    overhead: Overhead | None = None
    warnings: list[str] = Field(default_factory=list)

    model_config = {"populate_by_name": True}

    def result(self, name: str) -> MetricResult | None:
        return next((r for r in self.results if r.info.name == name), None)

    def series(self, name: str) -> tuple[list[float], list[float]]:
        """(times, values) of one metric, samples without a value left out."""
        pts = [(s.t, s.values[name]) for s in self.samples if s.values.get(name) is not None]
        return [t for t, _ in pts], [float(v) for _, v in pts]

    def to_json(self) -> dict:
        return self.model_dump(mode="json", by_alias=True)
