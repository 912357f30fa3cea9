"""--target torchrun: the scripts for machines reached by ssh, run end to end with stand-ins for ssh, scp,
gpuwise and torchrun (each "host" is a folder on this machine), and the features it refuses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuwise.errors import UserInputError
from gpuwise.launch import targets
from gpuwise.launch.build import LaunchOptions, plan_launch, write_files
from gpuwise.launch.targets.torchrun import parse_hosts
from tests.conftest import CAPTURES
from tests.launch.kit import EXAMPLES

HOSTS = "gpu-01,gpu-02"

# Stand-ins. ssh/scp map HOST:/tmp/x to $FAKE_ROOT/HOST/x and run the command as that host (hostname
# says HOST); gpuwise's doctor fails on the hosts in $FAIL_HOSTS; torchrun and pkill write what they got.
FAKES = {
    "ssh": r"""#!/bin/bash
while [ "$1" = -o ]; do shift 2; done
host=$1; shift
mkdir -p "$FAKE_ROOT/$host"
export FAKE_HOST=$host HOME="$FAKE_ROOT/$host"
exec bash -c "${*//\/tmp\//$FAKE_ROOT/$host/}"
""",
    "scp": r"""#!/bin/bash
while [ "$1" = -q ] || [ "$1" = -o ]; do [ "$1" = -o ] && shift; shift; done
host=${2%%:*}; path=${2#*:}
mkdir -p "$FAKE_ROOT/$host" && cp "$1" "$FAKE_ROOT/$host/${path#/tmp/}"
""",
    "hostname": '#!/bin/bash\necho "${FAKE_HOST:-localhost}"\n',
    "gpuwise": r"""#!/bin/bash
case "$1" in
doctor) while [ "$#" -gt 0 ]; do [ "$1" = -o ] && { mkdir -p "$(dirname "$2")"; echo '{}' > "$2"; }; shift; done
        case ",$FAIL_HOSTS," in *",$FAKE_HOST,"*) sleep "${FAIL_AFTER:-0}"; exit 2 ;; esac
        case ",${SLOW_HOSTS:-}," in *",$FAKE_HOST,"*) sleep "${SLOW_FOR:-0}" ;; esac; exit 0 ;;
export) mkdir -p "$4" && echo 'gpuwise_up 1' > "$4/gpuwise.prom"; exec sleep 30 ;;
esac
exit 9
""",
    "torchrun": '#!/bin/bash\necho "$FAKE_HOST $*" >> "$FAKE_ROOT/torchrun.log"\n',
    "pkill": '#!/bin/bash\necho "$FAKE_HOST pkill $*" >> "$FAKE_ROOT/stops.log"\n',
}


def _options(tmp_path: Path, **cloud) -> LaunchOptions:
    return LaunchOptions(
        job_path=EXAMPLES / "job-cpu.yaml",
        target="torchrun",
        out=tmp_path / "out",
        source=CAPTURES / "cpu-vm-kvm-docker",  # the migration check reads a capture, not this machine
        textfile=True,
        cloud={"hosts": HOSTS, **cloud},
    )


def _run_launch(tmp_path: Path, out: Path, fail: str = "") -> tuple[subprocess.CompletedProcess, Path]:
    bin_dir, root = tmp_path / "bin", tmp_path / "hosts"
    bin_dir.mkdir(exist_ok=True)
    root.mkdir(exist_ok=True)
    for name, text in FAKES.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", FAKE_ROOT=str(root), FAIL_HOSTS=fail)
    done = subprocess.run(
        ["bash", str(out / "launch.sh")], capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path
    )
    return done, root


def test_the_dry_run_writes_a_node_script_and_a_launcher_that_run_on_every_host(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the job's working directory (no workdir in job-cpu.yaml)
    plan = plan_launch(_options(tmp_path))
    write_files(plan)
    out = tmp_path / "out"
    for name in ("node.sh", "launch.sh"):
        assert subprocess.run(["bash", "-n", str(out / name)], timeout=300).returncode == 0
    assert plan.resources.provider is None and "gpu-01:9401" in plan.scrape_config

    done, root = _run_launch(tmp_path, out)
    assert done.returncode == 0, done.stdout + done.stderr
    runs = sorted((root / "torchrun.log").read_text().splitlines())
    expected = (
        "--nnodes 2 --nproc-per-node 1 --rdzv-backend c10d --rdzv-endpoint gpu-01:29500 --rdzv-id gw-ddp-cpu "
        "examples/train_ddp.py --steps 40"
    )
    assert runs == [f"gpu-01 {expected}", f"gpu-02 {expected}"]
    log = (out / "logs" / "gpu-02.log").read_text()
    assert "gpuwise preflight: gpu-02 ok" in log and "training on gpu-02 ended with exit code 0" in log
    assert (root / "gpu-02" / "gpuwise-launch" / "ddp-cpu" / "preflight" / "gpu-02.json").exists()
    assert (root / "gpu-01" / "gpuwise-launch" / "ddp-cpu" / "monitoring" / "gpu-01.prom").exists()
    assert not (root / "stops.log").exists()


def test_a_host_that_fails_its_preflight_stops_the_job_on_every_host(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_files(plan_launch(_options(tmp_path)))
    done, root = _run_launch(tmp_path, tmp_path / "out", fail="gpu-02")
    assert done.returncode == 1
    assert "gpu-02 failed; see" in done.stderr
    assert "not fit to train" in (tmp_path / "out" / "logs" / "gpu-02.log").read_text()
    stops = (root / "stops.log").read_text().splitlines()
    assert {line.split()[0] for line in stops} == {"gpu-01", "gpu-02"}  # sent again while a host is left
    assert all("--rdzv-id gw-ddp-cpu" in line for line in stops)


@pytest.mark.parametrize(
    ("hosts", "message"),
    [
        (None, "needs the hosts"),
        ("gpu-01", "names 1 distinct host(s) of 1; the job has 2"),
        ("gpu-01,gpu-01", "names 1 distinct host(s) of 2"),
        ("gpu-01,$(reboot)", "'$(reboot)' is not a host name"),
    ],
)
def test_hosts_are_checked(hosts, message):
    with pytest.raises(
        UserInputError, match=message.replace("(", r"\(").replace(")", r"\)").replace("$", r"\$")
    ):
        parse_hosts(hosts, 2)


def test_user_at_host_and_ipv6_are_hosts():
    assert parse_hosts("ops@gpu-01, [fe80::1]", 2) == ["ops@gpu-01", "[fe80::1]"]


def test_it_refuses_yes_wait_and_down_with_its_reason(tmp_path):
    torchrun = targets.get("torchrun")
    with pytest.raises(
        UserInputError, match="--target torchrun does not support --yes: gpuwise does not log in"
    ):
        targets.check_flags(torchrun, {"--yes": True})
    with pytest.raises(UserInputError, match="does not support --wait"):
        targets.check_flags(torchrun, {"--wait": True})
    with pytest.raises(UserInputError, match="does not support --down: gpuwise created nothing"):
        targets.down("torchrun:gw-ddp-cpu")
    with pytest.raises(UserInputError, match="--hosts is a --target torchrun option"):
        targets.check_flags(targets.get("slurm"), {"--hosts": HOSTS})
    # through the CLI: refused before anything is written
    r = subprocess.run(
        [sys.executable, "-m", "gpuwise.cli", "launch", str(EXAMPLES / "job-cpu.yaml"), "--target", "torchrun",
         "--hosts", HOSTS, "--yes", "--out", str(tmp_path / "o")],
        capture_output=True, text=True, timeout=120, env=dict(os.environ, COLUMNS="100"),
    )  # fmt: skip
    assert r.returncode == 3 and "does not support --yes" in r.stderr and "To fix:" in r.stderr
    assert not (tmp_path / "o").exists()


def test_the_first_failure_stops_a_host_still_waiting_in_the_rendezvous(tmp_path, monkeypatch):
    """gpu-01's torchrun would wait for its peer; gpu-02 fails its preflight: the real pkill that launch.sh
    sends stops gpu-01 (the job name is unique to this test, so nothing else matches)."""
    import yaml

    monkeypatch.chdir(tmp_path)
    job = yaml.safe_load((EXAMPLES / "job-cpu.yaml").read_text())
    job["name"] = f"gwreg-hang-{os.getpid()}"
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(job))
    options = _options(tmp_path)
    options.job_path = tmp_path / "job.yaml"
    write_files(plan_launch(options))
    hang = '#!/bin/bash\n[ "$FAKE_HOST" = gpu-01 ] || exit 0\nwhile :; do sleep 0.2; done\n'
    FAKES_HANG = {k: v for k, v in FAKES.items() if k != "pkill"} | {"torchrun": hang}
    monkeypatch.setattr(sys.modules[__name__], "FAKES", FAKES_HANG)
    # gpu-02 fails at once while gpu-01 is still in its preflight (3 s), so the first stop finds no torchrun
    # on gpu-01: launch.sh stops every host again each second while one is left (with one stop only, as
    # under load in CI, gpu-01 then waited in its rendezvous forever)
    monkeypatch.setenv("FAIL_AFTER", "0")
    monkeypatch.setenv("SLOW_HOSTS", "gpu-01")
    monkeypatch.setenv("SLOW_FOR", "3")
    try:
        done, _root = _run_launch(tmp_path, tmp_path / "out", fail="gpu-02")
    finally:
        subprocess.run(
            ["pkill", "-KILL", "-f", "--", f"--rdzv-id gw-{job['name']}"], check=False, timeout=300
        )  # a failed test leaves none, even one whose SIGTERM is ignored
    assert done.returncode == 1 and "gpu-02 failed" in done.stderr
    assert "training on gpu-01 ended with exit code" in (tmp_path / "out" / "logs" / "gpu-01.log").read_text()
