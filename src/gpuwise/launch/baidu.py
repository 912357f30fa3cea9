"""Target baidu: a BCC CreateInstanceBySpec request built by the official SDK (bce-python-sdk) and not sent.

BCC has no dry run and the SDK's `BccClient.create_instance_by_spec` builds the request body inside the
method that sends it, so the dry run calls that method on a client whose `_send_request` keeps the HTTP
method, path, query and body instead of sending them: the request written is the one the SDK would send (an
argument the SDK does not know fails here). It asks for the spec from the offer, ImageId (an image with the
GPU driver), zoneName (--zone, e.g. cn-bj-a), the subnet and security group, purchaseCount = nodes, a
pay-as-you-go (Postpaid) billing, and base64 userData: the boot script every cloud VM target shares
(launch/boot_script.py). Only --yes sends it. The SDK reads no credentials of its own (no environment
chain): gpuwise reads BCE_ACCESS_KEY_ID / BCE_SECRET_ACCESS_KEY (and BCE_SESSION_TOKEN), names chosen
here, never written, never printed.
API reference: https://cloud.baidu.com/doc/BCC/s/njwvympu0 (the SDK's create_instance_by_spec);
userData is base64 (https://cloud.baidu.com/doc/BCC/s/om4wfql2o, 查询实例自定义数据).
"""

from __future__ import annotations

import base64
import json
import os

from gpuwise.errors import MissingDependencyError, UserInputError
from gpuwise.i18n import joined, msg
from gpuwise.launch import boot_script
from gpuwise.launch.boot_script import USER_DATA
from gpuwise.launch.model import Created, LaunchPlan
from gpuwise.launch.quoting import json_text, sh_words
from gpuwise.launch.wheel import FOLDER, Wheel, ship_wheel

REQUEST = "create-instance-by-spec.json"
# CFS (NFS): Baidu's own CFS mount guide was not found by this target's author; the NFSv3 options the other
# Chinese clouds' NAS guides give (Huawei's SFS guide, cited in launch/huawei.py). BOS and its CLI bcecmd
BOOT = boot_script.Cloud(
    "baidu", "CFS (NFS)", "vers=3,nolock,noresvport", "BOS", "bos", ("bcecmd", "bos", "cp")
)
VARIABLES = "BCE_ACCESS_KEY_ID / BCE_SECRET_ACCESS_KEY"


def _sdk():
    try:
        from baidubce.services.bcc import bcc_client, bcc_model
    except ImportError as exc:
        raise MissingDependencyError(
            msg("--target {target} needs {package} ({error})").format(
                target="baidu", package="bce-python-sdk", error=exc
            ),
            "pip install 'gpuwise[cn-clouds]'",
        ) from exc
    return bcc_client, bcc_model


def region_of(zone: str) -> str:
    """cn-bj-a -> bj (a BCC zone is country-region-letter; the region names the endpoint bcc.REGION.baidubce.com)."""
    parts = zone.split("-")
    return parts[1] if len(parts) == 3 and all(parts) else zone


def endpoint(region: str) -> str:
    return f"bcc.{region}.baidubce.com"


def _needed(cloud: dict, key: str, what: str, fix: str) -> str:
    """A value the request cannot go without (what and fix: messages)."""
    value = cloud.get(key)
    if not value:
        raise UserInputError(msg("--target {target} needs {what}").format(target="baidu", what=what), fix)
    return value


def arguments(plan: LaunchPlan, textfile: bool, cloud: dict, wheel: Wheel | None = None) -> dict:
    """create_instance_by_spec's arguments for the plan (zone, image, network, count, billing, user data)."""
    _client_module, model = _sdk()
    r, job = plan.resources, plan.job
    if " " in (r.instance_type or ""):  # the shipped baidu row is a BML platform instance, not a BCC spec
        raise UserInputError(
            msg("{offer} is not a BCC instance spec").format(offer=f"baidu:{r.instance_type}"),
            msg("list your BCC GPU specs (e.g. bcc.gn5.c12m92.1v100) in {file} and pass --offer baidu:SPEC").format(
                file="~/.config/gpuwise/offers/baidu.csv"),
        )  # fmt: skip
    zone = _needed(cloud, "zone", msg("an availability zone"),
                   msg("add --zone, e.g. --zone cn-bj-a (list_zones lists them)"))  # fmt: skip
    subnet = _needed(cloud, "subnet", msg("a subnet of your VPC in that zone"),
                     msg("add --subnet sbn-... (the VPC console)"))  # fmt: skip
    group = _needed(cloud, "security_group", msg("a security group of that VPC"),
                    msg("add --security-group g-... (the BCC console's security groups)"))  # fmt: skip
    image = _needed(cloud, "image_id", msg("an image with the GPU driver (ImageId)"),
                    msg("add --image-id m-... (a public GPU image from list_images, or your own)"))  # fmt: skip
    wheel = wheel or ship_wheel(plan.out, cloud.get("gpuwise_wheel"))
    script = boot_script.user_data(BOOT, plan, textfile, wheel, boot_script.wheel_url(BOOT, cloud))
    return {
        "spec": r.instance_type,
        "image_id": image,
        "zone_name": zone,
        "subnet_id": subnet,
        "security_group_id": group,
        "purchase_count": job.nodes,
        "name": f"gw-{job.name}",
        "billing": model.Billing("Postpaid"),
        "bid_model": "market" if r.spot else None,
        "user_data": base64.b64encode(script.encode()).decode(),
    }


def built_request(args: dict) -> dict:
    """What the SDK's create_instance_by_spec would send: its method, path, query and body (nothing sent)."""
    bcc_client, _model = _sdk()
    from baidubce.bce_client_configuration import BceClientConfiguration

    class Capture(bcc_client.BccClient):
        def _send_request(self, http_method, path, body=None, headers=None, params=None, config=None,
                          body_parser=None, prefix=None):  # fmt: skip
            self.captured = {
                "method": http_method.decode() if isinstance(http_method, bytes) else http_method,
                "path": ((prefix or bcc_client.BccClient.prefix) + path).decode(),
                "query": dict(params or {}),
                "body": json.loads(body),
            }

    region = region_of(args["zone_name"])
    client = Capture(BceClientConfiguration(endpoint=endpoint(region)))
    client.create_instance_by_spec(**args)
    return {"host": endpoint(region), **client.captured}


def build(plan: LaunchPlan, textfile: bool, cloud: dict) -> None:
    wheel = ship_wheel(plan.out, cloud.get("gpuwise_wheel"))
    args = arguments(plan, textfile, cloud, wheel)
    sent = built_request(args)
    region = region_of(args["zone_name"])
    plan.copies[f"{FOLDER}/{wheel.name}"] = wheel.source
    boot_script.wheel_notes(BOOT, plan, wheel, cloud.get("gpuwise_wheel_url"))
    plan.files[REQUEST] = json_text(sent, indent=2) + "\n"
    plan.files[USER_DATA] = base64.b64decode(args["user_data"]).decode()
    plan.resources.zone = args["zone_name"]
    plan.creates.append(
        Created(
            msg("BCC instance x {n}").format(n=plan.job.nodes),
            f"gw-{plan.job.name} ({plan.resources.instance_type}, {args['zone_name']})",
            msg("{command}  (or: {native})").format(
                command=sh_words(["gpuwise", "launch", "--down", f"baidu:{region}/INSTANCE_IDS"]),
                native="release_instance",
            ),
        )
    )
    if plan.job.image:
        boot_script.container_note(plan, args["image_id"])
    plan.notes += [
        msg("the security group {group} must allow TCP {rdzv_port} (rendezvous) and {exporter_port} (exporter) "
            "inside the VPC").format(group=args["security_group_id"],
                                     rdzv_port=plan.job.rdzv_port, exporter_port=plan.job.exporter_port),
        boot_script.training_note(plan),
    ]  # fmt: skip
    plan.cloud_check = msg(
        "not sent: BCC has no dry run; the request the SDK builds is written to {file} and sent only with --yes"
    ).format(file=REQUEST)


def _client(region: str):
    """A BccClient with the BCE_* credentials; None when they are not set (nothing is printed)."""
    key, secret = os.environ.get("BCE_ACCESS_KEY_ID", ""), os.environ.get("BCE_SECRET_ACCESS_KEY", "")
    if not key.strip() or not secret.strip():
        return None
    bcc_client, _model = _sdk()
    from baidubce.auth.bce_credentials import BceCredentials
    from baidubce.bce_client_configuration import BceClientConfiguration

    token = os.environ.get("BCE_SESSION_TOKEN") or None
    return bcc_client.BccClient(
        BceClientConfiguration(
            credentials=BceCredentials(key.strip(), secret.strip()),
            endpoint=endpoint(region),
            security_token=token,
        )
    )


def _said(exc) -> tuple[str, str]:
    """BCC's error code and message (a BceServerError; a BceHttpClientError wraps the last one)."""
    inner = getattr(exc, "last_error", None) or exc
    code = getattr(inner, "code", None) or getattr(inner, "status_code", None) or type(inner).__name__
    code = code.decode() if isinstance(code, bytes) else str(code)
    return code, str(inner)


def _sdk_errors():
    from baidubce.exception import BceError

    return BceError


def create(plan: LaunchPlan, cloud: dict, textfile: bool) -> dict:
    args = arguments(plan, textfile, cloud)
    region = region_of(args["zone_name"])
    client = _client(region)
    if client is None:
        raise UserInputError(
            msg("no Baidu AI Cloud credentials found; nothing created"),
            msg("export {variables}, then rerun").format(variables=VARIABLES),
        )
    try:
        resp = client.create_instance_by_spec(**args)
    except _sdk_errors() as exc:
        code, message = _said(exc)
        raise UserInputError(msg("{action} failed: {code}: {message}").format(
                                 action="CreateInstanceBySpec", code=code, message=message),
                             msg("fix what BCC names (zone, image, subnet, stock), then rerun")) from None  # fmt: skip
    ids = [str(i) for i in (getattr(resp, "instance_ids", None) or [])]
    launch_id = f"baidu:{region}/{joined(',', ids)}"
    plan.creates[0].id = launch_id
    plan.creates[0].delete = sh_words(["gpuwise", "launch", "--down", launch_id])
    return {"id": launch_id, "instances": ids}


def down(rest: str) -> str:
    region, sep, ids = rest.partition("/")
    instances = [i for i in ids.split(",") if i]
    if not sep or not region or not instances or not all(i.startswith("i-") for i in instances):
        raise UserInputError(msg("{option} is not REGION/i-ID[,i-ID]").format(option=f"--down baidu:{rest}"),
                             msg("e.g. {command}").format(command="--down baidu:bj/i-abc123,i-def456"))  # fmt: skip
    client = _client(region)
    if client is None:
        raise UserInputError(
            msg("no Baidu AI Cloud credentials found; nothing deleted"),
            msg("export {variables}, then rerun").format(variables=VARIABLES),
        )
    released = []
    for instance in instances:
        try:
            client.release_instance(instance)
        except _sdk_errors() as exc:
            code, message = _said(exc)
            raise UserInputError(msg("{action} failed: {code}: {message}").format(
                                     action=f"release_instance {instance}", code=code, message=message),
                                 msg("check the ids in the BCC console (released before the error: {ids})").format(
                                     ids=joined(", ", released) or "-")) from None  # fmt: skip
        released.append(instance)
    return msg("released {n} BCC instance(s) in {region}: {ids}").format(
        n=len(instances), region=region, ids=joined(", ", instances)
    )
