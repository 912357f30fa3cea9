"""Capacity of one GPU node for a served model: requests/s that keep the latency percentiles on target.

LLMs (the roofline view of serving, e.g. Pope et al. 2022 "Efficiently Scaling Transformer Inference"):
* prefill is FLOPs-bound: 2·N·p + L·d·p² FLOPs for a p-token prompt (Kaplan et al. 2020 forward pass,
  causal attention over p/2 positions on average), at the GPU's achievable matmul rate;
* a decode step runs its kernels one after another, each at its own roofline (Williams et al. 2009; the
  per-operator view of Yuan et al. 2024, "LLM Inference Unveiled", arXiv 2402.16363): the weight matmuls
  take max(weights / bandwidth, batch·2·N / FLOPs) and attention max(batch·context·kv_bytes / bandwidth,
  its FLOPs / FLOPs), so a large batch pays for its matmul FLOPs and its KV-cache reads, not the larger
  of the two;
* fp8 matmuls run at the GPU's measured fraction × the fp8/bf16 ratio measured on an H200
  (serving.fp8_matmul_share_of_bf16);
* tensor parallelism adds two activation all-reduces per layer over the GPU's peer link from the catalog
  (NVLink through NVSwitch, AMD Infinity Fabric point-to-point links, or PCIe); a GPU whose peer link the
  catalog does not know is served one GPU per replica, and the plan says so;
* a precision is planned only on GPUs whose tensor cores compute in it (catalog gpu_precisions.csv): fp8
  on an A100 is planned in bf16 (fp16 without bf16), with the reason;
* the KV cache gets what memory the weights leave (× usable fraction), which caps the running batch;
* under Poisson (or burstier) arrivals, a continuous-batching scheduler's p95/p99 TTFT and TPOT come from
  the queueing model in queueing.py; the load served is the largest whose percentiles meet the targets
  and whose percentile batch fits the KV cache (no fixed headroom);
* tensor parallelism (tp) is the power of two up to the node size that serves the most requests per node.
Other models: the user's (or a `--calibrate` bench's) requests/s per GPU.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from gpuwise.i18n import N_, msg
from gpuwise.plan import catalog_bridge as cat
from gpuwise.plan.catalog_bridge import GpuSpec, PeerLink
from gpuwise.plan.defaults import PlanDefaults
from gpuwise.plan.serving.defaults import ServingDefaults
from gpuwise.plan.serving.queueing import Arrivals, tails
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
    peer: PeerLink | None  # the link tensor-parallel all-reduces use; None: unknown (no tensor parallelism)
    link_fraction: float  # achieved all-reduce bus bandwidth / link bandwidth
    link_latency_s: float  # per ring step
    sources: dict[str, str]
    weight_precision: str = "bf16"  # the precision planned on this GPU (the workload's, or a supported one)
    kv_precision: str = "bf16"
    notes: tuple[str, ...] = ()  # why the plan differs from the workload here (precision, peer link)

    def link_bytes_s(self, tp: int) -> float:
        """Achieved one-direction bandwidth one GPU drives in a tp-GPU all-reduce."""
        if self.peer is None:
            return float("nan")
        return self.peer.allreduce_gb_s(tp) * 1e9 * self.link_fraction


def _planned_precision(spec: GpuSpec, wanted: str) -> tuple[str, str | None]:
    """(`wanted`, None) when the GPU's tensor cores compute in it, else (bf16 or fp16, why)."""
    support = cat.precisions(spec)
    dtype = COMPUTE_DTYPE[wanted]
    if dtype == "fp16" or (support is not None and support.supports(dtype)):
        return wanted, None
    if support is None and cat.peak_flops(spec, dtype):
        return wanted, None  # a catalog peak in that format is evidence enough
    if support is not None:
        return ("bf16" if support.bf16 else "fp16"), msg(
            "{gpu} has no {wanted} tensor cores ({source})"
        ).format(gpu=spec.key, wanted=wanted, source=support.source)
    fallback = "bf16" if cat.peak_flops(spec, "bf16") else "fp16"
    return fallback, msg("the catalog does not say whether {gpu} computes in {wanted}").format(
        gpu=spec.key, wanted=wanted
    )


def _precision_note(spec: GpuSpec, precision: str, kv_precision: str) -> tuple[str, str, tuple[str, ...]]:
    """(weights, KV cache) as planned on this GPU, and a note when either differs from the workload's."""
    weights, why_w = _planned_precision(spec, precision)
    kv, why_kv = _planned_precision(spec, kv_precision)
    if why_w is None and why_kv is None:
        return weights, kv, ()
    if why_w is not None and why_kv is not None and (precision, weights) == (kv_precision, kv):
        note = msg("weights and KV cache in {wanted}: {why}; planned in {planned}").format(
            wanted=precision, why=why_w, planned=weights
        )
    elif why_w is not None:
        note = msg("weights in {wanted}: {why}; planned in {planned}").format(
            wanted=precision, why=why_w, planned=weights
        )
    else:
        note = msg("KV cache in {wanted}: {why}; planned in {planned}").format(
            wanted=kv_precision, why=why_kv, planned=kv
        )
    return weights, kv, (note,)


def gpu_figures(
    spec: GpuSpec, precision: str, d: ServingDefaults, kv_precision: str = "bf16"
) -> GpuFigures | str:
    """The GPU's figures, or a sentence saying which figure the catalog lacks."""
    weights, kv, notes = _precision_note(spec, precision, kv_precision)
    memory = cat.gpu_memory_bytes(spec)
    dtype = COMPUTE_DTYPE[weights]
    peak = cat.peak_flops(spec, dtype)
    sources: dict[str, str] = {}
    if memory is None or not spec.memory_bandwidth_gb_s or peak is None:
        return msg("the catalog has no memory size, bandwidth or {dtype} peak for {gpu}").format(
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
    if dtype == "fp8":  # the catalog's MAMF is a bf16 measurement
        c_frac *= d.value("fp8_matmul_share_of_bf16")
        sources["compute_fraction"] += " × serving.fp8_matmul_share_of_bf16"
    pd = PlanDefaults()
    peer = cat.peer_link(spec)
    busbw = pd.value("communication.intra_node_busbw_fraction")
    if peer is not None:
        sources["link"] = (
            f"{peer.link} ({peer.topology}, {peer.bandwidth_gb_s:g} GB/s per direction"
            + (" per peer" if peer.topology == "mesh" else "")
            + f"): {peer.source} × {pd.source('communication.intra_node_busbw_fraction')}"
        )
    else:
        sources["link"] = "no peer link in catalog gpu_peer_links.csv"
    latency = pd.value("communication.nvlink_latency_us") * 1e-6
    return GpuFigures(
        spec.key, memory, spec.memory_bandwidth_gb_s * 1e9, bw_frac, peak, c_frac, peer, busbw, latency,
        sources, weights, kv, notes,
    )  # fmt: skip


def planned_model(m: ServedModel, g: GpuFigures) -> ServedModel:
    """The model as served on this GPU: in the precisions the GPU supports."""
    if (m.precision, m.kv_precision) == (g.weight_precision, g.kv_precision):
        return m
    return m.model_copy(update={"precision": g.weight_precision, "kv_precision": g.kv_precision})


@dataclass(frozen=True)
class Capacity:
    """One node of `gpus_per_node` GPUs serving the model; zero capacity with a reason when it cannot."""

    gpu: str
    gpus_per_node: int
    tp: int = 0
    replicas_per_node: int = 0
    batch: int = 0  # mean running sequences per replica at the planned load
    max_batch_memory: int = 0
    ttft_s: float = float("nan")  # mean
    tpot_s: float = float("nan")  # mean
    ttft_p95_s: float = float("nan")
    ttft_p99_s: float = float("nan")
    tpot_p95_s: float = float("nan")
    tpot_p99_s: float = float("nan")
    rps_per_node: float = 0.0  # modelled, at the planned load (latency percentiles on target)
    planned_rps_per_node: float = 0.0  # what the fleet is sized with
    output_tokens_per_s_per_gpu: float = float("nan")
    limit: str = ""
    reason: str = ""
    precision: str = ""  # weights as planned on this GPU
    notes: tuple[str, ...] = field(default=())

    @property
    def feasible(self) -> bool:
        return self.planned_rps_per_node > 0


def allreduce_s(m: ServedModel, g: GpuFigures, tp: int, tokens) -> float:
    """Tensor parallelism all-reduces the activations twice per layer (Megatron-LM, Shoeybi et al. 2019):
    a ring moves 2(tp−1)/tp of the bf16 activations and takes 2(tp−1) latency-bound steps."""
    if tp == 1:
        return 0.0 * np.asarray(tokens, dtype=float)
    volume = 2.0 * (tp - 1) / tp * np.asarray(tokens, dtype=float) * m.hidden * ACTIVATION_BYTES
    return 2.0 * m.layers * (2.0 * (tp - 1) * g.link_latency_s + volume / g.link_bytes_s(tp))


def prefill_s(m: ServedModel, g: GpuFigures, tp: int, prompt: int) -> float:
    flops = 2.0 * m.params * prompt + m.layers * m.hidden * float(prompt) ** 2
    return flops / (tp * g.peak_flops * g.compute_fraction) + float(allreduce_s(m, g, tp, prompt))


def decode_step_s(m: ServedModel, g: GpuFigures, tp: int, batch, context: float):
    """Seconds per decode step for `batch` sequences of mean length `context` (array-friendly)."""
    batch = np.asarray(batch, dtype=float)
    bandwidth = tp * g.bandwidth_bytes_s * g.bandwidth_fraction
    flops_s = tp * g.peak_flops * g.compute_fraction
    matmuls = np.maximum(m.weight_bytes() / bandwidth, batch * 2.0 * m.params / flops_s)
    attention = np.maximum(
        batch * context * m.kv_bytes_per_token() / bandwidth,
        batch * 2.0 * m.layers * context * m.hidden / flops_s,
    )
    return matmuls + attention + allreduce_s(m, g, tp, batch)


def tp_choices(m: ServedModel, g: GpuFigures, gpus_per_node: int, usable: float) -> list[int]:
    """Powers of two up to the node's GPU count whose GPUs hold the weights (1 only without a peer link)."""
    out, tp = [], 1
    while tp <= gpus_per_node and (tp == 1 or g.peer is not None):
        if m.weight_bytes() < tp * g.memory_bytes * usable:
            out.append(tp)
        tp *= 2
    return out


def arrivals(wl: InferenceWorkload, d: ServingDefaults) -> Arrivals:
    return Arrivals(
        cv2=wl.traffic.burst_factor,
        prefill_cv2=d.value("prefill_time_cv2"),
        lifetime_variance=d.value("lifetime_occupancy_variance"),
    )


def targets_s(wl: InferenceWorkload) -> dict[float, tuple[float, float]]:
    """Percentile -> (TTFT, TPOT) targets in seconds; a missing one is unbounded."""
    s, inf = wl.service, float("inf")
    out = {}
    for p, ttft, tpot in ((0.95, s.ttft_p95_ms, s.tpot_p95_ms), (0.99, s.ttft_p99_ms, s.tpot_p99_ms)):
        if ttft is not None or tpot is not None:
            out[p] = (ttft / 1e3 if ttft else inf, tpot / 1e3 if tpot else inf)
    return out


def llm_capacity(
    wl: InferenceWorkload, g: GpuFigures, gpus_per_node: int, d: ServingDefaults, targets: bool = True
) -> Capacity:
    """Requests/s of one node at the tensor-parallel size that serves the most.

    `targets=False` ignores the latency targets (maximum throughput, as offline benchmarks measure)."""
    m = planned_model(wl.model, g)
    wl = wl if m is wl.model else wl.model_copy(update={"model": m})
    notes = g.notes
    if g.peer is None and gpus_per_node > 1:
        notes += (
            msg("{gpu}: the catalog knows no peer link (NVLink, Infinity Fabric or PCIe) for it, so tensor "
              "parallelism is not modelled: one GPU per replica").format(gpu=g.key),
        )  # fmt: skip
    choices = tp_choices(m, g, gpus_per_node, d.value("memory_usable_fraction"))
    if not choices:
        weights_gb = m.weight_bytes() / 1e9
        reason = (
            msg(
                "{gb} GB of weights need tensor parallelism, but the catalog knows no peer link for {gpu}"
            ).format(gb=f"{weights_gb:.0f}", gpu=g.key)
            if g.peer is None and m.weight_bytes() < gpus_per_node * g.memory_bytes
            else msg("{gb} GB of weights do not fit in one node").format(gb=f"{weights_gb:.0f}")
        )
        return Capacity(g.key, gpus_per_node, reason=reason, precision=m.precision, notes=notes)
    results = [replica_capacity(wl, g, tp, gpus_per_node, d, targets) for tp in choices]
    best = max(results, key=lambda c: (c.rps_per_node, -c.tp))
    return dataclasses.replace(best, notes=notes)


GRID_POINTS = 4096  # mean batches evaluated per replica: every one up to this, then geometric steps


def batch_grid(max_batch: int) -> np.ndarray:
    """1..max_batch, thinned to GRID_POINTS geometric steps for huge KV caches (0.4% apart for a batch of
    20 million), so the memory and time of an evaluation stay bounded whatever the model's shape."""
    if max_batch <= GRID_POINTS:
        return np.arange(1, max_batch + 1, dtype=float)
    return np.unique(np.round(np.geomspace(1, max_batch, GRID_POINTS)))


def replica_capacity(
    wl: InferenceWorkload,
    g: GpuFigures,
    tp: int,
    gpus_per_node: int,
    d: ServingDefaults,
    targets: bool,
    reserve_whole_sequence: bool = False,
) -> Capacity:
    """Replicas of `tp` GPUs each: the largest load whose latency percentiles meet the targets.

    `reserve_whole_sequence`: the engine admits a request only with KV-cache blocks for its prompt and all
    its output tokens (TensorRT-LLM's GUARANTEED_NO_EVICT scheduler, trtllm-bench's default); otherwise
    blocks are taken as tokens are generated (vLLM's paged attention), so the mean length counts."""
    m = wl.model
    prompt, out = m.prompt_tokens, m.output_tokens
    context = prompt + out / 2.0  # mean length of a sequence while it decodes
    held = prompt + out if reserve_whole_sequence else context
    kv_room = tp * g.memory_bytes * d.value("memory_usable_fraction") - m.weight_bytes()
    max_batch = int(kv_room // (held * m.kv_bytes_per_token()))
    if max_batch < 1:
        return Capacity(g.key, gpus_per_node, tp=tp, reason=msg("no room for one sequence's KV cache"),
                        precision=m.precision)  # fmt: skip
    t_prefill = prefill_s(m, g, tp, prompt)

    def step(batch):
        return decode_step_s(m, g, tp, batch, context)

    n = batch_grid(max_batch)
    t = tails(step, n, t_prefill, out, arrivals(wl, d))
    goals = targets_s(wl) if targets else {}
    top = max(goals, default=0.99)
    fits = t.occupancy[top] <= max_batch if targets else np.ones_like(n, dtype=bool)
    ok = fits.copy()
    for p, (ttft, tpot) in goals.items():
        ok &= (t.ttft[p] <= ttft) & (t.tpot[p] <= tpot)
    if not ok.any():
        return Capacity(g.key, gpus_per_node, tp=tp, max_batch_memory=max_batch,
                        reason=_unreachable(t, goals, fits), precision=m.precision)  # fmt: skip
    i = int(np.flatnonzero(ok)[-1])
    if i + 1 == len(n) or not fits[i + 1]:
        limit = LIMIT_KV_MEMORY
    elif any(t.tpot[p][i + 1] > tpot for p, (_ttft, tpot) in goals.items()):
        limit = LIMIT_TPOT
    else:
        limit = LIMIT_TTFT
    replicas = gpus_per_node // tp
    rps_node = float(t.rps[i]) * replicas
    return Capacity(
        g.key,
        gpus_per_node,
        tp=tp,
        replicas_per_node=replicas,
        batch=int(n[i]),
        max_batch_memory=max_batch,
        ttft_s=float(t.ttft_mean[i]),
        tpot_s=float(t.tpot_mean[i]),
        ttft_p95_s=float(t.ttft[0.95][i]),
        ttft_p99_s=float(t.ttft[0.99][i]),
        tpot_p95_s=float(t.tpot[0.95][i]),
        tpot_p99_s=float(t.tpot[0.99][i]),
        rps_per_node=rps_node,
        planned_rps_per_node=rps_node,
        output_tokens_per_s_per_gpu=rps_node * out / gpus_per_node,
        limit=limit,
        precision=m.precision,
    )


def _unreachable(t, goals: dict[float, tuple[float, float]], fits) -> str:
    """Why not even the lightest load meets the targets."""
    if not fits[0]:
        return msg("no room for the KV cache of the percentile batch")
    for p, (ttft, _tpot) in goals.items():
        if t.ttft[p][0] > ttft:
            return msg("even at the lightest load: p{pct} TTFT {ms} ms > target {target} ms").format(
                pct=f"{p * 100:g}", ms=f"{t.ttft[p][0] * 1e3:.0f}", target=f"{ttft * 1e3:g}"
            )
    p, (_ttft, tpot) = next((p, g) for p, g in goals.items() if t.tpot[p][0] > g[1])
    return msg("even at the lightest load: p{pct} time per token {ms} ms > target {target} ms").format(
        pct=f"{p * 100:g}", ms=f"{t.tpot[p][0] * 1e3:.1f}", target=f"{tpot * 1e3:g}"
    )


def other_capacity(
    wl: InferenceWorkload, spec: GpuSpec, gpus_per_node: int, rps_per_gpu: float | None, d: ServingDefaults
) -> Capacity:
    """A non-LLM model: the given requests/s per GPU, when its memory fits."""
    if rps_per_gpu is None:
        return Capacity(
            spec.key, gpus_per_node, reason=msg("no throughput per GPU (model.throughput_per_gpu)")
        )
    memory = cat.gpu_memory_bytes(spec)
    need = wl.model.memory_gb
    if need is not None and memory is not None and need * 1e9 > memory * d.value("memory_usable_fraction"):
        return Capacity(
            spec.key, gpus_per_node, reason=msg("needs {gb} GB per replica").format(gb=f"{need:g}")
        )
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
