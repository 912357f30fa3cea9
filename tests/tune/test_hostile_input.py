"""Hostile input to tune: study names that are paths, a user's trial folder, a corrupt study database,
progress lines with NaN / inf / negative / huge values, and JSON that must stay strict."""

from __future__ import annotations

import json
import math
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from gpuwise.errors import UserInputError
from gpuwise.tune.model import TrialRecord, TuneResult
from gpuwise.tune.storage import check_study_name, new_trial_folder, safe_name
from gpuwise.tune.trial import MAX_LINE, BadLine, parse_line, run_trial


def _tune(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "gpuwise.cli", "tune", "--storage", str(tmp_path / "db" / "tune.sqlite3")]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(
    "name", ["../../x", "/tmp/gw-tu-abs", ".", "..", "a/b", "a\\b", "x" * 65, "ok\n", "", "é", "a b"]
)
def test_a_study_is_a_name_never_a_path(name):
    with pytest.raises(UserInputError, match="not a study name"):
        check_study_name(name)


def test_plain_names_and_made_up_names_pass():
    for name in ("gpuwise-tune", "v1.2_run-3", "x" * 64):
        assert check_study_name(name) == name
    assert check_study_name(safe_name("my train+script (v2).py")) == "my-train-script--v2--py"


def test_a_path_as_study_writes_nothing_outside_the_storage(tmp_path):
    r = _tune(tmp_path, "--workload", "mlp-slow-data", "--trials", "2", "--study", "../../gw-tu-escape")
    assert r.returncode == 3 and "not a study name" in r.stderr and "To fix" in r.stderr, r.stderr[-800:]
    assert "Traceback" not in r.stderr
    assert not list(tmp_path.rglob("*gw-tu-escape*")) and not (tmp_path.parent / "gw-tu-escape").exists()


def test_an_existing_trial_folder_is_never_overwritten(tmp_path):
    mine = tmp_path / "db" / "tune.trials" / "s1" / "0000" / "config.json"
    mine.parent.mkdir(parents=True)
    mine.write_text("the user's own file")
    r = _tune(tmp_path, "--workload", "mlp-slow-data", "--trials", "2", "--study", "s1")
    assert r.returncode == 3 and "earlier study" in r.stderr and "Traceback" not in r.stderr, r.stderr[-800:]
    assert mine.read_text() == "the user's own file"
    with pytest.raises(UserInputError, match="already exists"):
        new_trial_folder(mine.parent)


def test_a_corrupt_study_database_is_a_clear_error(tmp_path):
    db = tmp_path / "db" / "tune.sqlite3"
    db.parent.mkdir()
    db.write_bytes(os.urandom(8192))
    r = _tune(tmp_path, "--workload", "mlp-slow-data", "--trials", "2", "--study", "s")
    assert r.returncode == 3, r.stderr[-800:]
    assert "not a readable study database" in r.stderr and "To fix" in r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr.lower()


@pytest.mark.parametrize(
    "line",
    [
        "gpuwise-tune step=1 samples=32 seconds=-1",
        "gpuwise-tune step=1 samples=32 seconds=0",
        "gpuwise-tune step=1 samples=32 seconds=nan",
        "gpuwise-tune step=1 samples=32 seconds=inf",
        "gpuwise-tune step=1 samples=nan seconds=0.1",
        "gpuwise-tune step=1 samples=inf seconds=0.1",
        "gpuwise-tune step=1 samples=-5 seconds=0.1",
        "gpuwise-tune step=1 samples=32 seconds=0.1 data_wait_s=inf",
        "gpuwise-tune step=1 samples=32 seconds=0.1 data_wait_s=0.5",
        "gpuwise-tune step=-1 samples=32 seconds=0.1",
        "gpuwise-tune step=1.5 samples=32 seconds=0.1",
        "gpuwise-tune step=x",
        "gpuwise-tune samples=32",
    ],
)
def test_bad_progress_values_are_rejected(line):
    with pytest.raises(BadLine):
        parse_line(line)


SCRIPT = r"""
import sys
good = "gpuwise-tune step={} samples=16 seconds=0.01 loss=1.0\n"
w = sys.stdout.write
w(good.format(0))
w("gpuwise-tune step=1 samples=16 seconds=-1\n")
w("gpuwise-tune step=1 samples=nan seconds=0.01\n")
w("gpuwise-tune step=1 samples=16 seconds=inf\n")
sys.stdout.flush()
w("gpuwise-tune step=1 samples=16 seconds=0.01 " + "x" * (64 << 20) + "\n")
w("an ordinary line of the script's own\n")
for i in range(1, 4):
    w(good.format(i))
sys.stdout.flush()
"""


def test_a_trial_ignores_bad_and_huge_progress_lines_with_bounded_memory(tmp_path):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    config = {"command": [sys.executable, "-c", SCRIPT], "steps": 100}
    out = run_trial(config, tmp_path / "t", timeout_s=120)
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert out.status == "failed" and out.failure == "crash"  # no result.json: a command's own exit
    assert [r.index for r in out.steps] == [0, 1, 2, 3]
    assert all(r.seconds == pytest.approx(0.01) for r in out.steps)
    assert out.ignored_lines == 4  # -1, nan, inf, and the 64 MiB line
    log = tmp_path / "t" / "stdout.rank0.txt"
    assert log.stat().st_size < 10 * MAX_LINE and "was not kept" in log.read_text()
    assert grown_mib < 32, f"reading a 64 MiB line grew this process by {grown_mib:.0f} MiB"


def _strict(text: str):
    def refuse(token):
        raise ValueError(f"not strict JSON: {token}")

    return json.loads(text, parse_constant=refuse)


def test_tune_json_is_strict_when_values_are_not_finite():
    from gpuwise.report.formats import get_renderer
    from gpuwise.report.views.tune import view

    bad = dict(status="ok", samples_per_s=100.0, samples_per_s_low=90.0, samples_per_s_high=110.0)
    trial = TrialRecord(number=0, role="baseline", guard_max_rel_diff=math.inf, **bad)
    trial.speedup, trial.speedup_low, trial.speedup_high = math.nan, 0.9, 1.1
    result = TuneResult(
        workload="w", device="cpu", batch_size=8, warmup_steps=1, timed_steps=5, study="s",
        storage="x", keep_numerics=False, trials=[trial], baseline_drift=math.inf,
    )  # fmt: skip
    doc = _strict(get_renderer("json")(view(result), width=100, color=False))
    assert doc["trials"][0]["guard_max_rel_diff"] is None and doc["baseline_drift"] is None
