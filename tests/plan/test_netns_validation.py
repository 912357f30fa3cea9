"""The netns/tbf validation script runs end to end (root only) and always removes its namespaces."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "validate_netns_scaling.py"


def _namespaces() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=300).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


@pytest.mark.root
@pytest.mark.slow
def test_netns_validation_small_run(tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "r.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            str(SCRIPT),
            "--ranks",
            "4",
            "--rates",
            "500",
            "--hidden",
            "256",
            "--layers",
            "2",
            "--batch",
            "64",
            "--steps",
            "3",
            "--warmup",
            "1",
            "--repeats",
            "1",
            "--timeout",
            "150",
            "--json",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _stdout, stderr = proc.communicate(timeout=240)
    finally:
        proc.kill()
    assert proc.returncode == 0, stderr[-2000:]
    rows = json.loads(out.read_text())
    row = rows[0]
    assert row["rate_mbit"] == 500 and row["ranks"] == 4 and 0 < row["measured_efficiency"] <= 1.5
    pred = row["predicted"]
    assert (
        0
        < pred["tcp_low"]["efficiency"]
        <= pred["tcp_typical"]["efficiency"]
        <= pred["tcp_high"]["efficiency"]
        <= 1
    )
    assert len(row["allreduce_table"]) == 6 and "efficiency" in pred["calibrated"]
    # cleaned up: none of this run's namespaces is left (other test runs on the machine may add or remove theirs)
    tag = str(proc.pid % 100000)
    assert {n for n in _namespaces() if n == f"gwh{tag}" or n.startswith(f"gwr{tag}-")} == set()


def test_netns_validation_skips_cleanly_without_root(monkeypatch):
    import runpy

    monkeypatch.setattr("os.geteuid", lambda: 1000)
    monkeypatch.setattr(sys, "argv", [str(SCRIPT)])
    with pytest.raises(SystemExit) as exc:
        runpy.run_path(str(SCRIPT), run_name="__main__")
    assert exc.value.code == 0
