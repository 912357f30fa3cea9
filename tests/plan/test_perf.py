"""The performance model against hand-computed formulas (REFERENCE.md §4.c/§4.e) and basic physics."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuwise.plan.overlap import DDP_FIRST_BUCKET_BYTES, bucket_sizes, exposed_after_backward, simulate
from gpuwise.plan.perf import (
    BATCH_TOO_SMALL,
    NO_FIT,
    NO_NETWORK,
    NO_PEAK,
    TP_TOO_WIDE,
    NodeNumbers,
    OptionArrays,
    WorkloadNumbers,
    evaluate,
    memory_per_gpu,
)

PSI = 1e9  # 1B parameters keeps the arithmetic readable


def workload(**kw) -> WorkloadNumbers:
    base = dict(
        flops_per_sample=6 * PSI * 1000,
        total_samples=1e6,
        global_batch=512.0,
        micro_batch=4.0,
        params=PSI,
        weight_bytes=2.0,
        grad_bytes=2.0,
        reduce_bytes=2.0,
        optimizer_bytes=12.0,
        zero_stage=0,
        tp=1,
        pp=1,
        fixed_dp=0,
        bucket_bytes=25e6,
        layers=0.0,
        hidden=0.0,
        heads=0.0,
        seq_len=0.0,
        activation_checkpointing=False,
        flash_attention=True,
        activation_bytes_per_sample=0.0,
        bytes_per_sample=0.0,
        recompute_factor=4 / 3,
        random_reads=False,
        avg_read_bytes=131072.0,
    )
    base.update(kw)
    return WorkloadNumbers(**base)


def option(**kw) -> NodeNumbers:
    base = dict(
        gpus_per_node=8,
        peak_flops=1e15,
        mfu=0.5,
        gpu_memory_bytes=80 * 2**30,
        intra_bytes_s=200e9,
        intra_latency_s=0.0,
        inter_bytes_s=10e9,
        inter_latency_s=0.0,
        compute_cv=0.0,
        network_cv=0.0,
        storage_bytes_s=1e12,
        storage_iops=1e9,
        storage_shared=False,
        time_overhead=0.0,
        usable_memory_fraction=0.9,
    )
    base.update(kw)
    return NodeNumbers(**base)


def run(w, *opts, nodes=(1, 2, 4)):
    return evaluate(w, OptionArrays.stack(list(opts)), nodes)


def test_compute_time_is_flops_over_gpus_peak_mfu():
    r = run(workload(), option())
    expected = 6 * PSI * 1000 * 512 / (8 * 1e15 * 0.5)  # one node
    assert r.compute_s[0, 0] == pytest.approx(expected)
    assert r.compute_s[0, 2] == pytest.approx(expected / 4)
    ttt = 1e6 / 512 * r.step_s[0, 0]
    assert r.time_to_train_s[0, 0] == pytest.approx(ttt)


def test_hierarchical_allreduce_alpha_beta():
    alpha_nv, alpha_net = 3e-6, 20e-6
    w = workload()
    r = run(w, option(intra_latency_s=alpha_nv, inter_latency_s=alpha_net), nodes=(4,))
    s = PSI * 2.0
    buckets = 1 + np.ceil((s - 2**20) / 25e6)  # DDP's 1 MiB first bucket, then 25e6-byte buckets
    intra = 2 * 7 / 8 * s / 200e9 + buckets * 2 * 7 * alpha_nv
    inter = (
        8 * 2 * 3 / 4 * s / 8 / 10e9 * 1 + buckets * min(2 * 3, 2 * 2) * alpha_net
    )  # 8 rails share the NICs
    assert r.comm_s[0, 0] == pytest.approx(intra + inter)
    # The bucket schedule hides part of it behind the last micro-batch's backward, never all.
    assert 0 < r.exposed_comm_s[0, 0] < r.comm_s[0, 0]


def _buckets(w):
    """DDP's bucket sizes for this workload's gradients, and how many there are."""
    g = w.params * w.reduce_bytes
    first, full, partial = bucket_sizes(g, w.first_bucket_bytes, w.bucket_bytes)
    count = 1 + full + (1 if partial else 0)
    sizes = [first] + [w.bucket_bytes] * full + ([partial] if partial else [])
    return sizes, count


def test_exposed_comm_follows_the_ddp_bucket_schedule():
    w = workload()
    o = option(inter_latency_s=10e-6)
    r = run(w, o, nodes=(2,))
    compute, accum = r.compute_s[0, 0], 512 / (16 * 4)
    backward = 2 / 3 * compute / accum  # only the last micro-batch's backward can hide the sync
    sizes, count = _buckets(w)
    per_bucket = 2 * 10e-6  # 2 nodes: min(2(m-1), 2·ceil(log2 m)) = 2 steps of the inter-node latency
    per_byte = (r.comm_s[0, 0] - per_bucket * count) / sum(sizes)
    assert r.exposed_comm_s[0, 0] == pytest.approx(simulate(sizes, per_byte, per_bucket, backward), rel=1e-9)


@settings(max_examples=200, deadline=None)
@given(
    grad=st.floats(1e5, 1e11),
    bucket=st.floats(1e5, 1e9),
    per_byte=st.floats(1e-13, 1e-8),
    per_bucket=st.floats(0, 1e-3),
    backward=st.floats(0, 100.0),
)
def test_closed_form_schedule_equals_bucket_by_bucket_simulation(
    grad, bucket, per_byte, per_bucket, backward
):
    first, full, partial = bucket_sizes(grad, DDP_FIRST_BUCKET_BYTES, bucket)
    if full > 200_000:
        return  # the simulation would loop too long; the closed form has no such limit
    sizes = [first] + [bucket] * full + ([partial] if partial else [])
    got = float(exposed_after_backward(grad, DDP_FIRST_BUCKET_BYTES, bucket, per_byte, per_bucket, backward))
    want = simulate(sizes, per_byte, per_bucket, backward)
    assert got == pytest.approx(want, rel=1e-6, abs=1e-12)


def test_fp32_gradient_reduce_doubles_the_bytes_of_bf16():
    a = run(workload(reduce_bytes=2.0), option(), nodes=(2,)).comm_s[0, 0]
    b = run(workload(reduce_bytes=4.0), option(), nodes=(2,)).comm_s[0, 0]
    assert b == pytest.approx(2 * a, rel=0.01)  # the latency terms differ by the bucket count only


def test_zero3_moves_one_and_a_half_times_the_bytes():
    a = run(workload(zero_stage=2), option(), nodes=(2,)).comm_s[0, 0]
    b = run(workload(zero_stage=3), option(), nodes=(2,)).comm_s[0, 0]
    assert b == pytest.approx(1.5 * a)


def test_memory_per_zero_stage_matches_paper():
    dp = np.array([64.0])
    for stage, per_param in ((0, 16.0), (1, 4 + 12 / 64), (2, 2 + 14 / 64), (3, 16 / 64)):
        assert memory_per_gpu(workload(zero_stage=stage), dp)[0] == pytest.approx(per_param * PSI)


def test_transformer_activations_korthikanti():
    w = workload(
        layers=2.0, hidden=1024.0, heads=16.0, seq_len=2048.0, micro_batch=1.0, flash_attention=False
    )
    states = 16 * PSI
    per_layer = 2048 * 1 * 1024 * (34 + 5 * 16 * 2048 / 1024)
    assert memory_per_gpu(w, np.array([1.0]))[0] == pytest.approx(states + 2 * per_layer)
    ckpt = dataclasses.replace(w, activation_checkpointing=True)
    assert memory_per_gpu(ckpt, np.array([1.0]))[0] == pytest.approx(states + 2 * 2 * 2048 * 1024 + per_layer)


def test_infeasible_flags():
    big = workload(params=100 * PSI)
    r = run(big, option(), nodes=(1,))
    assert r.infeasible[0, 0] & NO_FIT and "does not fit in GPU memory" in r.reasons(0, 0)
    r = run(workload(tp=16), option(), nodes=(1,))
    assert r.infeasible[0, 0] & TP_TOO_WIDE
    r = run(workload(global_batch=8.0, micro_batch=4.0), option(), nodes=(1,))
    assert r.infeasible[0, 0] & BATCH_TOO_SMALL
    r = run(workload(), option(peak_flops=np.nan, inter_bytes_s=0.0), nodes=(1, 2))
    assert r.infeasible[0, 0] == NO_PEAK and r.infeasible[0, 1] == NO_PEAK | NO_NETWORK


def test_data_loading_bound_step():
    w = workload(bytes_per_sample=1e6)  # 512 MB per step
    r = run(w, option(storage_bytes_s=1e8), nodes=(1, 4))
    assert r.data_s[0, 0] == pytest.approx(5.12) and r.step_s[0, 0] == pytest.approx(5.12)
    assert r.data_s[0, 1] == pytest.approx(5.12 / 4)  # per-node storage scales with nodes
    shared = run(w, option(storage_bytes_s=1e8, storage_shared=True), nodes=(4,))
    assert shared.data_s[0, 0] == pytest.approx(5.12)


def test_stragglers_grow_with_nodes():
    r = run(workload(), option(compute_cv=0.02, network_cv=0.1), nodes=(1, 2, 16, 256))
    s = r.straggler_s[0]
    assert s[0] == 0 and s[1] < s[2] < s[3] * 2  # sqrt(2 ln N) growth
    assert s[2] == pytest.approx(np.sqrt(2 * np.log(16)) * (0.02 * r.compute_s[0, 2] + 0.1 * r.comm_s[0, 2]))


@settings(max_examples=40, deadline=None)
@given(bw=st.floats(1e8, 1e12), factor=st.floats(1.01, 100.0), lat=st.floats(0, 1e-3))
def test_more_bandwidth_never_slows_a_step(bw, factor, lat):
    w = workload()
    r = run(
        w,
        option(inter_bytes_s=bw, inter_latency_s=lat),
        option(inter_bytes_s=bw * factor, inter_latency_s=lat),
        nodes=(1, 2, 8, 32),
    )
    assert np.all(r.step_s[1] <= r.step_s[0] + 1e-12)
    assert np.all(r.efficiency <= 1.0 + 1e-9) and np.all(r.efficiency > 0)


def test_last_bucket_is_never_hidden():
    # 2 GB of gradients: a 1 MiB first bucket, then one bucket of the rest; it is reduced after backward.
    r = run(workload(bucket_bytes=4e9, global_batch=64.0), option(inter_bytes_s=1e12), nodes=(2,))
    assert r.exposed_comm_s[0, 0] >= r.comm_s[0, 0] * (2e9 - 2**20) / 2e9 - 1e-12
    # Two full-size buckets: at least the last one (about half) is exposed.
    r = run(workload(bucket_bytes=1e9, global_batch=64.0), option(inter_bytes_s=1e12), nodes=(2,))
    assert r.exposed_comm_s[0, 0] >= r.comm_s[0, 0] * (1e9 - 2**20) / 2e9 - 1e-12


def test_network_range_brackets_the_typical_efficiency():
    o = option(inter_bytes_s=10e9, inter_bytes_s_low=5e9, inter_bytes_s_high=12e9)
    arrays = OptionArrays.stack([o])
    mid = evaluate(workload(), arrays, (1, 4, 16)).efficiency
    low = evaluate(workload(), arrays.with_network_end("low"), (1, 4, 16)).efficiency
    high = evaluate(workload(), arrays.with_network_end("high"), (1, 4, 16)).efficiency
    assert np.all(low <= mid + 1e-12) and np.all(mid <= high + 1e-12) and low[0, 2] < high[0, 2]


def test_flat_ring_sends_the_whole_ring_share_out_of_each_node():
    # NCCL before 2.4 (rings only, no hierarchical all-reduce): a ring over all 16 GPUs of 2 nodes sends
    # 2·15/16 of the gradient out of each node, against 2·1/2 for the node-shard all-reduce
    o = option(intra_bytes_s=1e30, intra_latency_s=0.0, inter_latency_s=0.0)
    tree = run(workload(), o, nodes=(2,)).comm_s[0, 0]
    flat = run(workload(flat_ring=True), o, nodes=(2,)).comm_s[0, 0]
    assert flat == pytest.approx(tree * (2 * 15 / 16) / (2 * 1 / 2), rel=1e-6)
