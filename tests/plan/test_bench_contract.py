"""Contract: `plan --calibrate` reads the collective results exactly as `gpuwise bench` writes them.

The measurements are built by bench's own code (collective.measurements), serialised as a BenchReport
and read back by load_calibration, so a renamed result or param on either side fails here.
"""

from __future__ import annotations

import json

import pytest

from gpuwise.bench import collective
from gpuwise.bench.collective_rank import RankInfo
from gpuwise.bench.peaks import Peak
from gpuwise.documents.bench import BenchReport
from gpuwise.plan.calibrate import load_calibration


def _rows(busbw_gb_s: float, latency_us: float = 20.0) -> list[dict]:
    # As collective_rank._row writes them: time = latency + S·2(n−1)/n / busbw at n = 8 ranks.
    return [
        {
            "op": "all_reduce",
            "bytes": size,
            "time_us": latency_us + size * 1.75 / (busbw_gb_s * 1e9) * 1e6,
            "busbw_gb_s": busbw_gb_s,
            "algbw_gb_s": busbw_gb_s / 1.75,
            "busbw_samples_gb_s": [busbw_gb_s] * 3,
            "slowest_rank": 0,
            "per_rank_time_us": [1.0] * 8,
        }
        for size in (1 << 20, 1 << 24, 1 << 28, 1 << 30)
    ]


def _report(tmp_path, backend: str, local_world_size: int) -> str:
    info = RankInfo(
        rank=0, world_size=8, local_rank=0, local_world_size=local_world_size, launcher="torchrun"
    )
    results = collective.measurements(_rows(360.0), info, backend, "8 x cuda")
    report = BenchReport(
        environment={"gpus": ["NVIDIA H100 80GB HBM3"], "catalog_gpu": "H100-SXM"}, results=results
    )
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(report.to_json_dict()))
    return str(path)


@pytest.fixture
def no_cuda_peak(monkeypatch):
    # The NCCL peak lookup asks torch.cuda for the device; the calibration does not use the peak.
    monkeypatch.setattr(collective, "collective_peak", lambda backend, nodes: (Peak(None, "test"), False))


def test_single_node_nccl_allreduce_calibrates_intra_node(tmp_path, no_cuda_peak):
    cal = load_calibration(_report(tmp_path, "nccl", 8), "bf16")
    assert cal.intra_busbw_gb_s == pytest.approx(360.0)
    assert any(u.startswith("allreduce_busbw") for u in cal.used)


def test_gloo_allreduce_on_a_gpu_machine_is_not_nvlink(tmp_path, no_cuda_peak):
    cal = load_calibration(_report(tmp_path, "gloo", 8), "bf16")
    assert cal.intra_busbw_gb_s is None
    assert any("allreduce_busbw: backend gloo" in i for i in cal.ignored)


def test_multi_node_allreduce_calibrates_the_network_not_nvlink(tmp_path, no_cuda_peak):
    cal = load_calibration(_report(tmp_path, "nccl", 4), "bf16")  # 8 ranks, 4 per node: 2 nodes
    assert cal.intra_busbw_gb_s is None
    fit = cal.network
    assert fit is not None and (fit.nodes, fit.ranks_per_node) == (2, 4)
    assert fit.latency_s == pytest.approx(20e-6, rel=1e-3)
    assert 1 / fit.seconds_per_byte == pytest.approx(360e9 / 1.75, rel=1e-3)
    assert fit.transport is None  # nccl may run over IB or sockets: the bench result does not say
    assert any("inter-node bandwidth" in u for u in cal.used)
