"""`gpuwise doctor` and `gpuwise compare` from the command line: exit codes, formats, files, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.advise.capture_kit import make_capture, real_text
from tests.conftest import GOLDEN, capture_dirs

NVLINK_V100 = "nvidia_smi_text/azhpc-diagnostics_nvlink-s_8x-v100-sxm2_inactive-links.out"
L4_Q = "nvidia_smi_text/thamada_L4_nvidia-smi-a.txt"
HEALTHY_HOST = {"/proc/swaps": "Filename\tType\tSize\tUsed\tPriority\n"}


def gw(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gpuwise.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=120
    )


def test_help_documents_exit_codes():
    r = gw("doctor", "--help")
    assert r.returncode == 0
    for text in ("0 = no problems", "1 = warnings", "2 = critical", "3 = doctor could not run"):
        assert text in " ".join(r.stdout.split())


def test_exit_code_2_on_critical_and_json_contract(real, tmp_path):
    cap = make_capture(tmp_path / "v100", {"nvidia-smi-nvlink-s": real_text(NVLINK_V100)}, HEALTHY_HOST)
    r = gw("doctor", "--from", str(cap), "--format", "json")
    assert r.returncode == 2, r.stderr
    data = json.loads(r.stdout)
    assert data["schema"] == "gpuwise-report/1"
    assert {"facts", "measurements", "findings", "summary", "env"} <= set(data)
    f = next(f for f in data["findings"] if f["id"] == "gpu.nvlink_inactive")
    for key in ("id", "layer", "priority", "status", "title", "evidence", "recommendation", "controllable"):
        assert key in f
    assert f["status"] == "fail" and data["summary"]["exit_code"] == 2


def test_exit_code_1_on_warnings_and_env_override(real, tmp_path):
    cap = make_capture(tmp_path / "l4", {"nvidia-smi-q": real_text(L4_Q)}, HEALTHY_HOST)
    r = gw("doctor", "--from", str(cap), "--env", "cloud", "--format", "json")
    assert r.returncode == 1, r.stderr
    data = json.loads(r.stdout)
    assert data["env"]["kind"] == "cloud" and data["env"]["overridden"] is True
    width = next(f for f in data["findings"] if f["id"] == "pcie.width_below_max")
    assert width["controllable"]["can"] == "no"


def test_exit_code_0_and_markdown(tmp_path):
    # A host with nothing to warn about: only informational findings.
    cap = make_capture(tmp_path / "quiet", {}, HEALTHY_HOST)
    r = gw("doctor", "--from", str(cap), "--format", "md", "--env", "cloud")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("# gpuwise doctor") and "No NVIDIA GPU found" in r.stdout


def test_output_file_is_written_whole_and_compare_reads_it(real, tmp_path):
    a = make_capture(tmp_path / "a", {"nvidia-smi-q": real_text(L4_Q)}, HEALTHY_HOST)
    fixed = real_text(L4_Q).replace("Current                   : 8x", "Current                   : 16x")
    b = make_capture(tmp_path / "b", {"nvidia-smi-q": fixed}, HEALTHY_HOST)
    out_a, out_b = tmp_path / "out" / "a.json", tmp_path / "out" / "b.json"
    assert gw("doctor", "--from", str(a), "--format", "json", "-o", str(out_a)).returncode == 1
    gw("doctor", "--from", str(b), "--format", "json", "-o", str(out_b))
    assert json.loads(out_a.read_text())["schema"] == "gpuwise-report/1"
    assert [p.name for p in out_a.parent.iterdir() if p.name.startswith(".")] == []  # no temp files left
    r = gw("compare", str(out_a), str(out_b))
    assert r.returncode == 0, r.stderr
    assert "gpus[" in r.stdout and "width_current" in r.stdout and "pcie.width_below_max" in r.stdout


@pytest.mark.parametrize(
    "args,message",
    [
        (["--bench", "slow"], "--bench 'slow' is not one of"),
        (["--env", "moon"], "--env 'moon' is not one of"),
        (["--format", "yaml"], "--format 'yaml' is not one of"),
        (["--bench-results", "/nonexistent/bench.json"], "no such file"),
    ],
)
def test_bad_arguments_are_clean_errors(args, message):
    r = gw("doctor", *args)
    assert r.returncode == 3 and message in r.stderr and "To fix:" in r.stderr and "Traceback" not in r.stderr


def test_bench_quick_on_a_capture_is_refused(tmp_path):
    cap = make_capture(tmp_path / "c", {}, HEALTHY_HOST)
    r = gw("doctor", "--from", str(cap), "--bench", "quick")
    assert r.returncode == 3 and "not a capture" in r.stderr


def test_bench_results_wrong_schema(tmp_path):
    bad = tmp_path / "bench.json"
    bad.write_text(json.dumps({"schema": "gpuwise-report/1"}))
    r = gw(
        "doctor", "--bench-results", str(bad), "--from", str(make_capture(tmp_path / "c", {}, HEALTHY_HOST))
    )
    assert r.returncode == 3 and "expected 'gpuwise-bench/1'" in r.stderr


def test_bench_results_feed_measurement_rules(tmp_path):
    bench = {
        "schema": "gpuwise-bench/1",
        "results": [
            {
                "name": "matmul_bf16",
                "layer": "compute",
                "value": 400.0,
                "unit": "TFLOP/s",
                "peak": 989.0,
                "percent_of_peak": 40.4,
                "achievable_fraction": 0.803,
                "percent_of_achievable": 50.3,
                "status": "ok",
                "device": "cuda:0",
            }
        ],
    }
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(bench))
    cap = make_capture(tmp_path / "c", {}, HEALTHY_HOST)
    r = gw("doctor", "--from", str(cap), "--bench-results", str(path), "--format", "json")
    data = json.loads(r.stdout)
    assert r.returncode == 2
    assert data["measurements"]["results"][0]["name"] == "matmul_bf16"
    assert any(f["id"] == "bench.compute_low" and f["status"] == "fail" for f in data["findings"])


def test_compare_rejects_non_gpuwise_json(tmp_path):
    p = tmp_path / "x.json"
    p.write_text("[1, 2]")
    r = gw("compare", str(p), str(p))
    assert r.returncode == 3 and "To fix:" in r.stderr


# The exit code each recorded capture must give: the golden report's verdict (see tests/golden/doctor/captures).
CAPTURE_EXIT = {"cpu-vm-kvm-docker": 0, "h200-1gpu-kvm-vm": 1}


@pytest.mark.parametrize("capture", capture_dirs(), ids=lambda p: p.name)
def test_exit_code_and_text_per_recorded_capture(capture):
    name = capture.name.removesuffix(".tar.gz")
    golden = json.loads((GOLDEN / "doctor" / "captures" / f"{name}.json").read_text())
    r = gw("doctor", "--from", str(capture))
    assert r.returncode == CAPTURE_EXIT[name] == golden["summary"]["exit_code"], r.stdout + r.stderr
    text = " ".join(r.stdout.split())  # Rich wraps to the terminal width
    assert f"verdict: {golden['summary']['verdict']} (exit {CAPTURE_EXIT[name]})" in text
    to_act_on = [f["title"] for f in golden["findings"] if f["status"] in ("warn", "fail")]
    assert len(to_act_on) == golden["summary"]["by_status"]["warn"] + golden["summary"]["by_status"]["fail"]
    for title in to_act_on:
        assert title in text


def test_live_doctor_exit_code_matches_its_findings():
    """The README's main command on this machine: whatever it finds, the exit code is the worst status."""
    r = gw("doctor", "--format", "json")
    data = json.loads(r.stdout)
    statuses = {f["status"] for f in data["findings"]}
    expected = 2 if "fail" in statuses else 1 if "warn" in statuses else 0
    assert r.returncode == data["summary"]["exit_code"] == expected, r.stderr
    text = gw("doctor")
    assert text.returncode == expected
    assert f"verdict: {data['summary']['verdict']} (exit {expected})" in " ".join(text.stdout.split())


def test_expected_gpus_missing_is_critical(tmp_path):
    """`doctor --expect-gpus 8` on a node that has none (the recorded CPU VM) is a critical finding, exit 2;
    `--expect gpus=0` on the same node passes; a misspelt key is a usage error (3)."""
    import json
    import subprocess
    import sys

    from tests.conftest import CAPTURES

    cap = str(CAPTURES / "cpu-vm-kvm-docker")
    base = [sys.executable, "-m", "gpuwise.cli", "doctor", "--from", cap, "--no-history", "--format", "json"]
    r = subprocess.run([*base, "--expect-gpus", "8"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    found = {f["id"]: f["status"] for f in json.loads(r.stdout)["findings"]}
    assert found["expect.gpus"] == "fail"
    r = subprocess.run([*base, "--expect", "gpus=0"], capture_output=True, text=True, timeout=120)
    assert {f["id"]: f["status"] for f in json.loads(r.stdout)["findings"]}["expect.gpus"] == "pass"
    r = subprocess.run([*base, "--expect", "gpu=8"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 3 and "did you mean 'gpus'" in r.stderr
