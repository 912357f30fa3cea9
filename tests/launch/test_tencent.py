"""Target tencent: the RunInstances request from the SDK's own models, and its user data run for real."""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.launch import kit

pytest.importorskip("tencentcloud.cvm.v20170312.models", reason="the tencent extra is not installed")

from gpuwise.errors import UserInputError  # noqa: E402
from gpuwise.launch import tencent  # noqa: E402
from gpuwise.launch.build import LaunchOptions, plan_launch  # noqa: E402
from tests.launch.kit import write_job  # noqa: E402


def _options(job: Path, **cloud) -> LaunchOptions:
    base = {"zone": "ap-guangzhou-6", "image_id": "img-gwla0001", "gpuwise_wheel": kit.wheel()}
    return LaunchOptions(job_path=job, target="tencent", offer=cloud.pop("offer", "tencent:GT4.41XLARGE948"),
                         out=job.parent / "out", cloud={**base, **cloud})  # fmt: skip


def test_request_serialises_to_the_documented_fields(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("TENCENTCLOUD_SECRET_ID", "TENCENTCLOUD_SECRET_KEY"):
        monkeypatch.delenv(name, raising=False)
    job = write_job(tmp_path / "j.yaml", dataset={"source": "10.0.0.9:/", "mount": "/mnt/cfs", "size_gb": 10})
    plan = plan_launch(_options(job))
    sent = json.loads(plan.files["run-instances.json"])
    assert sent["InstanceType"] == "GT4.41XLARGE948"
    assert sent["Placement"] == {"Zone": "ap-guangzhou-6"}
    assert sent["DryRun"] is True and sent["InstanceCount"] == 2 and sent["ImageId"] == "img-gwla0001"
    assert "HpcClusterId" not in sent  # not an RDMA family
    script = base64.b64decode(sent["UserData"]).decode()
    assert script == plan.files["user-data.sh"]
    assert "mount -t nfs -o vers=4.0,noresvport 10.0.0.9:/ /mnt/cfs" in script
    assert "doctor --expect gpus=8" in script and "export --job-labels --listen :9401" in script
    assert "not sent: no Tencent Cloud credentials" in plan.cloud_check
    # the SDK parses its own serialisation back into the same request
    from tencentcloud.cvm.v20170312 import models

    again = models.RunInstancesRequest()
    again.from_json_string(plan.files["run-instances.json"])
    assert (again.InstanceType, again.Placement.Zone, again.DryRun) == (
        "GT4.41XLARGE948",
        "ap-guangzhou-6",
        True,
    )


def test_rdma_family_needs_an_hpc_cluster(tmp_path):
    job = write_job(tmp_path / "j.yaml")
    with pytest.raises(UserInputError, match="(?s)HCC .*RDMA.*--hpc-cluster"):
        plan_launch(_options(job, offer="tencent:HCCPNV4h"))
    plan = plan_launch(_options(job, offer="tencent:HCCPNV4h", hpc_cluster="hpc-gwla01"))
    assert json.loads(plan.files["run-instances.json"])["HpcClusterId"] == "hpc-gwla01"


def test_zone_and_image_are_required_with_the_fix(tmp_path):
    job = write_job(tmp_path / "j.yaml")
    with pytest.raises(UserInputError, match="availability zone") as exc:
        plan_launch(_options(job, zone=None))
    assert "--zone" in str(exc.value)
    with pytest.raises(UserInputError, match="CVM image"):
        plan_launch(_options(job, image_id=None))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_user_data_runs_the_preflight_and_starts_the_exporter(tmp_path):
    """The decoded user data in a plain shell: the real doctor and exporter (the NFS mount skipped)."""
    port = _free_port()
    job = write_job(tmp_path / "j.yaml", gpus_per_node=1, exporter_port=port,
                    dataset={"source": "10.0.0.9:/", "mount": str(tmp_path / "cfs"), "size_gb": 1})  # fmt: skip
    options = _options(job, offer="tencent:GN7.2XLARGE32")
    plan = plan_launch(options)
    # this machine has no GPU: the same request for a node that should have none, so the preflight can pass here
    plan.job = plan.job.model_copy(update={"gpus_per_node": 0})
    request = json.loads(tencent.request(plan, False, options.cloud, dry_run=True).to_json_string())
    script = tmp_path / "boot.sh"
    script.write_bytes(base64.b64decode(request["UserData"]))
    node_out = tmp_path / "node"
    env = dict(os.environ, GPUWISE_LAUNCH_OUT=str(node_out), PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}",
               GPUWISE_LAUNCH_SKIP_MOUNT="no CFS file system in a test: root and a VPC are needed")  # fmt: skip
    p = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env, timeout=120)
    try:
        assert p.returncode == 0, p.stdout + p.stderr
        assert "dataset mount skipped (mount -t nfs -o vers=4.0,noresvport 10.0.0.9:/" in p.stdout
        node = socket.gethostname()
        report = json.loads((node_out / "preflight" / f"{node}.json").read_text())
        assert report["schema"] == "gpuwise-report/1"
        assert any(f["id"] == "expect.gpus" and f["status"] == "pass" for f in report["findings"])
        assert f"exporter on {node} answered on :{port}" in p.stdout
        assert "gpuwise_exporter_read_ok" in (node_out / "monitoring" / f"{node}.prom").read_text()
        assert not (node_out / "preflight-failed").exists()
    finally:
        pid_file = node_out / "exporter.pid"
        if pid_file.exists():
            os.kill(int(pid_file.read_text()), signal.SIGTERM)  # the exporter the boot script left running


def test_user_data_marks_a_failed_preflight(tmp_path):
    job = write_job(tmp_path / "j.yaml", gpus_per_node=8, exporter_port=_free_port())
    plan = plan_launch(_options(job))
    script = tmp_path / "boot.sh"
    script.write_text(plan.files["user-data.sh"])
    node_out = tmp_path / "node"
    env = dict(
        os.environ,
        GPUWISE_LAUNCH_OUT=str(node_out),
        PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    )
    p = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 1
    assert "is not fit to train (doctor exit 2)" in p.stderr
    assert (node_out / "preflight-failed").exists() and not (node_out / "exporter.pid").exists()
