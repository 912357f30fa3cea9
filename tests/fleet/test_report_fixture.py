"""`fleet report` on 16 nodes built from real recordings with four described edits (fleet_kit.EDITS)."""

from __future__ import annotations

import json

import pytest

from gpuwise.errors import UserInputError
from gpuwise.fleet.analyze import analyze_fleet
from tests.fleet.fleet_kit import EDITS, build_fleet


@pytest.fixture(scope="module")
def fleet_report(tmp_path_factory):
    from tests.conftest import REAL

    if not REAL.is_dir():
        pytest.skip(f"real fixtures not present at {REAL}")
    return analyze_fleet(build_fleet(tmp_path_factory.mktemp("gwfl-fleet")))


def test_names_exactly_the_edited_nodes(fleet_report):
    assert fleet_report.odd_nodes() == sorted(EDITS)
    assert fleet_report.straggler.exclude == sorted(EDITS)
    assert fleet_report.straggler.sbatch_line == "#SBATCH --exclude=node03,node07,node11,node14"


def test_each_edit_is_named_for_what_it_is(fleet_report):
    drift = {d.key: d for d in fleet_report.drift}
    assert set(drift) == {
        "NVIDIA driver",
        "CUDA (driver)",
        "PCIe link width (GPU 0)",
        "InfiniBand/RoCE ports active",
    }
    assert drift["NVIDIA driver"].majority == "580.159.04"
    assert drift["NVIDIA driver"].odd == {"570.172.08": ["node07"]}
    assert drift["PCIe link width (GPU 0)"].odd == {"8": ["node03"]}
    assert drift["InfiniBand/RoCE ports active"].majority == "4"
    assert drift["InfiniBand/RoCE ports active"].odd == {"3": ["node14"]}
    (slow,) = fleet_report.outliers
    assert (slow.node, slow.metric, slow.method) == ("node11", "matmul_bf16", "robust z")
    assert slow.score <= -3.5 and -25 < slow.deviation_pct < -15


def test_findings_by_reach(fleet_report):
    reach = {g.id: g.nodes for g in fleet_report.reach}
    assert reach["net.rdma_port_down"] == ["node14"]
    assert reach["pcie.width_below_max"] == ["node03"]
    assert reach["driver.torch_cuda_newer_than_driver"] == ["node07"]
    widest = fleet_report.reach[0]
    assert len(widest.nodes) == 16  # fleet-wide findings come first
    counts = [len(g.nodes) for g in fleet_report.reach]
    assert counts == sorted(counts, reverse=True)


def test_straggler_step_time(fleet_report):
    s = fleet_report.straggler
    assert s.step_metric == "train_transformer_bf16"
    # the slow-matmul node runs at ~80% of the median, so every step waits for it
    assert s.step_ms_without < s.step_ms_all
    assert s.step_ms_all / s.step_ms_without == pytest.approx(1 / 0.82, rel=0.06)


def test_json_document_has_schema(fleet_report):
    doc = json.loads(json.dumps(fleet_report.to_json_dict()))
    assert doc["schema"] == "gpuwise-fleet/1"
    assert doc["thresholds"]["robust_z_threshold"]["source"].startswith("NIST")
    assert len(doc["nodes"]) == 16 and all(n["capture"] and n["bench"] for n in doc["nodes"])


def test_an_unedited_fleet_names_nobody(tmp_path, real):
    report = analyze_fleet(build_fleet(tmp_path / "gwfl-clean", count=16, edits=False, tarball=True))
    assert report.odd_nodes() == [] and report.straggler.exclude == []
    assert report.straggler.sbatch_line is None


def test_broken_node_is_listed_not_fatal(tmp_path, real):
    root = build_fleet(tmp_path / "gwfl-broken", count=4, edits=False)
    (root / "node02" / "bench.json").write_text("{not json")
    (root / "node04" / "capture" / "meta.json").write_text("[]")
    (root / ".partial-node05").mkdir()
    (root / "node03" / "bench.json").unlink()
    (root / "node03" / "bench.log").write_text("error: out of memory\nTo fix: use a smaller --sizes\n")
    report = analyze_fleet(root)
    status = {n.node: n for n in report.nodes}
    assert set(status) == {"node01", "node02", "node03", "node04"}
    assert "not a readable JSON bench report" in status["node02"].problems[0]
    assert not status["node04"].capture and status["node04"].problems
    assert status["node03"].problems == ["no bench.json; bench.log ends: To fix: use a smaller --sizes"]


def test_not_a_fleet_directory(tmp_path):
    with pytest.raises(UserInputError, match="To fix"):
        analyze_fleet(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserInputError, match="no node folders"):
        analyze_fleet(tmp_path / "empty")


def test_doctor_json_is_used_when_present(tmp_path, real):
    import subprocess
    import sys

    root = build_fleet(tmp_path / "gwfl-doctor", count=2, edits=False)
    node = root / "node01"
    p = subprocess.run(
        [sys.executable, "-m", "gpuwise.cli", "doctor", "--from", str(node / "capture"), "--format", "json",
         "-o", str(node / "doctor.json")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert p.returncode in (0, 1, 2), p.stderr
    report = analyze_fleet(root)
    status = {n.node: n.findings_from for n in report.nodes}
    assert status == {"node01": "doctor.json", "node02": "rules"}
    assert any(g.nodes == ["node01", "node02"] for g in report.reach)  # the same findings either way
    (node / "doctor.json").write_text('{"schema": "gpuwise-report/1", "findings": [{"id": 1}]}')
    bad = {n.node: n for n in analyze_fleet(root).nodes}["node01"]
    assert bad.findings_from == "rules" and "doctor.json" in bad.problems[0]
