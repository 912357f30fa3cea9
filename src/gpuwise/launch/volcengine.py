"""Target volcengine: an ECS RunInstances request built from the official per-service SDK's models (volcenginesdkecs).

ZoneId from --zone (its region: the zone without its letter), InstanceTypeId from the offer, ImageId (an
image with the GPU driver), NetworkInterfaces with the subnet (--subnet) and security group
(--security-group), Count = MinCount = nodes (all the nodes or none), a pay-as-you-go (PostPaid) charge
type, and base64 UserData: the boot script every cloud VM target shares (launch/boot_script.py). Without
--yes the request is sent with DryRun=true when credentials are found (ECS checks parameters, quotas and
stock, answers the error code DryRunOperation and creates nothing), else only written. Credentials come only
from the SDK's documented providers: VOLCENGINE_ACCESS_KEY / VOLCENGINE_SECRET_KEY (and
VOLCENGINE_SESSION_TOKEN), the Volcengine CLI's ~/.volcengine/config.json, and the instance's role when
VOLCENGINE_ECS_METADATA names it; never written, never printed.
API reference: https://www.volcengine.com/docs/6396/76275
"""

from __future__ import annotations

import ast
import base64
import contextlib
import json
import os

from gpuwise.errors import MissingDependencyError, UserInputError
from gpuwise.i18n import joined, msg
from gpuwise.launch import boot_script
from gpuwise.launch.boot_script import USER_DATA
from gpuwise.launch.model import Created, LaunchPlan
from gpuwise.launch.quoting import json_text, sh_words
from gpuwise.launch.wheel import FOLDER, Wheel, ship_wheel

REQUEST = "run-instances.json"
# NAS (NFSv3) with the NFSv3 options the Chinese clouds' NAS guides give (Huawei's SFS guide, cited in
# launch/huawei.py; Volcengine's own NAS guide was not found by this target's author); TOS and its CLI tosutil
BOOT = boot_script.Cloud(
    "volcengine", "NAS (NFS)", "vers=3,nolock,noresvport", "TOS", "tos", ("tosutil", "cp")
)
VARIABLES = "VOLCENGINE_ACCESS_KEY / VOLCENGINE_SECRET_KEY"
FILES = "~/.volcengine/config.json"


def _sdk():
    try:
        import volcenginesdkecs
    except ImportError as exc:
        raise MissingDependencyError(
            msg("--target {target} needs {package} ({error})").format(
                target="volcengine", package="volcenginesdk-ecs", error=exc
            ),
            "pip install 'gpuwise[cn-clouds]'",
        ) from exc
    return volcenginesdkecs


def region_of(zone: str) -> str:
    """cn-beijing-a -> cn-beijing (a Volcengine zone is its region plus a letter)."""
    head, _sep, tail = zone.rpartition("-")
    return head if head and len(tail) == 1 and tail.isalpha() else zone


def _needed(cloud: dict, key: str, what: str, fix: str) -> str:
    """A value the request cannot go without (what and fix: messages)."""
    value = cloud.get(key)
    if not value:
        raise UserInputError(
            msg("--target {target} needs {what}").format(target="volcengine", what=what), fix
        )
    return value


def request(plan: LaunchPlan, textfile: bool, cloud: dict, dry_run: bool, wheel: Wheel | None = None):
    """The RunInstancesRequest (SDK model) for the plan: an unknown field name, or a field the model requires
    left out, fails here, not at Volcengine."""
    m = _sdk()
    r, job = plan.resources, plan.job
    zone = _needed(cloud, "zone", msg("an availability zone"),
                   msg("add --zone, e.g. --zone cn-beijing-a (DescribeZones lists them)"))  # fmt: skip
    subnet = _needed(cloud, "subnet", msg("a subnet of your VPC in that zone"),
                     msg("add --subnet subnet-... (the VPC console, or DescribeSubnets)"))  # fmt: skip
    group = _needed(cloud, "security_group", msg("a security group of that VPC"),
                    msg("add --security-group sg-... (DescribeSecurityGroups)"))  # fmt: skip
    image = _needed(cloud, "image_id", msg("an image with the GPU driver (ImageId)"),
                    msg("add --image-id image-... (a public GPU image from DescribeImages, or your own)"))  # fmt: skip
    wheel = wheel or ship_wheel(plan.out, cloud.get("gpuwise_wheel"))
    url = boot_script.wheel_url(BOOT, cloud)
    script = boot_script.user_data(BOOT, plan, textfile, wheel, url)
    return m.RunInstancesRequest(
        zone_id=zone,
        instance_type_id=r.instance_type,
        image_id=image,
        instance_name=f"gw-{job.name}",
        network_interfaces=[
            m.NetworkInterfaceForRunInstancesInput(subnet_id=subnet, security_group_ids=[group])
        ],
        count=job.nodes,
        min_count=job.nodes,
        instance_charge_type="PostPaid",
        spot_strategy="SpotAsPriceGo" if r.spot else None,
        hpc_cluster_id=cloud.get("hpc_cluster"),
        user_data=base64.b64encode(script.encode()).decode(),
        dry_run=dry_run,
    )


def sent_fields(req) -> dict:
    """The request as the SDK sends it (its API names; unset fields left out)."""
    from volcenginesdkcore.model import canonical_str

    return canonical_str(req)


def build(plan: LaunchPlan, textfile: bool, cloud: dict) -> None:
    wheel = ship_wheel(plan.out, cloud.get("gpuwise_wheel"))
    req = request(plan, textfile, cloud, dry_run=True, wheel=wheel)
    region = region_of(req.zone_id)
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
                command=sh_words(["gpuwise", "launch", "--down", f"volcengine:{region}/INSTANCE_IDS"]),
                native="DeleteInstances",
            ),
        )
    )
    if plan.job.image:
        boot_script.container_note(plan, req.image_id)
    plan.notes += [
        msg("the security group {group} must allow TCP {rdzv_port} (rendezvous) and {exporter_port} (exporter) "
            "inside the VPC").format(group=req.network_interfaces[0].security_group_ids[0],
                                     rdzv_port=plan.job.rdzv_port, exporter_port=plan.job.exporter_port),
        boot_script.training_note(plan),
    ]  # fmt: skip
    plan.cloud_check = _send_dry_run(req, region)


def _credentials():
    """The SDK's documented providers, in its order (environment, the CLI's config file, the instance's role
    when VOLCENGINE_ECS_METADATA names it); None when none has credentials (nothing is printed)."""
    from volcenginesdkcore.auth.providers.cli_config_provider import CLIConfigCredentialProvider
    from volcenginesdkcore.auth.providers.ecs_role_provider import EcsRoleCredentialProvider
    from volcenginesdkcore.auth.providers.env_provider import EnvironmentVariableCredentialProvider

    providers = [EnvironmentVariableCredentialProvider(), CLIConfigCredentialProvider()]
    role = os.environ.get("VOLCENGINE_ECS_METADATA", "").strip()
    if role:  # the role of the ECS instance this runs on, named by the user (never guessed from the network)
        providers.append(EcsRoleCredentialProvider(role_name=role))
    for provider in providers:
        try:
            if provider.get_credentials() is not None:
                return provider
        except Exception:  # the SDK raises RuntimeError (or an OS error) when a source has none
            continue
    return None


def _client(region: str):
    provider = _credentials()
    if provider is None:
        return None
    import volcenginesdkcore

    configuration = volcenginesdkcore.Configuration()
    configuration.region = region
    configuration.credential_provider = provider
    return _sdk().ECSApi(volcenginesdkcore.ApiClient(configuration))


def _sdk_error():
    from volcenginesdkcore.rest import ApiException

    return ApiException


def _said(exc) -> tuple[str, str]:
    """Volcengine's error code and message: in the response body, or (as the SDK raises it) its reason."""
    error = None
    try:
        error = json.loads(exc.body)["ResponseMetadata"]["Error"]
    except (TypeError, ValueError, KeyError):
        with contextlib.suppress(ValueError, SyntaxError):
            error = ast.literal_eval(exc.reason or "")
    if isinstance(error, dict):
        return str(error.get("Code") or exc.status), str(error.get("Message") or "")
    return str(exc.status or type(exc).__name__), str(exc.reason or "")


def _send_dry_run(req, region: str) -> str:
    """Send the DryRun request when credentials are found; what Volcengine said (never the credentials)."""
    client = _client(region)
    if client is None:
        return msg("not sent: no Volcano Engine credentials ({variables}, or {file})").format(
            variables=VARIABLES, file=FILES
        )
    try:
        client.run_instances(req)
    except _sdk_error() as exc:
        code, message = _said(exc)
        if code == "DryRunOperation":
            return msg(
                "Volcano Engine accepted the dry run (parameters, quotas and stock checked; nothing created)"
            )
        return msg("Volcano Engine refused the dry run: {code}: {message}").format(code=code, message=message)
    return msg("Volcano Engine answered the dry run without its DryRunOperation code: check the console")


def create(plan: LaunchPlan, cloud: dict, textfile: bool) -> dict:
    req = request(plan, textfile, cloud, dry_run=False)
    region = region_of(req.zone_id)
    client = _client(region)
    if client is None:
        raise UserInputError(
            msg("no Volcano Engine credentials found; nothing created"),
            msg("export {variables}, or write {file}").format(variables=VARIABLES, file=FILES),
        )
    try:
        resp = client.run_instances(req)
    except _sdk_error() as exc:
        code, message = _said(exc)
        raise UserInputError(msg("{action} failed: {code}: {message}").format(
                                 action="RunInstances", code=code, message=message),
                             msg("fix what Volcengine names (zone, image, subnet, stock), then rerun")) from None  # fmt: skip
    ids = list(resp.instance_ids or [])
    launch_id = f"volcengine:{region}/{joined(',', ids)}"
    plan.creates[0].id = launch_id
    plan.creates[0].delete = sh_words(["gpuwise", "launch", "--down", launch_id])
    return {"id": launch_id, "instances": ids}


def down(rest: str) -> str:
    region, sep, ids = rest.partition("/")
    instances = [i for i in ids.split(",") if i]
    if not sep or not region or not instances or not all(i.startswith("i-") for i in instances):
        raise UserInputError(msg("{option} is not REGION/i-ID[,i-ID]").format(option=f"--down volcengine:{rest}"),
                             msg("e.g. {command}").format(command="--down volcengine:cn-beijing/i-abc123,i-def456"))  # fmt: skip
    m = _sdk()
    client = _client(region)
    if client is None:
        raise UserInputError(
            msg("no Volcano Engine credentials found; nothing deleted"),
            msg("export {variables}, then rerun").format(variables=VARIABLES),
        )
    try:
        client.delete_instances(m.DeleteInstancesRequest(instance_ids=instances))
    except _sdk_error() as exc:
        code, message = _said(exc)
        raise UserInputError(msg("{action} failed: {code}: {message}").format(
                                 action="DeleteInstances", code=code, message=message),
                             msg("check the ids in the ECS console")) from None  # fmt: skip
    return msg("released {n} ECS instance(s) in {region}: {ids}").format(
        n=len(instances), region=region, ids=joined(", ", instances)
    )
