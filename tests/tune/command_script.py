"""A script for command mode: reads its knobs from gpuwise, trains, reports each step (gpuwise.tune)."""

import time

import gpuwise.tune

cfg = gpuwise.tune.trial_knobs()
workers = int(cfg.get("num_workers", 0))
for _ in range(100):
    time.sleep(0.08 / (1 + workers))  # a data wait that more workers shorten
    gpuwise.tune.report(samples=16, loss=1.0)
