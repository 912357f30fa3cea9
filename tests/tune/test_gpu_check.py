"""benchmarks/gpu_check.sh parses, and its tune summary names the speedup and the knobs that gave it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gpuwise.tune.model import TrialRecord, TuneResult

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def test_gpu_check_script_parses():
    r = subprocess.run(
        ["bash", "-n", str(BENCH / "gpu_check.sh")], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr
    text = (BENCH / "gpu_check.sh").read_text()
    assert "--workload gpt-small" in text and "tune_gpu_summary.py" in text


def _trial(number, role, changes, speedup=None, **kw):
    extra = {
        "speedup": speedup,
        "speedup_low": speedup and speedup - 0.1,
        "speedup_high": speedup and speedup + 0.1,
    }
    return TrialRecord(
        number=number, role=role, changes=changes, status="ok", **(extra if speedup else {}), **kw
    )


def test_summary_names_the_winner_its_knobs_and_each_probe(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    from tune_gpu_summary import summary

    result = TuneResult(
        workload="gpt-small",
        device="cuda",
        batch_size=8,
        warmup_steps=3,
        timed_steps=10,
        study="gpu-check",
        storage="x",
        keep_numerics=False,
        baseline_drift=0.01,
        trials=[
            _trial(0, "baseline", {}, samples_per_s=100.0),
            _trial(1, "probe", {"precision": "bf16"}, 1.9, numerics="precision"),
            _trial(2, "probe", {"compile": "default"}, 1.2, numerics="rounding"),
            _trial(
                3,
                "search",
                {"precision": "bf16", "compile": "default"},
                2.3,
                numerics="precision",
                guard_ok=True,
            ),
        ],
        winner=3,
    )
    lines = summary(result.to_json_dict())
    assert lines[0].startswith("tune gpt-small on cuda x1, batch 8: baseline 100.0 samples/s, drift 1.0%")
    assert lines[1] == (
        "winner trial 3: 2.30x [2.20-2.40] from precision=bf16, compile=default; numerics precision, guard ok"
    )
    assert "precision=bf16 1.90x [1.80-2.00] | compile=default 1.20x" in lines[2]
    with pytest.raises(SystemExit, match="not a gpuwise-tune/1"):
        summary({"schema": "gpuwise-profile/1"})
