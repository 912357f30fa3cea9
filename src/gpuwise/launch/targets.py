"""The three targets behind one interface: build (files + what would be created), create (--yes), down (ID).

An ID names its target: `slurm:JOBID`, `skypilot:CLUSTER`, `tencent:REGION/ins-a,ins-b`.
"""

from __future__ import annotations

from gpuwise.errors import UserInputError
from gpuwise.i18n import N_, _
from gpuwise.launch import steps
from gpuwise.launch.model import TARGETS, LaunchPlan

DOWN_FIX = N_(
    "pass the ID the launch printed: slurm:JOBID, skypilot:CLUSTER or tencent:REGION/ins-ID[,ins-ID]"
)


def build(plan: LaunchPlan, o) -> None:
    """Fill plan.files, plan.creates and plan.scrape_config for the plan's target."""
    if plan.target == "slurm":
        from gpuwise.launch import slurm

        slurm.build(plan, o.textfile, o.slurm)
        plan.scrape_config = steps.scrape_config(
            plan.job, None, str(plan.out / "monitoring" / "targets.json")
        )
    elif plan.target == "skypilot":
        from gpuwise.launch import skypilot

        skypilot.build(plan, o.textfile, o.cloud)
        plan.scrape_config = steps.scrape_config(
            plan.job, [f"<IP of node {i}>" for i in range(plan.job.nodes)]
        )
    else:
        from gpuwise.launch import tencent

        tencent.build(plan, o.textfile, o.cloud)
        plan.scrape_config = steps.scrape_config(
            plan.job, [f"<private IP of instance {i}>" for i in range(plan.job.nodes)]
        )


def create(plan: LaunchPlan, o, wait: bool, timeout_s: float | None) -> dict:
    """What --yes does, for the plan's target; returns the launch ID and what the target reported."""
    if plan.target == "slurm":
        from gpuwise.launch import slurm

        return slurm.create(plan, wait, timeout_s)
    if plan.target == "skypilot":
        from gpuwise.launch import skypilot

        return skypilot.create(plan)
    from gpuwise.launch import tencent

    return tencent.create(plan, o.cloud, o.textfile)


def down(launch_id: str) -> str:
    target, sep, rest = launch_id.partition(":")
    if not sep or not rest or target not in TARGETS:
        raise UserInputError(_("--down {id!r} is not a launch ID").format(id=launch_id), _(DOWN_FIX))
    if target == "slurm":
        from gpuwise.launch import slurm

        if not rest.isdigit():
            raise UserInputError(
                _("--down {id}: a Slurm job id is a number").format(id=launch_id), _(DOWN_FIX)
            )
        return slurm.down(rest)
    if target == "skypilot":
        from gpuwise.launch import skypilot

        return skypilot.down(rest)
    from gpuwise.launch import tencent

    return tencent.down(rest)
