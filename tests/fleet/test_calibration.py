"""`plan --calibrate FLEET_DIR`: the fleet's inter-node all-reduce and per-node spread reach the plan."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from gpuwise.bench import collective
from gpuwise.bench.collective_rank import RankInfo
from gpuwise.bench.peaks import Peak
from gpuwise.cli import app
from gpuwise.documents.bench import BenchReport
from gpuwise.errors import UserInputError
from gpuwise.fleet.calibration import fleet_calibration
from tests.fleet.fleet_kit import build_fleet

WORKLOAD = "examples/llm-7b-pretrain-1t.yaml"


def _collective(root, nodes: int, busbw_gb_s: float = 40.0, latency_us: float = 30.0) -> None:
    """collective.json as rank 0 of `python -m gpuwise.bench.collective` writes it (bench's own code)."""
    world = nodes
    factor = 2 * (world - 1) / world
    rows = [
        {
            "op": "all_reduce",
            "bytes": size,
            "time_us": latency_us + size * factor / (busbw_gb_s * 1e9) * 1e6,
            "busbw_gb_s": busbw_gb_s,
            "algbw_gb_s": busbw_gb_s / factor,
            "busbw_samples_gb_s": [busbw_gb_s] * 3,
            "slowest_rank": 1,
            "per_rank_time_us": [1000.0, 1100.0, 1000.0, 900.0][:world],
        }
        for size in (1 << 16, 1 << 20, 1 << 24, 1 << 26, 1 << 28)
    ]
    info = RankInfo(rank=0, world_size=world, local_rank=0, local_world_size=1, launcher="srun")
    results = collective.measurements(rows, info, "nccl", "cuda")
    report = BenchReport(environment={"gpus": ["NVIDIA H200"], "catalog_gpu": "H200"}, results=results)
    (root / "collective.json").write_text(json.dumps(report.to_json_dict()))


@pytest.fixture
def fleet(tmp_path, monkeypatch):
    monkeypatch.setattr(collective, "collective_peak", lambda backend, nodes: (Peak(None, "test"), False))
    root = build_fleet(tmp_path / "fleet", count=4, edits=False)
    _collective(root, 4)
    return root


def test_fleet_gives_network_fit_and_straggler_spread(fleet):
    cal = fleet_calibration(fleet)
    assert cal.gpu_name and "H200" in cal.gpu_name
    fit = cal.network
    assert fit is not None and (fit.nodes, fit.ranks_per_node) == (4, 1)
    assert fit.latency_s == pytest.approx(30e-6, rel=1e-3)
    assert cal.network_cv == pytest.approx(statistics.pstdev([1000, 1100, 1000, 900]) / 1000)
    steps = [json.loads((fleet / f"node{i:02d}" / "bench.json").read_text())["results"] for i in range(1, 5)]
    step_ms = [next(m for m in r if m["name"] == "train_transformer_bf16")["extra"]["step_ms"] for r in steps]
    between = statistics.pstdev(step_ms) / statistics.fmean(step_ms)
    assert between > 0 and cal.compute_cv >= between  # plus each node's own repeat-to-repeat jitter
    assert any("compute straggler" in u for u in cal.used)


def test_fleet_without_collective_says_so(tmp_path):
    root = build_fleet(tmp_path / "fleet", count=2, edits=False)
    cal = fleet_calibration(root)
    assert cal.network is None
    assert any("collective.json" in i for i in cal.ignored)


def test_not_a_fleet_directory(tmp_path):
    with pytest.raises(UserInputError, match="no node folders"):
        fleet_calibration(tmp_path)


def test_plan_cli_calibrates_from_a_fleet_directory(fleet, tmp_path):
    out = tmp_path / "plan.json"
    opts = tmp_path / "options.yaml"
    opts.write_text("cloud:\n  gpus: [H200]\n")  # the fleet's GPU among the options shown
    res = CliRunner().invoke(
        app,
        [
            "plan",
            WORKLOAD,
            "--calibrate",
            str(fleet),
            "--options",
            str(opts),
            "--sweep",
            "nodes=1,4",
            "--format",
            "json",
            "-o",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    plan = json.loads(out.read_text())
    cal = plan["calibration"]
    assert cal["network"]["nodes"] == 4 and cal["compute_cv"] > 0 and cal["network_cv"] > 0
    h200 = [o for o in plan["options"] if "H200" in (o["gpu"] or "")]
    assert h200 and all(o["network"].startswith("calibrated:") for o in h200)
    others = [o for o in plan["options"] if "H200" not in (o["gpu"] or "")]
    assert all(not o["network"].startswith("calibrated:") for o in others)
    # calibrated networks have no range left; the others show their sourced TCP/RDMA range
    four = [p for o in h200 for p in o["per_nodes"] if p["nodes"] == 4 and p["feasible"]]
    assert all(p["scaling_efficiency_range"][0] == p["scaling_efficiency_range"][1] for p in four)


def test_plan_cli_empty_directory_is_exit_3(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "gpuwise.cli", "plan", WORKLOAD, "--calibrate", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 3, proc.stderr
    assert "no node folders" in proc.stderr and "To fix" in proc.stderr and "Traceback" not in proc.stderr
