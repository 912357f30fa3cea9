"""The inference workload file (`kind: inference`): the model, its traffic, the service target, the org.

Same YAML family as training workloads (plan/workload.py): validated by catalog/yamlfile.py, so every
mistake is reported as file:line with the field and a fix. `workload_kind(path)` tells the plan command
which loader a file needs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from gpuwise.catalog.yamlfile import load_yaml_with_lines, validate_data
from gpuwise.errors import DataValidationError
from gpuwise.i18n import N_, joined, msg
from gpuwise.plan.workload import OrgContext
from gpuwise.textmodel import TextModel

WeightPrecision = Literal["bf16", "fp16", "fp8", "int8", "int4"]
# Bytes per stored value: bits / 8 (int4 group-quantisation scales, ~0.125-0.25 bit per weight, ignored).
BYTES_PER_VALUE = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}
# The tensor-core rate prefill runs at: fp8 models compute in fp8; weight-only int8/int4 dequantise to fp16.
COMPUTE_DTYPE = {"bf16": "bf16", "fp16": "fp16", "fp8": "fp8", "int8": "fp16", "int4": "fp16"}
SEE_ALSO = N_("see examples/llm-chat-serving.yaml and examples/image-api-flat.yaml")


class _Strict(TextModel):
    model_config = ConfigDict(extra="forbid")


class ServedModel(_Strict):
    """An LLM (type llm: shape and token lengths) or any other model (type other: throughput per GPU)."""

    name: str | None = None
    type: Literal["llm", "other"] = "llm"
    params: float | None = Field(None, gt=0, description="parameter count, e.g. 8e9")
    precision: WeightPrecision = Field("bf16", description="weights as served (quantisation)")
    kv_precision: Literal["bf16", "fp16", "fp8"] = Field("bf16", description="KV-cache values")
    layers: int | None = Field(None, gt=0)
    hidden: int | None = Field(None, gt=0)
    heads: int | None = Field(None, gt=0, description="attention (query) heads")
    kv_heads: int | None = Field(None, gt=0, description="key/value heads (grouped-query attention)")
    prompt_tokens: int | None = Field(None, gt=0, description="mean input length per request")
    output_tokens: int | None = Field(None, gt=0, description="mean generated tokens per request")
    throughput_per_gpu: float | None = Field(
        None, gt=0, description="type other: requests/s one GPU serves within the latency target"
    )
    gpu: str | None = Field(None, description="type other: the GPU throughput_per_gpu was measured on")
    memory_gb: float | None = Field(None, gt=0, description="type other: GPU memory one replica needs")
    bench_result: str | None = Field(
        None, description="type other: result name in a --calibrate bench file to take throughput from"
    )

    @model_validator(mode="after")
    def _enough(self) -> ServedModel:
        if self.type == "llm":
            missing = [
                f
                for f in ("params", "layers", "hidden", "heads", "prompt_tokens", "output_tokens")
                if getattr(self, f) is None
            ]
            if missing:
                raise ValueError(
                    msg("an llm needs {fields} (weights, KV cache and token counts size it)").format(
                        fields=joined(", ", missing)
                    )
                )
            if self.hidden % self.heads:
                raise ValueError(msg("hidden must be a multiple of heads (head size = hidden / heads)"))
            if self.kv_heads is not None and self.kv_heads > self.heads:
                raise ValueError(msg("kv_heads cannot exceed heads"))
        return self

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    def weight_bytes(self) -> float:
        return self.params * BYTES_PER_VALUE[self.precision]

    def kv_bytes_per_token(self) -> float:
        """K and V per layer per token: 2 × layers × kv_heads × head_dim × bytes (vLLM/PagedAttention,
        Kwon et al. 2023, §2.2); grouped-query attention stores kv_heads, not heads."""
        kv_heads = self.kv_heads or self.heads
        return 2.0 * self.layers * kv_heads * self.head_dim * BYTES_PER_VALUE[self.kv_precision]


class Traffic(_Strict):
    """Requests per second over a day: 24 hourly values, a peak/valley pair, or a CSV of measured rates."""

    hourly_rps: list[float] | None = Field(None, description="24 values, hour 0 to 23, local time")
    peak_rps: float | None = Field(None, gt=0)
    valley_rps: float | None = Field(None, ge=0)
    peak_hours: tuple[int, int] | None = Field(
        None, description="[first, end) hours of the peak, e.g. [9, 21]"
    )
    csv: str | None = Field(
        None, description="CSV with columns timestamp,rps; hourly rows; relative to this file"
    )
    weekly: list[float] = Field(
        default_factory=lambda: [1.0] * 7, description="Monday..Sunday factors on the daily profile"
    )
    growth_per_year: float = Field(0.0, ge=-0.9, le=10, description="0.5 = +50% a year")
    burst_factor: float = Field(
        1.0,
        ge=1.0,
        le=50.0,
        description="within an hour: squared coefficient of variation of the gaps between requests "
        "(1 = Poisson arrivals; 2-4 = bursty)",
    )

    @model_validator(mode="after")
    def _one_shape(self) -> Traffic:
        given = [
            name
            for name, present in (
                ("hourly_rps", self.hourly_rps is not None),
                ("peak_rps/valley_rps", self.peak_rps is not None or self.valley_rps is not None),
                ("csv", self.csv is not None),
            )
            if present
        ]
        if len(given) != 1:
            raise ValueError(
                msg(
                    "give exactly one traffic shape: hourly_rps (24 values), peak_rps+valley_rps+peak_hours, "
                    "or csv (got {given})"
                ).format(given=joined(", ", given) or msg("none"))
            )
        if self.peak_rps is not None or self.valley_rps is not None:
            if self.peak_rps is None or self.valley_rps is None or self.peak_hours is None:
                raise ValueError(msg("a peak/valley profile needs peak_rps, valley_rps and peak_hours"))
            if self.valley_rps > self.peak_rps:
                raise ValueError(msg("valley_rps is above peak_rps"))
            first, end = self.peak_hours
            if not (0 <= first <= 23 and 1 <= end <= 24 and first != end):
                raise ValueError(msg("peak_hours is [first, end) with 0 <= first <= 23, 1 <= end <= 24"))
        return self

    @field_validator("hourly_rps")
    @classmethod
    def _day(cls, values: list[float] | None) -> list[float] | None:
        if values is None:
            return values
        if len(values) != 24:
            raise ValueError(msg("hourly_rps needs 24 values (hour 0..23), not {n}").format(n=len(values)))
        if any(v < 0 for v in values) or max(values) <= 0:
            raise ValueError(msg("hourly_rps values must be 0 or more, and not all 0"))
        return values

    @field_validator("weekly")
    @classmethod
    def _week(cls, values: list[float]) -> list[float]:
        if len(values) != 7 or any(w < 0 for w in values) or max(values) <= 0:
            raise ValueError(msg("weekly needs 7 factors (Monday..Sunday), each 0 or more, not all 0"))
        return values


class ServiceTarget(_Strict):
    ttft_p95_ms: float | None = Field(None, gt=0, description="llm: p95 time to first token")
    tpot_p95_ms: float | None = Field(None, gt=0, description="llm: p95 time per output token")
    ttft_p99_ms: float | None = Field(None, gt=0, description="llm: p99 time to first token")
    tpot_p99_ms: float | None = Field(None, gt=0, description="llm: p99 time per output token")
    latency_p95_ms: float | None = Field(None, gt=0, description="other models: p95 request latency")
    slo_attainment: float | None = Field(
        None, gt=0, le=1, description="share of hours capacity must meet the target (default 0.99)"
    )


class Autoscaling(_Strict):
    min_nodes: int = Field(1, ge=0, description="nodes kept running in the valley")
    scale_up_delay_minutes: float | None = Field(None, ge=0, le=240)


class InferenceWorkload(_Strict):
    kind: Literal["inference"]
    name: str | None = None
    model: ServedModel
    traffic: Traffic
    service: ServiceTarget
    autoscaling: Autoscaling = Field(default_factory=Autoscaling)
    org: OrgContext = Field(default_factory=OrgContext)

    @model_validator(mode="after")
    def _target_fits_model(self) -> InferenceWorkload:
        s = self.service
        if self.model.type == "llm" and (
            (s.ttft_p95_ms is None and s.ttft_p99_ms is None)
            or (s.tpot_p95_ms is None and s.tpot_p99_ms is None)
        ):
            raise ValueError(
                msg(
                    "an llm service target needs a TTFT and a TPOT target (ttft_p95_ms or ttft_p99_ms, tpot_p95_ms or tpot_p99_ms)"
                )
            )
        if self.model.type == "other" and s.latency_p95_ms is None:
            raise ValueError(msg("a non-llm service target needs latency_p95_ms"))
        return self

    @property
    def is_llm(self) -> bool:
        return self.model.type == "llm"


def workload_kind(path: str | Path) -> str:
    """'inference' or 'training' (a file without `kind:` is a training workload, as before)."""
    data, _lines = load_yaml_with_lines(path)
    return str(data.get("kind", "training")) if isinstance(data, dict) else "training"


def load_inference_workload(path: str | Path) -> InferenceWorkload:
    """Validate an inference workload file; DataValidationError with file:line on bad input."""
    data, lines = load_yaml_with_lines(path)
    if not isinstance(data, dict):
        raise DataValidationError(
            msg("the file must be a YAML mapping (key: value lines) at the top level"),
            msg("start the file with 'kind: inference' and 'model:'"),
            path=str(path),
            line=1,
        )
    return validate_data(InferenceWorkload, data, lines, path, msg(SEE_ALSO))
