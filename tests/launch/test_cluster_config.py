"""Launch as clusters are really configured: GPU requests, --time, partition/account/QOS, Pyxis, the wheel,
plan --target, per-target options, and the examples' documented commands (all dry runs, no cluster)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from gpuwise.catalog.launchable import SKY_CLOUDS
from gpuwise.errors import UserInputError
from gpuwise.launch import slurm
from gpuwise.launch.build import LaunchOptions, plan_launch
from gpuwise.slurm.request import gpus_from_sinfo, time_from_hours
from tests.launch.kit import CAPTURES, EXAMPLES, REPO, gpuwise, write_job

SOURCE = CAPTURES / "h200-1gpu-kvm-vm"


def _sbatch(tmp_path: Path, job: Path | None = None, **slurm_options) -> tuple[list[str], str, list[str]]:
    job = job or write_job(tmp_path / "j.yaml", hours=20)
    plan = plan_launch(LaunchOptions(job, "slurm", out=tmp_path / "o", source=SOURCE, slurm=slurm_options))
    script = plan.files["job.sbatch"]
    return [x for x in script.splitlines() if x.startswith("#SBATCH")], script, plan.notes


def test_gpus_time_partition_account_qos_reach_the_sbatch_header(tmp_path):
    header, _script, notes = _sbatch(tmp_path, partition="gpu", account="proj-1", qos="high", exclusive=True)
    assert "#SBATCH --gpus-per-node=8" in header
    assert "#SBATCH --exclusive" in header
    assert "#SBATCH --time=0-20:00:00" in header  # the job's hours: 20
    assert {"#SBATCH --partition=gpu", "#SBATCH --account=proj-1", "#SBATCH --qos=high"} <= set(header)
    assert any("--time=0-20:00:00" in n for n in notes)


@pytest.mark.parametrize(
    ("request_form", "want"),
    [("gres", "#SBATCH --gres=gpu:8"), ("gpus-per-node", "#SBATCH --gpus-per-node=8"), ("none", None)],
)
def test_the_gpu_request_takes_either_spelling_or_none(tmp_path, request_form, want):
    header, _s, _n = _sbatch(tmp_path, gpu_request=request_form)
    gpu_lines = [x for x in header if x.startswith(("#SBATCH --gres", "#SBATCH --gpus"))]
    assert gpu_lines == ([want] if want else [])


def test_an_explicit_time_wins_and_a_bad_gpu_request_is_refused(tmp_path):
    header, _s, _n = _sbatch(tmp_path, time="02:00:00")
    assert "#SBATCH --time=02:00:00" in header and not any("0-20" in x for x in header)
    with pytest.raises(UserInputError, match="--gpu-request 'gpu' is not one of"):
        _sbatch(tmp_path, gpu_request="gpu")


def test_time_from_hours_rounds_up_to_a_minute():
    assert time_from_hours(20) == "0-20:00:00"
    assert time_from_hours(25.5) == "1-01:30:00"
    assert time_from_hours(0.001) == "0-00:01:00"
    assert time_from_hours(1 / 60 + 1e-6) == "0-00:02:00"


def test_sinfo_gres_gives_the_gpus_every_node_has():
    assert gpus_from_sinfo("gpu:8\n") == 8
    assert gpus_from_sinfo("gpu:a100:8(S:0-1)\ngpu:a100:4(S:0)\n") == 4
    assert gpus_from_sinfo("gpu:a100:2,gpu:t4:1\n") == 3
    assert gpus_from_sinfo("(null)\ngpu:8\n") == 0
    assert gpus_from_sinfo("") == 0


def test_the_container_runs_through_pyxis_with_the_output_and_workdir_mounted(tmp_path, monkeypatch):
    job = write_job(tmp_path / "j.yaml", image="nvcr.io/nvidia/pytorch:24.05-py3", workdir=str(tmp_path))
    _h, script, _n = _sbatch(tmp_path, job, container="pyxis")
    train = next(x for x in script.splitlines() if x.endswith(" train"))
    words = shlex.split(train)
    assert "--container-image=nvcr.io/nvidia/pytorch:24.05-py3" in words
    assert f"--container-mounts={tmp_path / 'o'}:{tmp_path / 'o'},{tmp_path}:{tmp_path}" in words
    # auto: only where this srun has Pyxis; else the image is named as unused, never a failing srun flag
    monkeypatch.setattr(slurm.client, "srun_takes_container_image", lambda: False)
    _h, script, notes = _sbatch(tmp_path, job, container="auto")
    assert "--container-image" not in script and any("--container pyxis" in n for n in notes)
    monkeypatch.setattr(slurm.client, "srun_takes_container_image", lambda: True)
    _h, script, _n = _sbatch(tmp_path, job)
    assert "--container-image=" in script
    with pytest.raises(UserInputError, match="--container 'docker' is not one of"):
        _sbatch(tmp_path, job, container="docker")


def test_fleet_run_asks_for_gpus_exclusive_and_qos(tmp_path):
    r = gpuwise("fleet", "run", "--slurm", "-N", "2", "--out", str(tmp_path / "o"), "--gpus-per-node", "4",
                "--gpu-request", "gres", "--exclusive", "--qos", "high", "--time", "00:30:00", "--partition", "gpu",
                "--account", "proj-1", "--dry-run")  # fmt: skip
    assert r.exit_code == 0, r.output
    header = [x for x in r.stdout.splitlines() if x.startswith("#SBATCH")]
    options = [x.split("=")[0] for x in header]
    assert len(options) == len(set(options)), header  # each option once
    assert {"#SBATCH --partition=gpu", "#SBATCH --account=proj-1"} <= set(header)
    assert {
        "#SBATCH --gres=gpu:4",
        "#SBATCH --exclusive",
        "#SBATCH --qos=high",
        "#SBATCH --time=00:30:00",
    } <= set(header)
    r = gpuwise("fleet", "run", "--slurm", "--out", str(tmp_path / "o"), "--gpus-per-node", "2", "--dry-run")
    assert "#SBATCH --gpus-per-node=2" in r.stdout
    r = gpuwise("fleet", "run", "--slurm", "--out", str(tmp_path / "o"), "--gpu-request", "x", "--dry-run")
    assert r.exit_code == 3 and "To fix:" in r.output


@pytest.mark.parametrize(
    ("target", "flag"),
    [("skypilot", ["--partition", "gpu"]), ("tencent", ["--exclusive"]), ("slurm", ["--zone", "ap-guangzhou-6"]),
     ("skypilot", ["--gpuwise-wheel-url", "https://example.invalid/w.whl"]), ("tencent", ["--wait"])],
)  # fmt: skip
def test_an_option_of_another_target_is_a_clear_error(tmp_path, target, flag):
    r = gpuwise(
        "launch", str(EXAMPLES / "job-llm.yaml"), "--target", target, *flag, "--out", str(tmp_path / "o")
    )
    assert r.exit_code == 3, r.output
    # another target's option names that target; a feature the target lacks (--wait) says why
    said = (
        f"{flag[0]} is a --target" in r.output or f"--target {target} does not support {flag[0]}:" in r.output
    )
    assert said and "To fix:" in r.output and "Traceback" not in r.output, r.output
    assert not (tmp_path / "o").exists()


def _registry_installs(text: str) -> list[str]:
    """Lines that would install something named from a package registry: `pip install` without --no-index,
    other than the job's own setup (`pip install -r requirements.txt`, the user's to choose)."""
    bad = []
    for line in text.splitlines():
        if (
            re.search(r"\bpip3?\b.*\binstall\b", line)
            and "--no-index" not in line
            and "requirements.txt" not in line
        ):
            bad.append(line)
    return bad


def test_no_generated_file_installs_gpuwise_from_a_registry(tmp_path):
    pytest.importorskip("tencentcloud.cvm.v20170312.models", reason="the tencent extra is not installed")
    runs = {
        "slurm": ["--target", "slurm"],
        "skypilot": ["--target", "skypilot", "--offer", "aws:p4d.24xlarge"],
        "tencent": ["--target", "tencent", "--offer", "tencent:GT4.41XLARGE948", "--zone", "ap-guangzhou-6",
                    "--image-id", "img-gwla0001", "--gpuwise-wheel-url", "https://gwla.invalid/gpuwise.whl"],
        "tencent-image": ["--target", "tencent", "--offer", "tencent:GT4.41XLARGE948", "--zone", "ap-guangzhou-6",
                          "--image-id", "img-gwla0001"],
    }  # fmt: skip
    for name, args in runs.items():
        out = tmp_path / name
        r = gpuwise("launch", str(EXAMPLES / "job-llm.yaml"), *args, "--out", str(out))
        assert r.exit_code == 0, r.output
        files = [f for f in out.rglob("*") if f.is_file() and f.suffix != ".whl"]
        assert files
        for f in files:
            assert _registry_installs(f.read_text()) == [], f
    # the cloud targets ship the wheel they name, and install it offline
    task = (tmp_path / "skypilot" / "task.yaml").read_text()
    (wheel,) = (tmp_path / "skypilot" / "wheels").glob("gpuwise-*-py3-none-any.whl")
    assert f'--no-index --find-links "$HOME"/gpuwise-wheels "$HOME"/gpuwise-wheels/{wheel.name}' in task
    assert f"~/gpuwise-wheels: {tmp_path / 'skypilot' / 'wheels'}" in task
    user_data = (tmp_path / "tencent" / "user-data.sh").read_text()
    assert "https://gwla.invalid/gpuwise.whl" in user_data and "--no-index" in user_data
    import hashlib

    assert (
        hashlib.sha256((tmp_path / "tencent" / "wheels" / wheel.name).read_bytes()).hexdigest() in user_data
    )


def test_the_old_registry_install_is_what_the_check_catches():
    assert _registry_installs("pip install -q gpuwise\npip3 install -q 'gpuwise'\n") == [
        "pip install -q gpuwise", "pip3 install -q 'gpuwise'"]  # fmt: skip
    assert (
        _registry_installs(
            "python3 -m pip install -q --no-index --find-links d d/gpuwise-0.1-py3-none-any.whl"
        )
        == []
    )


def test_plan_target_keeps_only_what_the_target_launches(tmp_path):
    from gpuwise.catalog.launchable import launchable

    for target in ("skypilot", "tencent", "alibaba", "slurm"):
        out = tmp_path / f"{target}.json"
        r = gpuwise(
            "plan", str(EXAMPLES / "llm-13b-finetune.yaml"), "--launchable", target, "--json", "-o", str(out)
        )
        assert r.exit_code == 0, r.output
        options = json.loads(out.read_text())["options"]
        assert options
        if target == "slurm":
            assert {o["kind"] for o in options} == {"onprem"}
        else:
            assert all(o["kind"] == "cloud" and launchable(target, o["provider"]) for o in options), options
    r = gpuwise("plan", str(EXAMPLES / "llm-13b-finetune.yaml"), "--target", "k8s")
    assert r.exit_code == 3 and "To fix:" in r.output


def test_a_plan_for_all_clouds_launches_only_an_option_skypilot_can(tmp_path):
    """The plan without --target: its cheapest cloud option may be one SkyPilot does not launch (coreweave)."""
    plan = tmp_path / "plan.json"
    assert gpuwise("plan", str(EXAMPLES / "llm-13b-finetune.yaml"), "--json", "-o", str(plan)).exit_code == 0
    r = gpuwise("launch", str(EXAMPLES / "job-llm.yaml"), "--plan", str(plan), "--target", "skypilot", "--json",
                "--out", str(tmp_path / "o"))  # fmt: skip
    if r.exit_code == 0:
        assert json.loads(r.stdout)["resources"]["provider"] in SKY_CLOUDS  # a cloud SkyPilot launches
    else:  # no SkyPilot cloud in that plan: the message says how to make one
        assert "--target skypilot" in r.output and "gpuwise plan" in r.output, r.output


def _documented_commands(path: Path) -> list[list[str]]:
    """`#   gpuwise ...` lines of an example's header, without a trailing `  (comment)`."""
    return [shlex.split(line.split("#", 1)[1].split("  (")[0]) for line in path.read_text().splitlines()
            if re.match(r"#\s+gpuwise (plan|launch) ", line)]  # fmt: skip


def test_the_examples_documented_commands_run_as_written(tmp_path):
    pytest.importorskip("tencentcloud.cvm.v20170312.models", reason="the tencent extra is not installed")
    pytest.importorskip("alibabacloud_ecs20140526.models", reason="the cn-clouds extra is not installed")
    (tmp_path / "examples").symlink_to(REPO / "examples")
    commands = _documented_commands(EXAMPLES / "job-llm.yaml")
    assert {c[c.index("--target") + 1] for c in commands if c[1] == "launch"} == {
        "slurm",
        "skypilot",
        "tencent",
        "alibaba",
    }
    for words in [*commands, *_documented_commands(EXAMPLES / "job-cpu.yaml")]:
        if "--yes" in words:
            continue  # creates something: not a dry run
        r = gpuwise(*words[1:], cwd=tmp_path)
        assert r.exit_code == 0, f"{shlex.join(words)}\n{r.output}"


def test_a_bad_gpuwise_wheel_is_a_clear_error_and_nothing_is_written(tmp_path):
    not_zip = tmp_path / "gpuwise-0.1.0-py3-none-any.whl"
    not_zip.write_text("not a zip")
    for wheel, message in [(tmp_path / "evil;rm.whl", "is not a gpuwise wheel file name"),
                           (tmp_path / "gpuwise-9.9-py3-none-any.whl", "no such file"),
                           (not_zip, "is not a readable wheel")]:  # fmt: skip
        out = tmp_path / "o"
        r = gpuwise("launch", str(EXAMPLES / "job-llm.yaml"), "--target", "skypilot", "--offer", "aws:p4d.24xlarge",
                    "--gpuwise-wheel", str(wheel), "--out", str(out))  # fmt: skip
        assert r.exit_code == 3 and message in r.output and "To fix:" in r.output, r.output
        assert "Traceback" not in r.output and not out.exists()
    r = gpuwise("launch", str(EXAMPLES / "job-llm.yaml"), "--target", "tencent", "--offer", "tencent:GT4.41XLARGE948",
                "--zone", "ap-guangzhou-6", "--image-id", "img-gwla0001", "--gpuwise-wheel-url", "http://x/w.whl",
                "--out", str(tmp_path / "o"))  # fmt: skip
    assert r.exit_code == 3 and "is not an https:// URL" in r.output
