"""Which knob values can run where, and what --keep-numerics leaves out."""

from __future__ import annotations

from gpuwise.tune import knobs

CPU = knobs.Machine(device="cpu", kind="transformer", checkpoint_blocks=2, cpu_count=2, has_compiler=True)
H100 = knobs.Machine(
    device="cuda", capability=(9, 0), kind="cnn", image_inputs=True, cpu_count=32, world_size=2
)


def _reasons(skipped, name):
    return {s.value: s.reason for s in skipped if s.knob == name}


def test_cpu_skips_gpu_only_values_with_reasons():
    space, skipped = knobs.search_space(CPU, keep_numerics=False)
    assert space["precision"] == ("fp32", "bf16")  # CPU autocast bf16 exists in torch; the trial measures it
    reasons = _reasons(skipped, "precision")
    assert "Ampere" in reasons["tf32"] and "CUDA" in reasons["fp16"] and "torchao" in reasons["fp8"]
    assert "pin_memory" not in space and "GPU" in _reasons(skipped, "pin_memory")[True]
    assert "reduce-overhead" not in space["compile"]
    assert all(name not in space for name in ("bucket_cap_mb", "comm_hook", "NCCL_SOCKET_NTHREADS"))
    assert 8 not in space["num_workers"]  # more than twice the two cores


def test_gpu_with_two_ranks_opens_ddp_nccl_and_precision():
    space, skipped = knobs.search_space(H100, keep_numerics=False)
    assert set(space["precision"]) == {"fp32", "tf32", "bf16", "fp16"}
    assert "torchao" in _reasons(skipped, "precision")["fp8"]
    assert space["comm_hook"][0] == "none" and "powersgd-1" in space["comm_hook"]
    assert "NCCL_SOCKET_NTHREADS" in space and space["channels_last"] == (False, True)


def test_keep_numerics_leaves_out_every_knob_that_changes_results():
    space, skipped = knobs.search_space(H100, keep_numerics=True)
    for name in ("precision", "accumulation", "comm_hook"):
        assert name not in space
        assert any(s.knob == name and "--keep-numerics" in s.reason for s in skipped)
    assert {knobs.by_name()[n].numerics for n in space} <= {"none", "rounding"}


def test_settings_and_numerics_from_params():
    settings = knobs.to_settings(
        {"precision": "bf16", "num_workers": 4, "NCCL_SOCKET_NTHREADS": "4", "NCCL_BUFFSIZE": "default"}
    )
    assert settings.precision == "bf16" and settings.num_workers == 4
    assert settings.env == {"NCCL_SOCKET_NTHREADS": "4"}
    assert knobs.numerics_of({"num_workers": 4}) == "none"
    assert knobs.numerics_of({"num_workers": 4, "compile": "default"}) == "rounding"
    assert knobs.numerics_of({"compile": "default", "accumulation": 2}) == "optimisation"


def test_every_knob_cites_a_public_url():
    for knob in knobs.catalogue():
        assert knob.source.startswith("https://"), knob.name


def test_warmup_covers_the_loader_prefetch_buffer():
    from gpuwise.tune.search import TuneOptions, warmup_for

    opts = TuneOptions(target="x", warmup=3)
    assert warmup_for(opts, {"num_workers": 0}) == 3
    assert warmup_for(opts, {"num_workers": 4, "prefetch_factor": 4}) == 17  # 16 batches buffered, then one
    assert warmup_for(opts, {"num_workers": 4, "prefetch_factor": 4, "accumulation": 2}) == 9
