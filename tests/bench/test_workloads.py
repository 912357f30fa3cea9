"""Every CPU benchmark path for real, at small sizes: compute, memory, data loading, training."""

from __future__ import annotations

import pytest

from gpuwise.bench import compute, dataloader, host_device, memory, p2p, training
from gpuwise.bench.context import BenchOptions, Skip, build_context
from gpuwise.bench.runner import judge

MiB = 1 << 20


@pytest.fixture(scope="module")
def ctx():
    return build_context(BenchOptions())


def test_context_on_this_cpu(ctx):
    assert ctx.device in ("cpu", "cuda")
    assert ctx.environment["torch"] and "clocks_at_start" in ctx.environment
    if ctx.device == "cpu":
        assert not ctx.supports("tf32") and not ctx.supports("fp8")
        assert ctx.cpu_peak.tflops.get("fp32", 0) > 0


def test_matmul_reports_tflops_against_the_derived_peak(ctx):
    spec = compute.Spec(
        dtypes=("fp32", "tf32", "fp8"),
        shapes=((128, 128, 128), (256, 256, 256)),
        warmup=1,
        repeats=3,
        target_sample_s=0.01,
    )
    fp32, tf32, fp8 = (judge(m) for m in compute.run(ctx, spec))
    assert fp32.status in ("ok", "invalid") and fp32.value > 0 and fp32.unit == "TFLOP/s"
    assert fp32.stats.min <= fp32.stats.median <= fp32.stats.max and fp32.stats.repeats == 3
    assert [s["m"] for s in fp32.extra["per_shape"]] == [128, 256]
    assert fp32.value == max(s["tflops_median"] for s in fp32.extra["per_shape"]) or fp32.value > 0
    if ctx.device == "cpu":
        assert fp32.peak_source.kind == "derived" and fp32.percent_of_peak > 0
        assert tf32.status == "skipped" and fp8.status == "skipped" and "SM >= 89" in fp8.reason


def test_matmul_flops_arithmetic():
    import torch

    timed, stats = compute.time_matmul(
        torch, "fp32", (64, 32, 16), "cpu", compute.Spec(warmup=0, repeats=3)
    )  # odd: median is one sample
    assert stats.median == pytest.approx(2 * 64 * 32 * 16 / timed.median_s / 1e12, rel=1e-6)


def test_host_memory_copy_and_triad(ctx):
    results = memory.run(ctx, memory.Spec(host_bytes=16 * MiB, warmup=1, repeats=3, target_sample_s=0.01))
    host = {m.name: m for m in results if m.name.startswith("host_")}
    assert set(host) == {"host_copy", "host_triad"}
    assert host["host_copy"].params["bytes_moved_per_op"] == 2 * 16 * MiB
    assert host["host_triad"].params["bytes_moved_per_op"] == 3 * 16 * MiB
    assert all(m.value > 0.1 for m in host.values())  # any machine copies more than 100 MB/s
    if ctx.device == "cpu":
        assert [m.status for m in results if m.name.startswith("device_")] == ["skipped", "skipped"]


def test_gpu_only_layers_skip_on_cpu(ctx):
    if ctx.device != "cpu":
        pytest.skip("this machine has a GPU")
    with pytest.raises(Skip, match="no CUDA GPU"):
        host_device.run(ctx, host_device.make_spec(ctx))
    with pytest.raises(Skip, match="no CUDA GPU"):
        p2p.run(ctx, p2p.make_spec(ctx))


def test_dataloader_reads_its_files_and_finds_the_saturating_worker_count(ctx, tmp_path):
    spec = dataloader.Spec(str(tmp_path), samples=64, image_hw=32, batch_size=8, workers=(0, 1), epochs=2)
    [m] = dataloader.run(ctx, spec)
    assert m.status == "ok" and m.unit == "samples/s" and m.value > 0
    assert m.extra["saturating_workers"] in (0, 1) and m.extra["best_workers"] in (0, 1)
    assert m.extra["saturating_workers"] <= m.extra["best_workers"]
    assert [r["num_workers"] for r in m.extra["table"]] == [0, 1]
    assert list(tmp_path.iterdir()) == []  # its sample files are gone


def test_dataset_decodes_what_was_written(tmp_path):
    spec = dataloader.Spec(str(tmp_path), samples=2, image_hw=8)
    ds = dataloader.SampleFiles(dataloader.write_samples(tmp_path, spec), 8)
    img, label = ds[1]
    assert tuple(img.shape) == (3, 8, 8) and label == 1


def test_training_step_reports_samples_tokens_and_mfu(ctx):
    spec = training.Spec(
        gpt=training.GPTConfig(vocab=256, seq_len=32, d_model=32, n_layers=1, n_heads=2),
        gpt_batch=2,
        cnn=training.CNNConfig(image_hw=16, width=8),
        cnn_batch=4,
        warmup=1,
        repeats=2,
        target_sample_s=0.01,
    )
    results = {m.name: judge(m) for m in training.run(ctx, spec)}
    fp32 = results["train_transformer_fp32"]
    assert fp32.status in ("ok", "invalid") and fp32.value > 0 and fp32.unit == "TFLOP/s"
    assert fp32.extra["tokens_per_s"] == pytest.approx(fp32.extra["samples_per_s"] * 32)
    # model FLOPs per step: at least the 6*N*tokens of the dense layers (PaLM/Kaplan), counted not estimated
    n_dense = 32 * 96 + 32 * 32 + 2 * 32 * 128 + 32 * 256  # qkv, proj, mlp, head weights
    assert fp32.extra["flops_per_step"] >= 6 * n_dense * 2 * 32
    cnn = results["train_cnn_fp32"]
    assert cnn.extra["tokens_per_s"] is None and cnn.extra["samples_per_s"] > 0
    if fp32.peak:
        assert fp32.extra["mfu"] == pytest.approx(fp32.value / fp32.peak, rel=1e-3)
    amp = [m for name, m in results.items() if name.startswith("train_transformer_") and name != fp32.name]
    assert len(amp) == 1 and (amp[0].status in ("ok", "invalid") or "AMP skipped" in amp[0].reason)
