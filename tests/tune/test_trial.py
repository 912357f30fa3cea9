"""Trials run isolated: a hang is killed with its whole process group, failures are typed."""

from __future__ import annotations

import os
import time
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


@pytest.mark.parametrize("preloaded", [True, False])
def test_a_hanging_trial_is_killed_at_the_timeout(tmp_path, preloaded):
    pidfile = tmp_path / "pids"
    env = {**ENV, "GW_TU_PIDFILE": str(pidfile)}
    timeout = 20  # both import torch first (an exec, or the forkserver once): seconds under load
    out = run_trial(_config("specs:hang"), tmp_path / "t", timeout_s=timeout, env=env, preloaded=preloaded)
    assert out.status == "failed" and out.failure == "timeout"
    assert out.wall_s < timeout + 20
    pids = [int(p) for p in pidfile.read_text().split()]
    time.sleep(0.5)
    alive = [pid for pid in pids if Path(f"/proc/{pid}").exists() and _state(pid) != "Z"]
    assert not alive, f"trial processes outlived the timeout: {alive}"


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def test_both_ways_of_starting_a_trial_give_the_same_steps_and_losses(tmp_path):
    forked = run_trial(_config("specs:fast_mlp"), tmp_path / "f", timeout_s=120, env=ENV, preloaded=True)
    execd = run_trial(_config("specs:fast_mlp"), tmp_path / "e", timeout_s=120, env=ENV, preloaded=False)
    assert forked.status == execd.status == "ok", (forked.reason, execd.reason)
    assert [r.loss for r in forked.steps] == [r.loss for r in execd.steps]
    assert "forkserver" in (tmp_path / "f" / "cmd.rank0.txt").read_text()


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


def test_two_forked_ranks_train_ddp_like_two_execd_ones(tmp_path):
    config = {**_config("specs:fast_mlp", steps=3), "batch_size": 8}
    forked = run_trial(config, tmp_path / "f", timeout_s=200, nproc=2, env=ENV, preloaded=True)
    execd = run_trial(config, tmp_path / "e", timeout_s=200, nproc=2, env=ENV, preloaded=False)
    assert forked.status == execd.status == "ok", (forked.reason, execd.reason)
    assert [r.loss for r in forked.steps] == [r.loss for r in execd.steps]
