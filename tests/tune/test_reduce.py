"""The smallest winning change, data-bound ordering and every trial in the table, on a simulated trial
runner (step times from a table of rates, a little deterministic jitter): the real search and summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuwise.tune import search
from gpuwise.tune.summary import summarize
from gpuwise.tune.trial import TrialOutcome
from gpuwise.workloads.loop import StepRecord

SPACE = {"checkpointing": (False, True), "optimizer_impl": ("default", "fused"), "num_workers": (0, 4)}


def _runner(ran: list, fixed_wait: float = 0.3):
    """Workers fix the data wait (5x); fused and checkpointing add 2-3 % each: within the noise."""

    def run_trial(config, where, *, on_step=None, **_):
        s = config["settings"]
        rate = 200.0 if s["num_workers"] else 40.0
        rate *= (1.03 if s["checkpointing"] else 1.0) * (1.02 if s["optimizer_impl"] == "fused" else 1.0)
        rate *= 1.08 if s.get("compile", "off") != "off" else 1.0
        ran.append((where.name, dict(s)))
        wait = fixed_wait if s["num_workers"] else 0.8
        steps = []
        for i in range(config["steps"]):
            sec = 32 / rate * (1 + 0.04 * ((i % 3) - 1))
            steps.append(StepRecord(i, sec, wait * sec, 1.0))
            if on_step is not None and on_step(steps[-1]):
                return TrialOutcome("pruned", steps)
        return TrialOutcome("ok", steps)

    return run_trial


def _run(tmp_path: Path, monkeypatch, space: dict, trials: int, **runner):
    ran: list = []
    monkeypatch.setattr(search, "run_trial", _runner(ran, **runner))
    opts = search.TuneOptions(
        target="mlp-slow-data", trials=trials, steps=6, warmup=1, storage=tmp_path / "s.sqlite3", study="r"
    )
    study = search.run_search(opts, dict(space), lambda event, data: None)
    return summarize(study, opts, space, [], None), ran


def test_the_winner_is_reduced_to_the_changes_that_each_beat_the_noise(tmp_path, monkeypatch):
    result, ran = _run(tmp_path, monkeypatch, SPACE, trials=8)
    origin = next(r for r in result.trials if r.number == result.reduced_from)
    assert len(origin.changes) == 3  # the search's fastest setting bundles all three
    assert result.best_changes == {"num_workers": 4}, result.verdict
    winner = next(r for r in result.trials if r.number == result.winner)
    assert winner.role == "reduction" and winner.beats_baseline and winner.speedup > 4
    worth = {c.knob: c for c in result.contributions}
    assert set(worth) == {"checkpointing", "optimizer_impl", "num_workers"}
    assert not worth["checkpointing"].kept and not worth["optimizer_impl"].kept
    assert worth["num_workers"].kept and worth["num_workers"].speedup_low > 4
    assert [c.knob for c in result.contributions][-1] == "num_workers"  # changes with a cost go first
    # every trial number appears once, with a status
    assert [r.number for r in result.trials] == list(range(len(result.trials)))
    assert {r.status for r in result.trials} <= {"ok", "failed", "skipped", "pruned", "unreliable"}
    assert result.trials[-1].role == "baseline-end" and ran[-1][0] == "baseline-end"
    assert "checkpointing" not in result.best_changes and "reduced from trial" in result.verdict


def test_a_data_bound_baseline_holds_compile_until_the_data_wait_is_fixed(tmp_path, monkeypatch):
    space = {**SPACE, "compile": ("off", "default")}
    result, ran = _run(tmp_path, monkeypatch, space, trials=6)
    assert all(s.get("compile", "off") == "off" for _, s in ran)  # workers left 30 % data wait
    held = next(v for v in result.knobs if v.knob == "compile")
    assert held.outcome == "held" and "compile" in result.held and "30%" in result.held


def test_compile_is_probed_on_top_of_the_setting_that_fixed_the_data_wait(tmp_path, monkeypatch):
    space = {**SPACE, "compile": ("off", "default")}
    result, ran = _run(tmp_path, monkeypatch, space, trials=6, fixed_wait=0.0)  # no wait at all
    compiled = [s for _, s in ran if s.get("compile") == "default"]
    assert compiled and compiled[0]["num_workers"] == 4
    assert "were probed once trial" in result.held


def test_nothing_beats_the_baseline_and_each_knob_says_why(tmp_path, monkeypatch):
    space = {"checkpointing": (False, True), "optimizer_impl": ("default", "fused")}
    result, _ran = _run(tmp_path, monkeypatch, space, trials=4)
    assert result.winner is None and not result.best_changes
    outcomes = {v.knob: v.outcome for v in result.knobs}
    assert outcomes == {"checkpointing": "within-noise", "optimizer_impl": "within-noise"}
    assert all("best: trial" in v.detail for v in result.knobs)


def test_summaries_are_strict_json(tmp_path, monkeypatch):
    result, _ran = _run(tmp_path, monkeypatch, SPACE, trials=4)

    def refuse(token):
        raise ValueError(token)

    json.loads(json.dumps(result.to_json_dict()), parse_constant=refuse)


@pytest.mark.parametrize("half_width", [50.0, 400.0])
def test_an_interval_wider_than_its_value_is_unreliable(half_width):
    from gpuwise.tune.stats import Throughput
    from gpuwise.tune.summary import unreliable

    tp = Throughput(245.0, max(0.0, 245.0 - half_width), 245.0 + half_width, 10)
    assert unreliable(tp) is (half_width > 245.0)


def test_a_setting_measured_unreliably_is_measured_once_more_not_handed_back(tmp_path, monkeypatch):
    ran: list = []

    def run_trial(config, where, *, on_step=None, **_):
        s = config["settings"]
        ran.append(s["num_workers"])
        # workers deliver in clumps: most steps take no time, one in five waits a full read
        step = [0.002, 0.002, 0.002, 0.002, 3.0] if s["num_workers"] else [0.8]
        steps = [StepRecord(i, step[i % len(step)], 0.0, 1.0) for i in range(config["steps"])]
        return TrialOutcome("ok", steps)

    monkeypatch.setattr(search, "run_trial", run_trial)
    opts = search.TuneOptions(
        target="mlp-slow-data", trials=6, steps=6, warmup=1, storage=tmp_path / "s.sqlite3", study="n"
    )
    study = search.run_search(opts, {"num_workers": (0, 4)}, lambda event, data: None)
    result = summarize(study, opts, {"num_workers": (0, 4)}, [], None)
    assert ran.count(4) == 2, ran  # the probe, then once more when proposed again; then handed back
    measured = [r for r in result.trials if r.changes == {"num_workers": 4} and r.status != "skipped"]
    assert [r.status for r in measured] == ["unreliable", "unreliable"]
    assert result.winner is None  # never a clean result


def test_a_clear_change_measured_noisily_is_kept_on_its_removal_and_flagged(tmp_path, monkeypatch):
    """Workers deliver in clumps: every measurement with them is too noisy to quote (+/- above the value),
    yet removing them costs far more than the noise: they are recommended, their figure is not quoted."""
    ran: list = []

    def run_trial(config, where, *, on_step=None, **_):
        s = config["settings"]
        ran.append(where.name)
        clumps = [0.002, 0.002, 0.002, 0.002, 0.4] if s["num_workers"] else [0.8]
        slower = 1.02 if s["optimizer_impl"] == "fused" else 1.0
        steps = [StepRecord(i, clumps[i % len(clumps)] * slower, 0.0, 1.0) for i in range(config["steps"])]
        return TrialOutcome("ok", steps)

    monkeypatch.setattr(search, "run_trial", run_trial)
    space = {"optimizer_impl": ("default", "fused"), "num_workers": (0, 4)}
    opts = search.TuneOptions(
        target="mlp-slow-data", trials=5, steps=10, warmup=1, storage=tmp_path / "s.sqlite3", study="c"
    )
    study = search.run_search(opts, dict(space), lambda event, data: None)
    result = summarize(study, opts, space, [], None)
    assert result.best_changes == {"num_workers": 4}, result.verdict
    winner = next(r for r in result.trials if r.number == result.winner)
    assert winner.status == "unreliable" and "too noisy to quote" in result.verdict
    worth = {c.knob: c for c in result.contributions}
    assert worth["num_workers"].kept and worth["num_workers"].speedup_low > 1.5
    assert all(c.kept == (c.knob == "num_workers") for c in result.contributions)
