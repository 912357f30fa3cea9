"""The search policy: one key per distinct setting, neighbours of the best, no setting measured twice."""

from __future__ import annotations

from pathlib import Path

from gpuwise.tune import policy, search
from gpuwise.tune.summary import summarize
from gpuwise.tune.trial import TrialOutcome
from gpuwise.workloads.loop import StepRecord

SPACE = {"precision": ("fp32", "bf16"), "num_workers": (0, 2, 4), "prefetch_factor": (2, 4)}


def test_a_setting_is_its_changes_from_the_baseline():
    assert policy.key({"precision": "fp32", "num_workers": 0, "prefetch_factor": 4}) == policy.key({})
    assert policy.key({"sharding": "none", "num_workers": 2}) == policy.key({"num_workers": 2})
    fsdp = {"sharding": "fsdp", "bucket_cap_mb": 100, "comm_hook": "bf16"}
    assert policy.key(fsdp) == policy.key({"sharding": "fsdp"})  # DDP knobs do nothing under FSDP
    assert policy.key({"num_workers": 2, "prefetch_factor": 4}) != policy.key({"num_workers": 2})


def test_neighbours_change_one_knob_and_open_loader_knobs_with_workers():
    best = {"precision": "fp32", "num_workers": 2, "prefetch_factor": 2}
    near = policy.neighbours(best, SPACE, ["data", "precision"])
    assert {"precision": "fp32", "num_workers": 2, "prefetch_factor": 4} in near
    assert {"precision": "fp32", "num_workers": 0} in near  # loader knobs dropped without workers
    assert near[0]["num_workers"] != 2 and all(policy.key(n) != policy.key(best) for n in near)
    assert len(near) == 2 + 1 + 1  # num_workers 0|4, precision bf16, prefetch_factor 4


class _Trial:
    def __init__(self, choices):
        self.choices, self.asked = choices, []

    def suggest_categorical(self, name, values):
        self.asked.append(name)
        return self.choices.get(name, values[0])


def test_suggest_asks_sharding_first_and_skips_what_does_nothing():
    space = {
        "bucket_cap_mb": (25, 100),
        "num_workers": (0, 2),
        "prefetch_factor": (2, 4),
        "sharding": ("none", "fsdp"),
    }
    trial = _Trial({"sharding": "fsdp"})
    assert policy.suggest(trial, space) == {"sharding": "fsdp", "num_workers": 0}
    assert trial.asked == ["sharding", "num_workers"]


def test_the_search_never_measures_a_setting_twice(tmp_path, monkeypatch):
    """Ten settings in the space (2 precisions x 5 loader settings), twelve trials asked: ten run, each once,
    then the search stops: every neighbour of every measured setting is measured."""
    ran = []

    def run_trial(config, where, *, on_step=None, **_):
        s = config["settings"]
        ran.append(policy.key({k: s[k] for k in SPACE}))
        rate = {0: 40.0, 2: 90.0, 4: 200.0}[s["num_workers"]] * (0.8 if s["precision"] == "bf16" else 1.0)
        steps = [StepRecord(i, 32 / rate, 0.0, 1.0) for i in range(config["steps"])]
        return TrialOutcome("ok", steps)

    monkeypatch.setattr(search, "run_trial", run_trial)
    opts = search.TuneOptions(
        target="mlp-slow-data", trials=12, steps=5, warmup=2, storage=Path(tmp_path) / "s.sqlite3", study="t"
    )
    study = search.run_search(opts, dict(SPACE), lambda event, data: None)
    measured = ran[:-1]  # the last run is the baseline again, at the end
    assert len(measured) == len(set(measured)) == 2 * (1 + 2 + 2)  # 0 workers: no prefetch choice
    assert ran[-1] == policy.key({})
    roles = [t.user_attrs.get("role") for t in search.counted(study)]
    assert "repeat" not in roles and len(roles) == len(measured)
    assert "neighbour" in roles  # TPE proposed a measured setting: the search stepped next to the best
    result = summarize(study, opts, SPACE, [], None)  # every role renders as a trial record
    assert [r.role for r in result.trials if r.status != "skipped"] == [*roles, "baseline-end"]
