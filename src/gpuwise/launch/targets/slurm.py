"""--target slurm: an sbatch job on your cluster (the script and the node steps: gpuwise/launch/slurm.py)."""

from __future__ import annotations

from gpuwise.errors import UserInputError
from gpuwise.i18n import N_, msg
from gpuwise.launch import slurm, steps
from gpuwise.launch.targets import Target


class Slurm(Target):
    name = "slurm"
    label = "Slurm"
    id_form = "slurm:JOBID"
    options = (
        "--partition",
        "--account",
        "--time",
        "--qos",
        "--gpu-request",
        "--exclusive",
        "--container",
        "--resubmit",
    )
    own_machines = True
    where = N_("your Slurm cluster")
    shared_filesystem = True

    def build(self, plan, o) -> None:
        slurm.build(plan, o.textfile, o.slurm)
        plan.scrape_config = steps.scrape_config(
            plan.job, None, str(plan.out / "monitoring" / "targets.json")
        )

    def create(self, plan, o, wait, timeout_s) -> dict:
        return slurm.create(plan, wait, timeout_s)

    def down(self, rest: str) -> str:
        if not rest.isdigit():
            raise UserInputError(
                msg("--down {id}: a Slurm job id is a number").format(id=f"slurm:{rest}"),
                msg("pass the ID the launch printed: {forms}").format(forms=self.id_form),
            )
        return slurm.down(rest)


TARGET = Slurm()
