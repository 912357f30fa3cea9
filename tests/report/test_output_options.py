"""Every command takes --format text|json|md, -o FILE and --json, through the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CAPTURES, TESTS

H200 = CAPTURES / "h200-1gpu-kvm-vm"
BENCH = CAPTURES / "h200-1gpu-kvm-vm.bench-quick.json"
WORKLOAD = TESTS.parent / "examples" / "resnet50-imagenet.yaml"

COMMANDS = {
    "probe": ["probe", "--from", str(H200)],
    "doctor": ["doctor", "--from", str(H200), "--bench-results", str(BENCH)],
    "compare": ["compare", str(BENCH), str(BENCH)],
    "plan": ["plan", str(WORKLOAD)],
    "catalog gpus": ["catalog", "gpus"],
    "catalog fabrics": ["catalog", "fabrics"],
    "catalog offers": ["catalog", "offers", "--gpu", "H100"],
    "catalog show": ["catalog", "show", "ib-ndr"],
    "watch (replay)": ["watch", "--from", str(H200)],
}


def gpuwise(*args: str, cwd: Path, columns: int = 80) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": str(columns), "HOME": str(cwd)}  # HOME: no user offers files
    return subprocess.run(
        [sys.executable, "-m", "gpuwise.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=180,
    )


@pytest.mark.parametrize("name", list(COMMANDS))
def test_format_output_and_json_alias(name, tmp_path):
    argv = COMMANDS[name]
    ok = (0, 1, 2) if name == "doctor" else (0,)  # doctor's exit code is its verdict
    text = gpuwise(*argv, cwd=tmp_path)
    assert text.returncode in ok, text.stderr
    assert text.stdout.strip()
    if name != "doctor":  # doctor's commands to copy are never wrapped; test_80_columns checks the rest
        assert max(len(line) for line in text.stdout.splitlines()) <= 80
    as_json = gpuwise(*argv, "--json", cwd=tmp_path)
    assert as_json.returncode in ok and json.loads(as_json.stdout)["schema"].startswith("gpuwise-")
    out = tmp_path / "sub" / "out.md"
    md = gpuwise(*argv, "--format", "md", "-o", str(out), cwd=tmp_path)
    assert md.returncode in ok, md.stderr
    assert md.stdout == "" and f"wrote {out}" in md.stderr
    assert out.read_text(encoding="utf-8").startswith("# ") and sorted(out.parent.iterdir()) == [out]
    both = gpuwise(*argv, "--json", "--format", "md", cwd=tmp_path)
    assert both.returncode == 3 and "--json and --format md" in both.stderr


def test_unknown_format_suggests_the_near_one(tmp_path):
    r = gpuwise("catalog", "gpus", "--format", "mdd", cwd=tmp_path)
    assert r.returncode == 3 and "did you mean 'md'" in r.stderr and "To fix:" in r.stderr


def test_output_path_is_checked_before_any_work(tmp_path):
    r = gpuwise("plan", str(WORKLOAD), "-o", "/proc/plan.txt", cwd=tmp_path)
    assert r.returncode == 3 and "cannot write" in r.stderr and r.stdout == ""
