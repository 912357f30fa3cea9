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

import json
import sys
import time
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
DEFAULT_RESUBMIT = 2  # --resubmit


def _dataset_path(plan: LaunchPlan) -> str | None:
    ds = plan.job.dataset
    if ds is None:
        return None
    return ds.mount if ds.kind == "nfs" else ds.source


def _file_sd_code(port: int, name: str) -> str:
    """Python that turns host names (stdin, in node order) into a Prometheus file_sd targets list, one entry per
    node labelled with the job (hpc_job, hpc_job_name: dcgm-exporter's HPC label names) and its node rank, so
    that every series of the job's exporters carries them, the exporter's own gpuwise_* series included."""
    return (
        "import json, os, sys; print(json.dumps([{"
        f'"targets": [h + {json_text(f":{port}")}], '
        f'"labels": {{"job": {json_text(f"gpuwise-{name}")}, "hpc_job": os.environ.get("SLURM_JOB_ID", ""), '
        '"hpc_job_name": os.environ.get("SLURM_JOB_NAME", ""), "node_rank": str(i), "rank": str(i)}} '
        "for i, h in enumerate(sys.stdin.read().split())]))"
    )


def _rated_gb_s(plan: LaunchPlan) -> float | None:
    """The catalogued network speed per node in GB/s (the offer's Gbit/s / 8), when the plan names one."""
    gbps = plan.resources.network_gbps
    return gbps / 8 if gbps else None


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
            "allocation)",
            steps.allocation_check(
                job,
                '"$(scontrol show hostnames "$SLURM_JOB_NODELIST")"',
                '"$SLURM_NODEID"',
                _rated_gb_s(plan),
            ),
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
            '*) echo "usage: node.sh setup|preflight|allocation|exporter|check-exporter|targets|train" >&2; exit 2 ;;',
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


def preflight_block(node: str, resubmit: int) -> list[str]:
    """The preflight steps of job.sbatch: each node's own checks, the allocation check across the nodes, the
    verdict; nodes it pins a failure on are excluded and the job resubmitted on the others (sbatch --exclude,
    up to `resubmit` times; the new job id in $OUT/preflight/next-JOBID, which `launch --wait` follows)."""
    verdict = (
        '"$PYTHON" -m gpuwise.launch.verdict "$OUT/preflight" --job "$SLURM_JOB_ID" '
        '--nodes "$(scontrol show hostnames "$SLURM_JOB_NODELIST")" --exclude-file "$OUT/preflight/exclude-$SLURM_JOB_ID"'
    )
    again = (  # the attempt and the excluded nodes travel in the environment (--export=ALL): a node list has commas
        'GW_PREFLIGHT_ATTEMPT=$((ATTEMPT + 1)) GW_PREFLIGHT_EXCLUDED="$ALL" '
        'sbatch --parsable --export=ALL --exclude="$ALL" "$OUT/job.sbatch"'
    )
    return [
        "# 1. preflight: each node's own checks (dcgmi diag when present, doctor --expect), then the allocation",
        "#    check across the nodes (reach the head, all-reduce, pairwise links), then the verdict",
        "ATTEMPT=${GW_PREFLIGHT_ATTEMPT:-1}",
        "EXCLUDED=${GW_PREFLIGHT_EXCLUDED:-}",
        f"srun --ntasks-per-node=1 {node} preflight",
        'if [ "$SLURM_JOB_NUM_NODES" -gt 1 ]; then',
        f"  srun --ntasks-per-node=1 {node} allocation",
        "fi",
        verdict,
        "verdict=$?",
        'if [ "$verdict" -ne 0 ]; then',
        '  BAD=$(cat "$OUT/preflight/exclude-$SLURM_JOB_ID" 2>/dev/null)',
        f'  if [ "$verdict" -eq 1 ] && [ -n "$BAD" ] && [ "$ATTEMPT" -le {resubmit} ]; then',
        "    ALL=${EXCLUDED:+$EXCLUDED,}$BAD",
        f"    if NEXT=$({again}); then",
        "      NEXT=${NEXT%%;*}",
        '      echo "$NEXT" > "$OUT/preflight/next-$SLURM_JOB_ID"',
        '      echo "gpuwise launch: preflight failed on $BAD; resubmitted as job $NEXT without $ALL '
        f'(attempt $((ATTEMPT + 1)) of {resubmit + 1}); reports in $OUT/preflight" >&2',
        "      exit 1",
        "    fi",
        '    echo "gpuwise launch: sbatch refused the resubmission without $ALL" >&2',
        "  fi",
        '  echo "gpuwise launch: preflight failed; job aborted before training; reports in $OUT/preflight" >&2',
        "  exit 1",
        "fi",
        "",
    ]


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
        *preflight_block(node, int(sbatch_options.get("resubmit", DEFAULT_RESUBMIT))),
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
    """sbatch OUT/job.sbatch (written by the dry run step); with wait, until the job ends, and then each job
    its preflight resubmitted without the nodes that failed (OUT/preflight/next-JOBID), until the last."""
    fix = msg("run gpuwise launch on a Slurm login node (or drop --yes to see the script)")
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    job = client.submit(plan.out / SCRIPT, wait=wait, timeout_s=timeout_s, fix=fix)
    job_id = job.job_id
    plan.creates[0].id = f"slurm:{job_id}"
    plan.creates[0].delete = msg("{command}  (or: {native})").format(
        command=f"gpuwise launch --down slurm:{job_id}", native=f"scancel {job_id}"
    )
    result: dict = {"id": f"slurm:{job_id}", "job_id": job_id, "log": str(plan.out / f"slurm-{job_id}.out")}
    jobs = [job_id]
    if wait:
        result["exit_code"] = job.exit_code
        while (nxt := _next_job(plan, jobs[-1])) is not None:
            jobs.append(nxt)
            result["exit_code"] = client.wait_for(
                nxt, None if deadline is None else deadline - time.monotonic()
            )
        if len(jobs) > 1:
            result.update(
                resubmitted=jobs[1:], final_job_id=jobs[-1], log=str(plan.out / f"slurm-{jobs[-1]}.out")
            )
            plan.creates[0].id = f"slurm:{jobs[-1]}"  # the job that ran, the one --down deletes
            plan.creates[0].delete = msg("{command}  (or: {native})").format(
                command=f"gpuwise launch --down slurm:{jobs[-1]}", native=f"scancel {jobs[-1]}"
            )
            plan.notes.append(msg("the preflight excluded nodes and resubmitted the job: {jobs}").format(
                jobs=joined(" -> ", jobs)))  # fmt: skip
    result["preflight"] = _verdicts(plan, jobs)
    for v in result["preflight"]:
        for f in v["failed"]:
            plan.notes.append(msg("preflight of job {job}: {node} failed {check}: {reason}").format(
                job=v["job"], node=f.get("node"), check=f.get("check"), reason=f.get("reason")))  # fmt: skip
    return result


def _next_job(plan: LaunchPlan, job_id: str) -> str | None:
    try:
        text = (plan.out / "preflight" / f"next-{job_id}").read_text().strip()
    except OSError:
        return None
    return text if text.isdigit() else None


def _verdicts(plan: LaunchPlan, jobs: list[str]) -> list[dict]:
    """Which node failed which check, per job of this launch (OUT/preflight/verdict-JOBID.json)."""
    out = []
    for path in (plan.out / "preflight" / f"verdict-{j}.json" for j in jobs):
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        out.append(
            {"job": doc.get("job"), "failed": doc.get("failed", []), "exclude": doc.get("exclude", [])}
        )
    return out


def down(job_id: str) -> str:
    client.cancel(job_id, fix=msg("run --down on the Slurm login node the job came from"))
    return msg("cancelled Slurm job {id}").format(id=job_id)
