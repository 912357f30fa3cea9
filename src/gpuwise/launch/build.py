"""Build a launch: resolve where it runs and what it costs, add the checks, and let the target write its files.

`plan_launch(options)` is the dry run (nothing is created; the target's files are written to the
output folder so they can be read or submitted by hand). `create(plan)` is what --yes does, after
the cost guard has passed. `down(id)` deletes what a launch created.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gpuwise.atomic import write_text_atomic
from gpuwise.errors import UserInputError
from gpuwise.i18n import N_, msg
from gpuwise.launch import resources, steps, transfer
from gpuwise.launch.job import Job, load_job
from gpuwise.launch.migration import check_migration, target_software
from gpuwise.launch.model import LaunchPlan
from gpuwise.launch.quoting import sh, sh_words
from gpuwise.launch.targets import Target, get
from gpuwise.registry import Registry


@dataclass
class LaunchOptions:
    job_path: Path
    target: str
    plan_path: Path | None = None
    offer: str | None = None
    out: Path | None = None
    max_cost: float | None = None
    source: Path | None = None  # capture of the source environment (default: this machine)
    target_capture: Path | None = None  # capture of a target node
    textfile: bool = False
    warn_share: float = transfer.DEFAULT_WARN_SHARE
    # slurm: partition, account, time, qos, gpu_request, exclusive, container
    slurm: dict = field(default_factory=dict)
    cloud: dict = field(default_factory=dict)  # per-target extras (zone, image, the gpuwise wheel, ...)


def _facts(path: Path | None):
    from gpuwise.capture.host import CaptureHost, LiveHost
    from gpuwise.facts.collect import collect_facts

    return collect_facts(CaptureHost(path) if path else LiveHost())


def _resolve(job: Job, o: LaunchOptions, target: Target):
    if o.plan_path and o.offer:
        raise UserInputError(
            msg("--plan and --offer both given"), msg("use one: the plan's choice, or an offer you pick")
        )
    if o.plan_path:
        res, implied = resources.from_plan(
            o.plan_path, job, target=None if target.own_machines else target.name
        )
        if implied == "slurm" and not target.own_machines:
            raise UserInputError(
                msg("the plan recommends building (on-prem), but --target is {target}").format(
                    target=o.target
                ),
                msg("launch it with --target slurm on your cluster, or pass --offer PROVIDER:INSTANCE"),
            )
        if implied == "cloud" and target.own_machines:
            res.notes.append(
                msg(
                    "the plan recommends a cloud offer; launching on your own machines ({target}) instead"
                ).format(target=target.name)
            )
        return res
    if o.offer:
        return resources.from_offer(o.offer, job)
    if not target.own_machines:
        raise UserInputError(
            msg(
                "--target {target} needs an instance type: --plan PLAN.json or --offer PROVIDER:INSTANCE"
            ).format(target=o.target),
            msg("e.g. {option} (list them with `gpuwise catalog offers`), or {plan}").format(
                option=target.example_offer or "--offer PROVIDER:INSTANCE",
                plan=f"gpuwise plan WORKLOAD.yaml --target {o.target} --format json -o plan.json",
            ),
        )
    return resources.for_own_cluster(job)


def plan_launch(o: LaunchOptions, registry: Registry[Target] | None = None) -> LaunchPlan:
    """The dry run for `o.target`, a target of `registry` (default: every module of launch/targets/)."""
    target = get(o.target, registry)
    job = load_job(o.job_path)
    res = _resolve(job, o, target)
    if res.gpus_per_node is not None and res.gpus_per_node != job.gpus_per_node and not target.own_machines:
        raise UserInputError(
            msg("the job wants {want} GPUs per node, {instance} has {has}").format(
                want=job.gpus_per_node, instance=res.instance_type, has=res.gpus_per_node
            ),
            msg("set {line} in {path}, or pick an offer with {want}").format(
                line=f"gpus_per_node: {res.gpus_per_node}", path=o.job_path, want=job.gpus_per_node
            ),
        )
    if o.plan_path and res.nodes != job.nodes:
        res.notes.append(
            msg("nodes: {nodes} from the plan (the job file says {job_nodes})").format(
                nodes=res.nodes, job_nodes=job.nodes
            )
        )
        job = job.model_copy(update={"nodes": res.nodes})
    out = (o.out or Path(f"launch-{job.name}")).expanduser().absolute()
    source = _facts(o.source)
    target_facts = _facts(o.target_capture) if o.target_capture else None
    plan = LaunchPlan(
        job=job,
        job_path=str(o.job_path),
        target=o.target,
        resources=res,
        out=out,
        preflight=f"gpuwise doctor --expect {sh(job.preflight_expect())} --no-history --format json",
        exporter=steps.exporter(job, o.textfile).removeprefix("exec ").replace('"$GPUWISE"', "gpuwise"),
        scrape_config="",
        transfer=transfer.estimate(job.dataset, res, target.shared_filesystem, o.warn_share)
        if job.dataset
        else None,
        migration=check_migration(source, target_software(job.image_versions, target_facts)),
        max_cost=o.max_cost,
    )
    target.build(plan, o)
    return plan


def check_out_folder(plan: LaunchPlan) -> None:
    """Never overwrite the record of a launch that created something: its launch.json holds the ID to delete."""
    import json

    from gpuwise.documents.ids import LAUNCH_SCHEMA
    from gpuwise.documents.launch import LaunchRecord
    from gpuwise.documents.load import DocumentError, parse_document

    record = plan.out / "launch.json"
    try:
        previous = parse_document(
            json.loads(record.read_text()),
            LaunchRecord,
            LAUNCH_SCHEMA,
            path=record,
            fix=N_("use another --out"),
            unmarked=True,
        )
    except (OSError, ValueError, DocumentError):  # no record, or not one: nothing it created to protect
        return
    made = previous.created()
    if made:
        raise UserInputError(
            msg("{out} holds the record of launch {id}, which created resources; nothing was written").format(
                out=plan.out, id=made
            ),
            msg("use another --out, or delete that folder once `{command}` has removed them").format(
                command=sh_words(["gpuwise", "launch", "--down", made])  # made: read from a file
            ),
        )


def check_cost_guard(plan: LaunchPlan, creating: bool) -> None:
    """--max-cost: an unknown cost is refused, dry run or not (the guard cannot be checked); a known cost
    above the limit is refused when creating (the dry run shows the verdict)."""
    if plan.max_cost is None:
        return
    r, limit = plan.resources, f"{plan.max_cost:g}"
    if not plan.cost_known:
        raise UserInputError(
            msg(
                "refused: --max-cost {limit} cannot be checked, the estimated cost is {source}; nothing written"
            ).format(limit=limit, source=r.cost_source),
            msg(
                "give a price with --plan PLAN.json (its cost per run) or with an --offer whose catalog row has a "
                "price, and the training time (`hours` in JOB.yaml); or drop --max-cost"
            ),
        )
    if creating and plan.over_budget:
        cost = f"{r.run_cost:,.2f} {r.currency or ''}".strip()
        raise UserInputError(
            msg(
                "refused: the estimated cost {cost} ({source}) is above --max-cost {limit}; nothing created"
            ).format(cost=cost, source=r.cost_source, limit=limit),
            msg("raise --max-cost, use fewer nodes or hours, or pick a cheaper offer (gpuwise plan)"),
        )


def _copy_atomic(source: Path, path: Path) -> Path:
    """Copy a file (the wheel) beside its destination, then rename it into place: never half a file."""
    import os
    import shutil

    if path.resolve() != source.resolve():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.partial")
        shutil.copyfile(source, tmp)
        os.replace(tmp, path)
    return path


def write_files(plan: LaunchPlan) -> list[Path]:
    """The target's files (script, task YAML, request, the gpuwise wheel) and launch.json, atomically, in the
    output folder."""
    import json

    written = []
    for name, source in plan.copies.items():
        written.append(_copy_atomic(source, plan.out / name))
    for name, text in {
        **plan.files,
        "launch.json": json.dumps(plan.to_json(), indent=2, default=str),
    }.items():
        path = plan.out / name
        write_text_atomic(path, text)
        written.append(path)
    return written
