"""Target skypilot: a SkyPilot task YAML; with --yes, `sky launch` (SkyPilot provisions, mounts, runs).

The task: resources (cloud, instance type, accelerators, region, spot, image), num_nodes, file_mounts
for the dataset (a bucket mounted, or a local folder uploaded), `setup` installs gpuwise and runs the
preflight on every node (gpuwise from the wheel this launch uploads: launch/wheel.py) (a critical finding fails the setup, so training never starts), `run` starts the
exporter beside torchrun, with the multi-node environment SkyPilot provides (SKYPILOT_NODE_IPS,
SKYPILOT_NUM_NODES, SKYPILOT_TASK_ID). Field names: https://docs.skypilot.co/en/latest/reference/yaml-spec.html
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from gpuwise.catalog.launchable import SKY_CLOUDS
from gpuwise.errors import MissingDependencyError, UserInputError
from gpuwise.i18n import joined, msg
from gpuwise.launch import steps
from gpuwise.launch.model import Created, LaunchPlan
from gpuwise.launch.quoting import sh, sh_words, yaml_document
from gpuwise.launch.wheel import FOLDER, Wheel, install_command, ship_wheel

TASK = "task.yaml"
NODE_OUT = "~/gpuwise-launch"
WHEELS_ON_NODE = "gpuwise-wheels"  # SkyPilot uploads OUT/wheels/ there (file_mounts)  # shown to the user; the scripts say "$HOME"/gpuwise-launch


def cluster_name(plan: LaunchPlan) -> str:
    return f"gw-{plan.job.name}"


def _file_mounts(plan: LaunchPlan) -> tuple[dict, list[str]]:
    ds = plan.job.dataset
    if ds is None:
        return {}, []
    if ds.kind == "object-store":
        return {ds.mount: {"source": ds.source, "mode": "MOUNT"}}, []
    if ds.kind == "local":
        return {ds.mount: str(Path(ds.source).expanduser().absolute())}, []
    # NFS: SkyPilot has no NFS file mount; the setup mounts it on every node
    return {}, [f"sudo mkdir -p {sh(ds.mount)}",
                f"sudo mount -t nfs {sh(ds.nfs_export)} {sh(ds.mount)}"]  # fmt: skip


def task_config(plan: LaunchPlan, textfile: bool, wheel: Wheel) -> dict:
    job, r = plan.job, plan.resources
    cloud = SKY_CLOUDS.get(r.provider or "")
    if cloud is None:
        raise UserInputError(
            msg("SkyPilot does not launch on {provider}").format(provider=r.provider)
            if r.provider
            else msg("SkyPilot does not launch on an unnamed provider"),
            msg(
                "use --target tencent for Tencent Cloud, --target slurm for your cluster, or an offer from {providers}"
            ).format(providers=joined(", ", sorted(SKY_CLOUDS))),
        )
    resources: dict = {"cloud": cloud, "instance_type": r.instance_type}
    if r.provider == "aws-capacity-blocks":
        plan.notes.append(msg("the price is an AWS Capacity Block's: reserve the block first, else the nodes are "
                            "billed on demand"))  # fmt: skip
    if r.accelerator and job.gpus_per_node:
        resources["accelerators"] = f"{r.accelerator}:{job.gpus_per_node}"
    if r.region:
        resources["region"] = r.region
    if r.spot:
        resources["use_spot"] = True
    if job.image:
        resources["image_id"] = f"docker:{job.image}"
    mounts, nfs_setup = _file_mounts(plan)
    mounts[f"~/{WHEELS_ON_NODE}"] = str(wheel.path.parent)  # the gpuwise wheel this launch runs, uploaded
    out = '"$HOME"/gpuwise-launch/' + sh(job.name)
    common = [
        f"OUT={out}",
        "NODE=$(hostname)",
        "export OUT NODE GPUWISE=gpuwise PYTHON=python3",
        'mkdir -p "$OUT"',
    ]
    setup = [
        "set -e",
        install_command(f'"$HOME"/{WHEELS_ON_NODE}', wheel),
        *nfs_setup,
        *([steps.user_setup(job)] if job.setup else []),
        "set +e",
        *common,
        steps.preflight(job),
    ]
    train = job.torchrun('"$SKYPILOT_NUM_NODES"', f'"$HEAD:{job.rdzv_port}"', '"$SKYPILOT_TASK_ID"')
    run = [
        *common,
        f"bash -c {sh(steps.exporter(job, textfile))} &",
        "EXPORTER=$!",
        steps.exporter_check(job, textfile),
        'HEAD=$(echo "$SKYPILOT_NODE_IPS" | head -n1)',
        train,
        "rc=$?",
        'kill "$EXPORTER" 2>/dev/null',
        "exit $rc",
    ]
    config: dict = {"name": cluster_name(plan), "num_nodes": job.nodes, "resources": resources}
    if job.workdir:
        config["workdir"] = job.workdir
    if mounts:
        config["file_mounts"] = mounts
    envs = dict(job.env)
    if job.dataset is not None:
        envs["GPUWISE_DATASET"] = job.dataset.mount
    if envs:
        config["envs"] = envs
    config["setup"] = joined("\n", setup) + "\n"
    config["run"] = joined("\n", run) + "\n"
    return config


def build(plan: LaunchPlan, textfile: bool, cloud: dict) -> None:
    wheel = ship_wheel(plan.out, cloud.get("gpuwise_wheel"))
    plan.copies[f"{FOLDER}/{wheel.name}"] = wheel.source
    config = task_config(plan, textfile, wheel)
    plan.files[TASK] = yaml_document(config)  # setup and run as literal blocks, as SkyPilot's docs write them
    name = cluster_name(plan)
    plan.creates.append(
        Created(
            msg("SkyPilot cluster"),
            f"{name} ({plan.job.nodes} x {plan.resources.instance_type})",
            msg("{command}  (or: {native})").format(
                command=f"gpuwise launch --down skypilot:{name}", native=f"sky down {name}"
            ),
        )  # fmt: skip
    )
    if plan.job.dataset is not None and plan.job.dataset.kind == "local":
        plan.notes.append(
            msg("SkyPilot uploads {source} to every node ({mount})").format(
                source=plan.job.dataset.source, mount=plan.job.dataset.mount
            )
        )
    plan.notes.append(
        msg("launch by hand: {command}").format(
            command=sh_words(["sky", "launch", "-c", name, plan.out / TASK])
        )
    )
    plan.notes.append(msg("preflight reports stay on each node in {folder} (fetch: {command})").format(
        folder=f"{NODE_OUT}/{plan.job.name}/preflight", command=f"rsync -Pavz {name}:{NODE_OUT}/ ."))  # fmt: skip


def _sky() -> str:
    found = shutil.which("sky")
    if found is None:
        raise MissingDependencyError(
            msg("the `sky` command is not installed: --target skypilot --yes runs `sky launch`"),
            msg(
                "pip install 'gpuwise[skypilot]' (or skypilot) and set up cloud credentials (`sky check`), "
                "or drop --yes and run the printed `sky launch` yourself"
            ),
        )
    return found


def create(plan: LaunchPlan) -> dict:
    name = cluster_name(plan)
    p = subprocess.run([_sky(), "launch", "-y", "-c", name, str(plan.out / TASK)], text=True)
    if p.returncode != 0:
        raise UserInputError(
            msg(
                "sky launch failed (exit {code}); whatever SkyPilot created is listed by `sky status`"
            ).format(code=p.returncode),
            msg("read SkyPilot's message above; delete a half-made cluster with: {command}").format(
                command=f"gpuwise launch --down skypilot:{name}"
            ),
        )
    plan.creates[0].id = f"skypilot:{name}"
    return {"id": f"skypilot:{name}", "cluster": name}


def down(name: str) -> str:
    p = subprocess.run([_sky(), "down", "-y", name], capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        raise UserInputError(
            msg("{command} failed: {message}").format(
                command=f"sky down {name}", message=p.stderr.strip()[-300:]
            ),
            msg("check the name with `sky status`"),
        )
    return msg("deleted SkyPilot cluster {name}").format(name=name)
