"""Target skypilot: every generated task YAML is loaded by SkyPilot's own parser and round-trips.

SkyPilot pins click<8.2 and the dev tools need click>=8.2, so SkyPilot lives in its own venv
(`make skypilot-venv` -> .venv-skypilot) and this test runs its parser there. SkyPilot checks the instance
type against its catalog: the test writes one (SkyPilot's vms.csv columns) from gpuwise's shipped AWS rows,
which came from skypilot-catalog, into a temporary HOME so nothing is fetched.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from gpuwise.catalog.offers import load_shipped_offers
from tests.launch.kit import EXAMPLES, REPO, gpuwise, write_hostile_job, write_job

SKY_PYTHON = REPO / ".venv-skypilot" / "bin" / "python"
pytestmark = pytest.mark.skipif(
    not SKY_PYTHON.exists(), reason=f"SkyPilot's venv is missing ({SKY_PYTHON}): run `make skypilot-venv`"
)
VMS_COLUMNS = ["InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB", "GpuInfo", "Price",
               "SpotPrice", "Region", "AvailabilityZone", "Arch"]  # fmt: skip


@pytest.fixture(scope="module")
def sky_home(tmp_path_factory):
    home = tmp_path_factory.mktemp("gwla-skyhome")
    vms = home / ".sky" / "catalogs" / "v8" / "aws" / "vms.csv"
    vms.parent.mkdir(parents=True)
    with vms.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(VMS_COLUMNS)
        for o in load_shipped_offers():
            if o.provider == "aws" and o.region:
                w.writerow([o.instance_type, o.accelerator_name, o.accelerator_count, o.vcpus, o.memory_gib, "",
                            o.price or "", o.spot_price or "", o.region, f"{o.region}a", "x86_64"])  # fmt: skip
    return home


@pytest.fixture(scope="module")
def tasks(tmp_path_factory):
    """Task YAMLs for the example job (an offer, the plan's choice) and a local-dataset / NFS variant."""
    d = tmp_path_factory.mktemp("gwla-sky")
    plan = d / "plan.json"
    # the AWS-only options file: the whole catalog's cheapest cloud may be one SkyPilot does not launch on
    options = str(EXAMPLES / "plan-options.yaml")
    assert (
        gpuwise(
            "plan", str(EXAMPLES / "llm-13b-finetune.yaml"), "--options", options, "--json", "-o", str(plan)
        ).exit_code
        == 0
    )
    local = d / "ds"
    local.mkdir()
    (local / "shard-0.bin").write_bytes(b"\0" * 1000)
    nfs_job = write_job(
        d / "nfs.yaml", gpus_per_node=1, dataset={"source": "10.1.2.3:/export/x", "mount": "/x"}
    )
    local_job = write_job(d / "local.yaml", gpus_per_node=8, dataset={"source": str(local), "link_gbps": 1})
    marks = d / "marks"  # every string field of this job holds shell metacharacters (kit.hostile)
    hostile_job = write_hostile_job(
        d / "hostile.yaml", marks, "s3://gwla-bucket/x", gpus_per_node=1, exporter_port=9401
    )  # nothing runs here; the asserts name :9401
    Path(yaml.safe_load(hostile_job.read_text())["workdir"]).mkdir(parents=True)
    runs = {
        "offer": [str(EXAMPLES / "job-llm.yaml"), "--offer", "aws:p4d.24xlarge"],
        "plan": [str(EXAMPLES / "job-llm.yaml"), "--plan", str(plan)],
        "nfs": [str(nfs_job), "--offer", "aws:g5.4xlarge"],
        "local": [str(local_job), "--offer", "aws:p5.48xlarge"],
        "hostile": [str(hostile_job), "--offer", "aws:g5.4xlarge"],
    }
    out = {}
    for name, args in runs.items():
        r = gpuwise("launch", *args, "--target", "skypilot", "--out", str(d / name), "--json")
        assert r.exit_code == 0, r.output
        out[name] = d / name / "task.yaml"
    return out


@pytest.fixture(scope="module")
def understood(tasks, sky_home):
    env = dict(os.environ, HOME=str(sky_home))
    p = subprocess.run([str(SKY_PYTHON), str(REPO / "tests" / "launch" / "sky_validate.py"), *map(str, tasks.values())],
                       capture_output=True, text=True, env=env, timeout=300)  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", ["offer", "plan", "nfs", "local", "hostile"])
def test_skypilot_parses_the_task_and_it_round_trips(name, tasks, understood):
    ours = yaml.safe_load(tasks[name].read_text())
    got = understood[str(tasks[name])]
    assert got["loaded"] == got["round_trip"]
    loaded = got["loaded"]
    r = ours["resources"]
    assert loaded["num_nodes"] == ours["num_nodes"]
    assert (loaded["cloud"], loaded["instance_type"]) == (r["cloud"], r["instance_type"])
    want_acc = dict([r["accelerators"].split(":")]) if "accelerators" in r else None
    assert loaded["accelerators"] == ({k: int(v) for k, v in want_acc.items()} if want_acc else None)
    assert loaded["region"] == r.get("region")
    assert loaded["use_spot"] == r.get("use_spot", False)
    assert loaded["setup"] == ours["setup"] and loaded["run"] == ours["run"]
    assert loaded["envs"] == ours.get("envs", {})
    assert sorted(loaded["file_mounts"]) == sorted(ours.get("file_mounts", {}))
    assert "~/gpuwise-wheels" in loaded["file_mounts"]  # the gpuwise wheel, uploaded to every node
    assert (
        "doctor --expect gpus=" in loaded["setup"] and " export --job-labels --listen :9401" in loaded["run"]
    )
    assert "--rdzv-backend c10d" in loaded["run"] and "SKYPILOT_NODE_IPS" in loaded["run"]


def test_the_plan_choice_and_the_dataset_mounts(tasks):
    plan_task = yaml.safe_load(tasks["plan"].read_text())
    assert plan_task["resources"]["cloud"] == "aws" and plan_task["num_nodes"] >= 1
    assert yaml.safe_load(tasks["offer"].read_text())["file_mounts"]["/data"] == {
        "source": "s3://my-bucket/datasets/sft-mix", "mode": "MOUNT"}  # fmt: skip
    assert "sudo mount -t nfs 10.1.2.3:/export/x /x" in yaml.safe_load(tasks["nfs"].read_text())["setup"]
    local = yaml.safe_load(tasks["local"].read_text())
    assert local["file_mounts"]["/data"].endswith("/ds")
