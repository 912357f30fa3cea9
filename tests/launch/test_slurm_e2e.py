"""`gpuwise launch examples/job-cpu.yaml --target slurm --yes` on the real Slurm test cluster.

The cluster (tests/conftest.py slurm_cluster, tests/fleet/slurm_cluster.py) is munged + slurmctld + three
slurmd, each node in its own network namespace; the job goes through the real sbatch/srun, doctor runs
on each node, the exporter serves on each node's own address, and torchrun's gloo traffic crosses the
namespaces.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.root, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
GPUWISE = str(BIN / "gpuwise")


def launch(cluster, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = dict(cluster.env, PATH=f"{BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}")  # torchrun on the nodes
    return subprocess.run([GPUWISE, "launch", *args], capture_output=True, text=True, env=env, cwd=REPO,
                          timeout=timeout)  # fmt: skip


def test_two_node_ddp_runs_with_preflight_and_exporter(slurm_cluster, tmp_path):
    out = tmp_path / "gwla-run"
    p = launch(slurm_cluster, "examples/job-cpu.yaml", "--target", "slurm", "--yes", "--wait",
               "--wait-timeout", "240", "--out", str(out), "--json")  # fmt: skip
    log = next(out.glob("slurm-*.out"), None)
    assert p.returncode == 0, p.stderr + (log.read_text() if log else "")
    doc = json.loads(p.stdout)
    assert doc["schema"] == "gpuwise-launch/1" and doc["dry_run"] is False
    job_id = doc["submitted"]["job_id"]
    assert doc["submitted"]["exit_code"] == 0
    assert doc["creates"][0]["id"] == f"slurm:{job_id}"
    text = (out / f"slurm-{job_id}.out").read_text()
    # training: both ranks, on two different nodes, loss fell and weights in sync
    ranks = sorted(line for line in text.splitlines() if line.startswith("rank "))
    assert len(ranks) == 2, text
    assert {r.split(" on ")[1].split(":")[0] for r in ranks} == {"gwfl1", "gwfl2"}
    assert all("in sync: True" in r and "/2 on " in r for r in ranks)
    # preflight: doctor ran on both nodes, its reports kept
    for node in ("gwfl1", "gwfl2"):
        report = json.loads((out / "preflight" / f"{node}.json").read_text())
        assert report["schema"] == "gpuwise-report/1" and report["hostname"] == node
        assert any(f["id"] == "expect.gpus" and f["status"] == "pass" for f in report["findings"])
        assert f"gpuwise preflight: {node} ok" in text
    # monitoring: each node's exporter answered during the job (a real HTTP scrape, kept), targets for Prometheus
    for node in ("gwfl1", "gwfl2"):
        metrics = (out / "monitoring" / f"{node}.prom").read_text()
        assert "gpuwise_exporter_read_ok" in metrics
        assert f"exporter on {node} answered on :9401" in text
    targets = json.loads((out / "monitoring" / "targets.json").read_text())
    assert [t["targets"] for t in targets] == [["gwfl1:9401"], ["gwfl2:9401"]]
    assert [t["labels"]["node_rank"] for t in targets] == ["0", "1"]
    assert {t["labels"]["hpc_job"] for t in targets} == {job_id}
    assert "training exit code 0" in text
    assert (
        slurm_cluster.slurm("squeue", "-h", "-j", job_id, check=False).strip() == ""
    )  # nothing left running


def test_critical_preflight_aborts_before_training(slurm_cluster, tmp_path):
    job = tmp_path / "job.yaml"
    # the nodes have no NVIDIA driver: expecting one is a critical finding on each of them
    job.write_text((REPO / "examples" / "job-cpu.yaml").read_text() + "expect:\n  driver: '550.54.15'\n")
    out = tmp_path / "gwla-abort"
    p = launch(slurm_cluster, str(job), "--target", "slurm", "--yes", "--wait", "--wait-timeout", "240",
               "--out", str(out))  # fmt: skip
    assert p.returncode == 1, p.stdout + p.stderr
    log = next(out.glob("slurm-*.out")).read_text()
    assert "preflight failed; job aborted before training" in log
    assert "rank " not in log and "training exit code" not in log
    reports = sorted(x.name for x in (out / "preflight").glob("gwfl?.json"))
    assert reports == ["gwfl1.json", "gwfl2.json"]
    # every node failed the same check: a problem of the job, not of a node, so nothing was resubmitted
    assert "every node failed" in log and "resubmitted" not in log
    doc = json.loads((out / "preflight" / "gwfl1.json").read_text())
    assert any(f["id"] == "expect.driver" and f["status"] == "fail" for f in doc["findings"])


def test_down_cancels_a_running_job(slurm_cluster, tmp_path, monkeypatch):
    from gpuwise.slurm.client import job_state

    monkeypatch.setenv("SLURM_CONF", slurm_cluster.env["SLURM_CONF"])  # job_state asks this cluster
    job = tmp_path / "job.yaml"
    job.write_text(
        (REPO / "examples" / "job-cpu.yaml").read_text().replace("--steps 40", "--steps 100000000")
    )
    out = tmp_path / "gwla-down"
    p = launch(slurm_cluster, str(job), "--target", "slurm", "--yes", "--out", str(out), "--json")
    assert p.returncode == 0, p.stderr
    launch_id = json.loads(p.stdout)["submitted"]["id"]
    assert launch_id.startswith("slurm:")
    job_id = launch_id.split(":")[1]
    assert slurm_cluster.slurm("squeue", "-h", "-j", job_id, "-o", "%i").strip() == job_id
    assert job_state(job_id) in ("PENDING", "CONFIGURING", "RUNNING")
    d = launch(slurm_cluster, "--down", launch_id)
    assert d.returncode == 0, d.stderr
    assert f"cancelled Slurm job {job_id}" in d.stdout
    import time

    deadline = time.monotonic() + 30
    while (
        slurm_cluster.slurm("squeue", "-h", "-j", job_id, check=False).strip() and time.monotonic() < deadline
    ):
        time.sleep(0.3)
    assert slurm_cluster.slurm("squeue", "-h", "-j", job_id, check=False).strip() == ""
    assert job_state(job_id) == "CANCELLED"  # slurmctld still holds it (MinJobAge=300)
