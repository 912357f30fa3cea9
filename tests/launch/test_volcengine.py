"""Target volcengine: the RunInstances request from the official SDK's models, its user data, its credentials.

gpuwise ships no Volcano Engine price (none was found with a public source), so each test names the instance
type in the user's offers file (kit.write_huawei_offers writes it too), as a Volcano Engine user does."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.launch import kit

pytest.importorskip("volcenginesdkecs", reason="the cn-clouds extra is not installed")

from gpuwise.errors import MissingDependencyError, UserInputError  # noqa: E402
from gpuwise.launch.build import LaunchOptions, plan_launch  # noqa: E402
from tests.launch.kit import EXAMPLES, write_job  # noqa: E402

OFFER = "volcengine:ecs.gni2.28xlarge"
CLOUD = ["--zone", "cn-beijing-a", "--image-id", "image-gwla0001", "--subnet", "subnet-gwla0001",
         "--security-group", "sg-gwla0001"]  # fmt: skip
DRY_RUN = [str(EXAMPLES / "job-llm.yaml"), "--offer", OFFER, "--target", "volcengine", *CLOUD]


@pytest.fixture(autouse=True)
def _user(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(kit.write_huawei_offers(tmp_path / "config")))
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.volcengine/config.json
    for name in kit.CREDENTIAL_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def _options(job: Path, **cloud) -> LaunchOptions:
    base = {"zone": "cn-beijing-a", "image_id": "image-gwla0001", "subnet": "subnet-gwla0001",
            "security_group": "sg-gwla0001", "gpuwise_wheel": kit.wheel()}  # fmt: skip
    return LaunchOptions(
        job_path=job, target="volcengine", offer=OFFER, out=job.parent / "out", cloud={**base, **cloud}
    )


def test_request_serialises_to_the_documented_fields(tmp_path):
    job = write_job(
        tmp_path / "j.yaml", dataset={"source": "nas.example:/share", "mount": "/mnt/nas", "size_gb": 10}
    )
    plan = plan_launch(_options(job, hpc_cluster="hpccluster-gwla"))
    sent = json.loads(plan.files["run-instances.json"])
    assert sent["DryRun"] is True and sent["InstanceTypeId"] == "ecs.gni2.28xlarge"
    assert (sent["Count"], sent["MinCount"], sent["ZoneId"]) == (2, 2, "cn-beijing-a")
    assert sent["NetworkInterfaces"] == [{"SubnetId": "subnet-gwla0001", "SecurityGroupIds": ["sg-gwla0001"]}]
    assert (sent["InstanceChargeType"], sent["HpcClusterId"]) == ("PostPaid", "hpccluster-gwla")
    assert "SpotStrategy" not in sent
    script = base64.b64decode(sent["UserData"]).decode()
    assert script == plan.files["user-data.sh"]
    assert "mount -t nfs -o vers=3,nolock,noresvport nas.example:/share /mnt/nas" in script
    assert "not sent: no Volcano Engine credentials" in plan.cloud_check
    assert "volcengine:cn-beijing/INSTANCE_IDS" in plan.creates[0].delete
    # every field written is one of the SDK model's API names, and the model reads it back as it was
    import volcenginesdkecs

    assert set(sent) <= set(volcenginesdkecs.RunInstancesRequest.attribute_map.values())


@pytest.mark.parametrize(
    ("missing", "said", "fix"),
    [("zone", "an availability zone", "--zone"), ("subnet", "a subnet", "--subnet"),
     ("security_group", "a security group", "--security-group"), ("image_id", "GPU driver", "--image-id")],
)  # fmt: skip
def test_what_the_request_needs_is_a_clear_error(tmp_path, missing, said, fix):
    with pytest.raises(UserInputError, match=said) as exc:
        plan_launch(_options(write_job(tmp_path / "j.yaml"), **{missing: None}))
    assert fix in str(exc.value)


def test_user_data_is_bash_and_installs_gpuwise_only_from_the_shipped_wheel(tmp_path):
    url = "https://gwla.tos-cn-beijing.volces.com/w.whl"
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
    assert "not sent: no Volcano Engine credentials" in r.output and (out / "run-instances.json").exists()
    for flag, said in [(["--wait"], "--target volcengine does not support --wait:"),
                       (["--vpc", "x"], "--vpc is a --target huawei option")]:  # fmt: skip
        r = kit.gpuwise("launch", *DRY_RUN, *flag, "--out", str(tmp_path / "bad"), env=env, cwd=tmp_path)
        assert r.exit_code == 3 and said in r.output and "To fix:" in r.output, r.output
        assert not (tmp_path / "bad").exists()
    r = kit.gpuwise("launch", "--down", "volcengine:cn-beijing/i-1", cwd=tmp_path)
    assert r.exit_code == 3 and "no Volcano Engine credentials found; nothing deleted" in r.output
    r = kit.gpuwise("launch", "--down", "volcengine:cn-beijing", cwd=tmp_path)
    assert r.exit_code == 3 and "is not REGION/i-ID" in r.output


def _answer(monkeypatch, error: dict | None, instance_ids=("i-gwla1", "i-gwla2")):
    """ECSApi.run_instances answering as Volcengine does (the SDK raises an Error as ApiException(reason=...))."""
    import volcenginesdkecs
    from volcenginesdkcore.rest import ApiException

    sent = []

    def run_instances(self, req):
        sent.append(req.dry_run)
        if error is not None:
            raise ApiException(status=200, reason=str(error))
        return volcenginesdkecs.RunInstancesResponse(instance_ids=list(instance_ids))

    monkeypatch.setattr(volcenginesdkecs.ECSApi, "run_instances", run_instances)
    return sent


def test_credentials_from_the_environment_send_the_dry_run_and_are_never_shown(tmp_path, monkeypatch):
    secret = "gwlaVEsecretNEVERshown0123456789"
    monkeypatch.setenv("VOLCENGINE_ACCESS_KEY", "GWLAVEAKID0001")
    monkeypatch.setenv("VOLCENGINE_SECRET_KEY", secret)
    sent = _answer(monkeypatch, {"Code": "DryRunOperation", "Message": "Request would have succeeded"})
    plan = plan_launch(_options(write_job(tmp_path / "j.yaml")))
    assert sent == [True] and "Volcano Engine accepted the dry run" in plan.cloud_check
    from gpuwise.launch.build import write_files

    written = "".join(p.read_text(errors="replace") for p in write_files(plan) if p.suffix != ".whl")
    for shown in (written, json.dumps(plan.to_json(), default=str)):
        assert secret not in shown and "GWLAVEAKID0001" not in shown


def test_a_refused_dry_run_says_volcengines_code_and_create_prints_the_ids(tmp_path, monkeypatch):
    monkeypatch.setenv("VOLCENGINE_ACCESS_KEY", "GWLAVEAKID0001")
    monkeypatch.setenv("VOLCENGINE_SECRET_KEY", "gwla-secret")
    _answer(monkeypatch, {"Code": "InvalidImageId.NotFound", "Message": "The image does not exist."})
    plan = plan_launch(_options(write_job(tmp_path / "j.yaml")))
    assert plan.cloud_check == (
        "Volcano Engine refused the dry run: InvalidImageId.NotFound: The image does not exist."
    )
    sent = _answer(monkeypatch, None)
    from gpuwise.launch import volcengine

    created = volcengine.create(plan, _options(write_job(tmp_path / "j.yaml")).cloud, False)
    assert sent == [False] and created["id"] == "volcengine:cn-beijing/i-gwla1,i-gwla2"
    assert plan.creates[0].delete == "gpuwise launch --down volcengine:cn-beijing/i-gwla1,i-gwla2"


def test_offer_must_be_in_the_users_offers_file(tmp_path):
    with pytest.raises(UserInputError) as exc:
        plan_launch(LaunchOptions(job_path=write_job(tmp_path / "j.yaml"), target="volcengine",
                                  offer="volcengine:ecs.not-listed", out=tmp_path / "out",
                                  cloud={"zone": "cn-beijing-a"}))  # fmt: skip
    assert "ecs.not-listed" in exc.value.message


def test_without_the_sdk_the_error_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "volcenginesdkecs", None)
    with pytest.raises(MissingDependencyError) as exc:
        plan_launch(_options(write_job(tmp_path / "j.yaml")))
    assert "volcenginesdk-ecs" in exc.value.message and "gpuwise[cn-clouds]" in exc.value.fix
