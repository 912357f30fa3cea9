"""`gpuwise launch` through the CLI: the dry run, the cost guard, --down IDs and bad input (no cluster needed)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from gpuwise.report.formats import render
from tests.launch.kit import EXAMPLES, gpuwise, write_job


def test_slurm_dry_run_prints_what_it_would_submit_and_creates_nothing(tmp_path):
    out = tmp_path / "gwla-dry"
    r = gpuwise("launch", str(EXAMPLES / "job-cpu.yaml"), "--target", "slurm", "--out", str(out))
    assert r.exit_code == 0, r.output
    assert "dry run: nothing created" in r.stdout
    assert "gpuwise launch --down slurm:JOBID" in r.stdout
    script = (out / "job.sbatch").read_text()
    assert "#SBATCH --job-name=gw-ddp-cpu" in r.stdout  # the script itself is shown
    assert (
        "#SBATCH --nodes=2" in script
        and 'srun --ntasks-per-node=1 --overlap bash "$OUT/node.sh" exporter &' in script
    )
    node = (out / "node.sh").read_text()
    assert "doctor --expect gpus=0" in node and "--rdzv-backend c10d" in node
    doc = json.loads((out / "launch.json").read_text())
    assert doc["dry_run"] is True and doc["submitted"] is None
    for name in ("job.sbatch", "node.sh"):
        assert subprocess.run(["bash", "-n", str(out / name)], timeout=300).returncode == 0


def test_textfile_mode_runs_no_listener(tmp_path):
    out = tmp_path / "gwla-tf"
    r = gpuwise(
        "launch", str(EXAMPLES / "job-cpu.yaml"), "--target", "slurm", "--textfile", "--out", str(out)
    )
    assert r.exit_code == 0, r.output
    node = (out / "node.sh").read_text()
    assert (
        'export --job-labels --textfile "$OUT/monitoring/textfile-$NODE" --interval 15' in node
        and "--listen" not in node
    )


def test_cost_guard_refuses_above_max_cost_and_creates_nothing(tmp_path):
    out = tmp_path / "gwla-cost"
    args = [
        str(EXAMPLES / "job-llm.yaml"),
        "--offer",
        "aws:p4d.24xlarge",
        "--target",
        "skypilot",
        "--out",
        str(out),
    ]
    r = gpuwise("launch", *args, "--max-cost", "100", "--yes")
    assert r.exit_code == 3
    assert "refused: the estimated cost 878.31 USD" in r.output and "above --max-cost 100" in r.output
    assert "To fix:" in r.output and not out.exists()
    shown = gpuwise("launch", *args, "--max-cost", "100")  # the dry run shows the verdict
    assert shown.exit_code == 0 and "above --max-cost 100" in shown.stdout
    ok = gpuwise("launch", *args, "--max-cost", "1000", "--json")
    assert ok.exit_code == 0 and json.loads(ok.stdout)["cost"]["over_budget"] is False


@pytest.mark.parametrize("yes", [[], ["--yes"]], ids=["dry-run", "yes"])
def test_unknown_cost_cannot_pass_max_cost(tmp_path, yes):
    """An unknown price cannot be checked against --max-cost: refused (exit 3) in the dry run too, nothing
    written (the dry run used to exit 0 without a word)."""
    out = tmp_path / "o"
    r = gpuwise("launch", str(EXAMPLES / "job-cpu.yaml"), "--target", "slurm", "--max-cost", "5", *yes,
                "--out", str(out))  # fmt: skip
    assert r.exit_code == 3, r.output
    assert "--max-cost 5 cannot be checked, the estimated cost is unknown" in r.output
    assert "To fix: give a price with --plan" in r.output and "Traceback" not in r.output
    assert not out.exists()
    # without --max-cost the same dry run plans (the cost is shown as unknown)
    assert (
        gpuwise("launch", str(EXAMPLES / "job-cpu.yaml"), "--target", "slurm", "--out", str(out)).exit_code
        == 0
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--down", "slurm:abc"], "a Slurm job id is a number"),
        (["--down", "k8s:x"], "not a launch ID"),
        (["--down", "tencent:ap-guangzhou"], "is not REGION/ins-ID"),
        ([str(EXAMPLES / "job-cpu.yaml")], "launch needs JOB.yaml and --target"),
        ([str(EXAMPLES / "job-cpu.yaml"), "--target", "k8s"], "'k8s' is not one of alibaba, baidu, huawei, skypilot, slurm, tencent, torchrun, volcengine"),
        ([str(EXAMPLES / "job-llm.yaml"), "--target", "skypilot"], "needs an instance type"),
        ([str(EXAMPLES / "job-llm.yaml"), "--target", "skypilot", "--offer", "tencent:GT4.41XLARGE948"],
         "SkyPilot does not launch on tencent"),
        ([str(EXAMPLES / "job-cpu.yaml"), "--target", "skypilot", "--offer", "aws:p4d.24xlarge"],
         "the job wants 0 GPUs per node, p4d.24xlarge has 8"),
        (["/nonexistent/job.yaml", "--target", "slurm"], "not found"),
    ],
)  # fmt: skip
def test_bad_input_is_a_clear_message(args, message, tmp_path):
    r = gpuwise("launch", *args, cwd=tmp_path)
    assert r.exit_code == 3, r.output
    assert message in r.output and "To fix:" in r.output and "Traceback" not in r.output


def test_down_without_credentials_or_tools_says_how(tmp_path):
    r = gpuwise("launch", "--down", "tencent:ap-guangzhou/ins-gwla0001")
    assert r.exit_code == 3 and "no Tencent Cloud credentials found; nothing deleted" in r.output
    if shutil.which("sky") is None:
        r = gpuwise("launch", "--down", "skypilot:gw-x")
        assert r.exit_code == 3 and "`sky` command is not installed" in r.output


@pytest.mark.skipif(
    shutil.which("promtool") is None, reason="promtool (Debian package prometheus) is not installed"
)
def test_printed_scrape_config_is_valid_for_prometheus(tmp_path):
    r = gpuwise("launch", str(EXAMPLES / "job-llm.yaml"), "--offer", "aws:p4d.24xlarge", "--target", "skypilot",
                "--out", str(tmp_path / "o"), "--json")  # fmt: skip
    doc = json.loads(r.stdout)
    config = tmp_path / "prometheus.yml"
    config.write_text(
        doc["scrape_config"].replace("<IP of node 0>", "10.0.0.1").replace("<IP of node 1>", "10.0.0.2")
    )
    p = subprocess.run(
        ["promtool", "check", "config", str(config)], capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, p.stdout + p.stderr
    slurm = gpuwise("launch", str(EXAMPLES / "job-cpu.yaml"), "--target", "slurm", "--out", str(tmp_path / "s"),
                    "--json")  # fmt: skip
    sd = json.loads(slurm.stdout)
    (tmp_path / "s" / "monitoring").mkdir(parents=True)
    (tmp_path / "s" / "monitoring" / "targets.json").write_text('[{"targets": ["gwfl1:9401"]}]')
    config.write_text(sd["scrape_config"])
    p = subprocess.run(
        ["promtool", "check", "config", str(config)], capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, p.stdout + p.stderr


def test_text_output_fits_80_columns(tmp_path):
    from gpuwise.launch.build import LaunchOptions, plan_launch
    from gpuwise.report.views.launch import launch_view
    from tests.report.test_80_columns import assert_intact

    plan = plan_launch(LaunchOptions(job_path=EXAMPLES / "job-llm.yaml", target="skypilot",
                                     offer="aws:p4d.24xlarge", out=tmp_path / "o"))  # fmt: skip
    doc = launch_view(plan)
    assert_intact(doc, render(doc, "text", width=80))


def test_job_file_error_names_the_line(tmp_path):
    job = write_job(tmp_path / "j.yaml", nodes=0)
    r = gpuwise("launch", str(job), "--target", "slurm")
    assert r.exit_code == 3 and f"{job}:3" in r.output and "nodes" in r.output


def test_the_record_of_a_created_launch_is_never_overwritten(tmp_path):
    out = tmp_path / "gwla-kept"
    out.mkdir()
    record = '{"schema": "gpuwise-launch/1", "submitted": {"id": "slurm:4242"}}'
    (out / "launch.json").write_text(record)
    r = gpuwise("launch", str(EXAMPLES / "job-cpu.yaml"), "--target", "slurm", "--out", str(out))
    assert r.exit_code == 3 and "holds the record of launch slurm:4242" in r.output
    assert "gpuwise launch --down slurm:4242" in r.output
    assert (out / "launch.json").read_text() == record and not (out / "job.sbatch").exists()


def test_the_delete_command_from_a_record_is_one_quoted_word(tmp_path):
    """launch.json is a file anyone may have edited: its id is shown as a command to copy, so it is quoted."""
    out = tmp_path / "gwla-kept"
    out.mkdir()
    (out / "launch.json").write_text('{"submitted": {"id": "slurm:1; touch gwla-pwned"}}')
    r = gpuwise("launch", str(EXAMPLES / "job-cpu.yaml"), "--target", "slurm", "--out", str(out))
    assert r.exit_code == 3 and "gpuwise launch --down 'slurm:1; touch gwla-pwned'" in r.output
