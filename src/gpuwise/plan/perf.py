"""Vectorised performance model: step time, scaling efficiency and time-to-train per option × node count.

All inputs per option are numpy arrays of shape (O,), node counts shape (K,); every output has shape
(O, K). Formulas (REFERENCE.md §4.c/§4.e):

* compute per step  = FLOPs/sample · global batch / (GPUs · peak · MFU)
* DP gradient sync  = hierarchical all-reduce: reduce-scatter + all-gather over NVLink inside a node,
  all-reduce of the node's shards over the node's NICs between nodes (α-β), once per optimizer step,
  in buckets (each bucket pays the latency terms); ZeRO-3/FSDP moves 1.5× the bytes. Gradients are
  reduced in their own dtype (`reduce_bytes`): fp32 under DDP + autocast, whatever the compute precision
* overlap           = DDP's bucket schedule (overlap.py): only the last micro-batch's backward can hide
  the sync; buckets become ready in reverse layer order and are reduced one after another
* runtime           = DDP buckets; Horovod fuses tensors into its fusion buffer and the last ones wait up
  to one cycle plus a negotiation per tensor (multi-node only); FSDP/ZeRO-3 all-gather + reduce-scatter
* stragglers        = synchronous steps wait for the slowest of N nodes: E[max] ≈ cv·sqrt(2 ln N); a
  small sourced default cv (plan_defaults.yaml `stragglers`), or the measured step-time spread
  (plan --calibrate FLEET_DIR)
* data loading      = overlapped by prefetch: step = max(GPU time, read time)
* memory fit        = weights, gradients, optimizer states per ZeRO stage, activations (Korthikanti 2022)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

from gpuwise.i18n import N_, msg
from gpuwise.plan.overlap import DDP_FIRST_BUCKET_BYTES, exposed_after_backward

# Reasons an (option, node count) is infeasible: bit flags, explained by `reasons()`.
NO_PEAK, TP_TOO_WIDE, NOT_DIVISIBLE, BATCH_TOO_SMALL, NO_FIT, DP_MISMATCH, NO_NETWORK = 1, 2, 4, 8, 16, 32, 64
SINGLE_NODE, NO_SPOT_CLUSTER, SPOT_THRASH = 128, 256, 512
REASON_TEXT = {
    NO_PEAK: N_("no peak FLOPS known for this GPU at this precision"),
    TP_TOO_WIDE: N_("tensor parallel degree exceeds GPUs per node (cross-node TP is not modelled)"),
    NOT_DIVISIBLE: N_("GPU count is not a multiple of tp·pp"),
    BATCH_TOO_SMALL: N_("global batch is smaller than data-parallel degree × micro batch"),
    NO_FIT: N_("does not fit in GPU memory"),
    DP_MISMATCH: N_("dp fixed in the workload does not match this GPU count"),
    NO_NETWORK: N_("no inter-node network bandwidth known for this option"),
    SINGLE_NODE: N_("single node only: the provider documents no multi-node fabric for this offer"),
    NO_SPOT_CLUSTER: N_("the provider sells no spot capacity for several nodes at once"),
    SPOT_THRASH: N_(
        "spot interruptions would cost half the run or more (interruptions × lost work per interruption)"
    ),
}

REASON_SHORT = {
    NO_PEAK: N_("no peak"),
    TP_TOO_WIDE: N_("tp > node"),
    NOT_DIVISIBLE: N_("tp·pp ∤ GPUs"),
    BATCH_TOO_SMALL: N_("batch < dp"),
    NO_FIT: N_("no memory fit"),
    DP_MISMATCH: N_("dp fixed"),
    NO_NETWORK: N_("no network"),
    SINGLE_NODE: N_("single node"),
    NO_SPOT_CLUSTER: N_("no spot cluster"),
    SPOT_THRASH: N_("spot thrash"),
}


@dataclass(frozen=True)
class WorkloadNumbers:
    """Scalars the model needs, derived once from a Workload (see from_workload)."""

    flops_per_sample: float
    total_samples: float
    global_batch: float
    micro_batch: float
    params: float
    weight_bytes: float
    grad_bytes: float  # bytes per gradient value held in memory
    optimizer_bytes: float
    zero_stage: int
    tp: int
    pp: int
    fixed_dp: int  # 0 = auto
    bucket_bytes: float
    layers: float  # 0 = unknown (no transformer activations / TP comm)
    hidden: float
    heads: float
    seq_len: float
    activation_checkpointing: bool
    flash_attention: bool
    activation_bytes_per_sample: float  # non-transformers; 0 = unknown
    bytes_per_sample: float
    recompute_factor: float
    random_reads: bool
    avg_read_bytes: float
    reduce_bytes: float = 4.0  # bytes per gradient value as all-reduced (fp32 under DDP + autocast)
    first_bucket_bytes: float = DDP_FIRST_BUCKET_BYTES
    sync_wait_s: float = 0.0  # Horovod: exposed coordination per multi-node step (cycle + negotiation)
    flat_ring: bool = False  # NCCL < 2.4 (rings only): one ring over every GPU, not node shards

    @classmethod
    def from_workload(cls, wl, recompute_factor: float = 4.0 / 3.0, d=None) -> WorkloadNumbers:
        from gpuwise.plan.workload import GRAD_BYTES, OPTIMIZER_BYTES, reduce_bytes

        tr, m = wl.training, wl.model
        mixed = tr.precision not in ("fp32", "tf32")
        opt = (
            OPTIMIZER_BYTES[tr.optimizer] if mixed else OPTIMIZER_BYTES[tr.optimizer] - 4
        )  # no separate fp32 master
        par = tr.parallelism
        bucket, first, wait = tr.bucket_mb * 2**20, DDP_FIRST_BUCKET_BYTES, 0.0  # DDP: bucket_cap_mb MiB
        if tr.runtime == "horovod" and d is not None:
            tensors = tr.grad_tensors or 12 * (m.layers or 16)
            bucket = first = d.value("runtimes.horovod.fusion_mb") * 2**20
            wait = horovod_wait_s(d, tensors)
        zero = 3 if tr.runtime == "fsdp" else par.effective_zero
        return cls(
            flops_per_sample=m.train_flops_per_sample(),
            total_samples=wl.total_samples(),
            global_batch=float(tr.global_batch),
            micro_batch=float(tr.micro_batch),
            params=m.param_count(),
            weight_bytes=2.0 if mixed else 4.0,
            grad_bytes=float(GRAD_BYTES[tr.precision]),
            optimizer_bytes=float(opt),
            zero_stage=zero,
            tp=par.tp,
            pp=par.pp,
            fixed_dp=0 if par.dp == "auto" else int(par.dp),
            bucket_bytes=bucket,
            first_bucket_bytes=first,
            sync_wait_s=wait,
            layers=float(m.layers or 0),
            hidden=float(m.hidden or 0),
            heads=float(m.heads or 0),
            seq_len=float(m.seq_len or 0),
            activation_checkpointing=tr.activation_checkpointing,
            flash_attention=tr.flash_attention,
            activation_bytes_per_sample=float(m.activation_bytes_per_sample or 0),
            bytes_per_sample=wl.bytes_per_sample(),
            recompute_factor=recompute_factor,
            random_reads=wl.data.read_pattern == "random",
            avg_read_bytes=wl.data.avg_read_kb * 1024.0,
            reduce_bytes=float(reduce_bytes(tr)),
        )


def horovod_wait_s(d, tensors: float) -> float:
    """Horovod's exposed coordination per step across nodes: the last fused tensors wait for the next
    cycle (HOROVOD_CYCLE_TIME) and rank 0 negotiates every tensor (plan_defaults.yaml `runtimes.horovod`)."""
    return (
        d.value("runtimes.horovod.cycle_ms") * 1e-3
        + tensors * d.value("runtimes.horovod.per_tensor_us") * 1e-6
    )


@dataclass(frozen=True)
class NodeNumbers:
    """What the perf model needs about one option's node type: scalars, built by options.node_numbers."""

    gpus_per_node: int
    peak_flops: float  # FLOP/s per GPU at the workload's precision; NaN = unknown
    mfu: float
    gpu_memory_bytes: float  # NaN = unknown (memory not checked)
    intra_bytes_s: float  # achieved all-reduce bus bandwidth inside a node, bytes/s
    intra_latency_s: float
    inter_bytes_s: float  # achieved per-node network bandwidth, bytes/s; 0 = unknown
    inter_latency_s: float
    compute_cv: float
    network_cv: float
    storage_bytes_s: float  # per node (or aggregate when shared)
    storage_iops: float
    storage_shared: bool
    time_overhead: float  # a fixed share of extra wall time (e.g. set by an options file), fraction
    usable_memory_fraction: float
    inter_bytes_s_low: float = 0.0  # the ends of the network's achieved-bandwidth range; 0 = inter_bytes_s
    inter_bytes_s_high: float = 0.0
    max_nodes: float = math.inf  # 1 = the offer has no multi-node fabric
    # spot: interruptions per node-hour (any node's interruption stops a synchronous job), the hours of
    # work each one costs (half a checkpoint interval + restart), and the nodes the provider sells at once
    interruptions_per_node_hour: float = 0.0
    interruption_cost_h: float = 0.0
    spot_max_nodes: float = math.inf
    compute_cv_low_end: float = -1.0  # the cv at the pessimistic end of the range; < 0 = compute_cv
    compute_cv_high_end: float = 0.0  # the cv at the optimistic end (0 unless measured)
    sync_wait_factor: float = 1.0  # share of the workload's runtime coordination wait paid (high end: 0)


@dataclass
class OptionArrays:
    """NodeNumbers of every option stacked: the same fields, each an array of shape (O,)."""

    gpus_per_node: np.ndarray
    peak_flops: np.ndarray
    mfu: np.ndarray
    gpu_memory_bytes: np.ndarray
    intra_bytes_s: np.ndarray
    intra_latency_s: np.ndarray
    inter_bytes_s: np.ndarray
    inter_latency_s: np.ndarray
    compute_cv: np.ndarray
    network_cv: np.ndarray
    storage_bytes_s: np.ndarray
    storage_iops: np.ndarray
    storage_shared: np.ndarray  # 1.0 = shared
    time_overhead: np.ndarray
    usable_memory_fraction: np.ndarray
    inter_bytes_s_low: np.ndarray
    inter_bytes_s_high: np.ndarray
    max_nodes: np.ndarray
    interruptions_per_node_hour: np.ndarray
    interruption_cost_h: np.ndarray
    spot_max_nodes: np.ndarray
    compute_cv_low_end: np.ndarray
    compute_cv_high_end: np.ndarray
    sync_wait_factor: np.ndarray

    @classmethod
    def stack(cls, rows: list[NodeNumbers]) -> OptionArrays:
        return cls(
            **{f.name: np.asarray([getattr(r, f.name) for r in rows], dtype=float) for f in fields(cls)}
        )

    def with_network_end(self, end: str) -> OptionArrays:
        """The same options at the "low" or "high" end of each one's range: inter_bytes_s at that end of
        the network's range, the straggler cv at its pessimistic value (low) or 0 unless measured (high),
        and at the high end no runtime coordination wait (tuned Horovod)."""
        other = getattr(self, f"inter_bytes_s_{end}")
        chosen = np.where(other > 0, other, self.inter_bytes_s)
        if end == "low":
            cv = np.where(self.compute_cv_low_end >= 0, self.compute_cv_low_end, self.compute_cv)
        else:
            cv = np.minimum(self.compute_cv_high_end, self.compute_cv)
        return OptionArrays(
            **{
                **{f.name: getattr(self, f.name) for f in fields(self)},
                "inter_bytes_s": chosen,
                "compute_cv": cv,
                "sync_wait_factor": self.sync_wait_factor * (0.0 if end == "high" else 1.0),
            }
        )

    def as_column(self) -> OptionArrays:
        """The same arrays shaped (O, 1), to broadcast against node counts (1, K)."""
        return OptionArrays(**{f.name: getattr(self, f.name)[:, None] for f in fields(self)})


@dataclass
class PerfResult:
    nodes: np.ndarray  # (K,)
    step_s: np.ndarray  # (O, K)
    compute_s: np.ndarray
    comm_s: np.ndarray
    exposed_comm_s: np.ndarray
    straggler_s: np.ndarray
    data_s: np.ndarray
    efficiency: np.ndarray  # throughput per GPU relative to one node of the same option
    time_to_train_s: np.ndarray
    memory_per_gpu_bytes: np.ndarray
    infeasible: np.ndarray  # int bit flags, 0 = feasible
    interruption_loss: np.ndarray  # (O, K) share of wall time lost to spot interruptions (0: not spot)

    def short_reasons(self, o: int, k: int) -> list[str]:
        flags = int(self.infeasible[o, k])
        return [msg(text) for bit, text in REASON_SHORT.items() if flags & bit]

    def reasons(self, o: int, k: int) -> list[str]:
        flags = int(self.infeasible[o, k])
        return [msg(text) for bit, text in REASON_TEXT.items() if flags & bit]


def memory_per_gpu(w: WorkloadNumbers, dp: np.ndarray) -> np.ndarray:
    """Bytes per GPU: model states per ZeRO stage (ZeRO paper) + activations (Korthikanti et al. 2022)."""
    psi = w.params / (w.tp * w.pp)
    wb, gb, ob = w.weight_bytes, w.grad_bytes, w.optimizer_bytes
    dp = np.maximum(dp, 1.0)
    states = {
        0: (wb + gb + ob) * psi + 0 * dp,
        1: (wb + gb) * psi + ob * psi / dp,
        2: wb * psi + (gb + ob) * psi / dp,
        3: (wb + gb + ob) * psi / dp,
    }[w.zero_stage]
    if w.layers and w.hidden and w.seq_len:
        s, b, h, a, t = w.seq_len, w.micro_batch, w.hidden, max(w.heads, 1.0), w.tp
        # FlashAttention never stores the s×s score matrix: drop Korthikanti's 5·a·s/h term.
        scores = 0.0 if w.flash_attention else 5.0 * a * s / (h * t)
        per_layer = s * b * h * (10.0 + 24.0 / t + scores)
        layers_here = w.layers / w.pp
        in_flight = float(w.pp)  # 1F1B: the first stage holds pp micro-batches of activations
        if w.activation_checkpointing:
            acts = (
                2.0 * s * b * h * layers_here * in_flight + per_layer
            )  # layer inputs + one layer recomputed
        else:
            acts = per_layer * layers_here * in_flight
    else:
        acts = w.activation_bytes_per_sample * w.micro_batch
    return states + acts


def evaluate(w: WorkloadNumbers, o: OptionArrays, nodes) -> PerfResult:
    """Evaluate every option at every node count. Pure numpy; no Python loop over options."""
    n = np.asarray(nodes, dtype=float)[None, :]  # (1, K)
    col = o.as_column()  # (O, 1)
    g = col.gpus_per_node
    gpus = n * g
    model_par = w.tp * w.pp
    dp = gpus / model_par
    infeasible = np.zeros(np.broadcast(n, g).shape, dtype=np.int64)
    infeasible |= np.where(np.isnan(col.peak_flops) | (col.peak_flops <= 0), NO_PEAK, 0)
    infeasible |= np.where((w.tp > g) | (np.mod(g, w.tp) != 0), TP_TOO_WIDE, 0)
    infeasible |= np.where(np.mod(gpus, model_par) != 0, NOT_DIVISIBLE, 0)
    infeasible |= np.where(dp * w.micro_batch > w.global_batch, BATCH_TOO_SMALL, 0)
    if w.fixed_dp:
        infeasible |= np.where(dp != w.fixed_dp, DP_MISMATCH, 0)

    accum = np.maximum(np.ceil(w.global_batch / np.maximum(dp * w.micro_batch, 1.0)), 1.0)
    peak = np.where(np.isnan(col.peak_flops), 1.0, col.peak_flops)
    # MFU counts model FLOPs (6·N·D); activation checkpointing re-runs the forward on top of that.
    recompute = w.recompute_factor if w.activation_checkpointing else 1.0
    compute = recompute * w.flops_per_sample * w.global_batch / (gpus * peak * col.mfu)
    bubble = compute * (w.pp - 1) / accum  # 1F1B pipeline bubble fraction (pp-1)/m

    # Tensor parallel: Megatron does 2 all-reduces forward + 2 backward of b·s·h activations per layer.
    tp_comm = 0.0
    if w.tp > 1 and w.layers and w.hidden:
        act_bytes = w.micro_batch * w.seq_len * w.hidden * w.weight_bytes
        per_ar = (
            2.0 * (w.tp - 1) / w.tp * act_bytes / col.intra_bytes_s + 2.0 * (w.tp - 1) * col.intra_latency_s
        )
        tp_comm = 4.0 * (w.layers / w.pp) * accum * per_ar

    # Data-parallel gradient sync, hierarchical. k = DP ranks of one group inside a node, m = nodes in it.
    grad_rank = w.params * w.reduce_bytes / model_par
    m = np.maximum(n / w.pp, 1.0)
    k = np.maximum(dp / m, 1.0)
    groups_per_node = g / k
    first = min(w.first_bucket_bytes, grad_rank)
    buckets = 1.0 + np.ceil(max(grad_rank - first, 0.0) / w.bucket_bytes)
    inter_bw = np.where(col.inter_bytes_s > 0, col.inter_bytes_s, np.nan)
    steps_lat = np.minimum(2.0 * (m - 1), 2.0 * np.ceil(np.log2(m)))  # ring vs NCCL double binary tree
    single = n > col.max_nodes
    infeasible |= np.where(single, SINGLE_NODE, 0)
    infeasible |= np.where((m > 1) & np.isnan(inter_bw) & ~single, NO_NETWORK, 0)
    infeasible |= np.where(n > col.spot_max_nodes, NO_SPOT_CLUSTER, 0)
    inter_bw = np.where(np.isnan(inter_bw), 1.0, inter_bw)
    # Bytes each node's NICs carry per gradient byte. A ring over all m·k ranks enters and leaves every
    # node once per ring, so the node sends 2(N-1)/N of the gradient, N = all ranks (NCCL before 2.4 had
    # rings only); the shard all-reduce of a hierarchical/tree schedule sends 2(m-1)/m.
    inter_factor = 2.0 * (m * k - 1) / (m * k) if w.flat_ring else 2.0 * (m - 1) / m
    zero_factor = 1.5 if w.zero_stage == 3 else 1.0  # all-gather fwd + all-gather bwd + reduce-scatter
    # Seconds per gradient byte and per bucket, intra-node (NVLink) plus inter-node (NICs).
    per_byte = zero_factor * (
        2.0 * (k - 1) / k / col.intra_bytes_s
        + np.where(m > 1, groups_per_node * inter_factor / inter_bw, 0.0)
    )
    per_bucket = zero_factor * (
        2.0 * (k - 1) * col.intra_latency_s + np.where(m > 1, steps_lat * col.inter_latency_s, 0.0)
    )
    comm = per_byte * grad_rank + per_bucket * buckets
    # Only the last micro-batch's backward can hide the sync (earlier ones run under no_sync()); with
    # activation checkpointing the backward also re-runs the forward: 3 of 4 units instead of 2 of 3.
    backward = (1.0 - 1.0 / (3.0 * recompute)) * compute / accum
    exposed = exposed_after_backward(grad_rank, first, w.bucket_bytes, per_byte, per_bucket, backward)
    exposed = exposed + np.where(
        m > 1, w.sync_wait_s * col.sync_wait_factor, 0.0
    )  # Horovod coordination across nodes

    spread = np.sqrt(2.0 * np.log(np.maximum(n, 1.0)))  # E[max of N normals] ≈ mean + σ·sqrt(2 ln N)
    straggler = spread * (col.compute_cv * (compute + bubble + tp_comm) + col.network_cv * comm)

    read_bytes = w.global_batch * w.bytes_per_sample
    per_node_bw = col.storage_bytes_s
    if w.random_reads:
        per_node_bw = np.minimum(per_node_bw, col.storage_iops * w.avg_read_bytes)
    data = np.where(col.storage_shared > 0, read_bytes / per_node_bw, read_bytes / (n * per_node_bw))

    gpu_time = compute + bubble + tp_comm + exposed + straggler
    step = np.maximum(gpu_time, data)
    # Spot: interruptions arrive at n·λ per hour of the job and each loses c hours (renewal: T = T0 / (1 − n·λ·c)).
    loss = n * col.interruptions_per_node_hour * col.interruption_cost_h + 0 * step
    infeasible |= np.where(loss >= 0.5, SPOT_THRASH, 0)
    ttt = w.total_samples / w.global_batch * step * (1.0 + col.time_overhead) / (1.0 - np.minimum(loss, 0.5))

    mem = memory_per_gpu(w, dp)
    limit = col.gpu_memory_bytes * col.usable_memory_fraction
    infeasible |= np.where(~np.isnan(limit) & (mem > limit), NO_FIT, 0)

    one = step if np.all(n == 1) else evaluate(w, o, [1.0]).step_s  # reference: one node of the same option
    efficiency = one / (n * step)
    return PerfResult(
        nodes=n[0],
        step_s=step,
        compute_s=compute + bubble + tp_comm,
        comm_s=comm,
        exposed_comm_s=exposed,
        straggler_s=straggler,
        data_s=data + 0 * step,
        efficiency=efficiency,
        time_to_train_s=ttt,
        memory_per_gpu_bytes=mem + 0 * step,
        infeasible=infeasible,
        interruption_loss=loss,
    )
