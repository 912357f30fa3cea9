"""Target alibaba: an ECS RunInstances request built from the official SDK's models (alibabacloud_ecs20140526).

RegionId and ZoneId from --zone, InstanceType from the offer, ImageId (an ECS image with the GPU driver),
the VPC's VSwitchId (--subnet) and SecurityGroupId (--security-group), Amount = MinAmount = nodes (all the
nodes or none), and base64 UserData: the boot script every cloud VM target shares (launch/boot_script.py).
Without --yes the request is sent with DryRun=true when credentials are found (ECS checks parameters,
permissions and stock, answers DryRunOperation and creates nothing), else only written. Credentials come only
from the SDK's documented providers: ALIBABA_CLOUD_ACCESS_KEY_ID / ALIBABA_CLOUD_ACCESS_KEY_SECRET, the
~/.alibabacloud/credentials.ini profile, the Alibaba Cloud CLI's ~/.aliyun/config.json, and the instance's
RAM role when ALIBABA_CLOUD_ECS_METADATA names it; never written, never printed.
API reference: https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-runinstances
"""

from __future__ import annotations

import base64
import json

from gpuwise.errors import MissingDependencyError, UserInputError
from gpuwise.i18n import joined, msg
from gpuwise.launch import boot_script
from gpuwise.launch.boot_script import USER_DATA
from gpuwise.launch.model import Created, LaunchPlan
from gpuwise.launch.quoting import json_text, sh_words
from gpuwise.launch.wheel import FOLDER, Wheel, ship_wheel

REQUEST = "run-instances.json"
# NAS (NFSv4.0) with the mount options of Alibaba's NAS FAQ (https://www.alibabacloud.com/help/doc-detail/184789.htm);
# OSS and its CLI ossutil for the wheel upload note
BOOT = boot_script.Cloud(
    "alibaba",
    "NAS (NFS)",
    "vers=4,minorversion=0,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport",
    "OSS",
    "oss",
    ("ossutil", "cp"),
)
VARIABLES = "ALIBABA_CLOUD_ACCESS_KEY_ID / ALIBABA_CLOUD_ACCESS_KEY_SECRET"
FILES = "~/.alibabacloud/credentials.ini, ~/.aliyun/config.json"


def _models():
    try:
        from alibabacloud_ecs20140526 import models
    except ImportError as exc:
        raise MissingDependencyError(
            msg("--target {target} needs {package} ({error})").format(
                target="alibaba", package="alibabacloud_ecs20140526", error=exc
            ),
            "pip install 'gpuwise[cn-clouds]'",
        ) from exc
    return models


def region_of(zone: str) -> str:
    """cn-shanghai-b -> cn-shanghai (an ECS zone is its region plus a letter)."""
    head, _sep, tail = zone.rpartition("-")
    return head if head and len(tail) == 1 and tail.isalpha() else zone


def _needed(cloud: dict, key: str, what: str, fix: str) -> str:
    """A value the request cannot go without (what and fix: messages)."""
    value = cloud.get(key)
    if not value:
        raise UserInputError(msg("--target {target} needs {what}").format(target="alibaba", what=what), fix)
    return value


def _image(plan: LaunchPlan, cloud: dict) -> str:
    image = cloud.get("image_id") or (plan.job.image if (plan.job.image or "").startswith("m-") else None)
    if not image:
        raise UserInputError(
            msg("--target {target} needs an image with the GPU driver (ImageId)").format(target="alibaba"),
            msg(
                "add --image-id (a public GPU image from DescribeImages, or your own m-...), "
                "or write image: m-... in JOB.yaml"
            ),
        )
    return image


def request(plan: LaunchPlan, textfile: bool, cloud: dict, dry_run: bool, wheel: Wheel | None = None):
    """The RunInstancesRequest (SDK model) for the plan: an unknown field name fails here, not at Alibaba."""
    m = _models()
    r, job = plan.resources, plan.job
    zone = _needed(cloud, "zone", msg("an availability zone"), msg("add --zone, e.g. --zone cn-shanghai-b "
                   "(the zones that sell the instance type: DescribeAvailableResource)"))  # fmt: skip
    vswitch = _needed(cloud, "subnet", msg("a vSwitch of your VPC in that zone"),
                      msg("add --subnet vsw-... (the VPC console's vSwitches, or DescribeVSwitches)"))  # fmt: skip
    group = _needed(cloud, "security_group", msg("a security group of that VPC"),
                    msg("add --security-group sg-... (DescribeSecurityGroups)"))  # fmt: skip
    wheel = wheel or ship_wheel(plan.out, cloud.get("gpuwise_wheel"))
    url = boot_script.wheel_url(BOOT, cloud)
    script = boot_script.user_data(BOOT, plan, textfile, wheel, url)
    return m.RunInstancesRequest(
        region_id=region_of(zone),
        zone_id=zone,
        instance_type=r.instance_type,
        image_id=_image(plan, cloud),
        v_switch_id=vswitch,
        security_group_id=group,
        amount=job.nodes,
        min_amount=job.nodes,
        instance_name=f"gw-{job.name}",
        instance_charge_type="PostPaid",
        spot_strategy="SpotAsPriceGo" if r.spot else None,
        hpc_cluster_id=cloud.get("hpc_cluster"),
        user_data=base64.b64encode(script.encode()).decode(),
        dry_run=dry_run,
    )


def sent_fields(req) -> dict:
    """The request as the SDK sends it (API field names; fields left unset and empty lists are not sent)."""
    return {k: v for k, v in req.to_map().items() if v not in (None, [])}


def build(plan: LaunchPlan, textfile: bool, cloud: dict) -> None:
    wheel = ship_wheel(plan.out, cloud.get("gpuwise_wheel"))
    req = request(plan, textfile, cloud, dry_run=True, wheel=wheel)
    plan.copies[f"{FOLDER}/{wheel.name}"] = wheel.source
    boot_script.wheel_notes(BOOT, plan, wheel, cloud.get("gpuwise_wheel_url"))
    plan.files[REQUEST] = json_text(sent_fields(req), indent=2) + "\n"
    plan.files[USER_DATA] = base64.b64decode(req.user_data).decode()
    plan.resources.zone = req.zone_id
    plan.creates.append(
        Created(
            msg("ECS instance x {n}").format(n=plan.job.nodes),
            f"gw-{plan.job.name} ({plan.resources.instance_type}, {req.zone_id})",
            msg("{command}  (or: {native})").format(
                command=sh_words(["gpuwise", "launch", "--down", f"alibaba:{req.region_id}/INSTANCE_IDS"]),
                native="DeleteInstances",
            ),
        )
    )
    if plan.job.image and not plan.job.image.startswith("m-"):
        boot_script.container_note(plan, req.image_id)
    plan.notes += [
        msg("the security group {group} must allow TCP {rdzv_port} (rendezvous) and {exporter_port} (exporter) "
            "inside the VPC").format(group=req.security_group_id, rdzv_port=plan.job.rdzv_port,
                                     exporter_port=plan.job.exporter_port),
        boot_script.training_note(plan),
    ]  # fmt: skip
    plan.cloud_check = _send_dry_run(req)


def _credentials():
    """The SDK's documented providers, in its order; None when none has credentials (nothing is printed)."""
    from alibabacloud_credentials.provider import (
        CLIProfileCredentialsProvider,
        EcsRamRoleCredentialsProvider,
        EnvironmentVariableCredentialsProvider,
        ProfileCredentialsProvider,
    )
    from alibabacloud_credentials.utils import auth_util

    providers = [
        EnvironmentVariableCredentialsProvider(),
        CLIProfileCredentialsProvider(),
        ProfileCredentialsProvider(),
    ]
    if auth_util.environment_ecs_metadata:  # the RAM role of the ECS instance this runs on, named by the user
        providers.append(EcsRamRoleCredentialsProvider(role_name=auth_util.environment_ecs_metadata))
    for provider in providers:
        try:
            provider.get_credentials()
        except Exception:  # the SDK raises its CredentialException (or an OS error) when a source has none
            continue
        return provider
    return None


def _client(region: str):
    provider = _credentials()
    if provider is None:
        return None
    from alibabacloud_credentials.client import Client as Credentials
    from alibabacloud_ecs20140526.client import Client
    from alibabacloud_tea_openapi.models import Config

    return Client(Config(credential=Credentials(provider=provider), region_id=region))


def _send_dry_run(req) -> str:
    """Send the DryRun request when credentials are found; what Alibaba said (never the credentials)."""
    client = _client(req.region_id)
    if client is None:
        return msg("not sent: no Alibaba Cloud credentials ({variables}, or {file})").format(
            variables=VARIABLES, file=FILES
        )
    from Tea.exceptions import TeaException

    try:
        client.run_instances(req)
    except TeaException as exc:
        if exc.code == "DryRunOperation":
            return msg(
                "Alibaba accepted the dry run (parameters, permissions and stock checked; nothing created)"
            )
        return msg("Alibaba refused the dry run: {code}: {message}").format(
            code=exc.code, message=exc.message
        )
    return msg("Alibaba answered the dry run without its DryRunOperation code: check the console")


def create(plan: LaunchPlan, cloud: dict, textfile: bool) -> dict:
    req = request(plan, textfile, cloud, dry_run=False)
    client = _client(req.region_id)
    if client is None:
        raise UserInputError(
            msg("no Alibaba Cloud credentials found; nothing created"),
            msg("export {variables}, or write {file}").format(variables=VARIABLES, file=FILES),
        )
    from Tea.exceptions import TeaException

    try:
        resp = client.run_instances(req)
    except TeaException as exc:
        raise UserInputError(msg("{action} failed: {code}: {message}").format(
                                 action="RunInstances", code=exc.code, message=exc.message),
                             msg("fix what Alibaba names (zone, image, vSwitch, stock), then rerun")) from None  # fmt: skip
    sets = resp.body.instance_id_sets
    ids = list((sets.instance_id_set if sets else None) or [])
    launch_id = f"alibaba:{req.region_id}/{joined(',', ids)}"
    plan.creates[0].id = launch_id
    plan.creates[0].delete = sh_words(["gpuwise", "launch", "--down", launch_id])
    return {"id": launch_id, "instances": ids, "request_id": resp.body.request_id}


def down(rest: str) -> str:
    region, sep, ids = rest.partition("/")
    instances = [i for i in ids.split(",") if i]
    if not sep or not region or not instances or not all(i.startswith("i-") for i in instances):
        raise UserInputError(msg("{option} is not REGION/i-ID[,i-ID]").format(option=f"--down alibaba:{rest}"),
                             msg("e.g. {command}").format(command="--down alibaba:cn-shanghai/i-abc123,i-def456"))  # fmt: skip
    m = _models()
    client = _client(region)
    if client is None:
        raise UserInputError(
            msg("no Alibaba Cloud credentials found; nothing deleted"),
            msg("export {variables}, then rerun").format(variables=VARIABLES),
        )
    from Tea.exceptions import TeaException

    try:  # Force: running instances are stopped and released (pay-as-you-go instances only)
        client.delete_instances(m.DeleteInstancesRequest(region_id=region, instance_id=instances, force=True))
    except TeaException as exc:
        raise UserInputError(msg("{action} failed: {code}: {message}").format(
                                 action="DeleteInstances", code=exc.code, message=exc.message),
                             msg("check the ids in the ECS console")) from None  # fmt: skip
    return msg("released {n} ECS instance(s) in {region}: {ids}").format(
        n=len(instances), region=region, ids=joined(", ", instances)
    )


def loads_request(text: str):
    """A written request back into the SDK's model (its own from_map), e.g. to check or resend it."""
    return _models().RunInstancesRequest().from_map(json.loads(text))
