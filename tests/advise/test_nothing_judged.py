"""Doctor on a capture where no command gave output says it could not judge (exit 3), and a benchmark
skipped for a missing tool (fio) is named in bench.not_measured."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from gpuwise.advise.engine import run_rules
from gpuwise.documents.bench import Measurement
from tests.advise.capture_kit import doctor_report
from tests.advise.factories import bench, healthy_node

CAPTURE = Path(__file__).parents[1] / "captures" / "h200-1gpu-kvm-vm"


def _all_missing(tmp_path: Path) -> Path:
    """The real H200 VM capture with every command marked missing (its files/ kept as they are)."""
    root = tmp_path / "capture"
    shutil.copytree(CAPTURE, root)
    meta = json.loads((root / "meta.json").read_text())
    for info in meta["commands"].values():
        info.update(rc=None, status="missing", seconds=0.0)
    (root / "meta.json").write_text(json.dumps(meta))
    shutil.rmtree(root / "commands")
    return root


def test_capture_with_no_command_output_is_not_judged(tmp_path):
    report = doctor_report(_all_missing(tmp_path))
    assert report.summary.exit_code == 3
    assert "could not judge" in report.summary.verdict
    assert "27 commands" in report.summary.verdict


def test_capture_with_command_output_is_judged():
    report = doctor_report(CAPTURE)
    assert report.summary.exit_code in (0, 1, 2)
    assert "could not judge" not in report.summary.verdict


def test_cli_exit_code_is_3(tmp_path):
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpuwise.cli",
            "doctor",
            "--from",
            str(_all_missing(tmp_path)),
            "--no-history",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert run.returncode == 3, run.stdout + run.stderr
    assert "could not judge" in run.stdout


def test_missing_fio_is_named_in_not_measured():
    fio = Measurement(
        name="fio_randread_4k",
        layer="storage",
        status="skipped",
        reason="fio is not installed, so storage cannot be measured. To fix: apt-get install fio",
        missing_tool="fio",
    )
    hits = [f for f in run_rules(healthy_node(), bench(fio), "onprem") if f.id == "bench.not_measured"]
    assert hits, "a benchmark skipped for a missing tool must be reported"
    text = " ".join(str(e.value) for e in hits[0].evidence) + hits[0].recommendation.text
    assert "apt-get install fio" in text and "fio is not installed" in text


def test_plain_skip_stays_quiet():
    skipped = Measurement(name="p2p", layer="gpu-gpu", status="skipped", reason="one GPU: no pair")
    assert not [
        f for f in run_rules(healthy_node(), bench(skipped), "onprem") if f.id == "bench.not_measured"
    ]
