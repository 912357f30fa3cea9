"""`gpuwise launch --target slurm --yes` on a real 2-node Slurm whose nodes declare a GPU GRES
(tests/fleet/slurm_cluster.py with gpus=2: gres.conf names stand-in device files; see there what this
Slurm accepts).

The job asks for its GPUs (--gres=gpu:N or --gpus-per-node=N), Slurm grants them (scontrol show job), and
every node's steps see them (CUDA_VISIBLE_DEVICES / SLURM_JOB_GPUS, printed by the job's setup). The
stand-ins are not GPUs, so the preflight (doctor --expect gpus=2) finds none and, as it must, ends the
job before training.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fleet.slurm_cluster import SlurmCluster, available

pytestmark = [pytest.mark.root, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def gres_cluster():
    reason = available()
    if reason:
        pytest.skip(reason)
    cluster = SlurmCluster(nodes=2, gpus=2, name="gwsl")
    try:
        cluster.up()
        yield cluster
    finally:
        cluster.down()


@pytest.mark.parametrize("form", ["gres", "gpus-per-node"])
def test_a_two_node_job_is_granted_the_gpus_it_asks_for(gres_cluster, tmp_path, form):
    job = tmp_path / "job.yaml"
    job.write_text(
        (REPO / "examples" / "job-cpu.yaml").read_text().replace("gpus_per_node: 0", "gpus_per_node: 2")
        + "setup:\n  - 'echo \"granted on $(hostname): CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-none} "
        "SLURM_JOB_GPUS=${SLURM_JOB_GPUS:-none}\"'\n"
    )
    out = tmp_path / "gw-sl-run"
    env = dict(gres_cluster.env, PATH=f"{BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    p = subprocess.run([str(BIN / "gpuwise"), "launch", str(job), "--target", "slurm", "--gpu-request", form,
                        "--exclusive", "--yes", "--wait", "--wait-timeout", "240", "--out", str(out), "--json"],
                       capture_output=True, text=True, env=env, cwd=REPO, timeout=300)  # fmt: skip
    doc = json.loads(p.stdout)
    job_id = doc["submitted"]["job_id"]
    log = (out / f"slurm-{job_id}.out").read_text()
    header = (out / "job.sbatch").read_text()
    assert ("#SBATCH --gres=gpu:2" if form == "gres" else "#SBATCH --gpus-per-node=2") in header
    assert "#SBATCH --exclusive" in header and "#SBATCH --time=0-00:03:00" in header  # hours: 0.05
    # Slurm granted them: 2 per node on both nodes
    show = gres_cluster.slurm("scontrol", "show", "job", "-d", job_id)
    assert "TresPerNode=gres:gpu:2" in show and "JOB_GRES=gpu:4" in show, show
    assert "NumNodes=2" in show and "NodeList=gwsl[1-2]" in show
    # and every node's step sees its two devices
    for node in ("gwsl1", "gwsl2"):
        assert f"granted on {node}: CUDA_VISIBLE_DEVICES=0,1 SLURM_JOB_GPUS=0,1" in log, log
    # the stand-ins are not GPUs: the preflight stops the job before training (exit 1, reports kept)
    assert p.returncode == 1, p.stderr + log
    assert "preflight failed; job aborted before training" in log and "rank " not in log
    reports = sorted(x.name for x in (out / "preflight").glob("gwsl?.json"))
    assert reports == ["gwsl1.json", "gwsl2.json"]


def test_fleet_run_asks_for_the_gpus_sinfo_lists(gres_cluster, tmp_path):
    """`fleet run --slurm` without --gpus-per-node asks for the GPU GRES the cluster declares (sinfo %G)."""
    env = dict(gres_cluster.env, PATH=f"{BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    p = subprocess.run([str(BIN / "gpuwise"), "fleet", "run", "--slurm", "-N", "2", "--out", str(tmp_path / "f"),
                        "--dry-run"], capture_output=True, text=True, env=env, timeout=120)  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "#SBATCH --gpus-per-node=2" in p.stdout.splitlines()
    p = subprocess.run([str(BIN / "gpuwise"), "fleet", "run", "--slurm", "-N", "2", "--out", str(tmp_path / "f"),
                        "--gpu-request", "gres", "--exclusive", "--dry-run"], capture_output=True, text=True, env=env,
                       timeout=120)  # fmt: skip
    assert {"#SBATCH --gres=gpu:2", "#SBATCH --exclusive"} <= set(p.stdout.splitlines()), p.stdout
