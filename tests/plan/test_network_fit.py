"""α–β fit of a measured multi-node all-reduce, and the calibration it gives the perf model."""

from __future__ import annotations

import math

import pytest

from gpuwise.errors import UserInputError
from gpuwise.plan.calibrate import load_calibration
from gpuwise.plan.network_fit import fit_alpha_beta, fit_measurement, spread_cv
from gpuwise.plan.perf import NodeNumbers, OptionArrays, WorkloadNumbers, evaluate
from tests.conftest import real_files

AWS_P5 = real_files("nccl_tests", "awsome-distributed-training*")
SINGLE_NODE = real_files("nccl_tests", "superbench_nccl_allreduce.log")


def _table(a_s: float, b_s_per_byte: float, sizes=None) -> list[dict]:
    sizes = sizes or [2**k for k in range(10, 31, 2)]
    return [{"bytes": s, "time_us": (a_s + b_s_per_byte * s) * 1e6, "busbw_gb_s": 1.0} for s in sizes]


def test_fit_recovers_latency_and_bandwidth():
    a, b = fit_alpha_beta(_table(30e-6, 1 / 20e9))
    assert a == pytest.approx(30e-6, rel=1e-6) and b == pytest.approx(1 / 20e9, rel=1e-6)


def test_fit_refuses_too_few_or_flat_tables():
    assert fit_alpha_beta(_table(30e-6, 1 / 20e9, sizes=[1024, 2048, 4096])) is None
    assert fit_alpha_beta([{"bytes": 2**k, "time_us": 50.0} for k in range(10, 20)]) is None
    fit, why = fit_measurement(_table(30e-6, 1e-9), nodes=1, ranks=8, transport=None, source="x")
    assert fit is None and "one node" in why
    fit, why = fit_measurement(_table(30e-6, 1e-9), nodes=2, ranks=3, transport=None, source="x")
    assert fit is None and "ranks per node" in why


def _allreduce_as_workload(size_bytes: float) -> WorkloadNumbers:
    """A 'workload' whose gradient sync is one all-reduce of size_bytes in one bucket."""
    return WorkloadNumbers(
        flops_per_sample=1.0, total_samples=1.0, global_batch=1024.0, micro_batch=1.0, params=size_bytes,
        weight_bytes=1.0, grad_bytes=1.0, reduce_bytes=1.0, optimizer_bytes=0.0, zero_stage=0, tp=1, pp=1,
        fixed_dp=0, bucket_bytes=size_bytes, first_bucket_bytes=size_bytes, layers=0.0, hidden=0.0,
        heads=0.0, seq_len=0.0, activation_checkpointing=False, flash_attention=True,
        activation_bytes_per_sample=0.0, bytes_per_sample=0.0, recompute_factor=1.0, random_reads=False,
        avg_read_bytes=1.0,
    )  # fmt: skip


@pytest.mark.parametrize(("nodes", "per_node"), [(2, 8), (4, 8), (4, 1), (16, 4)])
def test_calibrated_model_reproduces_the_measured_all_reduce(nodes, per_node):
    a, b = 40e-6, 1 / 30e9
    fit, _ = fit_measurement(_table(a, b), nodes, nodes * per_node, "rdma", "test")
    intra_bw, intra_lat = 200e9, 2e-6
    inter_bw, inter_lat = fit.inter_for(intra_bw, intra_lat)
    size = 256 * 2**20
    option = NodeNumbers(
        gpus_per_node=per_node, peak_flops=1e30, mfu=1.0, gpu_memory_bytes=math.nan, intra_bytes_s=intra_bw,
        intra_latency_s=intra_lat, inter_bytes_s=inter_bw, inter_latency_s=inter_lat, compute_cv=0.0,
        network_cv=0.0, storage_bytes_s=1e30, storage_iops=1e30, storage_shared=False, time_overhead=0.0,
        usable_memory_fraction=1.0,
    )  # fmt: skip
    r = evaluate(_allreduce_as_workload(size), OptionArrays.stack([option]), [nodes])
    assert r.comm_s[0, 0] == pytest.approx(a + b * size, rel=1e-6)


def test_spread_cv():
    assert spread_cv([10.0, 10.0, 10.0]) == 0.0
    assert spread_cv([9.0, 11.0]) == pytest.approx(0.1)
    assert spread_cv([5.0]) is None


@pytest.mark.skipif(not AWS_P5, reason="real fixtures not present")
def test_real_multi_node_nccl_tests_log_calibrates_the_network(tmp_path):
    # The real AWS p5 (H100, EFA) table; its source leaves out the '# Using devices' preamble, so the test
    # adds one (2 hosts x 8 ranks) plus an NCCL_DEBUG line naming the network, as a full log has them.
    rows = AWS_P5[0].read_text()
    preamble = "".join(
        f"#  Rank {r:2d} Group  0 Pid {100 + r} on p5-{r // 8} device {r % 8} [0x00] NVIDIA H100 80GB HBM3\n"
        for r in range(16)
    )
    log = tmp_path / "all_reduce_perf.log"
    log.write_text(preamble + "p5-0:1:1 [0] NCCL INFO NET/IB : Using [0]rdmap0s1:1/RoCE\n" + rows)
    cal = load_calibration(log, "bf16")
    assert cal.gpu_name == "NVIDIA H100 80GB HBM3"
    fit = cal.network
    assert fit is not None and (fit.nodes, fit.ranks_per_node, fit.transport) == (2, 8, "rdma")
    assert fit.busbw_plateau_gb_s == pytest.approx(480.43)  # median of the three largest sizes
    assert 10e-6 < fit.latency_s < 30e-6  # 8-byte all-reduce took 12.9 us
    # A line is 10-40% off NCCL's curve in the middle sizes, so the model takes the rate at the bucket
    # size: 32 MiB took 198.6 us, and the bytes term there is that minus the fitted latency.
    assert fit.seconds_per_byte_at(33554432) == pytest.approx((198.6e-6 - fit.latency_s) / 33554432)
    between = fit.seconds_per_byte_at(25 * 2**20) * 25 * 2**20 + fit.latency_s
    assert 124.0e-6 < between < 198.6e-6  # 25 MiB lies between the measured 16 and 32 MiB
    # beyond the table: the marginal rate of the two largest sizes (8 and 16 GiB)
    assert fit.seconds_per_byte_at(2**40) == pytest.approx((62239 - 31289) * 1e-6 / 8589934592)


@pytest.mark.skipif(not AWS_P5, reason="real fixtures not present")
def test_log_without_host_lines_says_the_node_count_is_unknown():
    cal = load_calibration(AWS_P5[0], "bf16")
    assert cal.network is None
    assert any("node count" in i and "unknown" in i for i in cal.ignored)


@pytest.mark.skipif(not SINGLE_NODE, reason="real fixtures not present")
def test_single_node_log_does_not_calibrate_the_network():
    cal = load_calibration(SINGLE_NODE[0], "bf16")
    assert cal.network is None and cal.gpu_name and "A100" in cal.gpu_name


def test_garbage_file_is_a_user_error(tmp_path):
    bad = tmp_path / "x.log"
    bad.write_text("hello\nthis is not a benchmark\n")
    with pytest.raises(UserInputError, match="To fix|neither"):
        load_calibration(bad, "bf16")
