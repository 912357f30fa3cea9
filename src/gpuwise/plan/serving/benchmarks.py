"""The capacity model against published serving benchmarks (data/serving_benchmarks.yaml).

`compare()` runs the model on each benchmark's setup and returns predicted vs published with the
relative error; tests pin the table. Metrics: ttft_ms / itl_ms at concurrency 1, output_tokens_s at
maximum load (offline), and server_tokens_s: output tokens/s at the highest Poisson arrival rate whose
p99 TTFT and TPOT meet the benchmark's bounds (MLPerf Inference Server scenario), from the queueing model. `capacity_factors()` turns the throughput rows' errors into the
multipliers plans apply to modelled capacity: the model's capacity ÷ (1 + its error against a
published maximum throughput), at the smallest, median and largest error (low, typical, high cost
are the most, median and least capacity). The correction is measured, so it moves with the data.
Rows marked held_out were added after the model was built and are scored, never fitted: they are left
out of the capacity range.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

import numpy as np
import yaml

from gpuwise.plan import catalog_bridge as cat
from gpuwise.plan.serving.capacity import (
    GpuFigures,
    decode_step_s,
    gpu_figures,
    llm_capacity,
    prefill_s,
    replica_capacity,
)
from gpuwise.plan.serving.defaults import ServingDefaults
from gpuwise.plan.serving.workload import InferenceWorkload


@dataclass(frozen=True)
class BenchmarkCheck:
    id: str
    metric: str  # ttft_ms | itl_ms | output_tokens_s | server_tokens_s
    published: float
    predicted: float
    source: str
    held_out: bool = False  # added after the model was built; never used to set the capacity range

    @property
    def error(self) -> float:
        """(predicted − published) / published. The model is optimistic when this is positive for
        throughput (output_tokens_s) and negative for latency (ttft_ms, itl_ms)."""
        return (self.predicted - self.published) / self.published


def _load() -> dict:
    path = resources.files("gpuwise.plan.serving").joinpath("data/serving_benchmarks.yaml")
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _workload(shape: dict, b: dict) -> InferenceWorkload:
    return InferenceWorkload.model_validate(
        {
            "kind": "inference",
            "model": {
                **shape,
                "precision": b["precision"],
                "kv_precision": b["kv_precision"],
                "prompt_tokens": b["prompt_tokens"],
                "output_tokens": b["output_tokens"],
            },
            "traffic": {"hourly_rps": [1.0] * 24},
            "service": {"ttft_p99_ms": b.get("ttft_p99_ms", 1e9), "tpot_p99_ms": b.get("tpot_p99_ms", 1e9)},
        }
    )


def predict(b: dict, wl: InferenceWorkload, g: GpuFigures, d: ServingDefaults) -> float:
    m, tp = wl.model, int(b["gpus"])
    if b["metric"] == "ttft_ms":
        return prefill_s(m, g, tp, m.prompt_tokens) * 1e3
    if b["metric"] == "itl_ms":
        return float(decode_step_s(m, g, tp, 1, m.prompt_tokens + m.output_tokens / 2.0)) * 1e3
    if b["metric"] == "server_tokens_s":  # a node of `gpus`, at the tensor-parallel size that serves most
        return llm_capacity(wl, g, tp, d).rps_per_node * m.output_tokens
    whole = b.get("scheduler") == "guaranteed_no_evict"
    cap = replica_capacity(wl, g, tp, tp, d, targets=False, reserve_whole_sequence=whole)
    return cap.rps_per_node * m.output_tokens


def compare(d: ServingDefaults | None = None) -> list[BenchmarkCheck]:
    d = d or ServingDefaults()
    data = _load()
    out = []
    for b in data["benchmarks"]:
        wl = _workload(data["models"][b["model"]], b)
        g = gpu_figures(cat.match_gpu(b["gpu"]), wl.model.precision, d, wl.model.kv_precision)
        if isinstance(g, str):  # the catalog lost a figure: the pinned test fails loudly on this
            raise ValueError(f"benchmark {b['id']}: {g}")
        out.append(
            BenchmarkCheck(
                b["id"],
                b["metric"],
                float(b["published"]),
                predict(b, wl, g, d),
                b["source"],
                bool(b.get("held_out", False)),
            )
        )
    return out


THROUGHPUT_METRICS = ("output_tokens_s", "server_tokens_s")


def capacity_factors(checks: list[BenchmarkCheck]) -> tuple[float, float, float]:
    """(low-cost, typical, high-cost) multipliers of modelled capacity: 1 / (1 + error) at the smallest,
    median and largest signed error of the throughput rows (offline and server) that are not held out;
    (1, 1, 1) without any. Held-out rows check the model and its range; they never set it."""
    errs = [c.error for c in checks if c.metric in THROUGHPUT_METRICS and not c.held_out]
    if not errs:
        return (1.0, 1.0, 1.0)
    lo, mid, hi = (max(e, -0.9) for e in (min(errs), float(np.median(errs)), max(errs)))
    return (1.0 / (1.0 + lo), 1.0 / (1.0 + mid), 1.0 / (1.0 + hi))
