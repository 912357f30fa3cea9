"""The GPU-only knob paths of the loop, for real on a CUDA device (skipped without one)."""

from __future__ import annotations

import pytest

from gpuwise.workloads import loop
from gpuwise.workloads.reference import REFERENCE_SPECS
from gpuwise.workloads.spec import SpecConfig

GPU_SETTINGS = [
    loop.LoopSettings(precision="tf32"),
    loop.LoopSettings(precision="bf16", optimizer_impl="fused"),
    loop.LoopSettings(precision="fp16", pin_memory=True, num_workers=2),
    loop.LoopSettings(channels_last=True, cudnn_benchmark=True, precision="bf16"),
]


@pytest.mark.gpu
@pytest.mark.parametrize("settings", GPU_SETTINGS, ids=lambda s: f"{s.precision}-cl{int(s.channels_last)}")
@pytest.mark.parametrize("name", ["gpt-small", "cnn-small"])
def test_gpu_knobs_train_with_finite_loss_and_report_cuda_memory(name, settings):
    spec = REFERENCE_SPECS[name](SpecConfig(device="cuda", batch_size=8))
    losses: list[float] = []
    info = loop.train(
        spec, settings, device="cuda", batch_size=8, steps=3, on_step=lambda r: losses.append(r.loss)
    )
    assert len(losses) == 3 and all(0 < x < 100 for x in losses)
    assert info["memory_kind"] == "CUDA max_memory_allocated" and info["peak_memory_bytes"] > 0
