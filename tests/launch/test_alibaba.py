"""Target alibaba: the RunInstances request from the official SDK's models, its user data, its credentials."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.launch import kit

pytest.importorskip("alibabacloud_ecs20140526.models", reason="the cn-clouds extra is not installed")

from gpuwise.errors import MissingDependencyError, UserInputError  # noqa: E402
from gpuwise.launch import alibaba  # noqa: E402
from gpuwise.launch.build import LaunchOptions, plan_launch  # noqa: E402
from tests.launch.kit import EXAMPLES, write_job  # noqa: E402

OFFER = "alibaba:ecs.gn7e-c16g1.32xlarge"
CLOUD = ["--zone", "cn-shanghai-b", "--image-id", "m-gwla0001", "--subnet", "vsw-gwla0001",
         "--security-group", "sg-gwla0001"]  # fmt: skip
# the documented dry run of examples/job-llm.yaml (its header holds the same line)
DRY_RUN = [str(EXAMPLES / "job-llm.yaml"), "--offer", OFFER, "--target", "alibaba", *CLOUD]


@pytest.fixture(autouse=True)
def _never_sent(monkeypatch):
    """In-process: no credentials, whatever this machine has (the SDK reads its variables when imported)."""
    monkeypatch.setattr(alibaba, "_credentials", lambda: None)


def _options(job: Path, **cloud) -> LaunchOptions:
    base = {"zone": "cn-shanghai-b", "image_id": "m-gwla0001", "subnet": "vsw-gwla0001",
            "security_group": "sg-gwla0001", "gpuwise_wheel": kit.wheel()}  # fmt: skip
    return LaunchOptions(job_path=job, target="alibaba", offer=cloud.pop("offer", OFFER), out=job.parent / "out",
                         cloud={**base, **cloud})  # fmt: skip


def test_request_serialises_to_the_documented_fields(tmp_path):
    job = write_job(tmp_path / "j.yaml", dataset={"source": "gw.cn-shanghai.nas.aliyuncs.com:/", "mount": "/mnt/nas",
                                                  "size_gb": 10})  # fmt: skip
    plan = plan_launch(_options(job))
    sent = json.loads(plan.files["run-instances.json"])
    assert sent["InstanceType"] == "ecs.gn7e-c16g1.32xlarge"
    assert (sent["RegionId"], sent["ZoneId"]) == ("cn-shanghai", "cn-shanghai-b")
    assert sent["DryRun"] is True and sent["Amount"] == sent["MinAmount"] == 2
    assert (sent["VSwitchId"], sent["SecurityGroupId"], sent["ImageId"]) == (
        "vsw-gwla0001",
        "sg-gwla0001",
        "m-gwla0001",
    )
    assert "HpcClusterId" not in sent and "SpotStrategy" not in sent
    script = base64.b64decode(sent["UserData"]).decode()
    assert script == plan.files["user-data.sh"]
    assert (
        "mount -t nfs -o vers=4,minorversion=0,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport"
        in script
    )
    assert "doctor --expect gpus=8" in script and "export --job-labels --listen :9401" in script
    assert "not sent: no Alibaba Cloud credentials" in plan.cloud_check
    assert plan.resources.currency == "CNY" and plan.creates[0].delete.startswith(
        "gpuwise launch --down alibaba:"
    )
    # the SDK reads its own serialisation back into the same request
    again = alibaba.loads_request(plan.files["run-instances.json"])
    assert (again.instance_type, again.zone_id, again.dry_run, again.amount) == (
        "ecs.gn7e-c16g1.32xlarge", "cn-shanghai-b", True, 2)  # fmt: skip


def test_a_field_the_sdk_does_not_know_fails(tmp_path):
    from alibabacloud_ecs20140526 import models

    with pytest.raises(TypeError, match="instance_typo"):
        models.RunInstancesRequest(
            instance_typo="x"
        )  # the request is built with keywords: a typo cannot pass


@pytest.mark.parametrize(
    ("missing", "said", "fix"),
    [("zone", "an availability zone", "--zone"), ("subnet", "a vSwitch", "--subnet vsw-"),
     ("security_group", "a security group", "--security-group sg-"), ("image_id", "GPU driver", "--image-id")],
)  # fmt: skip
def test_what_the_request_needs_is_a_clear_error(tmp_path, missing, said, fix):
    job = write_job(tmp_path / "j.yaml")
    with pytest.raises(UserInputError, match=said) as exc:
        plan_launch(_options(job, **{missing: None}))
    assert fix in str(exc.value)


def test_user_data_is_bash_and_installs_gpuwise_only_from_the_shipped_wheel(tmp_path):
    job = write_job(tmp_path / "j.yaml")
    url = "https://gwla.oss-cn-shanghai.aliyuncs.com/gpuwise-wheels/w.whl"
    plan = plan_launch(_options(job, gpuwise_wheel_url=url))
    script = tmp_path / "boot.sh"
    script.write_text(plan.files["user-data.sh"])
    p = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    wheel = kit.wheel()
    import hashlib

    text = script.read_text()
    assert hashlib.sha256(wheel.read_bytes()).hexdigest() in text and url in text
    installs = [line for line in text.splitlines() if "pip" in line and "install" in line]
    assert installs and all("--no-index" in line for line in installs), installs
    with pytest.raises(UserInputError, match="is not an https:// URL"):
        plan_launch(_options(job, gpuwise_wheel_url="http://x/w.whl"))


def test_the_documented_dry_run_and_unsupported_flags(tmp_path):
    out = tmp_path / "o"
    r = kit.gpuwise("launch", *DRY_RUN, "--out", str(out), cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert "not sent: no Alibaba Cloud credentials" in r.output
    assert (
        alibaba.loads_request((out / "run-instances.json").read_text()).instance_type
        == "ecs.gn7e-c16g1.32xlarge"
    )
    header = (EXAMPLES / "job-llm.yaml").read_text()
    assert f"--offer {OFFER} --target alibaba" in header
    for flag, said in [(["--wait"], "--target alibaba does not support --wait:"),
                       (["--partition", "gpu"], "--partition is a --target slurm option"),
                       (["--hosts", "a,b"], "--hosts is a --target torchrun option")]:  # fmt: skip
        r = kit.gpuwise("launch", *DRY_RUN, *flag, "--out", str(tmp_path / "bad"), cwd=tmp_path)
        assert r.exit_code == 3 and said in r.output and "To fix:" in r.output, r.output
        assert "Traceback" not in r.output and not (tmp_path / "bad").exists()
    r = kit.gpuwise("launch", "--down", "alibaba:cn-shanghai", cwd=tmp_path)
    assert r.exit_code == 3 and "is not REGION/i-ID" in r.output
    r = kit.gpuwise("launch", "--down", "alibaba:cn-shanghai/i-gwla0001", cwd=tmp_path)
    assert r.exit_code == 3 and "no Alibaba Cloud credentials found; nothing deleted" in r.output


# A fresh interpreter: the SDK's credential chain (a ~/.alibabacloud/credentials.ini profile) finds the key;
# the ECS client's RunInstances answers as Alibaba does to a valid dry run, so nothing leaves this machine.
_SEND = """
import sys
from alibabacloud_ecs20140526.client import Client
from Tea.exceptions import TeaException

sent = []
def run_instances(self, request):
    sent.append(request.to_map())
    raise TeaException({"code": "DryRunOperation", "message": "Request validation has been passed with DryRun flag set."})
Client.run_instances = run_instances
from gpuwise.cli import main
sys.argv = ["gpuwise", *sys.argv[1:]]
try:
    main()
finally:
    print("SENT", len(sent), sent[0]["DryRun"] if sent else None)
"""


def test_credentials_from_the_sdk_profile_send_the_dry_run_and_are_never_shown(tmp_path):
    secret = "gwlaSECRETneverSHOWN0123456789"
    profile = tmp_path / ".alibabacloud" / "credentials.ini"
    profile.parent.mkdir()
    profile.write_text(
        f"[default]\ntype = access_key\naccess_key_id = LTAIgwlaKEYID0001\naccess_key_secret = {secret}\n"
    )
    env = {k: v for k, v in __import__("os").environ.items() if k not in kit.CREDENTIAL_VARIABLES}
    env.update(HOME=str(tmp_path), GPUWISE_WHEEL=str(kit.wheel()), COLUMNS="100")
    out = tmp_path / "o"
    p = subprocess.run([sys.executable, "-c", _SEND, "launch", *DRY_RUN, "--out", str(out)], capture_output=True,
                       text=True, env=env, cwd=tmp_path, timeout=120)  # fmt: skip
    said = p.stdout + p.stderr
    assert p.returncode == 0, said
    assert "SENT 1 True" in said and "Alibaba accepted the dry run" in said
    written = "".join(
        f.read_text(errors="replace") for f in out.rglob("*") if f.is_file() and f.suffix != ".whl"
    )
    for shown in (said, written):
        assert secret not in shown and "LTAIgwlaKEYID0001" not in shown


def test_without_the_sdk_the_error_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "alibabacloud_ecs20140526", None)  # import fails as if not installed
    with pytest.raises(MissingDependencyError) as exc:
        plan_launch(_options(write_job(tmp_path / "j.yaml")))
    assert "alibabacloud_ecs20140526" in exc.value.message and "gpuwise[cn-clouds]" in exc.value.fix
