"""The sharding knob (ZeRO-1 ZeroRedundancyOptimizer, FSDP2 fully_shard): offered only once memory is short.

On CPU both run for real on two gloo ranks (torch 2.13 supports FSDP2 and ZeroRedundancyOptimizer over
gloo); what memory they save is measured only on GPUs (CUDA max_memory_allocated), where the knob matters.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuwise.tune import knobs, policy, search
from gpuwise.tune.trial import TrialOutcome
from gpuwise.workloads.loop import StepRecord

SPECS_DIR = str(Path(__file__).parent)
TWO_RANKS = knobs.Machine(device="cpu", world_size=2, cpu_count=2)


def test_sharding_waits_for_memory_to_be_short_and_needs_two_ranks():
    space, skipped = knobs.search_space(TWO_RANKS, keep_numerics=False)
    assert "sharding" not in space
    assert any(s.knob == "sharding" and "memory is short" in s.reason for s in skipped)
    space, _ = knobs.search_space(TWO_RANKS, keep_numerics=False, memory_short=True)
    assert space["sharding"] == ("none", "zero1", "fsdp")
    one, skipped = knobs.search_space(knobs.Machine(), keep_numerics=False, memory_short=True)
    assert "sharding" not in one and any("--nproc 2" in s.reason for s in skipped if s.knob == "sharding")
    knob = knobs.by_name()["sharding"]
    assert knob.numerics == "rounding" and "reduce-scatter" in knob.why and knob.source.startswith("https://")


def test_memory_is_short_after_an_oom_or_a_full_trial():
    oom = search.memory_short(TrialOutcome("failed", failure="oom"), 3, 0.85)
    assert oom["reason"] == "trial 3 ran out of memory"  # the study keeps English; reports reword reason_msg
    full = TrialOutcome("ok", info={"peak_memory_bytes": 90, "memory_total_bytes": 100})
    assert "90%" in search.memory_short(full, 0, 0.85)["reason"]
    roomy = TrialOutcome("ok", info={"peak_memory_bytes": 50, "memory_total_bytes": 100})
    assert search.memory_short(roomy, 0, 0.85) is None
    assert search.memory_short(TrialOutcome("ok"), 0, 0.85) is None  # command mode: no memory figures


def test_an_oom_opens_the_sharding_knob_and_probes_each_stage(tmp_path, monkeypatch):
    ran = []

    def run_trial(config, where, *, on_step=None, **_):
        s = config["settings"]
        ran.append((s["sharding"], s["bucket_cap_mb"]))
        if s["sharding"] == "none" and s["bucket_cap_mb"] == 100:
            return TrialOutcome("failed", failure="oom", reason="CUDA out of memory")
        rate = 100.0 if s["sharding"] == "none" else 80.0
        return TrialOutcome("ok", [StepRecord(i, 32 / rate, 0.0, 1.0) for i in range(config["steps"])])

    monkeypatch.setattr(search, "run_trial", run_trial)
    space = {"bucket_cap_mb": (25, 100)}
    memory_space = {"sharding": ("none", "zero1", "fsdp")}
    opts = search.TuneOptions(
        target="x", trials=4, steps=5, warmup=1, storage=tmp_path / "s.sqlite3", study="t"
    )
    study = search.run_search(opts, space, lambda event, data: None, memory_space)
    assert study.user_attrs["memory_short"] == "trial 1 ran out of memory"
    assert space["sharding"] == ("none", "zero1", "fsdp")  # the caller's space grew
    assert ran[:4] == [("none", 25), ("none", 100), ("zero1", 25), ("fsdp", 25)]
    roles = {t.number: t.user_attrs.get("role") for t in search.counted(study)}
    assert roles[2] == roles[3] == "probe"


@pytest.mark.slow
def test_zero1_and_fsdp_train_on_two_gloo_ranks(tmp_path, monkeypatch):
    """The real loop, two CPU ranks: tune offers sharding (memory_short_fraction=0 makes every trial 'short'),
    both stages run, and the numerics guard finds them within the declared 'rounding' tolerance."""
    from gpuwise.tune.run import tune

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([SPECS_DIR, os.environ.get("PYTHONPATH", "")]))
    monkeypatch.syspath_prepend(SPECS_DIR)
    opts = search.TuneOptions(
        target="specs:fast_mlp",
        nproc=2,
        trials=5,  # the baseline, both sharding probes and their repeats (queued trials that do not run are "skipped")
        steps=5,
        warmup=1,
        batch_size=16,
        storage=tmp_path / "s.sqlite3",
        study="shard",
        only=["sharding", "gradient_as_bucket_view"],
        memory_short_fraction=0.0,
    )
    result = tune(opts)
    assert result.memory_short and "sharding" not in {s.knob for s in result.skipped}
    by_stage = {
        r.changes.get("sharding", "none"): r for r in result.trials if r.role in ("baseline", "probe")
    }
    assert {"zero1", "fsdp"} <= set(by_stage), [(r.role, r.changes, r.reason) for r in result.trials]
    for stage in ("zero1", "fsdp"):
        r = by_stage[stage]
        assert r.status == "ok", r.reason
        assert r.numerics == "rounding" and r.guard_ok, (stage, r.guard_max_rel_diff)
    assert policy.key({"sharding": "fsdp", "static_graph": True}) == policy.key({"sharding": "fsdp"})
