"""Reference training specs and the training-spec protocol that `gpuwise tune` and `gpuwise profile` drive.

A spec is a function `spec(cfg) -> TrainingSpec` (workloads/spec.py). gpuwise owns the training loop
(workloads/loop.py), so it can apply every knob the tuner searches. Three reference specs ship here:
`gpt-small` and `cnn-small` (the bench's models, bench/train_models.py) and `mlp-slow-data`, whose
dataset waits on every sample like a slow storage read.
"""

from __future__ import annotations
