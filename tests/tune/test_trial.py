"""Trials run isolated: a hang is killed with its whole process group, failures are typed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuwise.tune.trial import classify, parse_line, run_trial
from gpuwise.tune.worker import progress_line

SPECS_DIR = str(Path(__file__).parent)
ENV = {"PYTHONPATH": os.pathsep.join([SPECS_DIR, os.environ.get("PYTHONPATH", "")])}


def _config(target: str, steps: int = 3) -> dict:
    return {"target": target, "device": "cpu", "seed": 0, "batch_size": 8, "steps": steps, "settings": {}}


def test_progress_line_round_trips():
    rec = parse_line(progress_line(3, 64, 0.0123, 0.01, 2.5))
    assert rec.index == 3 and rec.seconds == pytest.approx(0.0123) and rec.loss == pytest.approx(2.5)
    assert parse_line("epoch 3 loss 2.5") is None  # the script's own output (bad values: test_hostile_input)


@pytest.mark.parametrize(
    ("error", "code", "kind"),
    [
        ({"type": "OutOfMemoryError", "message": "CUDA out of memory"}, 1, "oom"),
        (None, -9, "oom"),
        ({"type": "BackendCompilerFailed", "message": "inductor"}, 1, "compile"),
        ({"type": "DistBackendError", "message": "NCCL error"}, 1, "distributed"),
        ({"type": "ValueError", "message": "bad"}, 1, "error"),
        (None, -11, "crash"),
    ],
)
def test_failures_are_typed(error, code, kind):
    assert classify(error, code, "")[0] == kind


def test_a_trial_runs_and_reports_every_step(tmp_path):
    out = run_trial(_config("specs:fast_mlp"), tmp_path / "t", timeout_s=120, env=ENV)
    assert out.status == "ok", out.reason
    assert [r.index for r in out.steps] == [0, 1, 2]
    assert out.info["peak_memory_bytes"] > 0
    assert (tmp_path / "t" / "config.json").exists() and (tmp_path / "t" / "cmd.rank0.txt").exists()


def test_a_hanging_trial_is_killed_at_the_timeout(tmp_path):
    out = run_trial(_config("specs:hang"), tmp_path / "t", timeout_s=8, env=ENV)
    assert out.status == "failed" and out.failure == "timeout"
    assert out.wall_s < 30
    config = str(tmp_path / "t" / "config.json").encode()
    alive = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and config in (proc / "cmdline").read_bytes():
                alive.append(proc.name)
        except OSError:
            continue
    assert not alive, f"trial processes outlived the timeout: {alive}"


def test_an_out_of_memory_trial_fails_typed(tmp_path):
    out = run_trial(_config("specs:oom"), tmp_path / "t", timeout_s=120, env=ENV)
    assert out.status == "failed" and out.failure == "oom" and "out of memory" in out.reason


def test_pruning_stops_the_trial_early(tmp_path):
    out = run_trial(
        _config("specs:fast_mlp", steps=50),
        tmp_path / "t",
        timeout_s=120,
        env=ENV,
        on_step=lambda r: r.index >= 1,
    )
    assert out.status == "pruned" and len(out.steps) == 2
