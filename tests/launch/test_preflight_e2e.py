"""The preflight proves the allocation before training, on the real 3-node Slurm test cluster (conftest
slurm_cluster): a node that fails the cross-node check is excluded and the job resubmitted on the others;
then a real Prometheus scrapes the resubmitted job's exporters and sees its job and rank labels.

The failing node: gwfl2 cannot reach the allocation check's port on its peers: a `tc` u32 filter on its
eth0 redirects what it sends to TCP port 29500 into a veth that leads nowhere (this kernel has no drop
action, act_gact; mirred is there). Slurm's own traffic, on other ports, still flows, so Slurm runs its
steps there (a blocking route would cut srun's step I/O too). A 2-node job is placed on the
lowest free nodes, gwfl1 + gwfl2: gwfl2 cannot reach the head's TCP store, the head sees it never check in,
the verdict pins the failure on gwfl2, and the job is resubmitted with --exclude=gwfl2 (on gwfl1 + gwfl3).
The job does not expect GPUs (the cluster's nodes have none), so doctor passes on every node.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
import yaml

pytestmark = [pytest.mark.root, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(check, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.5)
    raise AssertionError(f"{what}: not within {timeout_s:g} s")


def _json(path: Path):
    """The file's JSON, or None while it is absent or still being written."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _query(base: str, promql: str) -> list:
    url = f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return json.loads(r.read())["data"]["result"]
    except OSError:
        return []


def test_a_node_that_fails_the_allocation_check_is_excluded_and_the_job_resubmitted(slurm_cluster, tmp_path):
    cluster = slurm_cluster
    head, bad, spare = cluster.names[:3]
    release = tmp_path / "scraped"
    job = tmp_path / "job.yaml"
    job.write_text(
        "name: proven\ncommand: torchrun tests/launch/hold_until_released.py\nnodes: 2\ngpus_per_node: 0\n"
        f"procs_per_node: 1\nhours: 0.1\nenv:\n  OMP_NUM_THREADS: '1'\n  GW_RELEASE: '{release}'\n"
    )
    out = tmp_path / "gwpf-run"
    env = dict(cluster.env, PATH=f"{BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    in_bad = ("ip", "netns", "exec", cluster.ns(bad))
    block = [
        (*in_bad, "ip", "link", "add", "gwbh0", "type", "veth", "peer", "name", "gwbh1"),
        (*in_bad, "ip", "link", "set", "gwbh0", "up"),
        (*in_bad, "ip", "link", "set", "gwbh1", "up"),
        (*in_bad, "tc", "qdisc", "add", "dev", "eth0", "clsact"),
        (*in_bad, "tc", "filter", "add", "dev", "eth0", "egress", "protocol", "ip", "u32",
         "match", "ip", "dport", "29500", "0xffff", "action", "mirred", "egress", "redirect", "dev", "gwbh0"),
    ]  # fmt: skip
    prom = launch = None
    try:
        for cmd in block:
            subprocess.run(cmd, check=True, timeout=30)
        launch = subprocess.Popen(
            [str(BIN / "gpuwise"), "launch", str(job), "--target", "slurm", "--yes", "--wait", "--wait-timeout", "500",
             "--out", str(out), "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO,
        )  # fmt: skip
        # the resubmitted job writes the exporters' targets (the first one stopped before its exporters)
        targets_file = out / "monitoring" / "targets.json"
        _wait_for(lambda: _json(targets_file) or launch.poll() is not None, 480, "targets.json")
        assert launch.poll() is None, launch.communicate()[1]
        targets = _json(targets_file)
        assert [t["targets"] for t in targets] == [[f"{head}:9401"], [f"{spare}:9401"]]
        # a real Prometheus scrapes them with the labels launch wrote (node names resolve only inside the
        # namespaces, so this file_sd names their addresses)
        if shutil.which("prometheus"):
            sd = tmp_path / "sd.json"
            sd.write_text(json.dumps([
                {"targets": [cluster.ips[t["targets"][0].split(":")[0]] + ":9401"], "labels": t["labels"]} for t in targets
            ]))  # fmt: skip
            config = {"global": {"scrape_interval": "1s"},
                      "scrape_configs": [{"job_name": "gpuwise-proven", "honor_labels": True,
                                          "file_sd_configs": [{"files": [str(sd)], "refresh_interval": "1s"}]}]}  # fmt: skip
            (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
            port = _free_port()
            prom = subprocess.Popen(
                ["prometheus", f"--config.file={tmp_path / 'prometheus.yml'}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                 f"--web.listen-address=127.0.0.1:{port}"],
                stdout=subprocess.DEVNULL, stderr=(tmp_path / "prometheus.log").open("w"),
            )  # fmt: skip
            final = targets[0]["labels"]["hpc_job"]
            series = _wait_for(
                lambda: (r := _query(f"http://127.0.0.1:{port}", f'gpuwise_exporter_reads_total{{hpc_job="{final}"}}'))
                and len(r) == 2 and r,
                120, "two scraped exporters with the job's labels",
            )  # fmt: skip
            labels = sorted(
                (s["metric"]["rank"], s["metric"]["node_rank"], s["metric"]["instance"]) for s in series
            )
            assert labels == [
                ("0", "0", f"{cluster.ips[head]}:9401"),
                ("1", "1", f"{cluster.ips[spare]}:9401"),
            ]
            assert {s["metric"]["hpc_job_name"] for s in series} == {"gw-proven"}
        release.touch()
        stdout, stderr = launch.communicate(timeout=300)
    finally:
        release.touch()
        subprocess.run([*in_bad, "tc", "qdisc", "del", "dev", "eth0", "clsact"], timeout=30)
        subprocess.run([*in_bad, "ip", "link", "del", "gwbh0"], timeout=30)
        for p in (prom, launch):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait(timeout=30)
    logs = "".join(f.read_text() for f in sorted(out.glob("slurm-*.out")))
    assert launch.returncode == 0, stderr + logs
    doc = json.loads(stdout)["submitted"]
    first, final = doc["job_id"], doc["final_job_id"]
    assert doc["resubmitted"] == [final] and doc["exit_code"] == 0
    # the report says which node failed which check, and the job ran on the others
    verdicts = {v["job"]: v for v in doc["preflight"]}
    assert verdicts[first]["exclude"] == [bad]
    assert {(f["node"], f["check"]) for f in verdicts[first]["failed"]} == {(bad, "reach")}
    assert verdicts[final]["failed"] == [] and verdicts[final]["exclude"] == []
    first_log = (out / f"slurm-{first}.out").read_text()
    assert f"{bad} failed reach" in first_log and f"resubmitted as job {final} without {bad}" in first_log
    assert "rank " not in first_log  # nothing trained on the failed allocation
    final_log = (out / f"slurm-{final}.out").read_text()
    assert "gpuwise preflight: all 2 nodes passed" in final_log
    ranks = sorted(
        line.split(" on ")[1].split(":")[0] for line in final_log.splitlines() if line.startswith("rank ")
    )
    assert ranks == [head, spare], final_log
    assert "training exit code 0" in final_log
    show = cluster.slurm("scontrol", "show", "job", final)
    assert f"ExcNodeList={bad}" in show, show
    links = json.loads((out / "preflight" / "links.json").read_text())
    assert sorted(links["hosts"]) == [head, spare] and links["pairs"]
