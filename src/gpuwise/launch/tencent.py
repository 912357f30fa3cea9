"""Target tencent: a CVM RunInstances request built from tencentcloud-sdk-python's models.

InstanceType and Placement.Zone from the offer (or --zone), HpcClusterId for the RDMA (HCC) families,
ImageId (a CVM image with the GPU driver), InstanceCount = nodes, and base64 UserData: a boot script that
mounts the dataset (CFS/NFS), installs gpuwise offline (the image's, or this launch's wheel from
--gpuwise-wheel-url, sha256 checked), runs the preflight and starts the exporter. Without --yes
the request is sent with DryRun=True when credentials are found (Tencent checks parameters, permissions
and quota and creates nothing), else only written. Credentials come only from the SDK's own chain
(TENCENTCLOUD_SECRET_ID/TENCENTCLOUD_SECRET_KEY, the ~/.tencentcloud/credentials profile, a CVM role):
never written, never printed. API reference: https://www.tencentcloud.com/document/api/213/33237
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
# CFS (NFS) with its documented mount options; COS and its CLI coscli for the wheel upload note
BOOT = boot_script.Cloud("tencent", "CFS (NFS)", "vers=4.0,noresvport", "COS", "cos", ("coscli", "cp"))
HCC_PREFIX = "HCC"  # high-performance computing cluster families: RDMA only inside an HPC cluster


def _models():
    try:
        from tencentcloud.cvm.v20170312 import models
    except ImportError as exc:
        raise MissingDependencyError(
            msg("--target tencent needs tencentcloud-sdk-python ({error})").format(error=exc),
            "pip install 'gpuwise[tencent]'",
        ) from exc
    return models


def _zone(plan: LaunchPlan, cloud: dict) -> str:
    zone = cloud.get("zone") or plan.resources.zone
    if not zone:
        raise UserInputError(
            msg("--target tencent needs an availability zone for {instance}").format(
                instance=plan.resources.instance_type
            ),
            msg(
                "add --zone, e.g. {option} (the zones that sell it: Tencent's CVM console or "
                "DescribeZoneInstanceConfigInfos)"
            ).format(option="--zone ap-guangzhou-6"),
        )
    return zone


def region_of(zone: str) -> str:
    """ap-guangzhou-6 -> ap-guangzhou (a zone name is its region plus a number)."""
    head, _sep, tail = zone.rpartition("-")
    return head if tail.isdigit() and head else zone


def _image(plan: LaunchPlan, cloud: dict) -> str:
    image = cloud.get("image_id") or (plan.job.image if (plan.job.image or "").startswith("img-") else None)
    if not image:
        raise UserInputError(
            msg("--target tencent needs a CVM image with the GPU driver (ImageId img-...)"),
            msg(
                "add --image-id img-... (a public GPU image from DescribeImages, or your own), "
                "or write image: img-... in JOB.yaml"
            ),
        )
    return image


def request(plan: LaunchPlan, textfile: bool, cloud: dict, dry_run: bool, wheel: Wheel | None = None):
    """The RunInstancesRequest (SDK model) for the plan."""
    m = _models()
    r, job = plan.resources, plan.job
    req = m.RunInstancesRequest()
    req.InstanceType = r.instance_type
    req.Placement = m.Placement()
    req.Placement.Zone = _zone(plan, cloud)
    req.ImageId = _image(plan, cloud)
    req.InstanceCount = job.nodes
    req.InstanceName = f"gw-{job.name}"
    req.InstanceChargeType = "SPOTPAID" if r.spot else "POSTPAID_BY_HOUR"
    hpc = cloud.get("hpc_cluster")
    if (r.instance_type or "").upper().startswith(HCC_PREFIX):
        if not hpc:
            raise UserInputError(
                msg(
                    "{instance} is an HCC (RDMA) family: without an HPC cluster it gets no RDMA network"
                ).format(instance=r.instance_type),
                msg("create one in the zone (CreateHpcCluster) and pass --hpc-cluster hpc-..."),
            )
        req.HpcClusterId = hpc
    elif hpc:
        req.HpcClusterId = hpc
    wheel = wheel or ship_wheel(plan.out, cloud.get("gpuwise_wheel"))
    url = boot_script.wheel_url(BOOT, cloud)
    req.UserData = base64.b64encode(boot_script.user_data(BOOT, plan, textfile, wheel, url).encode()).decode()
    req.DryRun = dry_run
    return req


def build(plan: LaunchPlan, textfile: bool, cloud: dict) -> None:
    wheel = ship_wheel(plan.out, cloud.get("gpuwise_wheel"))
    req = request(plan, textfile, cloud, dry_run=True, wheel=wheel)
    plan.copies[f"{FOLDER}/{wheel.name}"] = wheel.source
    boot_script.wheel_notes(BOOT, plan, wheel, cloud.get("gpuwise_wheel_url"))
    plan.files[REQUEST] = json_text(_without_nulls(json.loads(req.to_json_string())), indent=2) + "\n"
    plan.resources.zone = req.Placement.Zone
    plan.files[USER_DATA] = base64.b64decode(req.UserData).decode()
    region = region_of(req.Placement.Zone)
    plan.creates.append(
        Created(
            msg("CVM instance x {n}").format(n=plan.job.nodes),
            f"gw-{plan.job.name} ({plan.resources.instance_type}, {req.Placement.Zone})",
            msg("{command}  (or: {native})").format(
                command=sh_words(["gpuwise", "launch", "--down", f"tencent:{region}/INSTANCE_IDS"]),
                native="TerminateInstances",
            ),
        )  # fmt: skip
    )
    if plan.job.image and not plan.job.image.startswith("img-"):
        boot_script.container_note(plan, req.ImageId)
    plan.notes += [
        msg("instances use the zone's default VPC and subnet; the security group must allow TCP "
          "{rdzv_port} (rendezvous) and {exporter_port} (exporter) inside the VPC").format(
            rdzv_port=plan.job.rdzv_port, exporter_port=plan.job.exporter_port),
        boot_script.training_note(plan),
    ]  # fmt: skip
    plan.cloud_check = _send_dry_run(req, region)


def _without_nulls(value):
    """The request as the SDK sends it: fields left at None are not sent."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _client(region: str):
    from tencentcloud.common import credential
    from tencentcloud.cvm.v20170312 import cvm_client

    try:
        cred = credential.DefaultCredentialProvider().get_credential()
    except Exception:  # the SDK raises its own exception type when no source has credentials
        return None
    return cvm_client.CvmClient(cred, region)


def _send_dry_run(req, region: str) -> str:
    """Send the DryRun request when credentials are found; what Tencent said (never the credentials)."""
    client = _client(region)
    if client is None:
        return msg("not sent: no Tencent Cloud credentials ({variables}, or {file})").format(
            variables="TENCENTCLOUD_SECRET_ID / TENCENTCLOUD_SECRET_KEY", file="~/.tencentcloud/credentials")  # fmt: skip
    from tencentcloud.common.exception.tencent_cloud_sdk_exception import TencentCloudSDKException

    try:
        client.RunInstances(req)
    except TencentCloudSDKException as exc:
        if exc.get_code() == "DryRunOperation":
            return msg(
                "Tencent accepted the dry run (parameters, permissions and quota checked; nothing created)"
            )
        return msg("Tencent refused the dry run: {code}: {message}").format(
            code=exc.get_code(), message=exc.get_message()
        )
    return msg("Tencent answered the dry run without its DryRunOperation code: check the console")


def create(plan: LaunchPlan, cloud: dict, textfile: bool) -> dict:
    req = request(plan, textfile, cloud, dry_run=False)
    region = region_of(req.Placement.Zone)
    client = _client(region)
    if client is None:
        raise UserInputError(
            msg("no Tencent Cloud credentials found; nothing created"),
            msg("export {id} and {key}, or write {file}").format(
                id="TENCENTCLOUD_SECRET_ID", key="TENCENTCLOUD_SECRET_KEY", file="~/.tencentcloud/credentials"
            ),
        )
    from tencentcloud.common.exception.tencent_cloud_sdk_exception import TencentCloudSDKException

    try:
        resp = client.RunInstances(req)
    except TencentCloudSDKException as exc:
        raise UserInputError(msg("{action} failed: {code}: {message}").format(
                                 action="RunInstances", code=exc.get_code(), message=exc.get_message()),
                             msg("fix what Tencent names (zone, image, quota), then rerun")) from None  # fmt: skip
    ids = list(resp.InstanceIdSet or [])
    launch_id = f"tencent:{region}/{joined(',', ids)}"
    plan.creates[0].id = launch_id
    plan.creates[0].delete = sh_words(["gpuwise", "launch", "--down", launch_id])
    return {"id": launch_id, "instances": ids, "request_id": resp.RequestId}


def down(rest: str) -> str:
    region, sep, ids = rest.partition("/")
    instances = [i for i in ids.split(",") if i]
    if not sep or not region or not instances or not all(i.startswith("ins-") for i in instances):
        raise UserInputError(msg("{option} is not REGION/ins-ID[,ins-ID]").format(option=f"--down tencent:{rest}"),
                             msg("e.g. {command}").format(command="--down tencent:ap-guangzhou/ins-abc123,ins-def456"))  # fmt: skip
    m = _models()
    client = _client(region)
    if client is None:
        raise UserInputError(msg("no Tencent Cloud credentials found; nothing deleted"),
                             msg("export {id} and {key}, then rerun").format(
                                 id="TENCENTCLOUD_SECRET_ID", key="TENCENTCLOUD_SECRET_KEY"))  # fmt: skip
    req = m.TerminateInstancesRequest()
    req.InstanceIds = instances
    from tencentcloud.common.exception.tencent_cloud_sdk_exception import TencentCloudSDKException

    try:
        client.TerminateInstances(req)
    except TencentCloudSDKException as exc:
        raise UserInputError(msg("{action} failed: {code}: {message}").format(
                                 action="TerminateInstances", code=exc.get_code(), message=exc.get_message()),
                             msg("check the ids in the CVM console")) from None  # fmt: skip
    return msg("terminated {n} CVM instance(s) in {region}: {ids}").format(
        n=len(instances), region=region, ids=joined(", ", instances)
    )
