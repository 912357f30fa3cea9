"""Target huawei: the CreateServers request from the official SDK's models, its user data, its credentials.

gpuwise ships no Huawei price (none was found with a public source), so each test names the flavor in
the user's offers file (kit.write_huawei_offers), as a Huawei user does."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.launch import kit

pytest.importorskip("huaweicloudsdkecs.v2.model", reason="the cn-clouds extra is not installed")

from gpuwise.errors import MissingDependencyError, UserInputError  # noqa: E402
from gpuwise.launch.build import LaunchOptions, plan_launch  # noqa: E402
from tests.launch.kit import EXAMPLES, write_job  # noqa: E402

OFFER = "huawei:p2s.16xlarge.8"
CLOUD = [
    "--zone",
    "cn-north-4a",
    "--image-id",
    "img-gwla0001",
    "--vpc",
    "vpc-gwla0001",
    "--subnet",
    "sub-gwla0001",
]
DRY_RUN = [str(EXAMPLES / "job-llm.yaml"), "--offer", OFFER, "--target", "huawei", *CLOUD]


@pytest.fixture(autouse=True)
def _user(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(kit.write_huawei_offers(tmp_path / "config")))
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.huaweicloud/credentials
    for name in (
        "HUAWEICLOUD_SDK_AK",
        "HUAWEICLOUD_SDK_SK",
        "HUAWEICLOUD_SDK_PROJECT_ID",
        "HUAWEICLOUD_SDK_CREDENTIALS_FILE",
    ):
        monkeypatch.delenv(name, raising=False)


def _options(job: Path, **cloud) -> LaunchOptions:
    base = {"zone": "cn-north-4a", "image_id": "img-gwla0001", "vpc": "vpc-gwla0001", "subnet": "sub-gwla0001",
            "gpuwise_wheel": kit.wheel()}  # fmt: skip
    return LaunchOptions(
        job_path=job, target="huawei", offer=OFFER, out=job.parent / "out", cloud={**base, **cloud}
    )


def test_request_serialises_to_the_documented_fields(tmp_path):
    job = write_job(
        tmp_path / "j.yaml", dataset={"source": "sfs.example:/share", "mount": "/mnt/sfs", "size_gb": 10}
    )
    plan = plan_launch(_options(job, security_group="sg-gwla0001"))
    sent = json.loads(plan.files["create-servers.json"])
    server = sent["server"]
    assert sent["dry_run"] is True and server["flavorRef"] == "p2s.16xlarge.8" and server["count"] == 2
    assert (server["vpcid"], server["nics"], server["availability_zone"]) == (
        "vpc-gwla0001", [{"subnet_id": "sub-gwla0001"}], "cn-north-4a")  # fmt: skip
    assert server["security_groups"] == [{"id": "sg-gwla0001"}]
    assert server["extendparam"] == {"chargingMode": "postPaid", "regionID": "cn-north-4"}
    script = base64.b64decode(server["user_data"]).decode()
    assert script == plan.files["user-data.sh"]
    assert "mount -t nfs -o vers=3,timeo=600,noresvport,nolock sfs.example:/share /mnt/sfs" in script
    assert "not sent: no Huawei Cloud credentials" in plan.cloud_check
    # every field written is one of the SDK model's wire names
    from huaweicloudsdkecs.v2 import model

    assert set(server) <= set(model.PrePaidServer.attribute_map.values())
    assert set(server["extendparam"]) <= set(model.PrePaidServerExtendParam.attribute_map.values())


@pytest.mark.parametrize(
    ("missing", "said", "fix"),
    [("zone", "an availability zone", "--zone"), ("vpc", "the VPC", "--vpc"), ("subnet", "a subnet", "--subnet"),
     ("image_id", "GPU driver", "--image-id")],
)  # fmt: skip
def test_what_the_request_needs_is_a_clear_error(tmp_path, missing, said, fix):
    with pytest.raises(UserInputError, match=said) as exc:
        plan_launch(_options(write_job(tmp_path / "j.yaml"), **{missing: None}))
    assert fix in str(exc.value)


def test_user_data_is_bash_and_installs_gpuwise_only_from_the_shipped_wheel(tmp_path):
    url = "https://gwla.obs.cn-north-4.myhuaweicloud.com/w.whl"
    plan = plan_launch(_options(write_job(tmp_path / "j.yaml"), gpuwise_wheel_url=url))
    script = tmp_path / "boot.sh"
    script.write_text(plan.files["user-data.sh"])
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True, timeout=30).returncode == 0
    installs = [line for line in script.read_text().splitlines() if "pip" in line and "install" in line]
    assert installs and all("--no-index" in line for line in installs) and url in script.read_text()


def test_the_dry_run_from_the_cli_and_unsupported_flags(tmp_path):
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    out = tmp_path / "o"
    r = kit.gpuwise("launch", *DRY_RUN, "--out", str(out), env=env, cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert "not sent: no Huawei Cloud credentials" in r.output and (out / "create-servers.json").exists()
    for flag, said in [(["--wait"], "--target huawei does not support --wait:"),
                       (["--hpc-cluster", "x"], "--hpc-cluster is a --target alibaba/tencent/volcengine option")]:  # fmt: skip
        r = kit.gpuwise("launch", *DRY_RUN, *flag, "--out", str(tmp_path / "bad"), env=env, cwd=tmp_path)
        assert r.exit_code == 3 and said in r.output and "To fix:" in r.output, r.output
        assert not (tmp_path / "bad").exists()
    r = kit.gpuwise("launch", "--down", "huawei:cn-north-4/srv-1", cwd=tmp_path)
    assert r.exit_code == 3 and "no Huawei Cloud credentials found; nothing deleted" in r.output


def test_credentials_from_the_environment_send_the_dry_run_and_are_never_shown(tmp_path, monkeypatch):
    secret = "gwlaHWsecretNEVERshown0123456789"
    monkeypatch.setenv("HUAWEICLOUD_SDK_AK", "GWLAHWAKID0001")
    monkeypatch.setenv("HUAWEICLOUD_SDK_SK", secret)
    monkeypatch.setenv("HUAWEICLOUD_SDK_PROJECT_ID", "gwla-project")  # else the SDK asks IAM for it
    from huaweicloudsdkecs.v2 import EcsClient

    sent = []
    monkeypatch.setattr(EcsClient, "create_servers", lambda self, req: sent.append(req.body.dry_run))
    plan = plan_launch(_options(write_job(tmp_path / "j.yaml")))
    assert sent == [True] and "Huawei accepted the dry run" in plan.cloud_check
    from gpuwise.launch.build import write_files

    written = "".join(p.read_text(errors="replace") for p in write_files(plan) if p.suffix != ".whl")
    for shown in (written, json.dumps(plan.to_json(), default=str)):
        assert secret not in shown and "GWLAHWAKID0001" not in shown


def test_an_unreachable_cloud_is_said_and_the_request_still_written(tmp_path, monkeypatch):
    monkeypatch.setenv("HUAWEICLOUD_SDK_AK", "GWLAHWAKID0001")
    monkeypatch.setenv("HUAWEICLOUD_SDK_SK", "gwla-secret")
    from huaweicloudsdkcore.exceptions.exceptions import HostUnreachableException

    def unreachable(self):
        raise HostUnreachableException("no route to iam (a test)")

    from huaweicloudsdkcore.client import ClientBuilder

    monkeypatch.setattr(ClientBuilder, "build", unreachable)
    plan = plan_launch(_options(write_job(tmp_path / "j.yaml")))
    assert plan.cloud_check.startswith("not sent: cannot reach Huawei Cloud for cn-north-4") and plan.files


def test_without_the_sdk_the_error_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "huaweicloudsdkecs.v2", None)
    with pytest.raises(MissingDependencyError) as exc:
        plan_launch(_options(write_job(tmp_path / "j.yaml")))
    assert "huaweicloudsdkecs" in exc.value.message and "gpuwise[cn-clouds]" in exc.value.fix
