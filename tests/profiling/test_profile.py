"""`gpuwise profile`: attribution arithmetic on a hand-made trace, and a real CPU profile that is data-bound."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpuwise.errors import UserInputError
from gpuwise.profile.attribute import attribute
from gpuwise.profile.model import read_profile


def _x(name, ts, dur, cat="user_annotation"):
    return {"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur, "pid": 1, "tid": 1}


def test_phases_come_from_the_labels_and_collectives_count_once(tmp_path):
    events = []
    for i, start in enumerate((0, 1000)):
        events += [
            _x(f"ProfilerStep#{i}", start, 1000),
            _x("gpuwise/data", start, 300),
            _x("gpuwise/forward", start + 300, 200),
            _x("gpuwise/backward", start + 500, 400),
            _x("c10d::allreduce_", start + 600, 200, "cpu_op"),
            _x("gloo:all_reduce", start + 650, 200, "cpu_op"),  # overlaps the one above
            _x("gpuwise/optimizer", start + 900, 50),
        ]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": events}))
    b = attribute(path)
    assert b.steps == 2 and b.step_ms == pytest.approx(1.0)
    assert b.fraction("data") == pytest.approx(0.3) and b.fraction("backward") == pytest.approx(0.4)
    assert b.fraction("all-reduce") == pytest.approx(0.25)  # 600..850, counted once
    assert b.fraction("other") == pytest.approx(0.05)


@pytest.mark.parametrize("text", ["not json", '{"traceEvents": 3}', '{"traceEvents": []}'])
def test_a_bad_trace_is_a_clear_error(tmp_path, text):
    path = tmp_path / "t.json"
    path.write_text(text)
    with pytest.raises(UserInputError, match="To fix"):
        attribute(path)


def test_read_profile_rejects_other_documents(tmp_path):
    path = tmp_path / "p.json"
    path.write_text('{"schema": "gpuwise-tune/1"}')
    with pytest.raises(UserInputError, match="not a gpuwise-profile/1"):
        read_profile(path)


@pytest.mark.slow
def test_profile_of_the_slow_data_mlp_finds_the_data_loader(tmp_path):
    out, trace = tmp_path / "p.json", tmp_path / "trace.json"
    cmd = [sys.executable, "-m", "gpuwise.cli", "profile", "--workload", "mlp-slow-data", "--steps", "3"]
    r = subprocess.run(
        [*cmd, "--trace", str(trace), "--format", "json", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    result = read_profile(out)
    assert result.active_steps == 3 and json.loads(trace.read_text())["traceEvents"]
    ids = [f.id for f in result.findings]
    assert "data-loader-bound" in ids and result.prior() == "data"
    data = next(p for p in result.phases if p.name == "data")
    assert data.fraction > 0.2 and data.ms_per_step > 600  # 32 samples x 20 ms of reads: at least 640 ms
    assert all(f.source.startswith("https://") for f in result.findings)
    # doctor reads the same file back through its rules: the warning, the measured share, the tune command
    capture = Path(__file__).parents[1] / "captures" / "cpu-vm-kvm-docker"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpuwise.cli",
            "doctor",
            "--from",
            str(capture),
            "--profile",
            str(out),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode in (1, 2), r.stderr[-2000:]
    (f,) = [f for f in json.loads(r.stdout)["findings"] if f["id"] == "profile.data_loader_bound"]
    shares = {e["path"]: e["value"] for e in f["evidence"]}
    assert shares[f"profile[{out}].phases.data.fraction"] == pytest.approx(data.fraction, abs=1e-3)
    assert f["recommendation"]["commands"][0].startswith("gpuwise tune --workload mlp-slow-data")
