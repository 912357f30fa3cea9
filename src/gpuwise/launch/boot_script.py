"""The boot script every cloud VM target passes as user data (cloud-init runs it as root on each instance).

It mounts the dataset (an NFS file system, with the cloud's documented mount options), installs gpuwise
offline (the image's own, or the wheel this launch shipped, fetched from --gpuwise-wheel-url and sha256
checked: never from a package registry), runs the preflight (`steps.preflight`) and starts the exporter.
What differs between clouds is a `Cloud`: the target's name, its NFS mount options and its object store's
CLI (for the note that tells the user how to upload the wheel). Each target module keeps its API request.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuwise.errors import UserInputError
from gpuwise.i18n import joined, msg
from gpuwise.launch import steps
from gpuwise.launch.model import LaunchPlan
from gpuwise.launch.quoting import sh, sh_comment, sh_say, sh_words
from gpuwise.launch.wheel import Wheel, install_command

USER_DATA = "user-data.sh"
NODE_OUT = "/var/log/gpuwise-launch"
WHEELS_ON_NODE = "/var/lib/gpuwise-wheels"


@dataclass(frozen=True)
class Cloud:
    target: str  # "tencent": the --target name, in the script's first comment
    nfs: str  # the cloud's NFS service, e.g. "CFS (NFS)", in a comment
    nfs_options: str  # its documented mount options, e.g. "vers=4.0,noresvport"
    store: str  # its object store, e.g. "COS"
    store_scheme: str  # its URL scheme, e.g. "cos"
    store_copy: tuple[str, ...]  # its CLI's copy command, e.g. ("coscli", "cp")


def user_data(cloud: Cloud, plan: LaunchPlan, textfile: bool, wheel: Wheel, wheel_url: str | None) -> str:
    """The boot script: mount, gpuwise, preflight, exporter."""
    job, ds = plan.job, plan.job.dataset
    lines = [
        "#!/bin/bash",
        sh_comment(f"Written by `gpuwise launch --target {cloud.target}` for {job.name}: mount, preflight, exporter."),
        "set -uo pipefail",
        f"DEFAULT_OUT={sh(f'{NODE_OUT}/{job.name}')}",
        'OUT=${GPUWISE_LAUNCH_OUT:-$DEFAULT_OUT}',
        "NODE=$(hostname)",
        "export OUT NODE GPUWISE=gpuwise PYTHON=python3",
        'mkdir -p "$OUT"',
        *steps.env_exports(job, ds.mount if ds is not None and ds.kind != "object-store" else (ds.source if ds else None)),
    ]  # fmt: skip
    if ds is not None and ds.kind == "nfs":
        mount = f"mount -t nfs -o {cloud.nfs_options} {sh(ds.nfs_export)} {sh(ds.mount)}"
        skipped = sh_say(
            "gpuwise launch: dataset mount skipped (%s): %s", sh(mount), '"$GPUWISE_LAUNCH_SKIP_MOUNT"'
        )
        failed = sh_say("gpuwise launch: cannot mount %s", sh(ds.nfs_export), err=True)
        lines += [
            sh_comment(f"the dataset: a {cloud.nfs} file system"),
            'if [ -n "${GPUWISE_LAUNCH_SKIP_MOUNT:-}" ]; then',
            f"  {skipped}",
            "else",
            f'  mkdir -p {sh(ds.mount)} && {mount} || {{ {failed}; touch "$OUT/preflight-failed"; exit 1; }}',
            "fi",
        ]  # fmt: skip
    lines += [
        *install_gpuwise(wheel, wheel_url),
        "preflight() {",
        steps.preflight(job),
        "}",
        'if ! (preflight); then touch "$OUT/preflight-failed"; exit 1; fi',
        f'nohup sh -c {sh(steps.exporter(job, textfile))} > "$OUT/exporter.log" 2>&1 &',
        'echo $! > "$OUT/exporter.pid"',
        steps.exporter_check(job, textfile),
        "",
    ]
    return joined("\n", lines)


def install_gpuwise(wheel: Wheel, url: str | None) -> list[str]:
    """gpuwise on the instance: the image's own, else the shipped wheel fetched from URL (sha256 checked)."""
    if not url:
        missing = sh_say(
            "gpuwise launch: gpuwise is not on this image and no --gpuwise-wheel-url was given", err=True
        )
        return [f'command -v gpuwise >/dev/null || {{ {missing}; touch "$OUT/preflight-failed"; exit 1; }}']
    fetch = (
        "import hashlib, sys, urllib.request\n"
        "data = urllib.request.urlopen(sys.argv[1], timeout=120).read()\n"
        "if hashlib.sha256(data).hexdigest() != sys.argv[2]: sys.exit('sha256 mismatch: not the wheel of this launch')\n"
        "open(sys.argv[3], 'wb').write(data)\n"
    )
    failed = sh_say("gpuwise launch: cannot fetch the gpuwise wheel from %s", sh(url), err=True)
    return [
        "if ! command -v gpuwise >/dev/null; then",
        f"  mkdir -p {WHEELS_ON_NODE}",
        f"  python3 -c {sh(fetch)} {sh(url)} {sh(wheel.sha256)} {sh(f'{WHEELS_ON_NODE}/{wheel.name}')} || "
        f'{{ {failed}; touch "$OUT/preflight-failed"; exit 1; }}',
        f"  {install_command(WHEELS_ON_NODE, wheel, 'python3')}",
        "fi",
    ]


def wheel_url(cloud: Cloud, options: dict) -> str | None:
    """--gpuwise-wheel-url, checked: the instances fetch the wheel over https only."""
    url = options.get("gpuwise_wheel_url")
    if url and not url.startswith("https://"):
        raise UserInputError(
            msg("--gpuwise-wheel-url {url!r} is not an https:// URL").format(url=url),
            msg(
                "upload the wheel to {store} (or any object store) and pass its https URL, e.g. a presigned one"
            ).format(store=cloud.store),
        )
    return url


def wheel_notes(cloud: Cloud, plan: LaunchPlan, wheel: Wheel, url: str | None) -> None:
    """How the instances get gpuwise: from URL, or what the user uploads (to the dataset's bucket if any)."""
    ds = plan.job.dataset
    bucket = (
        ds.source.split("/")[2]
        if ds is not None and ds.scheme == cloud.store_scheme and ds.source.count("/") >= 2
        else ""
    )
    upload = (
        sh_words(
            [*cloud.store_copy, wheel.path, f"{cloud.store_scheme}://{bucket}/gpuwise-wheels/{wheel.name}"]
        )
        if bucket
        else None
    )
    if url:
        plan.notes.append(msg("the instances fetch the gpuwise wheel {wheel} from {url} (sha256 checked)").format(
            wheel=wheel.name, url=url))  # fmt: skip
        return
    if upload:
        plan.notes.append(
            msg("the image must have gpuwise, or upload {wheel} to the object store (e.g. {command}) and pass its "
              "https URL (a presigned one for a private bucket) with --gpuwise-wheel-url").format(
                wheel=wheel.path, command=upload))  # fmt: skip
    else:
        plan.notes.append(
            msg("the image must have gpuwise, or upload {wheel} to an object store and pass its https URL "
              "(a presigned one for a private bucket) with --gpuwise-wheel-url").format(wheel=wheel.path))  # fmt: skip


def training_note(plan: LaunchPlan) -> str:
    """The torchrun each instance runs once every preflight passed (the job is not started by user data)."""
    head = "<private IP of the first instance>"  # stays English: a placeholder in a command the user edits
    torchrun = plan.job.torchrun(str(plan.job.nodes), f"{head}:{plan.job.rdzv_port}", sh(plan.job.name))
    return msg("training: once every instance passed its preflight (no {marker}), run on each: {command}").format(
        marker=f"{NODE_OUT}/{plan.job.name}/preflight-failed", command=torchrun)  # fmt: skip


def container_note(plan: LaunchPlan, image_id: str) -> None:
    """A container image in JOB.yaml is not run by a VM target: say which machine image runs the job."""
    plan.notes.append(msg("the container image {image} is not started by this target: {image_id} runs "
                          "the job (use --target skypilot to run a container)").format(
                            image=plan.job.image, image_id=image_id))  # fmt: skip
