"""What an sbatch job asks the cluster for: GPUs, whole nodes, a time limit, partition/account/QOS.

Shared by `fleet run --slurm` (fleet/slurm.py) and `launch --target slurm` (launch/slurm.py); each renders
the (option, value) pairs into `#SBATCH` lines its own way. On a cluster that confines a job to its
allocated GPUs (cgroup.conf `ConstrainDevices=yes`), a job that asks for none sees none, so GPUs are always
requested when the job uses them, in one of the two spellings Slurm documents
(https://slurm.schedmd.com/sbatch.html):
- `--gpus-per-node=N` (select/cons_tres, Slurm 19.05 and later);
- `--gres=gpu:N`, the older generic-resource form that every Slurm with a GPU GRES accepts;
- `none`: a cluster with no GPU GRES configured (sbatch refuses a GPU request there).
`--time` comes from the job's hours when not given: sbatch's D-HH:MM:SS, rounded up to a whole minute.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuwise.errors import UserInputError
from gpuwise.i18n import joined, msg

GPU_REQUESTS = ("gpus-per-node", "gres", "none")


@dataclass(frozen=True)
class SlurmRequest:
    gpus_per_node: int = 0
    gpu_request: str = "gpus-per-node"  # one of GPU_REQUESTS
    exclusive: bool = False
    time: str | None = None
    partition: str | None = None
    account: str | None = None
    qos: str | None = None


def time_from_hours(hours: float) -> str:
    """sbatch --time for a job of `hours` hours: D-HH:MM:SS, rounded up to a whole minute."""
    minutes = max(1, math.ceil(hours * 60 - 1e-9))
    days, rest = divmod(minutes, 24 * 60)
    return f"{days}-{rest // 60:02d}:{rest % 60:02d}:00"


def check_gpu_request(value: str) -> str:
    if value not in GPU_REQUESTS:
        raise UserInputError(
            msg("--gpu-request {value!r} is not one of {choices}").format(
                value=value, choices=joined(", ", GPU_REQUESTS)
            ),
            msg("use gpus-per-node (Slurm 19.05+), gres (--gres=gpu:N) or none (no GPU GRES on the cluster)"),
        )
    return value


def resource_options(r: SlurmRequest) -> list[tuple[str, str | None]]:
    """(sbatch option without --, value or None for a flag), in the order they are written."""
    out: list[tuple[str, str | None]] = []
    if r.gpus_per_node and check_gpu_request(r.gpu_request) != "none":
        if r.gpu_request == "gres":
            out.append(("gres", f"gpu:{r.gpus_per_node}"))
        else:
            out.append(("gpus-per-node", str(r.gpus_per_node)))
    if r.exclusive:
        out.append(("exclusive", None))
    for option, value in (
        ("time", r.time),
        ("partition", r.partition),
        ("account", r.account),
        ("qos", r.qos),
    ):
        if value:
            out.append((option, value))
    return out


def gpus_from_sinfo(text: str) -> int:
    """The GPUs every node has, from `sinfo -h -o %G` lines: "gpu:8", "gpu:a100:8(S:0-1)", "(null)" ...
    The smallest count over the lines (a request must fit every node); 0 when a line has no GPU GRES."""
    counts = []
    for line in text.split():
        found = 0
        for item in line.split(","):
            parts = item.split("(")[0].split(":")
            if parts[0] == "gpu" and len(parts) >= 2 and parts[-1].isdigit():
                found += int(parts[-1])
        counts.append(found)
    return min(counts) if counts else 0
