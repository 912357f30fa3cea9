"""`gpuwise tune` end to end on this CPU: the validations of issue 12 that run in CI.

- mlp-slow-data: tune finds the data-loading setting and reports >= 1.5x with its noise interval;
- gpt-small --keep-numerics never proposes a precision change;
- an interrupted study continues where it stopped with the same --study.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SPECS_DIR = str(Path(__file__).parent)


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([SPECS_DIR, os.environ.get("PYTHONPATH", "")])}


def _tune(tmp_path: Path, *args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "gpuwise.cli", "tune", "--storage", str(tmp_path / "tune.sqlite3"), *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=timeout)


@pytest.mark.slow
def test_mlp_slow_data_finds_the_loader_setting(tmp_path):
    r = _tune(
        tmp_path,
        "--workload",
        "mlp-slow-data",
        "--trials",
        "3",
        "--steps",
        "6",
        "--warmup",
        "2",
        "--study",
        "v1",
        "--json",
    )
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads(r.stdout)
    assert doc["schema"] == "gpuwise-tune/1"
    assert doc["search_order"][0] == "data"  # the baseline waited on its DataLoader
    assert [t["role"] for t in doc["trials"]][0] == "baseline" and doc["trials"][-1]["role"] == "baseline-end"
    best = next(t for t in doc["trials"] if t["number"] == doc["winner"])
    assert best["changes"].get("num_workers", 0) > 0, doc["verdict"]
    assert best["speedup"] >= 1.5 and best["speedup_low"] > 1.0 and best["speedup_high"] >= best["speedup"]
    assert best["numerics"] == "none" and best["guard_ok"] is True
    assert any("num_workers" in line for line in doc["snippet_python"]) and doc["snippet_yaml"]


@pytest.mark.slow
def test_gpt_small_keep_numerics_never_proposes_a_precision_change(tmp_path):
    r = _tune(
        tmp_path,
        *("--workload", "gpt-small", "--trials", "2", "--steps", "5", "--warmup", "1", "--keep-numerics"),
        *("--only", "precision,accumulation,num_workers,optimizer_impl", "--study", "kn", "--format", "json"),
    )
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads(r.stdout)
    assert all("precision" not in t["changes"] and "accumulation" not in t["changes"] for t in doc["trials"])
    assert "precision" not in doc["best_changes"]
    assert any(s["knob"] == "precision" and "--keep-numerics" in s["reason"] for s in doc["skipped"])


def _counted(db: Path, study: str) -> list:
    import optuna

    try:
        s = optuna.load_study(study_name=study, storage=f"sqlite:///{db}")
    except Exception:  # not created yet
        return []
    done = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)
    return [t for t in s.get_trials(deepcopy=False) if t.state in done]


@pytest.mark.slow
def test_an_interrupted_study_continues_where_it_stopped(tmp_path):
    args = ["specs:fast_mlp", "--trials", "4", "--steps", "5", "--warmup", "1", "--study", "resume", "--json"]
    cmd = [sys.executable, "-m", "gpuwise.cli", "tune", "--storage", str(tmp_path / "tune.sqlite3"), *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    deadline = time.monotonic() + 400
    while len(_counted(tmp_path / "tune.sqlite3", "resume")) < 2 and time.monotonic() < deadline:
        time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err[-1500:]
    before = len(_counted(tmp_path / "tune.sqlite3", "resume"))
    assert 2 <= before < 4
    r = _tune(tmp_path, *args)
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads(r.stdout)
    ran = [t for t in doc["trials"] if t["status"] != "skipped" and t.get("failure") != "interrupted"]
    roles = [t["role"] for t in ran]
    assert roles.count("baseline") == 1 and roles.count("baseline-end") == 1
    assert len([x for x in roles if x not in ("baseline-end", "reduction")]) == 4
    assert [t["number"] for t in doc["trials"]] == list(range(len(doc["trials"])))  # every number shown
    # the same study with other settings is refused, not silently mixed
    r = _tune(
        tmp_path, "specs:fast_mlp", "--trials", "4", "--steps", "6", "--warmup", "1", "--study", "resume"
    )
    assert r.returncode == 3 and "other settings" in r.stderr and "To fix" in r.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--workload", "mlp-slow-dat"], "did you mean mlp-slow-data"),
        (["specs:fast_mlp", "--workload", "gpt-small"], "either a spec"),
        (["--", "python", "train.py"], "needs --batch-size"),
        (["--batch-size", "8", "--", "python", "train.py"], "needs --only"),
        (["--workload", "gpt-small", "--batch-size", "6"], "multiple of 4"),
        (["--workload", "gpt-small", "--only", "warp_speed"], "unknown knob"),
    ],
)
def test_bad_input_is_a_clean_error(tmp_path, args, message):
    r = _tune(tmp_path, *args, timeout=120)
    assert r.returncode == 3 and message in r.stderr and "Traceback" not in r.stderr, r.stderr[-1000:]


def test_a_broken_profile_file_is_a_clean_error(tmp_path):
    bad = tmp_path / "p.json"
    bad.write_text('{"schema": "gpuwise-bench/1"}')
    r = _tune(tmp_path, "--workload", "gpt-small", "--profile", str(bad), timeout=120)
    assert r.returncode == 3 and "not a gpuwise-profile/1" in r.stderr


@pytest.mark.slow
def test_command_mode_runs_the_script_with_its_knobs(tmp_path):
    script = str(Path(SPECS_DIR) / "command_script.py")
    r = _tune(
        tmp_path,
        *("--trials", "2", "--steps", "5", "--warmup", "1", "--batch-size", "16", "--only", "num_workers"),
        *("--study", "cmd", "--json", "--", sys.executable, script),
    )
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads(r.stdout)
    probe = doc["trials"][1]
    assert probe["changes"] == {"num_workers": 4} and probe["status"] == "ok" and probe["speedup"] > 2
    assert doc["best_changes"] == {"num_workers": 4}
