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

import shutil
import subprocess
import sys
from pathlib import Path

from gpuwise.errors import EnvironmentProblem, MissingDependencyError, UserInputError
from gpuwise.i18n import _
from gpuwise.launch import steps
from gpuwise.launch.model import Created, LaunchPlan
from gpuwise.launch.quoting import json_text, sbatch_directive, sh, sh_words

SCRIPT, NODE_SCRIPT = "job.sbatch", "node.sh"


def _gpuwise() -> str:
    beside = Path(sys.executable).parent / "gpuwise"
    found = str(beside) if beside.exists() else shutil.which("gpuwise")
    return str(Path(found).absolute()) if found else "gpuwise"


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
    return "\n".join(
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
        ]
    )


def job_script(plan: LaunchPlan, sbatch_options: dict) -> str:
    job, out = plan.job, str(plan.out)
    directives = [
        sbatch_directive("job-name", f"gw-{job.name}", "name"),
        sbatch_directive("nodes", job.nodes, "nodes"),
        sbatch_directive("ntasks-per-node", 1, "ntasks-per-node"),
        sbatch_directive("output", out, "--out", suffix="/slurm-%j.out"),
    ]
    options = dict(sbatch_options)
    if job.gpus_per_node and options.pop("gres", True):  # --no-gres: a cluster without GPU GRES configured
        directives.append(sbatch_directive("gpus-per-node", job.gpus_per_node, "gpus_per_node"))
    directives += [sbatch_directive(k, v, f"--{k}") for k, v in options.items() if v and k != "gres"]
    # a container image runs the training step through pyxis/enroot, NVIDIA's Slurm container plugin
    container = f" --container-image={sh(job.image)}" if job.image else ""
    node = f'bash "$OUT/{NODE_SCRIPT}"'
    lines = ["#!/bin/bash", *directives]
    lines += [
        "# Written by `gpuwise launch --target slurm`. Standard Slurm only: sbatch, srun, scontrol.",
        "set -uo pipefail",
        f"OUT={sh(out)}",
        f"GPUWISE={sh(_gpuwise())}",
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
    return "\n".join(lines)


def build(plan: LaunchPlan, textfile: bool, sbatch_options: dict) -> None:
    plan.files[SCRIPT] = job_script(plan, sbatch_options)
    plan.files[NODE_SCRIPT] = node_script(plan, textfile)
    plan.creates.append(
        Created(
            _("Slurm job"),
            _("{name} ({nodes} nodes)").format(name=f"gw-{plan.job.name}", nodes=plan.job.nodes),
            _("{command}  (or: {native})").format(
                command="gpuwise launch --down slurm:JOBID", native="scancel JOBID"
            ),
        )  # fmt: skip
    )
    plan.notes.append(_("submit by hand: {command}").format(command=sh_words(["sbatch", plan.out / SCRIPT])))


def create(plan: LaunchPlan, wait: bool, timeout_s: float | None = None) -> dict:
    """sbatch OUT/job.sbatch (written by the dry run step); with wait, until the job ends."""
    if shutil.which("sbatch") is None:
        raise MissingDependencyError(
            _("sbatch not found: --target slurm submits through Slurm"),
            _("run gpuwise launch on a Slurm login node (or drop --yes to see the script)"),
        )
    cmd = ["sbatch", "--parsable", *(["--wait"] if wait else []), str(plan.out / SCRIPT)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, _stderr = proc.communicate()
        job_id = stdout.strip().split(";")[0]
        if job_id:
            subprocess.run(["scancel", job_id], capture_output=True, timeout=30)
        raise EnvironmentProblem(
            (
                _("the Slurm job {id} did not end within {seconds}s; cancelled").format(
                    id=job_id, seconds=f"{timeout_s:.0f}"
                )
                if job_id
                else _("the Slurm job (not yet submitted) did not end within {seconds}s; cancelled").format(
                    seconds=f"{timeout_s:.0f}"
                )
            ),
            _("give it more time with --wait-timeout, or submit without --wait and follow it with squeue"),
        ) from None
    job_id = stdout.strip().split(";")[0]
    if not job_id.isdigit():
        raise UserInputError(
            _("sbatch refused the job: {message}").format(message=stderr.strip()[-500:] or _("no message")),
            _("check nodes, --partition, --account and --time against `sinfo`, then rerun"),
        )
    plan.creates[0].id = f"slurm:{job_id}"
    plan.creates[0].delete = _("{command}  (or: {native})").format(
        command=f"gpuwise launch --down slurm:{job_id}", native=f"scancel {job_id}"
    )
    result: dict = {"id": f"slurm:{job_id}", "job_id": job_id, "log": str(plan.out / f"slurm-{job_id}.out")}
    if wait:
        result["exit_code"] = proc.returncode
    return result


def down(job_id: str) -> str:
    if shutil.which("scancel") is None:
        raise MissingDependencyError(
            _("scancel not found"), _("run --down on the Slurm login node the job came from")
        )
    p = subprocess.run(["scancel", job_id], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise UserInputError(
            _("{command} failed: {message}").format(
                command=f"scancel {job_id}", message=p.stderr.strip()[-300:]
            ),
            _("check the id with squeue"),
        )
    return _("cancelled Slurm job {id}").format(id=job_id)
