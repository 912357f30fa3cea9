"""Target baidu: the CreateInstanceBySpec request the official SDK builds (never sent without --yes), its user
data, its credentials.

gpuwise ships no BCC price (none was found with a public source; the shipped baidu row is the BML platform's),
so each test names the BCC spec in the user's offers file (kit.write_huawei_offers writes it too), as a
Baidu AI Cloud user does."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.launch import kit

pytest.importorskip("baidubce.services.bcc.bcc_client", reason="the cn-clouds extra is not installed")

from gpuwise.errors import MissingDependencyError, UserInputError  # noqa: E402
from gpuwise.launch.build import LaunchOptions, plan_launch  # noqa: E402
from tests.launch.kit import EXAMPLES, write_job  # noqa: E402

OFFER = "baidu:bcc.gn5.c96m736.8v100"
CLOUD = ["--zone", "cn-bj-a", "--image-id", "m-gwla0001", "--subnet", "sbn-gwla0001",
         "--security-group", "g-gwla0001"]  # fmt: skip
DRY_RUN = [str(EXAMPLES / "job-llm.yaml"), "--offer", OFFER, "--target", "baidu", *CLOUD]


@pytest.fixture(autouse=True)
def _user(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(kit.write_huawei_offers(tmp_path / "config")))
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in kit.CREDENTIAL_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def http(monkeypatch):
    """The SDK's HTTP layer (bce_http_client.send_request) answering as BCC does; each call is recorded."""
    from baidubce import bce_response
    from baidubce.exception import BceServerError
    from baidubce.http import bce_http_client

    calls, answers = [], []

    def send_request(config, sign, handlers, method, path, body, headers, params):
        calls.append({"method": method, "path": path, "body": json.loads(body) if body else None,
                      "key": config.credentials.access_key_id, "host": config.endpoint})  # fmt: skip
        answer = answers.pop(0)
        if isinstance(answer, BceServerError):
            raise answer
        response = bce_response.BceResponse()
        response.__dict__.update(answer)
        return response

    monkeypatch.setattr(bce_http_client, "send_request", send_request)
    return calls, answers


def _options(job: Path, **cloud) -> LaunchOptions:
    base = {"zone": "cn-bj-a", "image_id": "m-gwla0001", "subnet": "sbn-gwla0001",
            "security_group": "g-gwla0001", "gpuwise_wheel": kit.wheel()}  # fmt: skip
    return LaunchOptions(
        job_path=job, target="baidu", offer=OFFER, out=job.parent / "out", cloud={**base, **cloud}
    )


def test_the_request_is_the_one_the_sdk_builds_and_is_not_sent(tmp_path, http):
    calls, _answers = http
    job = write_job(
        tmp_path / "j.yaml", dataset={"source": "cfs.example:/share", "mount": "/mnt/cfs", "size_gb": 10}
    )
    plan = plan_launch(_options(job))
    sent = json.loads(plan.files["create-instance-by-spec.json"])
    assert calls == []  # nothing reached the SDK's HTTP layer
    assert (sent["method"], sent["path"], sent["host"]) == (
        "POST",
        "/v2/instanceBySpec",
        "bcc.bj.baidubce.com",
    )
    assert sent["query"]["clientToken"]  # the SDK's own idempotency token
    body = sent["body"]
    assert (body["spec"], body["imageId"], body["zoneName"]) == (
        "bcc.gn5.c96m736.8v100",
        "m-gwla0001",
        "cn-bj-a",
    )
    assert (body["subnetId"], body["securityGroupId"], body["purchaseCount"]) == (
        "sbn-gwla0001",
        "g-gwla0001",
        2,
    )
    assert body["billing"]["paymentTiming"] == "Postpaid" and "bidModel" not in body
    script = base64.b64decode(body["userData"]).decode()
    assert script == plan.files["user-data.sh"]
    assert "mount -t nfs -o vers=3,nolock,noresvport cfs.example:/share /mnt/cfs" in script
    assert "not sent: BCC has no dry run" in plan.cloud_check
    assert "baidu:bj/INSTANCE_IDS" in plan.creates[0].delete


@pytest.mark.parametrize(
    ("missing", "said", "fix"),
    [("zone", "an availability zone", "--zone"), ("subnet", "a subnet", "--subnet"),
     ("security_group", "a security group", "--security-group"), ("image_id", "GPU driver", "--image-id")],
)  # fmt: skip
def test_what_the_request_needs_is_a_clear_error(tmp_path, missing, said, fix):
    with pytest.raises(UserInputError, match=said) as exc:
        plan_launch(_options(write_job(tmp_path / "j.yaml"), **{missing: None}))
    assert fix in str(exc.value)


def test_the_shipped_bml_row_is_not_a_bcc_spec(tmp_path):
    options = _options(write_job(tmp_path / "j.yaml", gpus_per_node=1))
    options.offer = "baidu:BML GPU V100 12-core 50GB x1"
    with pytest.raises(UserInputError, match="is not a BCC instance spec") as exc:
        plan_launch(options)
    assert "offers/baidu.csv" in exc.value.fix


def test_user_data_is_bash_and_installs_gpuwise_only_from_the_shipped_wheel(tmp_path):
    url = "https://gwla.bj.bcebos.com/w.whl"
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
    assert "not sent: BCC has no dry run" in r.output and (out / "create-instance-by-spec.json").exists()
    for flag, said in [(["--wait"], "--target baidu does not support --wait:"),
                       (["--vpc", "x"], "--vpc is a --target huawei option"),
                       (["--hpc-cluster", "x"], "--hpc-cluster is a --target alibaba/tencent/volcengine option")]:  # fmt: skip
        r = kit.gpuwise("launch", *DRY_RUN, *flag, "--out", str(tmp_path / "bad"), env=env, cwd=tmp_path)
        assert r.exit_code == 3 and said in r.output and "To fix:" in r.output, r.output
        assert not (tmp_path / "bad").exists()
    r = kit.gpuwise("launch", "--down", "baidu:bj/i-1", cwd=tmp_path)
    assert r.exit_code == 3 and "no Baidu AI Cloud credentials found; nothing deleted" in r.output
    r = kit.gpuwise("launch", "--down", "baidu:bj", cwd=tmp_path)
    assert r.exit_code == 3 and "is not REGION/i-ID" in r.output


def test_create_sends_the_sdks_request_with_the_credentials_and_never_shows_them(tmp_path, monkeypatch, http):
    calls, answers = http
    secret = "gwlaBCEsecretNEVERshown0123456789"
    monkeypatch.setenv("BCE_ACCESS_KEY_ID", "gwlabceakid0001")
    monkeypatch.setenv("BCE_SECRET_ACCESS_KEY", secret)
    plan = plan_launch(_options(write_job(tmp_path / "j.yaml")))
    assert calls == []  # credentials alone send nothing: only --yes does
    from gpuwise.launch import baidu
    from gpuwise.launch.build import write_files

    answers.append({"instance_ids": ["i-gwla1", "i-gwla2"]})
    created = baidu.create(plan, _options(write_job(tmp_path / "j.yaml")).cloud, False)
    written = json.loads(plan.files["create-instance-by-spec.json"])["body"]
    assert [c["path"] for c in calls] == [b"/v2/instanceBySpec"] and calls[0]["key"] == b"gwlabceakid0001"
    assert calls[0]["host"] == b"bcc.bj.baidubce.com"
    assert {
        k: v for k, v in calls[0]["body"].items()
    } == written  # what --yes sends is what the dry run wrote
    assert created["id"] == "baidu:bj/i-gwla1,i-gwla2"
    assert plan.creates[0].delete == "gpuwise launch --down baidu:bj/i-gwla1,i-gwla2"
    shown = "".join(p.read_text(errors="replace") for p in write_files(plan) if p.suffix != ".whl")
    for text in (shown, json.dumps(plan.to_json(), default=str)):
        assert secret not in text and "gwlabceakid0001" not in text


def test_a_refused_create_and_down_say_bccs_code(tmp_path, monkeypatch, http):
    from baidubce.exception import BceServerError

    from gpuwise.launch import baidu

    calls, answers = http
    monkeypatch.setenv("BCE_ACCESS_KEY_ID", "gwlabceakid0001")
    monkeypatch.setenv("BCE_SECRET_ACCESS_KEY", "gwla-secret")
    plan = plan_launch(_options(write_job(tmp_path / "j.yaml")))
    answers.append(BceServerError("image not found", status_code=400, code="Image.ImageNotExist"))
    with pytest.raises(
        UserInputError, match="CreateInstanceBySpec failed: Image.ImageNotExist: image not found"
    ):
        baidu.create(plan, _options(write_job(tmp_path / "j.yaml")).cloud, False)
    answers += [{}, BceServerError("no such instance", status_code=404, code="Instance.InstanceNotExist")]
    with pytest.raises(UserInputError, match="InstanceNotExist") as exc:
        baidu.down("bj/i-gwla1,i-gwla2")
    assert "i-gwla1" in exc.value.fix  # what was released before the error
    assert [c["method"] for c in calls[1:]] == [b"DELETE", b"DELETE"]
    answers.append({})
    assert baidu.down("bj/i-gwla3") == "released 1 BCC instance(s) in bj: i-gwla3"


def test_offer_must_be_in_the_users_offers_file(tmp_path):
    with pytest.raises(UserInputError) as exc:
        plan_launch(LaunchOptions(job_path=write_job(tmp_path / "j.yaml"), target="baidu",
                                  offer="baidu:bcc.not-listed", out=tmp_path / "out",
                                  cloud={"zone": "cn-bj-a"}))  # fmt: skip
    assert "bcc.not-listed" in exc.value.message


def test_without_the_sdk_the_error_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "baidubce.services.bcc", None)
    with pytest.raises(MissingDependencyError) as exc:
        plan_launch(_options(write_job(tmp_path / "j.yaml")))
    assert "bce-python-sdk" in exc.value.message and "gpuwise[cn-clouds]" in exc.value.fix
