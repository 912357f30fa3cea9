"""gpuwise.slurm.client against stand-in Slurm commands on PATH: what each answer, refusal, absence
or hang of sbatch, squeue, sacct, scancel and scontrol becomes. The real cluster runs in
tests/fleet/test_slurm.py and tests/launch/test_slurm_e2e.py."""

from __future__ import annotations

import time

import pytest

from gpuwise.errors import EnvironmentProblem, MissingDependencyError, UserInputError
from gpuwise.slurm import client


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """fake(name, body): a bash stand-in for a Slurm command, alone on PATH; calls are logged."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    monkeypatch.setenv("PATH", str(bin_dir))

    def make(name: str, body: str) -> None:
        path = bin_dir / name
        path.write_text(f'#!/bin/bash\necho "{name} $*" >> {log}\n{body}\n')
        path.chmod(0o755)

    make.calls = lambda: log.read_text().splitlines() if log.exists() else []
    return make


def test_a_missing_command_says_so_with_a_fix(fake):
    with pytest.raises(MissingDependencyError, match="sbatch not found") as e:
        client.submit("job.sh")
    assert "To fix:" in str(e.value)
    with pytest.raises(MissingDependencyError, match="drop --yes") as e:
        client.cancel("12", fix="drop --yes")


def test_submit_parses_the_parsable_job_id_and_keeps_the_jobs_exit_code(fake):
    fake("sbatch", 'echo "4242;gwcluster"; exit 3')  # with --wait, sbatch exits with the job's code
    assert client.submit("job.sh", wait=True) == client.Submitted("4242", 3)
    fake("sbatch", "echo 77")
    assert client.submit("job.sh") == client.Submitted("77", None)
    assert fake.calls()[-1] == "sbatch --parsable job.sh"


def test_a_refused_job_is_named_with_sbatchs_words(fake):
    fake("sbatch", 'echo "sbatch: error: Invalid partition name specified" >&2; exit 1')
    with pytest.raises(UserInputError, match="sbatch refused the job: sbatch: error: Invalid partition"):
        client.submit("job.sh")
    fake("sbatch", "echo Submitted batch job 12")  # not --parsable output: never taken for an id
    with pytest.raises(UserInputError, match="sbatch refused the job"):
        client.submit("job.sh")


def test_a_hung_slurmctld_is_an_error_not_a_hang(fake):
    fake("sbatch", "exec /bin/sleep 30")  # sbatch retrying a slurmctld that never answers
    start = time.monotonic()
    with pytest.raises(EnvironmentProblem, match="sbatch did not answer within 0.5s; nothing was submitted"):
        client.submit("job.sh", timeout_s=0.5)
    fake("squeue", "exec /bin/sleep 30")
    with pytest.raises(EnvironmentProblem, match="squeue did not answer within 0.5 s"):
        client.run("squeue", "-h", timeout_s=0.5)
    assert time.monotonic() - start < 10


def test_a_waited_job_that_runs_out_of_time_is_cancelled(fake):
    fake("sbatch", "echo 55; exec /bin/sleep 30")
    fake("scancel", "exit 0")
    with pytest.raises(EnvironmentProblem, match="the Slurm job 55 did not end within 0.5s; cancelled") as e:
        client.submit("job.sh", wait=True, timeout_s=0.5)
    assert "--wait-timeout" in str(e.value)
    assert fake.calls()[-1] == "scancel 55"


def test_cancel_reports_scancels_refusal(fake):
    fake("scancel", 'echo "scancel: error: Invalid job id 9" >&2; exit 1')
    with pytest.raises(UserInputError, match="scancel 9 failed: scancel: error: Invalid job id 9"):
        client.cancel("9")
    fake("scancel", "exit 0")
    client.cancel("9")


def test_job_state_asks_squeue_then_sacct(fake):
    fake("squeue", "echo RUNNING")
    assert client.job_state("5") == "RUNNING"
    fake("squeue", "exit 0")  # an ended job leaves the queue
    assert client.job_state("5") is None  # and no sacct here
    fake("sacct", 'echo "CANCELLED by 0"')
    assert client.job_state("5") == "CANCELLED"
    fake("sacct", 'echo "sacct: error: Slurm accounting storage is disabled" >&2; exit 1')
    assert client.job_state("5") is None


def test_drain_errors_become_the_healthchecks_text(fake):
    from gpuwise.advise.finding import Finding
    from gpuwise.fleet.healthcheck import drain

    bad = [
        Finding(
            id="expect.gpus",
            layer="hardware",
            title="expected GPUs 8, found 7",
            status="fail",
            priority="high",
        )
    ]
    assert drain("n1", bad) == "scontrol not found (not a Slurm node?)"
    fake("scontrol", "exec /bin/sleep 30")
    assert drain("n1", bad, timeout_s=0.3) == "scontrol did not answer within 0.3 s"
    fake("scontrol", 'echo "slurm_update error: Invalid node name specified" >&2; exit 1')
    assert drain("n1", bad) == "slurm_update error: Invalid node name specified"
    fake("scontrol", "exit 0")
    assert drain("n1", bad) is None
    assert fake.calls()[-1].startswith(
        "scontrol update nodename=n1 state=drain reason=gpuwise: expected GPUs 8"
    )


def test_sinfo_and_srun_answers_are_defaults_not_errors(fake):
    assert client.cluster_gpus(None) == 0 and client.srun_takes_container_image() is False
    fake("sinfo", 'echo "gpu:a100:4(S:0-1)"')
    fake("srun", 'echo "      --container-image=[USER@][REGISTRY#]IMAGE[:TAG]|PATH"')
    assert client.cluster_gpus("gpu") == 4 and client.srun_takes_container_image() is True
    assert "sinfo -h -o %G -p gpu" in fake.calls()
