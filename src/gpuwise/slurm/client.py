"""The only place gpuwise runs Slurm's commands: find them, bound them, turn their failures into errors.

- every command is looked up on PATH first: a missing one is a MissingDependencyError with a "To fix";
- every call has a timeout (a hung slurmctld is an EnvironmentProblem naming the command, never a hang);
  the one call without one is `sbatch --wait` when the user gave no --wait-timeout: it lasts as long
  as the job, which is what they asked for;
- `submit` parses `sbatch --parsable` ("JOBID" or "JOBID;CLUSTER"); with --wait, sbatch exits with the
  job's exit code (https://slurm.schedmd.com/sbatch.html, --wait), which `Submitted.exit_code` keeps;
- `job_state` asks squeue in every state (slurmctld keeps an ended job for MinJobAge, 300 s by
  default), then sacct (older jobs, where accounting is configured); None when neither knows the job.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from gpuwise.errors import EnvironmentProblem, MissingDependencyError, UserInputError
from gpuwise.i18n import msg
from gpuwise.slurm.request import gpus_from_sinfo

COMMAND_TIMEOUT_S = 60.0  # sbatch (without --wait), squeue, sacct, scancel, scontrol, sinfo, srun --help
CANCEL_AFTER_TIMEOUT_S = 30.0  # the scancel of a job whose `sbatch --wait` ran out of time


@dataclass
class Submitted:
    job_id: str
    exit_code: int | None = None  # the job's, with wait; None without


def executable(command: str, fix: str | None = None) -> str:
    """The path of a Slurm command, or MissingDependencyError."""
    found = shutil.which(command)
    if found is None:
        raise MissingDependencyError(
            msg("{command} not found (not a Slurm node?)").format(command=command),
            fix or msg("run it on a Slurm login node, or put Slurm's commands on PATH"),
        )
    return found


def run(command: str, *args: str, timeout_s: float = COMMAND_TIMEOUT_S, fix: str | None = None):
    """Run a Slurm command to completion within timeout_s; returns the CompletedProcess (any exit code)."""
    cmd = [executable(command, fix), *args]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise EnvironmentProblem(
            msg("{command} did not answer within {seconds:g} s").format(
                command=command, seconds=round(timeout_s, 1)
            ),
            msg("check that slurmctld answers (`scontrol ping`), then rerun"),
        ) from None
    except OSError as e:
        raise EnvironmentProblem(
            msg("{command} could not be started: {error}").format(command=command, error=e),
            fix or msg("run it on a Slurm login node, or put Slurm's commands on PATH"),
        ) from None


def job_id_from_parsable(stdout: str) -> str | None:
    """The job id `sbatch --parsable` printed ("JOBID" or "JOBID;CLUSTER"), or None."""
    for line in stdout.splitlines():
        job = line.split(";")[0].strip()
        if job:
            return job if job.isdigit() else None
    return None


def submit(
    script: Path, wait: bool = False, timeout_s: float | None = None, fix: str | None = None
) -> Submitted:
    """sbatch --parsable [--wait] SCRIPT. Without wait, bounded by COMMAND_TIMEOUT_S; with wait, by timeout_s
    (None: as long as the job runs). A job still running at the timeout is cancelled."""
    sbatch = executable("sbatch", fix)
    limit = timeout_s if wait else (timeout_s or COMMAND_TIMEOUT_S)
    cmd = [sbatch, "--parsable", *(["--wait"] if wait else []), str(script)]
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        raise EnvironmentProblem(
            msg("{command} could not be started: {error}").format(command="sbatch", error=e),
            fix or msg("run it on a Slurm login node, or put Slurm's commands on PATH"),
        ) from None
    try:
        stdout, stderr = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        proc.kill()
        try:
            stdout, _stderr = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:  # something sbatch started still holds its output open
            stdout = ""
        job_id = job_id_from_parsable(stdout)
        if job_id:
            _cancel_quietly(job_id)
        raise EnvironmentProblem(
            (
                msg("the Slurm job {id} did not end within {seconds}s; cancelled").format(
                    id=job_id, seconds=f"{round(limit, 1):g}"
                )
                if job_id
                else msg("sbatch did not answer within {seconds}s; nothing was submitted").format(
                    seconds=f"{round(limit, 1):g}"
                )
            ),
            (
                msg(
                    "give it more time with --wait-timeout, or submit without --wait and follow it with squeue"
                )
                if job_id
                else msg("check that slurmctld answers (`scontrol ping`), then rerun")
            ),
        ) from None
    job_id = job_id_from_parsable(stdout)
    if job_id is None:
        raise UserInputError(
            msg("sbatch refused the job: {message}").format(
                message=stderr.strip()[-500:] or msg("no message")
            ),
            msg("check nodes, --partition, --account and --time against `sinfo`, then rerun"),
        )
    return Submitted(job_id, proc.returncode if wait else None)


def _cancel_quietly(job_id: str) -> None:
    """Best effort, after a timeout that is already being reported: the error names the job either way."""
    scancel = shutil.which("scancel")
    if scancel:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run([scancel, job_id], capture_output=True, timeout=CANCEL_AFTER_TIMEOUT_S)


def cancel(job_id: str, fix: str | None = None) -> None:
    """scancel JOBID; a refusal (unknown id, not the owner) is a UserInputError with scancel's words."""
    p = run("scancel", job_id, fix=fix)
    if p.returncode != 0:
        raise UserInputError(
            msg("{command} failed: {message}").format(
                command=f"scancel {job_id}", message=p.stderr.strip()[-300:]
            ),
            msg("check the id with squeue"),
        )


def job_state(job_id: str) -> str | None:
    """PENDING, RUNNING, COMPLETED, FAILED, CANCELLED ... (Slurm's words); None when Slurm does not know it."""
    p = run("squeue", "-h", "-t", "all", "-j", job_id, "-o", "%T")
    state = p.stdout.strip().split("\n")[0].strip() if p.returncode == 0 else ""
    if state:
        return state
    if shutil.which("sacct") is None:
        return None
    p = run("sacct", "-n", "-X", "-P", "-j", job_id, "-o", "State")
    state = p.stdout.strip().split("\n")[0].strip() if p.returncode == 0 else ""
    return state.split()[0] if state else None  # "CANCELLED by 0" -> CANCELLED


ENDED = (
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "TIMEOUT",
    "NODE_FAIL",
    "OUT_OF_MEMORY",
    "PREEMPTED",
    "BOOT_FAIL",
    "DEADLINE",
)  # squeue's job states that end a job (https://slurm.schedmd.com/squeue.html#SECTION_JOB-STATE-CODES)
POLL_S = 2.0


def wait_for(job_id: str, timeout_s: float | None) -> int:
    """Poll until the job ends (as `sbatch --wait` does), then its exit code (scontrol's ExitCode, else 0 for
    COMPLETED and 1 for any other end). A job still running at the timeout is cancelled."""
    deadline = None if timeout_s is None else time.monotonic() + max(timeout_s, 0.0)
    while (state := job_state(job_id)) not in ENDED:
        if state is None:  # Slurm forgot it (past MinJobAge, no accounting): ended, exit code unknown
            return 1
        if deadline is not None and time.monotonic() > deadline:
            _cancel_quietly(job_id)
            raise EnvironmentProblem(
                msg("the Slurm job {id} did not end within {seconds}s; cancelled").format(
                    id=job_id, seconds=f"{round(timeout_s or 0, 1):g}"
                ),
                msg(
                    "give it more time with --wait-timeout, or submit without --wait and follow it with squeue"
                ),
            )
        time.sleep(POLL_S)
    p = run("scontrol", "show", "job", "-o", job_id)
    m = re.search(r"\bExitCode=(\d+):", p.stdout) if p.returncode == 0 else None
    return int(m.group(1)) if m else (0 if state == "COMPLETED" else 1)


def drain(node: str, reason: str, timeout_s: float = 10.0) -> None:
    """scontrol update nodename=NODE state=drain reason=REASON; an error when Slurm refuses or does not answer."""
    p = run("scontrol", "update", f"nodename={node}", "state=drain", f"reason={reason}", timeout_s=timeout_s)
    if p.returncode != 0:
        raise EnvironmentProblem(
            p.stderr.strip() or msg("scontrol exited {rc}").format(rc=p.returncode),
            msg("check the node name with `sinfo -N`, and that this user may drain nodes"),
        )


def cluster_gpus(partition: str | None) -> int:
    """GPUs per node the cluster's GRES declares (sinfo), 0 when it declares none or sinfo cannot say:
    a default for --gpus-per-node, so no answer means no GPU request rather than an error."""
    if shutil.which("sinfo") is None:
        return 0
    try:
        p = run("sinfo", "-h", "-o", "%G", *(["-p", partition] if partition else []), timeout_s=30)
    except EnvironmentProblem:
        return 0
    return gpus_from_sinfo(p.stdout) if p.returncode == 0 else 0


def srun_takes_container_image() -> bool:
    """Does this cluster's srun take --container-image (NVIDIA's Pyxis SPANK plugin, which runs enroot)?"""
    if shutil.which("srun") is None:
        return False
    try:
        p = run("srun", "--help", timeout_s=30)
    except EnvironmentProblem:
        return False
    return "--container-image" in p.stdout + p.stderr


def gpuwise_executable() -> str:
    """The gpuwise script of this installation, which the job runs on the nodes (from the shared filesystem)."""
    beside = Path(sys.executable).parent / "gpuwise"
    found = str(beside) if beside.exists() else shutil.which("gpuwise")
    if not found:
        raise MissingDependencyError(
            msg("cannot find the `gpuwise` command to run on the nodes"),
            msg("install gpuwise where every node can run it (a shared venv), then rerun"),
        )
    return str(Path(found).absolute())
