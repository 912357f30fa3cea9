"""A job whose every string field holds shell metacharacters: every file launch writes keeps them as data.

Each target's scripts are run under bash in a temporary folder with a fake PATH (sbatch, srun, scontrol,
gpuwise, torchrun, pip, mount, sudo ... are stubs that log their arguments), as far as they go without a
cluster or a cloud: the Slurm job script and its node steps, SkyPilot's setup and run, the cloud VM
targets' boot script (Tencent, Alibaba, Huawei, Volcano Engine, Baidu). No marker file may appear, and the values must reach the stubs
exactly as written. Then shellcheck reads every generated script (tests/launch/test_hostile_scripts.py::test_shellcheck_accepts_every_script).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from gpuwise.launch import alibaba, slurm, steps
from gpuwise.launch.build import LaunchOptions, plan_launch, write_files
from tests.launch.kit import (
    CAPTURES,
    CREDENTIAL_VARIABLES,
    EXAMPLES,
    hostile,
    wheel,
    write_hostile_job,
    write_huawei_offers,
    write_job,
)

SOURCE = CAPTURES / "h200-1gpu-kvm-vm"  # the migration check's source machine: a capture, not this one
NFS = "10.0.0.1:/export"
STUBS = (
    "sbatch",
    "srun",
    "scontrol",
    "gpuwise",
    "nvidia-smi",
    "torchrun",
    "pip",
    "pip3",
    "python3",
    "mount",
    "sudo",
)
_LOG = r"""{ printf '%s' "${0##*/}"; printf '\037%s' "$@"; printf '\036'; } >> "$GWLA_LOG"
"""
_BEHAVIOUR = {
    # srun runs the step itself (its options dropped): the node script runs on "this node"
    "srun": 'while [ $# -gt 0 ] && [ "${1#--}" != "$1" ]; do shift; done\nexec "$@"\n',
    "scontrol": '[ "$1 $2" = "show hostnames" ] && echo gwla-node1\nexit 0\n',
    # doctor leaves a report with no failed finding where -o says (the preflight's verdict reads it)
    "gpuwise": 'while [ $# -gt 0 ]; do [ "$1" = -o ] && echo \'{"findings": []}\' > "$2"; shift; done\nexit 0\n',
    "mount": 'exit "${GWLA_MOUNT_RC:-0}"\n',
    # `python3 -m pip` (installing the shipped wheel) is only logged; any other python3 is the real one
    "python3": f'[ "$1 $2" = "-m pip" ] && exit 0\nexec {sys.executable} "$@"\n',
    # what the training processes would see
    "torchrun": "{ printf 'env'; printf '\\037%s' \"$GWLA_VALUE\" \"${GPUWISE_DATASET:-}\"; printf '\\036'; } "
    '>> "$GWLA_LOG"\n',
}


@pytest.fixture
def box(tmp_path, monkeypatch):
    """marks/ (where an injected command would write), bin/ (the stubs), the log, and the environment."""
    marks, stubs = tmp_path / "marks", tmp_path / "bin"
    marks.mkdir()
    stubs.mkdir()
    for name in STUBS:
        path = stubs / name
        path.write_text("#!/bin/bash\n" + _LOG + _BEHAVIOUR.get(name, "exit 0\n"))
        path.chmod(0o755)
    log = tmp_path / "calls.log"
    env = {
        "PATH": f"{stubs}:{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "GWLA_LOG": str(log),
        "LANG": "C.UTF-8",
    }
    monkeypatch.setattr(steps, "EXPORTER_WAIT_S", 1)  # the exporter stub never answers: give up after 1 s
    monkeypatch.setattr(slurm.client, "gpuwise_executable", lambda: str(stubs / "gpuwise"))
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.tencentcloud profile: the dry run is never sent
    for name in CREDENTIAL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(alibaba, "_credentials", lambda: None)  # its SDK read the variables when imported
    monkeypatch.setenv("XDG_CONFIG_HOME", str(write_huawei_offers(tmp_path / "config")))  # Huawei's flavors
    return marks, env, log


def _calls(log: Path) -> list[list[str]]:
    if not log.exists():
        return []
    return [record.split("\x1f") for record in log.read_text().split("\x1e") if record]


def _wait_for_call(log: Path, prefix: list[str], timeout_s: float = 60.0) -> list[list[str]]:
    """The calls logged so far, once one starts with `prefix`: a boot script starts the exporter in the
    background (nohup ... &) and may end before the exporter's stand-in has logged its call."""

    def logged() -> bool:  # and its record complete: a stand-in writes a record in several writes
        return any(c[: len(prefix)] == prefix for c in _calls(log)) and log.read_bytes().endswith(b"\x1e")

    deadline = time.monotonic() + timeout_s
    while not logged() and time.monotonic() < deadline:
        time.sleep(0.1)
    return _calls(log)


def _run(script: Path, env: dict, *args: str, cwd: Path, **more) -> subprocess.CompletedProcess:
    cwd.mkdir(parents=True, exist_ok=True)
    return subprocess.run(["bash", str(script), *args], capture_output=True, text=True, env={**env, **more},
                          cwd=cwd, timeout=60)  # fmt: skip


def _no_marks(marks: Path) -> None:
    assert sorted(p.name for p in marks.iterdir() if p.name.startswith("pwned")) == []


class _Job:
    """The hostile job file, its fields as written, and where its markers would appear."""

    def __init__(self, path: Path, marks: Path):
        self.path, self.marks = path, marks
        self.doc = yaml.safe_load(path.read_text())

    def script_args(self) -> list[str]:
        """What torchrun must receive after the rendezvous flags: the command's words, each as written."""
        m = self.marks
        return ["train.py", "--tag", hostile(m, "arg"), ";", "touch", f"{m}/pwned-cmd-semi", "&&", "touch",
                f"{m}/pwned-cmd-and", "|", "touch", f"{m}/pwned-cmd-pipe"]  # fmt: skip


def test_slurm_job_and_node_steps_execute_nothing(tmp_path, box):
    marks, env, log = box
    job = _Job(write_hostile_job(tmp_path / "job.yaml", marks, NFS), marks)
    plan = plan_launch(LaunchOptions(job_path=job.path, target="slurm", out=tmp_path / "out", source=SOURCE,
                                     slurm={"partition": "gwla-part", "time": "1-00:00:00", "container": "pyxis"}))  # fmt: skip
    write_files(plan)
    slurm_env = dict(
        env,
        SLURM_JOB_NODELIST="gwla-node1",
        SLURM_JOB_NUM_NODES="1",
        SLURM_JOB_ID="77",
        SLURMD_NODENAME="gwla-node1",
    )
    mount, workdir = job.doc["dataset"]["mount"], job.doc["workdir"]
    # 1. the dataset is not there: the preflight says so (the value printed as it is) and the job stops
    p = _run(plan.out / "job.sbatch", slurm_env, cwd=tmp_path / "run")
    assert p.returncode == 1, p.stdout + p.stderr
    assert f"gpuwise preflight: dataset {mount} is not readable on gwla-node1" in p.stderr, repr(p.stderr)
    _no_marks(marks)
    assert (marks / "setup-ran").read_text() == "setup a;b|c  \t\n\n"  # shell, run as written (${IFS})
    # 2. with the dataset and the workdir there, every step runs through to training
    Path(mount).mkdir(parents=True)
    Path(workdir).mkdir(parents=True)
    log.unlink()
    p = _run(plan.out / "job.sbatch", slurm_env, cwd=tmp_path / "run")
    assert p.returncode == 0, p.stdout + p.stderr
    _no_marks(marks)
    calls = _calls(log)
    doctor = next(c for c in calls if c[:2] == ["gpuwise", "doctor"])
    assert doctor[2:4] == ["--expect", "gpus=0,driver=550.54.15"]
    srun_train = next(c for c in calls if c[0] == "srun" and c[-1] == "train")
    assert f"--container-image={job.doc['image']}" in srun_train
    train = next(c for c in calls if c[0] == "torchrun")
    assert train[train.index("--rdzv-id") + 2 :] == job.script_args()
    assert next(c for c in calls if c[0] == "env")[1:] == [job.doc["env"]["GWLA_VALUE"], mount]
    assert '"job": "gpuwise-gwla-hostile"' in (plan.out / "monitoring" / "targets.json").read_text()


def test_a_setup_command_cannot_reach_into_the_preflight(tmp_path, box):
    """node.sh is one `case`: a setup line that ends its branch must not add a branch of its own."""
    marks, env, log = box
    job = write_job(tmp_path / "j.yaml", gpus_per_node=0, nodes=1,
                    setup=[f"true ;;\npreflight) touch {marks}/pwned-case ;;\nsetup) true"])  # fmt: skip
    plan = plan_launch(LaunchOptions(job_path=job, target="slurm", out=tmp_path / "out", source=SOURCE))
    write_files(plan)
    p = _run(plan.out / "node.sh", env, "preflight", cwd=tmp_path, OUT=str(plan.out), GPUWISE="gpuwise")
    assert p.returncode == 0, p.stdout + p.stderr
    _no_marks(marks)
    assert [c[:2] for c in _calls(log)] == [["gpuwise", "doctor"]]


def test_skypilot_setup_and_run_execute_nothing(tmp_path, box):
    marks, env, log = box
    job = _Job(write_hostile_job(tmp_path / "job.yaml", marks, NFS, gpus_per_node=1), marks)
    plan = plan_launch(LaunchOptions(job_path=job.path, target="skypilot", offer="aws:g5.4xlarge",
                                     out=tmp_path / "out", source=SOURCE, cloud={"gpuwise_wheel": wheel()}))  # fmt: skip
    task = yaml.safe_load(plan.files["task.yaml"])
    sky_env = dict(env, **task["envs"], SKYPILOT_NUM_NODES="1", SKYPILOT_NODE_IPS="127.0.0.1",
                   SKYPILOT_TASK_ID="gwla-task")  # fmt: skip
    for part in ("setup", "run"):
        (tmp_path / f"{part}.sh").write_text(task[part])
    p = _run(tmp_path / "setup.sh", sky_env, cwd=tmp_path / "node")
    assert p.returncode == 0, p.stdout + p.stderr
    p = _run(tmp_path / "run.sh", sky_env, cwd=tmp_path / "node")
    assert p.returncode == 0, p.stdout + p.stderr
    _no_marks(marks)
    assert (marks / "setup-ran").exists()
    calls = _calls(log)
    mount = job.doc["dataset"]["mount"]
    wheels = f"{tmp_path}/gpuwise-wheels"  # $HOME/gpuwise-wheels: where SkyPilot uploads OUT/wheels
    assert ["python3", "-m", "pip", "install", "-q", "--no-index", "--find-links", wheels,
            f"{wheels}/{wheel().name}"] in calls  # fmt: skip
    assert ["sudo", "mount", "-t", "nfs", job.doc["dataset"]["source"], mount] in calls
    train = next(c for c in calls if c[0] == "torchrun")
    assert train[train.index("--rdzv-id") + 2 :] == job.script_args()
    assert task["envs"]["GWLA_VALUE"] == job.doc["env"]["GWLA_VALUE"]  # SkyPilot exports envs itself
    assert task["resources"]["image_id"] == f"docker:{job.doc['image']}"


# the cloud VM targets (their boot script: launch/boot_script.py): SDK module, offer, options, NFS mount options
CLOUD_VMS = {
    "tencent": ("tencentcloud.cvm.v20170312.models", "tencent:GN7.2XLARGE32",
                {"zone": "ap-guangzhou-6", "image_id": "img-gwla0001"}, "vers=4.0,noresvport"),
    "alibaba": ("alibabacloud_ecs20140526.models", "alibaba:ecs.gn7e-c16g1.4xlarge",
                {"zone": "cn-shanghai-b", "image_id": "m-gwla0001", "subnet": "vsw-gwla0001",
                 "security_group": "sg-gwla0001"},
                "vers=4,minorversion=0,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport"),
    "huawei": ("huaweicloudsdkecs.v2.model", "huawei:p2s.2xlarge.8",
               {"zone": "cn-north-4a", "image_id": "img-gwla0001", "vpc": "vpc-gwla0001", "subnet": "sub-gwla0001"},
               "vers=3,timeo=600,noresvport,nolock"),
    "volcengine": ("volcenginesdkecs", "volcengine:ecs.gni2.3xlarge",
                   {"zone": "cn-beijing-a", "image_id": "image-gwla0001", "subnet": "subnet-gwla0001",
                    "security_group": "sg-gwla0001"}, "vers=3,nolock,noresvport"),
    "baidu": ("baidubce.services.bcc.bcc_client", "baidu:bcc.gn5.c12m92.1v100",
              {"zone": "cn-bj-a", "image_id": "m-gwla0001", "subnet": "sbn-gwla0001", "security_group": "g-gwla0001"},
              "vers=3,nolock,noresvport"),
}  # fmt: skip
EXAMPLE_OFFERS = {
    "alibaba": "alibaba:ecs.gn7e-c16g1.32xlarge",
    "huawei": "huawei:p2s.16xlarge.8",
    "volcengine": "volcengine:ecs.gni2.28xlarge",
    "baidu": "baidu:bcc.gn5.c96m736.8v100",
}  # 8 GPUs, as examples/job-llm.yaml wants


@pytest.mark.parametrize("target", sorted(CLOUD_VMS))
def test_cloud_boot_script_executes_nothing(tmp_path, box, target):
    module, offer, cloud, options = CLOUD_VMS[target]
    pytest.importorskip(module, reason=f"the SDK of --target {target} is not installed")
    marks, env, log = box
    job = _Job(write_hostile_job(tmp_path / "job.yaml", marks, NFS, gpus_per_node=1), marks)
    plan = plan_launch(LaunchOptions(job_path=job.path, target=target, offer=offer, out=tmp_path / "out",
                                     source=SOURCE, cloud={**cloud, "gpuwise_wheel": wheel()}))  # fmt: skip
    write_files(plan)
    script = plan.out / "user-data.sh"
    source, mount = job.doc["dataset"]["source"], job.doc["dataset"]["mount"]
    node = dict(env, GPUWISE_LAUNCH_OUT=str(tmp_path / "node-out"))
    # the mount skipped: the message shows the mount command (the values quoted, as they would run)
    p = _run(script, node, cwd=tmp_path / "n1", GPUWISE_LAUNCH_SKIP_MOUNT="a test")
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"gpuwise launch: dataset mount skipped (mount -t nfs -o {options} '" in p.stdout
    # its exporter, started in the background, logs before the next run starts: two stand-ins appending
    # to one log at once would interleave their records
    _wait_for_call(log, ["gpuwise", "export", "--job-labels", "--listen"])
    # the mount fails: the message names the export as it is
    p = _run(script, node, cwd=tmp_path / "n2", GWLA_MOUNT_RC="32")
    assert p.returncode == 1 and f"gpuwise launch: cannot mount {source}\n" in p.stderr, p.stderr
    # the mount works: preflight and exporter
    log.unlink()
    p = _run(script, node, cwd=tmp_path / "n3")
    assert p.returncode == 0, p.stdout + p.stderr
    _no_marks(marks)
    calls = _wait_for_call(log, ["gpuwise", "export", "--job-labels", "--listen"])
    assert ["mount", "-t", "nfs", "-o", options, source, mount] in calls
    assert Path(mount).is_dir()  # the boot script made the mount point, named exactly
    assert any(c[:2] == ["gpuwise", "doctor"] for c in calls)
    assert any(c[:4] == ["gpuwise", "export", "--job-labels", "--listen"] for c in calls)


def _generated_scripts(tmp_path: Path, marks: Path) -> dict[str, str]:
    """Every script launch writes, for the hostile job and the examples, each exporter mode."""
    hostile_nfs = write_hostile_job(tmp_path / "h-nfs.yaml", marks, NFS, gpus_per_node=1)
    hostile_s3 = write_hostile_job(tmp_path / "h-s3.yaml", marks, "s3://gwla-bucket/", gpus_per_node=1)
    tencent = {"zone": "ap-guangzhou-6", "image_id": "img-gwla0001", "gpuwise_wheel": wheel()}
    sky = {"gpuwise_wheel": wheel()}
    runs = {
        "hostile-slurm": LaunchOptions(hostile_nfs, "slurm"),
        "hostile-slurm-s3": LaunchOptions(hostile_s3, "slurm"),
        "hostile-sky": LaunchOptions(hostile_nfs, "skypilot", offer="aws:g5.4xlarge", cloud=sky),
        "hostile-sky-s3": LaunchOptions(hostile_s3, "skypilot", offer="aws:g5.4xlarge", cloud=sky),
        "hostile-torchrun": LaunchOptions(hostile_nfs, "torchrun", cloud={"hosts": "gpu-01"}),
        "example-slurm": LaunchOptions(EXAMPLES / "job-cpu.yaml", "slurm"),
        "example-sky": LaunchOptions(
            EXAMPLES / "job-llm.yaml", "skypilot", offer="aws:p4d.24xlarge", cloud=sky
        ),
    }
    try:
        import tencentcloud.cvm.v20170312.models  # noqa: F401

        runs["hostile-tencent"] = LaunchOptions(
            hostile_nfs, "tencent", offer="tencent:GN7.2XLARGE32", cloud=tencent
        )
        runs["example-tencent"] = LaunchOptions(EXAMPLES / "job-llm.yaml", "tencent",
                                                offer="tencent:GT4.41XLARGE948", cloud=tencent)  # fmt: skip
    except ImportError:
        pass
    for target, (module, offer, cloud, _options) in CLOUD_VMS.items():
        if target == "tencent":
            continue  # above, with its example
        try:
            __import__(module)
        except ImportError:
            continue
        cloud = {**cloud, "gpuwise_wheel": wheel()}
        runs[f"hostile-{target}"] = LaunchOptions(hostile_nfs, target, offer=offer, cloud=cloud)
        runs[f"example-{target}"] = LaunchOptions(
            EXAMPLES / "job-llm.yaml", target, offer=EXAMPLE_OFFERS[target], cloud=cloud
        )
    scripts = {}
    for name, o in runs.items():
        for textfile in (False, True):
            o.out, o.source, o.textfile = tmp_path / f"{name}-{textfile}", SOURCE, textfile
            plan = plan_launch(o)
            for file, text in plan.files.items():
                if file.endswith((".sh", ".sbatch")):
                    scripts[f"{name}-{textfile}-{file}"] = text
                elif file == "task.yaml":
                    task = yaml.safe_load(text)
                    for part in ("setup", "run"):  # SkyPilot runs each with bash
                        scripts[f"{name}-{textfile}-{part}.sh"] = "#!/bin/bash\n" + task[part]
    return scripts


@pytest.mark.skipif(
    shutil.which("shellcheck") is None, reason="shellcheck (Debian package shellcheck) is missing"
)
def test_shellcheck_accepts_every_script(tmp_path, box):
    marks, _env, _log = box
    folder = tmp_path / "scripts"
    folder.mkdir()
    scripts = _generated_scripts(tmp_path, marks)
    assert {"job.sbatch", "node.sh", "launch.sh", "setup.sh", "run.sh"} <= {
        n.rsplit("-", 1)[-1] for n in scripts
    }
    assert any(n.startswith("hostile-torchrun-") and n.endswith("launch.sh") for n in scripts)
    for name, text in scripts.items():
        (folder / name).write_text(text)
    p = subprocess.run(["shellcheck", "-S", "warning", "-f", "gcc", *sorted(map(str, folder.iterdir()))],
                       capture_output=True, text=True, timeout=120)  # fmt: skip
    assert p.returncode == 0, p.stdout[-6000:] + p.stderr


def test_an_sbatch_header_value_that_is_not_a_plain_word_is_refused(tmp_path):
    job = write_job(tmp_path / "j.yaml", gpus_per_node=0)
    from gpuwise.errors import UserInputError

    for slurm_options, out, source in [
        ({"partition": "gpu\n#SBATCH --uid=0"}, tmp_path / "o", "--partition"),
        ({"account": "a b"}, tmp_path / "o", "--account"),
        ({}, tmp_path / "with space", "--out"),
        ({}, tmp_path / "pct%j", "--out"),
    ]:
        with pytest.raises(UserInputError, match="cannot go into an #SBATCH line") as exc:
            plan_launch(LaunchOptions(job, "slurm", out=out, source=SOURCE, slurm=slurm_options))
        assert source in str(exc.value) and "To fix:" in str(exc.value)
        assert not out.exists()


def test_torchrun_node_script_executes_nothing(tmp_path, box):
    """node.sh of `--target torchrun` (what launch.sh starts on each host) from the hostile job: the dataset
    check stops it without running a marker, then with the dataset there it runs through to torchrun."""
    marks, env, log = box
    job = _Job(write_hostile_job(tmp_path / "job.yaml", marks, NFS), marks)
    plan = plan_launch(LaunchOptions(job_path=job.path, target="torchrun", out=tmp_path / "out", source=SOURCE,
                                     cloud={"hosts": "gpu-01"}))  # fmt: skip
    write_files(plan)
    p = _run(plan.out / "node.sh", env, cwd=tmp_path / "run", GPUWISE="gpuwise")
    assert p.returncode == 1, p.stdout + p.stderr
    _no_marks(marks)
    Path(job.doc["dataset"]["mount"]).mkdir(parents=True)
    Path(job.doc["workdir"]).mkdir(parents=True)
    log.unlink(missing_ok=True)
    p = _run(plan.out / "node.sh", env, cwd=tmp_path / "run", GPUWISE="gpuwise")
    assert p.returncode == 0, p.stdout + p.stderr
    _no_marks(marks)
    train = next(c for c in _calls(log) if c[0] == "torchrun")
    assert train[train.index("--rdzv-id") + 2 :] == job.script_args()
