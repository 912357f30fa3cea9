"""`gpuwise fleet run --slurm`, `fleet report` and `fleet healthcheck --drain` on a real Slurm cluster.

The cluster (conftest.slurm_cluster) is munged + slurmctld + three slurmd, each node in its own
network namespace on a bridge; jobs go through the real sbatch/srun, and torchrun's gloo traffic
crosses the namespaces.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import CAPTURES

pytestmark = [pytest.mark.root, pytest.mark.slow]
GPUWISE = str(Path(sys.executable).parent / "gpuwise")


def gpuwise(cluster, *args: str, timeout: float = 400) -> subprocess.CompletedProcess:
    return subprocess.run([GPUWISE, *args], capture_output=True, text=True, env=cluster.env, timeout=timeout)


def test_fleet_run_two_nodes_gathers_results_and_a_gloo_allreduce(slurm_cluster, tmp_path):
    out = tmp_path / "gwfl-run2"
    p = gpuwise(
        slurm_cluster, "fleet", "run", "--slurm", "-N", "2", "--time", "10", "--out", str(out),
        "--bench-only", "memory", "--collective-sizes", "64K:1M", "--link-bytes", "1M",
        "--format", "json", "-o", str(out / "report.json"),
    )  # fmt: skip
    assert p.returncode in (0, 1), p.stderr
    nodes = sorted(d.name for d in out.iterdir() if d.is_dir() and not d.name.startswith(("_", ".")))
    assert nodes == ["gwfl1", "gwfl2"]
    for n in nodes:
        assert (out / n / "capture.tar.gz").is_file() and (out / n / "bench.json").is_file()
    report = json.loads((out / "report.json").read_text())
    assert report["schema"] == "gpuwise-fleet/1"
    assert [n["hostname"] for n in report["nodes"]] == ["gwfl1", "gwfl2"]
    assert all(n["capture"] and n["bench"] and not n["problems"] for n in report["nodes"])
    c = report["collective"]
    assert (c["name"], c["backend"], c["world_size"], c["nodes"]) == ("allreduce_busbw", "gloo", 2, 2)
    assert c["busbw_gb_s"] > 0 and len(c["per_rank_time_us"]) == 2
    assert {(p["src"], p["dst"]) for p in c["links"]} == {("gwfl1", "gwfl2"), ("gwfl2", "gwfl1")}
    links = json.loads((out / "links.json").read_text())
    assert links["schema"] == "gpuwise-links/1" and links["repeats"] == 5
    assert all(p["best_gb_s"] == max(p["samples_gb_s"]) > 0 for p in links["pairs"])
    assert any("two nodes" in line for line in report["not_compared"])
    script = (out / "_slurm" / "fleet-job.sh").read_text()
    assert "#SBATCH --nodes=2" in script and "--rdzv-backend c10d" in script


def test_tbf_limited_link_is_named(slurm_cluster, tmp_path):
    out = tmp_path / "gwfl-run3"
    slurm_cluster.limit_link("gwfl3", "20mbit")
    try:
        p = gpuwise(
            slurm_cluster, "fleet", "run", "--slurm", "-N", "3", "--time", "10", "--out", str(out),
            "--bench-only", "none", "--collective-sizes", "64K", "--link-bytes", "1M", "--json",
        )  # fmt: skip
    finally:
        slurm_cluster.unlimit_link("gwfl3")
    assert p.returncode == 1, p.stderr  # 1 = an outlier was found
    report = json.loads(p.stdout)
    links = [o for o in report["outliers"] if o["scope"] == "link"]
    assert [(o["node"], o["metric"]) for o in links] == [("gwfl3", "link_rx_best_pair")]
    assert links[0]["deviation_pct"] < -50
    assert report["straggler"]["exclude"] == ["gwfl3"]
    assert report["straggler"]["sbatch_line"] == "#SBATCH --exclude=gwfl3"


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_healthcheck_drains_the_node_in_slurmctld(slurm_cluster, lang):
    """In any language the drain reason slurmctld keeps is English: every operator reads it (sinfo -R).
    `--timeout 30`, not the default 4 s: a check and drain that take 1.2 s on an idle machine can run out
    of 4 s on a loaded one, and the finding would be the timeout (the deadline has its own tests)."""
    p = slurm_cluster.nsenter(
        "gwfl2", GPUWISE, "--lang", lang, "fleet", "healthcheck", "--expect", "gpus=8", "--drain", "--json",
        "--timeout", "30",
    )  # fmt: skip
    try:
        assert p.returncode == 1, p.stderr
        doc = json.loads(p.stdout)
        assert (doc["node"], doc["healthy"], doc["drained"]) == ("gwfl2", False, True)
        titles = [f["title"] for f in doc["findings"] if f["id"] == "expect.gpus"]
        assert titles == ["expected GPUs 8, found 0"]  # JSON: English under every --lang
        assert doc["seconds"] < 30  # the check and the drain ended within --timeout
        reasons = slurm_cluster.slurm("sinfo", "-R", "-h", "-o", "%n|%E")
        assert "gwfl2|gpuwise: expected GPUs 8, found 0" in reasons
        assert slurm_cluster.state("gwfl2") in ("drained", "draining")
    finally:
        slurm_cluster.resume("gwfl2")


def test_healthcheck_healthy_node_is_left_alone(slurm_cluster):
    capture = CAPTURES / "h200-1gpu-kvm-vm"
    # --timeout 30 (not 4 s): on a loaded machine reading the capture can outlast the default
    args = (
        "fleet",
        "healthcheck",
        "--from",
        str(capture),
        "--expect",
        "gpus=1,pcie_width=16",
        "--timeout",
        "30",
    )
    p = slurm_cluster.nsenter("gwfl1", GPUWISE, *args)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "healthy" in p.stdout
    assert slurm_cluster.state("gwfl1") == "idle"


def test_healthcheck_drain_with_another_nodes_capture_is_refused(slurm_cluster):
    """Issue 28.5: `--from <node07's capture> --drain` drained *this* node. The capture (of host-1) is
    checked on gwfl1 and refused with exit 3, whatever it holds; gwfl1 stays idle."""
    capture = CAPTURES / "h200-1gpu-kvm-vm"
    # --timeout 30: under load the default 4 s (3 s before the drain) ran out while reading the capture,
    # and the refusal could only say the capture's node was unknown
    args = (
        "fleet",
        "healthcheck",
        "--from",
        str(capture),
        "--expect",
        "gpus=8",
        "--drain",
        "--timeout",
        "30",
    )
    p = slurm_cluster.nsenter("gwfl1", GPUWISE, *args)
    assert p.returncode == 3, p.stdout + p.stderr
    assert "the capture is of node host-1, not of this node (gwfl1)" in p.stderr
    assert slurm_cluster.state("gwfl1") == "idle"


def test_slurmd_runs_the_healthcheck_and_it_drains_the_node(slurm_cluster):
    """The slurm.conf line from the README, run by slurmd itself (HealthCheckProgram takes no arguments);
    with --timeout 30, so that on a loaded machine the drain reason is the missing GPUs, not the timeout."""
    slurm_cluster.set_healthcheck(
        f'[ "$(hostname)" = gwfl3 ] || exit 0\n'
        f"exec {GPUWISE} fleet healthcheck --expect gpus=8 --drain --timeout 30 >/dev/null"
    )
    try:
        deadline = time.monotonic() + 60
        while slurm_cluster.state("gwfl3") not in ("drained", "draining") and time.monotonic() < deadline:
            time.sleep(0.5)
        assert slurm_cluster.state("gwfl3") in ("drained", "draining")
        assert "gwfl3|gpuwise: expected GPUs 8, found 0" in slurm_cluster.slurm(
            "sinfo", "-R", "-h", "-o", "%n|%E"
        )
        assert slurm_cluster.state("gwfl1") == "idle"  # the healthy nodes stay in service
    finally:
        # a check slurmd started before the script is replaced may still drain gwfl3 after a resume: wait
        # until the new script has run on gwfl3 and no check with the old one is still running (on a
        # loaded machine one can outlast the next, and drained gwfl3 again after the resume), then resume
        ran = slurm_cluster.dir / "gwfl-healthcheck-reset"
        slurm_cluster.set_healthcheck(f'[ "$(hostname)" = gwfl3 ] && touch {ran}\nexit 0')
        deadline = time.monotonic() + 90
        while (not ran.exists() or slurm_cluster.healthchecks_running()) and time.monotonic() < deadline:
            time.sleep(0.2)
        slurm_cluster.resume("gwfl3")
