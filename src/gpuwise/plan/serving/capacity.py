"""Capacity of one GPU node for a served model: requests/s within the service target.

LLMs (the roofline view of serving, e.g. Pope et al. 2022 "Efficiently Scaling Transformer Inference"):
* prefill is FLOPs-bound: 2·N·p + L·d·p² FLOPs for a p-token prompt (Kaplan et al. 2020 forward pass,
  causal attention over p/2 positions on average), at the GPU's achievable matmul rate;
* a decode step is memory-bandwidth-bound: it reads all weights once plus the KV cache of every sequence
  in the batch, so step time = (weights + batch·context·kv_bytes) / achieved bandwidth (or the FLOPs
  bound when that is larger);
* in steady state, every step also carries the prefills of the requests that replace finished ones
  (batch/output_tokens per step), so time per output token = step + batch/output · prefill;
* tensor parallelism adds two activation all-reduces per layer (latency and NVLink bandwidth);
* the KV cache gets what memory the weights leave (× usable fraction), which caps the batch;
* the batch served is the largest that meets both p95 targets; tensor parallelism (tp) is the
  power of two up to the node size that serves the most requests per node.
Other models: the user's (or a `--calibrate` bench's) requests/s per GPU.
The capacity planned with is the modelled one × max_load_fraction (headroom for the p95).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuwise.i18n import N_, _
from gpuwise.plan import catalog_bridge as cat
from gpuwise.plan.catalog_bridge import GpuSpec
from gpuwise.plan.defaults import PlanDefaults
from gpuwise.plan.serving.defaults import ServingDefaults
from gpuwise.plan.serving.workload import COMPUTE_DTYPE, InferenceWorkload, ServedModel

ACTIVATION_BYTES = 2.0  # bf16/fp16 activations travel between tensor-parallel GPUs, also for fp8 weights
# What limits a node's batch (Capacity.limit): kept in English in the JSON, translated where shown
LIMIT_KV_MEMORY = N_("KV-cache memory")
LIMIT_TPOT = N_("time-per-token target")
LIMIT_TTFT = N_("TTFT target")
LIMIT_GIVEN = N_("given throughput")


@dataclass(frozen=True)
class GpuFigures:
    """What the capacity model needs about one GPU, each achieved fraction with its source."""

    key: str
    memory_bytes: float
    bandwidth_bytes_s: float
    bandwidth_fraction: float
    peak_flops: float
    compute_fraction: float
    link_bytes_s: float  # achieved one-direction GPU-to-GPU bandwidth for tensor-parallel all-reduces
    link_latency_s: float  # per ring step
    sources: dict[str, str]


def gpu_figures(spec: GpuSpec, precision: str, d: ServingDefaults) -> GpuFigures | str:
    """The GPU's figures, or a sentence saying which figure the catalog lacks."""
    memory = cat.gpu_memory_bytes(spec)
    dtype = COMPUTE_DTYPE[precision]
    peak = cat.peak_flops(spec, dtype)
    sources: dict[str, str] = {}
    if peak is None and dtype == "fp8":  # no fp8 tensor cores (A100): fp8 weights run as fp16 matmuls
        peak = cat.peak_flops(spec, "fp16")
        sources["peak"] = "no fp8 peak: fp8 weights computed at the fp16 rate"
    if memory is None or not spec.memory_bandwidth_gb_s or peak is None:
        return _("the catalog has no memory size, bandwidth or {dtype} peak for {gpu}").format(
            dtype=dtype, gpu=spec.key
        )
    if spec.memcpy_fraction:
        bw_frac = spec.memcpy_fraction
        sources["bandwidth_fraction"] = f"catalog {spec.key} memcpy_fraction (measured)"
    else:
        bw_frac = d.value("decode_bandwidth_fraction_fallback")
        sources["bandwidth_fraction"] = d.source("decode_bandwidth_fraction_fallback")
    if spec.mamf_fraction:
        c_frac = spec.mamf_fraction * d.value("prefill_mamf_share")
        sources["compute_fraction"] = f"catalog {spec.key} mamf_fraction × serving.prefill_mamf_share"
    else:
        c_frac = d.value("prefill_compute_fraction_fallback")
        sources["compute_fraction"] = d.source("prefill_compute_fraction_fallback")
    pd = PlanDefaults()
    if spec.nvlink_bandwidth_gb_s:  # catalog NVLink is bidirectional per GPU; a ring sends one way
        busbw = pd.value("communication.intra_node_busbw_fraction")
        link = spec.nvlink_bandwidth_gb_s / 2 * 1e9 * busbw
        sources["link"] = (
            f"catalog {spec.key} NVLink / 2 × {pd.source('communication.intra_node_busbw_fraction')}"
        )
    else:
        link = pd.value("communication.pcie_fallback_gb_s") * 1e9
        sources["link"] = pd.source("communication.pcie_fallback_gb_s")
    latency = pd.value("communication.nvlink_latency_us") * 1e-6
    return GpuFigures(
        spec.key, memory, spec.memory_bandwidth_gb_s * 1e9, bw_frac, peak, c_frac, link, latency, sources
    )


@dataclass(frozen=True)
class Capacity:
    """One node of `gpus_per_node` GPUs serving the model; zero capacity with a reason when it cannot."""

    gpu: str
    gpus_per_node: int
    tp: int = 0
    replicas_per_node: int = 0
    batch: int = 0
    max_batch_memory: int = 0
    ttft_s: float = float("nan")
    tpot_s: float = float("nan")
    rps_per_node: float = 0.0  # modelled, at the chosen batch
    planned_rps_per_node: float = 0.0  # × max_load_fraction: what the fleet is sized with
    output_tokens_per_s_per_gpu: float = float("nan")
    limit: str = ""
    reason: str = ""

    @property
    def feasible(self) -> bool:
        return self.planned_rps_per_node > 0


def allreduce_s(m: ServedModel, g: GpuFigures, tp: int, tokens) -> float:
    """Tensor parallelism all-reduces the activations twice per layer (Megatron-LM, Shoeybi et al. 2019):
    a ring moves 2(tp−1)/tp of the bf16 activations and takes 2(tp−1) latency-bound steps."""
    if tp == 1:
        return 0.0 * np.asarray(tokens, dtype=float)
    volume = 2.0 * (tp - 1) / tp * np.asarray(tokens, dtype=float) * m.hidden * ACTIVATION_BYTES
    return 2.0 * m.layers * (2.0 * (tp - 1) * g.link_latency_s + volume / g.link_bytes_s)


def prefill_s(m: ServedModel, g: GpuFigures, tp: int, prompt: int) -> float:
    flops = 2.0 * m.params * prompt + m.layers * m.hidden * float(prompt) ** 2
    return flops / (tp * g.peak_flops * g.compute_fraction) + float(allreduce_s(m, g, tp, prompt))


def decode_step_s(m: ServedModel, g: GpuFigures, tp: int, batch, context: float):
    """Seconds per decode step for `batch` sequences of mean length `context` (array-friendly)."""
    batch = np.asarray(batch, dtype=float)
    read = m.weight_bytes() + batch * context * m.kv_bytes_per_token()
    t_mem = read / (tp * g.bandwidth_bytes_s * g.bandwidth_fraction)
    flops = batch * (2.0 * m.params + 2.0 * m.layers * context * m.hidden)
    return np.maximum(t_mem, flops / (tp * g.peak_flops * g.compute_fraction)) + allreduce_s(m, g, tp, batch)


def tp_choices(m: ServedModel, g: GpuFigures, gpus_per_node: int, usable: float) -> list[int]:
    """Powers of two up to the node's GPU count whose GPUs hold the weights."""
    out, tp = [], 1
    while tp <= gpus_per_node:
        if m.weight_bytes() < tp * g.memory_bytes * usable:
            out.append(tp)
        tp *= 2
    return out


def llm_capacity(
    wl: InferenceWorkload, g: GpuFigures, gpus_per_node: int, d: ServingDefaults, targets: bool = True
) -> Capacity:
    """Requests/s of one node at the tensor-parallel size that serves the most.

    `targets=False` ignores the latency targets (maximum throughput, as offline benchmarks measure)."""
    choices = tp_choices(wl.model, g, gpus_per_node, d.value("memory_usable_fraction"))
    if not choices:
        weights_gb = wl.model.weight_bytes() / 1e9
        return Capacity(
            g.key,
            gpus_per_node,
            reason=_("{gb} GB of weights do not fit in one node").format(gb=f"{weights_gb:.0f}"),
        )
    results = [replica_capacity(wl, g, tp, gpus_per_node, d, targets) for tp in choices]
    return max(results, key=lambda c: (c.rps_per_node, -c.tp))


def replica_capacity(
    wl: InferenceWorkload, g: GpuFigures, tp: int, gpus_per_node: int, d: ServingDefaults, targets: bool
) -> Capacity:
    """Replicas of `tp` GPUs each: the largest batch that meets the targets, and what limits it."""
    m = wl.model
    prompt, out = m.prompt_tokens, m.output_tokens
    context = prompt + out / 2.0  # mean length of a sequence while it decodes
    kv_room = tp * g.memory_bytes * d.value("memory_usable_fraction") - m.weight_bytes()
    max_batch = int(kv_room // (context * m.kv_bytes_per_token()))
    if max_batch < 1:
        return Capacity(g.key, gpus_per_node, tp=tp, reason=_("no room for one sequence's KV cache"))
    batches = np.arange(1, max_batch + 1, dtype=float)
    t_prefill = prefill_s(m, g, tp, prompt)
    step = decode_step_s(m, g, tp, batches, context)
    tpot = step + batches / out * t_prefill
    ttft = t_prefill + step
    ok = np.ones_like(batches, dtype=bool)
    if targets:
        ok = (tpot <= wl.service.tpot_p95_ms / 1e3) & (ttft <= wl.service.ttft_p95_ms / 1e3)
    if not ok.any():
        reason = (
            _("even one request: TTFT {ms} ms > target {target} ms").format(
                ms=f"{ttft[0] * 1e3:.0f}", target=f"{wl.service.ttft_p95_ms:g}"
            )
            if ttft[0] > wl.service.ttft_p95_ms / 1e3
            else _("even one request: time per token {ms} ms > target {target} ms").format(
                ms=f"{tpot[0] * 1e3:.1f}", target=f"{wl.service.tpot_p95_ms:g}"
            )
        )
        return Capacity(g.key, gpus_per_node, tp=tp, max_batch_memory=max_batch, reason=reason)
    i = int(np.flatnonzero(ok)[-1])
    if i + 1 == max_batch:
        limit = LIMIT_KV_MEMORY
    elif tpot[i + 1] > wl.service.tpot_p95_ms / 1e3:
        limit = LIMIT_TPOT
    else:
        limit = LIMIT_TTFT
    replicas = gpus_per_node // tp
    rps_node = (i + 1) / (out * tpot[i]) * replicas
    return Capacity(
        g.key,
        gpus_per_node,
        tp=tp,
        replicas_per_node=replicas,
        batch=i + 1,
        max_batch_memory=max_batch,
        ttft_s=float(ttft[i]),
        tpot_s=float(tpot[i]),
        rps_per_node=float(rps_node),
        planned_rps_per_node=float(rps_node * d.value("max_load_fraction")),
        output_tokens_per_s_per_gpu=float(rps_node * out / gpus_per_node),
        limit=limit,
    )


def other_capacity(
    wl: InferenceWorkload, spec: GpuSpec, gpus_per_node: int, rps_per_gpu: float | None, d: ServingDefaults
) -> Capacity:
    """A non-LLM model: the given requests/s per GPU, when its memory fits."""
    if rps_per_gpu is None:
        return Capacity(spec.key, gpus_per_node, reason=_("no throughput per GPU (model.throughput_per_gpu)"))
    memory = cat.gpu_memory_bytes(spec)
    need = wl.model.memory_gb
    if need is not None and memory is not None and need * 1e9 > memory * d.value("memory_usable_fraction"):
        return Capacity(spec.key, gpus_per_node, reason=_("needs {gb} GB per replica").format(gb=f"{need:g}"))
    rps = rps_per_gpu * gpus_per_node
    return Capacity(
        spec.key,
        gpus_per_node,
        tp=1,
        replicas_per_node=gpus_per_node,
        batch=0,
        rps_per_node=rps,
        planned_rps_per_node=rps * d.value("max_load_fraction"),
        limit=LIMIT_GIVEN,
    )
