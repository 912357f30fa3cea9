"""A mixed fleet (recorded CPU VM nodes and a recorded H200 node): nodes are judged within their group of
GPU model and instance type, and no exclusion names a whole group."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from gpuwise.fleet.analyze import analyze_fleet
from gpuwise.fleet.model import NodeGroup, Outlier
from gpuwise.fleet.straggler import verdict
from gpuwise.report.views.fleet import fleet_view
from tests.conftest import CAPTURES

CPU, H200 = "cpu-vm-kvm-docker", "h200-1gpu-kvm-vm"


def _node(root: Path, name: str, base: str, matmul_factor: float = 1.0) -> None:
    shutil.copytree(CAPTURES / base, root / name / "capture")
    bench = json.loads((CAPTURES / f"{base}.bench-quick.json").read_text())
    for m in bench["results"]:
        if m["name"] == "matmul_bf16" and m["value"] is not None:
            m["value"] *= matmul_factor
    (root / name / "bench.json").write_text(json.dumps(bench))


def _mixed(root: Path, slow_cpu: bool) -> Path:
    for i in (1, 2, 3):
        _node(root, f"cpu{i}", CPU, 0.4 if slow_cpu and i == 3 else 1.0)
    _node(root, "h200a", H200)
    return root


def test_mixed_fleet_is_grouped_by_gpu_model_and_no_group_is_excluded(tmp_path):
    r = analyze_fleet(_mixed(tmp_path, slow_cpu=True), run_rules=False)
    groups = {g.gpu: g for g in r.groups}
    assert sorted(groups) == ["NVIDIA H200", "no GPU"]
    assert groups["no GPU"].nodes == ["cpu1", "cpu2", "cpu3"] and groups["no GPU"].judged
    assert groups["NVIDIA H200"].nodes == ["h200a"] and not groups["NVIDIA H200"].judged
    # the CPU nodes are not compared with the H200: no GPU-count or GPU-model drift, no H200 outlier
    assert r.drift == []
    assert {o.node for o in r.outliers} == {"cpu3"}
    (slow,) = [o for o in r.outliers if o.metric == "matmul_bf16"]
    assert slow.node_group == "no GPU / unknown" and slow.peers == 2
    assert r.straggler.exclude == ["cpu3"]
    assert r.straggler.sbatch_line == "#SBATCH --exclude=cpu3"
    assert all(d.node_group for d in r.distributions)
    text = "\n".join(str(b) for b in fleet_view(r).blocks)
    assert "mixed fleet: 2 groups (no GPU / unknown: 3; NVIDIA H200 / unknown: 1" in text


def test_alike_mixed_fleet_keeps_every_node(tmp_path):
    r = analyze_fleet(_mixed(tmp_path, slow_cpu=False), run_rules=False)
    assert r.drift == [] and r.outliers == [] and r.straggler.exclude == []


def test_an_exclusion_never_names_a_whole_group():
    groups = [NodeGroup(name="A", gpu="A", instance_type="x", nodes=["a1", "a2"]),
              NodeGroup(name="B", gpu="B", instance_type="x", nodes=["b1", "b2", "b3"])]  # fmt: skip
    outliers = [
        Outlier(
            metric="link_rx_best_pair",
            scope="link",
            node=n,
            value=1.0,
            unit="GB/s",
            median=10.0,
            deviation_pct=-90.0,
            method="robust z",
            peers=5,
        )  # fmt: skip
        for n in ("a1", "a2", "b2")
    ]
    s = verdict({}, [], outliers, groups)
    assert s.exclude == ["b2"] and s.kept_groups == ["A"]
    assert s.sbatch_line == "#SBATCH --exclude=b2"
