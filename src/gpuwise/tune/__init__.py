"""`gpuwise tune`: measure what each training setting buys on this job on this machine.

knobs.py (the searchable settings, data in data/knobs.yaml, each with its effect on numerics) ->
trial.py (one trial = one isolated process group running workloads/loop.py via tune/worker.py) ->
stats.py (throughput with a bootstrap noise interval, speedup, the numerics guard) ->
search.py (baseline, prior-ordered probes, then Optuna TPE with SQLite storage) -> model.py (TuneResult)
-> snippet.py (the best setting as Python, environment variables and YAML).
"""

from __future__ import annotations

# command mode's two calls for a user's own script (light: no torch, no optuna)
from gpuwise.tune.script import report, trial_knobs  # noqa: E402

__all__ = ["report", "trial_knobs"]
