"""Target slurm: an sbatch script (preflight step, exporter per node, one torchrun launcher per node).

Two files in the output folder, which must be on a filesystem every node sees (the usual shared home
or project folder): `job.sbatch` (standard Slurm only: sbatch directives, srun, scontrol) and
`node.sh`, what each srun step runs on a node:
1. `node.sh preflight` (the job's prolog step): the dataset check and `gpuwise doctor --expect` on every
   node; a critical finding ends the job before training, each node's report in OUT/preflight/<node>.json;
2. `node.sh exporter`: `gpuwise export` beside the job (an --overlap step that shares the nodes with
   training), `node.sh check-exporter` records one answer per node (OUT/monitoring/<node>.prom), and
   OUT/monitoring/targets.json lists the exporters for Prometheus (file_sd format);
3. `node.sh train`: one torchrun per node, c10d rendezvous on the first node of the allocation.
"""

from __future__ import annotations

import sys
from pathlib import Path

from gpuwise.errors import UserInputError
from gpuwise.i18n import joined, msg
from gpuwise.launch import steps
from gpuwise.launch.model import Created, LaunchPlan
from gpuwise.launch.quoting import json_text, sbatch_directive, sh, sh_words
from gpuwise.slurm import client
from gpuwise.slurm.request import SlurmRequest, check_gpu_request, resource_options, time_from_hours

SCRIPT, NODE_SCRIPT = "job.sbatch", "node.sh"
CONTAINER_MODES = ("auto", "pyxis", "none")


def _dataset_path(plan: LaunchPlan) -> str | None:
    ds = plan.job.dataset
    if ds is None:
        return None
    return ds.mount if ds.kind == "nfs" else ds.source


def _file_sd_code(port: int, name: str) -> str:
    """Python that turns host names (stdin) into a Prometheus file_sd targets list."""
    return (
        f'import json, sys; print(json.dumps([{{"targets": [h + {json_text(f":{port}")} for h in sys.stdin.read().split()], '
        f'"labels": {json_text({"job": f"gpuwise-{name}"})}}}]))'
    )


def node_script(plan: LaunchPlan, textfile: bool) -> str:
    job = plan.job
    data = _dataset_path(plan)
    check_data = steps.dataset_check(job, data) if data and job.dataset.kind != "object-store" else ":"
    workdir = str(Path(job.workdir or ".").expanduser().absolute())
    train = job.torchrun('"$SLURM_JOB_NUM_NODES"', f'"$HEAD:{job.rdzv_port}"', '"gw-$SLURM_JOB_ID"')
    return joined(
        "\n",
        [
            "#!/bin/bash",
            "# Written by `gpuwise launch --target slurm`: what each step of job.sbatch runs on a node.",
            "set -uo pipefail",
            "NODE=${SLURMD_NODENAME:-$(hostname)}",
            "export NODE",
            'case "${1:-}" in',
            "setup)",
            f"exec {steps.user_setup(job)}" if job.setup else ":",
            ";;",
            "preflight)",
            check_data,
            steps.preflight(job),
            ";;",
            "exporter)",
            steps.exporter(job, textfile),
            ";;",
            "check-exporter)",
            steps.exporter_check(job, textfile),
            ";;",
            "targets)",
            f'scontrol show hostnames "$SLURM_JOB_NODELIST" | "$PYTHON" -c {sh(_file_sd_code(job.exporter_port, job.name))}',
            ";;",
            "train)",
            f"cd {sh(workdir)} || exit 1",
            f"exec {train}",
            ";;",
            '*) echo "usage: node.sh setup|preflight|exporter|check-exporter|targets|train" >&2; exit 2 ;;',
            "esac",
            "",
        ],
    )


def request(plan: LaunchPlan, sbatch_options: dict) -> SlurmRequest:
    """What the job asks Slurm for; --time defaults to the training time (the plan's, else the job's hours)."""
    o, hours = sbatch_options, plan.resources.hours or plan.job.hours
    time = o.get("time") or (time_from_hours(hours) if hours else None)
    if time and not o.get("time"):
        plan.notes.append(msg("sbatch --time={time} from the training time ({hours} h); override with --time").format(
            time=time, hours=f"{hours:g}"))  # fmt: skip
    return SlurmRequest(
        gpus_per_node=plan.job.gpus_per_node,
        gpu_request=check_gpu_request(o.get("gpu_request") or "gpus-per-node"),
        exclusive=bool(o.get("exclusive")),
        time=time,
        partition=o.get("partition"),
        account=o.get("account"),
        qos=o.get("qos"),
    )


def directives(plan: LaunchPlan, sbatch_options: dict) -> list[str]:
    job, out = plan.job, str(plan.out)
    lines = [
        sbatch_directive("job-name", f"gw-{job.name}", "name"),
        sbatch_directive("nodes", job.nodes, "nodes"),
        sbatch_directive("ntasks-per-node", 1, "ntasks-per-node"),
        sbatch_directive("output", out, "--out", suffix="/slurm-%j.out"),
    ]
    for option, value in resource_options(request(plan, sbatch_options)):
        lines.append(
            f"#SBATCH --{option}" if value is None else sbatch_directive(option, value, f"--{option}")
        )
    return lines


def container_flags(plan: LaunchPlan, container: str) -> str:
    """The training step's Pyxis flags: the job's image, with the output folder and the workdir mounted.
    container: "auto" (when srun takes --container-image), "pyxis" (always), "none" (never)."""
    job = plan.job
    if container not in CONTAINER_MODES:
        raise UserInputError(
            msg("--container {value!r} is not one of {choices}").format(value=container, choices=joined(", ", CONTAINER_MODES)),
            msg("use auto (Pyxis when srun has it), pyxis or none"),
        )  # fmt: skip
    if not job.image or container == "none":
        return ""
    if container == "auto" and not client.srun_takes_container_image():
        plan.notes.append(msg("the image {image} is not used: this srun has no --container-image (Pyxis); "
                            "pass --container pyxis to use it anyway").format(image=job.image))  # fmt: skip
        return ""
    workdir = str(Path(job.workdir or ".").expanduser().absolute())
    mounts = []
    for path in dict.fromkeys([str(plan.out), workdir]):
        if "," in path or ":" in path:
            raise UserInputError(
                msg("{path} cannot be a Pyxis container mount (',' and ':' separate mounts)").format(
                    path=path
                ),
                msg("use an --out folder and a workdir without ',' or ':', or --container none"),
            )
        mounts.append(f"{path}:{path}")
    return f" --container-image={sh(job.image)} --container-mounts={sh(joined(',', mounts))}"


def job_script(plan: LaunchPlan, sbatch_options: dict) -> str:
    job, out = plan.job, str(plan.out)
    container = container_flags(plan, sbatch_options.get("container") or "auto")
    node = f'bash "$OUT/{NODE_SCRIPT}"'
    lines = ["#!/bin/bash", *directives(plan, sbatch_options)]
    lines += [
        "# Written by `gpuwise launch --target slurm`. Standard Slurm only: sbatch, srun, scontrol.",
        "set -uo pipefail",
        f"OUT={sh(out)}",
        f"GPUWISE={sh(client.gpuwise_executable())}",
        f"PYTHON={sh(Path(sys.executable).absolute())}",
        'HEAD=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)',
        "export OUT GPUWISE PYTHON HEAD",
        *steps.env_exports(job, _dataset_path(plan)),
        'mkdir -p "$OUT/preflight" "$OUT/monitoring"',
        "",
    ]
    if job.setup:
        lines += ["# 0. setup, once per node", f"srun --ntasks-per-node=1 {node} setup || "
                  '{ echo "gpuwise launch: setup failed; job aborted" >&2; exit 1; }', ""]  # fmt: skip
    lines += [
        "# 1. prolog step: the preflight on every node; a critical finding aborts before training",
        f"if ! srun --ntasks-per-node=1 {node} preflight; then",
        '  echo "gpuwise launch: preflight failed; job aborted before training; reports in $OUT/preflight" >&2',
        "  exit 1",
        "fi",
        "",
        "# 2. the exporter beside the job on every node, one check that each answers, targets for Prometheus",
        f"srun --ntasks-per-node=1 --overlap {node} exporter &",
        "EXPORTER=$!",
        f"srun --ntasks-per-node=1 --overlap {node} check-exporter",
        f'{node} targets > "$OUT/monitoring/targets.json"',
        "",
        "# 3. training: one torchrun launcher per node, c10d rendezvous on the first node",
        f"srun --ntasks-per-node=1{container} {node} train",
        "rc=$?",
        'kill "$EXPORTER" 2>/dev/null; wait "$EXPORTER" 2>/dev/null',
        'echo "gpuwise launch: training exit code $rc"',
        "exit $rc",
        "",
    ]
    return joined("\n", lines)


def build(plan: LaunchPlan, textfile: bool, sbatch_options: dict) -> None:
    plan.files[SCRIPT] = job_script(plan, sbatch_options)
    plan.files[NODE_SCRIPT] = node_script(plan, textfile)
    plan.creates.append(
        Created(
            msg("Slurm job"),
            msg("{name} ({nodes} nodes)").format(name=f"gw-{plan.job.name}", nodes=plan.job.nodes),
            msg("{command}  (or: {native})").format(
                command="gpuwise launch --down slurm:JOBID", native="scancel JOBID"
            ),
        )  # fmt: skip
    )
    plan.notes.append(
        msg("submit by hand: {command}").format(command=sh_words(["sbatch", plan.out / SCRIPT]))
    )


def create(plan: LaunchPlan, wait: bool, timeout_s: float | None = None) -> dict:
    """sbatch OUT/job.sbatch (written by the dry run step); with wait, until the job ends."""
    fix = msg("run gpuwise launch on a Slurm login node (or drop --yes to see the script)")
    job = client.submit(plan.out / SCRIPT, wait=wait, timeout_s=timeout_s, fix=fix)
    job_id = job.job_id
    plan.creates[0].id = f"slurm:{job_id}"
    plan.creates[0].delete = msg("{command}  (or: {native})").format(
        command=f"gpuwise launch --down slurm:{job_id}", native=f"scancel {job_id}"
    )
    result: dict = {"id": f"slurm:{job_id}", "job_id": job_id, "log": str(plan.out / f"slurm-{job_id}.out")}
    if wait:
        result["exit_code"] = job.exit_code
    return result


def down(job_id: str) -> str:
    client.cancel(job_id, fix=msg("run --down on the Slurm login node the job came from"))
    return msg("cancelled Slurm job {id}").format(id=job_id)
