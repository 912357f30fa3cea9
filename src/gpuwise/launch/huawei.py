"""Target huawei: an ECS CreateServers request built from the official SDK's models (huaweicloudsdkecs v2).

flavorRef from the offer, imageRef (an ECS image with the GPU driver), the VPC (--vpc) and its subnet
(--subnet), the security group (--security-group, else the VPC's default), availability_zone from --zone,
count = nodes, a pay-per-use (postPaid) charging mode, and base64 user_data: the boot script every cloud VM
target shares (launch/boot_script.py). Without --yes the request is sent with dry_run=true when credentials
are found (ECS checks the request and creates nothing), else only written. Credentials come
only from the SDK's documented providers: HUAWEICLOUD_SDK_AK / HUAWEICLOUD_SDK_SK (and
HUAWEICLOUD_SDK_PROJECT_ID), then the ~/.huaweicloud/credentials profile; never written, never printed.
API reference: https://support.huaweicloud.com/intl/en-us/api-ecs/ecs_02_0101.html
"""

from __future__ import annotations

import base64

from gpuwise.errors import MissingDependencyError, UserInputError
from gpuwise.i18n import joined, msg
from gpuwise.launch import boot_script
from gpuwise.launch.boot_script import USER_DATA
from gpuwise.launch.model import Created, LaunchPlan
from gpuwise.launch.quoting import json_text, sh_words
from gpuwise.launch.wheel import FOLDER, Wheel, ship_wheel

REQUEST = "create-servers.json"
# SFS (NFS) with the mount options of Huawei's SFS guide (https://support.huaweicloud.com/intl/zh-cn/usermanual-sfs/en-us_topic_0034428728.html);
# OBS and its CLI obsutil for the wheel upload note
BOOT = boot_script.Cloud(
    "huawei", "SFS (NFS)", "vers=3,timeo=600,noresvport,nolock", "OBS", "obs", ("obsutil", "cp")
)
VARIABLES = "HUAWEICLOUD_SDK_AK / HUAWEICLOUD_SDK_SK"
FILES = "~/.huaweicloud/credentials"


def _models():
    try:
        from huaweicloudsdkecs.v2 import model
    except ImportError as exc:
        raise MissingDependencyError(
            msg("--target {target} needs {package} ({error})").format(
                target="huawei", package="huaweicloudsdkecs", error=exc
            ),
            "pip install 'gpuwise[cn-clouds]'",
        ) from exc
    return model


def region_of(zone: str) -> str:
    """cn-north-4a -> cn-north-4 (a Huawei zone is its region plus a letter)."""
    return zone[:-1] if len(zone) > 1 and zone[-1].isalpha() and zone[-2].isdigit() else zone


def _needed(cloud: dict, key: str, what: str, fix: str) -> str:
    """A value the request cannot go without (what and fix: messages)."""
    value = cloud.get(key)
    if not value:
        raise UserInputError(msg("--target {target} needs {what}").format(target="huawei", what=what), fix)
    return value


def request(plan: LaunchPlan, textfile: bool, cloud: dict, dry_run: bool, wheel: Wheel | None = None):
    """The CreateServersRequest (SDK model) for the plan: an unknown field name fails here, not at Huawei."""
    m = _models()
    r, job = plan.resources, plan.job
    zone = _needed(cloud, "zone", msg("an availability zone"),
                   msg("add --zone, e.g. --zone cn-north-4a (ListServerAzInfo lists them)"))  # fmt: skip
    vpc = _needed(
        cloud,
        "vpc",
        msg("the VPC the instances join"),
        msg("add --vpc VPC-ID (the VPC console, or ListVpcs)"),
    )
    subnet = _needed(cloud, "subnet", msg("a subnet of that VPC"),
                     msg("add --subnet SUBNET-ID (the network ID of the subnet: ListSubnets)"))  # fmt: skip
    image = _needed(cloud, "image_id", msg("an image with the GPU driver (imageRef)"),
                    msg("add --image-id IMAGE-ID (a public GPU image from ListImages, or your own)"))  # fmt: skip
    group = cloud.get("security_group")
    wheel = wheel or ship_wheel(plan.out, cloud.get("gpuwise_wheel"))
    url = boot_script.wheel_url(BOOT, cloud)
    script = boot_script.user_data(BOOT, plan, textfile, wheel, url)
    server = m.PrePaidServer(
        image_ref=image,
        flavor_ref=r.instance_type,
        name=f"gw-{job.name}",
        vpcid=vpc,
        nics=[m.PrePaidServerNic(subnet_id=subnet)],
        root_volume=m.PrePaidServerRootVolume(volumetype="SSD"),
        count=job.nodes,
        availability_zone=zone,
        security_groups=[m.PrePaidServerSecurityGroup(id=group)] if group else None,
        user_data=base64.b64encode(script.encode()).decode(),
        extendparam=m.PrePaidServerExtendParam(
            charging_mode="postPaid", region_id=region_of(zone), market_type="spot" if r.spot else None
        ),
    )
    return m.CreateServersRequest(body=m.CreateServersRequestBody(dry_run=dry_run, server=server))


def sent_fields(req) -> dict:
    """The body as the SDK sends it (its wire names; unset fields left out)."""
    from huaweicloudsdkcore.utils.http_utils import sanitize_for_serialization

    return sanitize_for_serialization(req.body)


def build(plan: LaunchPlan, textfile: bool, cloud: dict) -> None:
    wheel = ship_wheel(plan.out, cloud.get("gpuwise_wheel"))
    req = request(plan, textfile, cloud, dry_run=True, wheel=wheel)
    server = req.body.server
    region = server.extendparam.region_id
    plan.copies[f"{FOLDER}/{wheel.name}"] = wheel.source
    boot_script.wheel_notes(BOOT, plan, wheel, cloud.get("gpuwise_wheel_url"))
    plan.files[REQUEST] = json_text(sent_fields(req), indent=2) + "\n"
    plan.files[USER_DATA] = base64.b64decode(server.user_data).decode()
    plan.resources.zone = server.availability_zone
    plan.creates.append(
        Created(
            msg("ECS instance x {n}").format(n=plan.job.nodes),
            f"gw-{plan.job.name} ({plan.resources.instance_type}, {server.availability_zone})",
            msg("{command}  (or: {native})").format(
                command=sh_words(["gpuwise", "launch", "--down", f"huawei:{region}/SERVER_IDS"]),
                native="DeleteServers",
            ),
        )
    )
    if plan.job.image:
        boot_script.container_note(plan, server.image_ref)
    group = server.security_groups[0].id if server.security_groups else msg("(the VPC's default)")
    plan.notes += [
        msg("the security group {group} must allow TCP {rdzv_port} (rendezvous) and {exporter_port} (exporter) "
            "inside the VPC").format(group=group, rdzv_port=plan.job.rdzv_port, exporter_port=plan.job.exporter_port),
        boot_script.training_note(plan),
    ]  # fmt: skip
    plan.cloud_check = _send_dry_run(req, region)


def _credentials():
    """The SDK's documented providers (environment, then the profile file); None when neither has a key."""
    from huaweicloudsdkcore.auth.provider import EnvCredentialProvider, ProfileCredentialProvider

    for provider in (
        EnvCredentialProvider.get_basic_credential_env_provider(),
        ProfileCredentialProvider.get_basic_credential_profile_provider(),
    ):
        try:
            return provider.get_credentials()
        except Exception:  # the SDK raises its own error types (or an OS error) when a source has none
            continue
    return None


def _client(region: str):
    credentials = _credentials()
    if credentials is None:
        return None
    from huaweicloudsdkecs.v2 import EcsClient
    from huaweicloudsdkecs.v2.region.ecs_region import EcsRegion

    try:
        where = EcsRegion.value_of(region)
    except KeyError:
        raise UserInputError(
            msg("{region} is not a Huawei Cloud ECS region this SDK knows").format(region=region),
            msg("check --zone (a zone is its region plus a letter, e.g. cn-north-4a)"),
        ) from None
    try:  # without HUAWEICLOUD_SDK_PROJECT_ID the SDK asks IAM for the region's project here
        return EcsClient.new_builder().with_credentials(credentials).with_region(where).build()
    except _sdk_error() as exc:
        code, message = _said(exc)
        raise UserInputError(
            msg("cannot reach Huawei Cloud for {region}: {code}: {message}").format(
                region=region, code=code, message=message
            ),
            msg("check the network and the credentials, or set {variable}").format(
                variable="HUAWEICLOUD_SDK_PROJECT_ID"
            ),
        ) from None


def _sdk_error():
    from huaweicloudsdkcore.exceptions.exceptions import SdkException

    return SdkException


def _said(exc) -> tuple[str, str]:
    return getattr(exc, "error_code", None) or type(exc).__name__, getattr(exc, "error_msg", None) or str(exc)


def _send_dry_run(req, region: str) -> str:
    """Send the dry_run request when credentials are found; what Huawei said (never the credentials)."""
    try:
        client = _client(region)
    except UserInputError as exc:  # the dry run is still written: say why it was not checked
        return msg("not sent: {reason}").format(reason=exc.message)
    if client is None:
        return msg("not sent: no Huawei Cloud credentials ({variables}, or {file})").format(
            variables=VARIABLES, file=FILES
        )
    try:
        client.create_servers(req)
    except _sdk_error() as exc:
        code, message = _said(exc)
        return msg("Huawei refused the dry run: {code}: {message}").format(code=code, message=message)
    return msg("Huawei accepted the dry run (the request checked; nothing created)")


def create(plan: LaunchPlan, cloud: dict, textfile: bool) -> dict:
    req = request(plan, textfile, cloud, dry_run=False)
    region = req.body.server.extendparam.region_id
    client = _client(region)
    if client is None:
        raise UserInputError(
            msg("no Huawei Cloud credentials found; nothing created"),
            msg("export {variables}, or write {file}").format(variables=VARIABLES, file=FILES),
        )
    try:
        resp = client.create_servers(req)
    except _sdk_error() as exc:
        code, message = _said(exc)
        raise UserInputError(msg("{action} failed: {code}: {message}").format(
                                 action="CreateServers", code=code, message=message),
                             msg("fix what Huawei names (zone, image, subnet, quota), then rerun")) from None  # fmt: skip
    ids = list(resp.server_ids or [])
    launch_id = f"huawei:{region}/{joined(',', ids)}"
    plan.creates[0].id = launch_id
    plan.creates[0].delete = sh_words(["gpuwise", "launch", "--down", launch_id])
    return {"id": launch_id, "instances": ids, "job_id": resp.job_id}


def down(rest: str) -> str:
    region, sep, ids = rest.partition("/")
    servers = [i for i in ids.split(",") if i]
    if not sep or not region or not servers:
        raise UserInputError(msg("{option} is not REGION/SERVER-ID[,SERVER-ID]").format(option=f"--down huawei:{rest}"),
                             msg("e.g. {command}").format(command="--down huawei:cn-north-4/SERVER-ID"))  # fmt: skip
    m = _models()
    client = _client(region)
    if client is None:
        raise UserInputError(
            msg("no Huawei Cloud credentials found; nothing deleted"),
            msg("export {variables}, then rerun").format(variables=VARIABLES),
        )
    body = m.DeleteServersRequestBody(servers=[m.ServerId(id=s) for s in servers], delete_publicip=True,
                                      delete_volume=True)  # fmt: skip
    try:
        client.delete_servers(m.DeleteServersRequest(body=body))
    except _sdk_error() as exc:
        code, message = _said(exc)
        raise UserInputError(msg("{action} failed: {code}: {message}").format(
                                 action="DeleteServers", code=code, message=message),
                             msg("check the ids in the ECS console")) from None  # fmt: skip
    return msg("deleted {n} ECS instance(s) in {region}: {ids}").format(
        n=len(servers), region=region, ids=joined(", ", servers)
    )
