"""The training loop gpuwise owns: a spec plus LoopSettings -> timed steps with their losses.

Every knob the tuner searches is a field of LoopSettings, applied here and nowhere else. One global
step = `accumulation` micro-batches of `batch_size / accumulation` samples, then one optimizer step,
so the global batch (and the learning-rate schedule it implies) stays fixed. Each step's wall time
includes waiting for data and the optimizer (what a user's epoch time sees), and the time spent
waiting on the DataLoader is recorded separately for the profile priors.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from gpuwise.i18n import N_
from gpuwise.workloads.spec import TrainingSpec


@dataclass(frozen=True)
class LoopSettings:
    """The knobs' values. The defaults are the baseline: what a plain PyTorch loop does."""

    precision: str = "fp32"  # fp32 | tf32 | bf16 | fp16 | fp8
    channels_last: bool = False
    compile: str = "off"  # off | default | reduce-overhead | max-autotune
    accumulation: int = 1  # micro-batches per optimizer step at the same global batch
    checkpointing: bool = False  # activation checkpointing of the spec's checkpoint_blocks
    num_workers: int = 0
    pin_memory: bool = False
    prefetch_factor: int = 2  # only with num_workers > 0
    persistent_workers: bool = False  # only with num_workers > 0
    optimizer_impl: str = "default"  # default | foreach | fused
    cudnn_benchmark: bool = False
    bucket_cap_mb: int = 25  # DDP only
    gradient_as_bucket_view: bool = False
    static_graph: bool = False
    comm_hook: str = "none"  # none | fp16 | bf16 | powersgd-1 | powersgd-4
    sharding: str = "none"  # none | zero1 (ZeroRedundancyOptimizer over DDP) | fsdp (FSDP2 fully_shard)
    env: dict[str, str] = field(default_factory=dict)  # environment (NCCL_*) set by the launcher


@dataclass(frozen=True)
class StepRecord:
    index: int
    seconds: float
    data_wait_s: float
    loss: float


def _label(enabled: bool, name: str):
    if not enabled:
        return contextlib.nullcontext()
    import torch

    return torch.profiler.record_function(name)


def _wrap_checkpointing(model, names: list[str]) -> int:
    from torch.utils.checkpoint import checkpoint

    modules = dict(model.named_modules())
    wrapped = 0
    for name in names:
        mod = modules.get(name)
        if mod is None:
            continue
        inner = mod.forward

        def forward(*args, _inner=inner, **kwargs):
            return checkpoint(_inner, *args, use_reentrant=False, **kwargs)

        mod.forward = forward
        wrapped += 1
    return wrapped


def _precision(torch, s: LoopSettings, device: str):
    """Set TF32 flags; return (autocast dtype or None, GradScaler or None)."""
    if device == "cuda":
        tf32 = s.precision == "tf32"
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        torch.backends.cudnn.benchmark = s.cudnn_benchmark
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(s.precision)
    scaler = torch.amp.GradScaler(device) if s.precision == "fp16" else None
    return dtype, scaler


def _loader(torch, spec: TrainingSpec, s: LoopSettings, micro: int, rank: int, world: int):
    sampler = None
    if world > 1:
        sampler = torch.utils.data.DistributedSampler(spec.dataset, world, rank, shuffle=False)
    extra = {}
    if s.num_workers > 0:
        extra = {"prefetch_factor": s.prefetch_factor, "persistent_workers": s.persistent_workers}
    return torch.utils.data.DataLoader(
        spec.dataset,
        batch_size=micro,
        sampler=sampler,
        num_workers=s.num_workers,
        pin_memory=s.pin_memory,
        drop_last=True,
        **extra,
    )


def _ddp(torch, model, s: LoopSettings, device: str):
    from torch.nn.parallel import DistributedDataParallel

    ddp = DistributedDataParallel(
        model,
        device_ids=[torch.cuda.current_device()] if device == "cuda" else None,
        bucket_cap_mb=s.bucket_cap_mb,
        gradient_as_bucket_view=s.gradient_as_bucket_view,
        static_graph=s.static_graph,
    )
    if s.comm_hook in ("fp16", "bf16"):
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

        hook = default_hooks.fp16_compress_hook if s.comm_hook == "fp16" else default_hooks.bf16_compress_hook
        ddp.register_comm_hook(None, hook)
    elif s.comm_hook.startswith("powersgd-"):
        from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook

        state = powerSGD_hook.PowerSGDState(
            process_group=None,
            matrix_approximation_rank=int(s.comm_hook.split("-")[1]),
            start_powerSGD_iter=2,
        )
        ddp.register_comm_hook(state, powerSGD_hook.powerSGD_hook)
    return ddp


def _fully_shard(model, blocks: list[str]) -> None:
    """FSDP2: shard each marked block, then the root (ZeRO-3 style: parameters, gradients, optimizer state)."""
    from torch.distributed.fsdp import fully_shard

    modules = dict(model.named_modules())
    for name in blocks:
        if name in modules:
            fully_shard(modules[name])
    fully_shard(model)


def _zero1(opt):
    """ZeRO-1: the spec's optimizer (class, hyper-parameters, groups) with its state split over the ranks."""
    import inspect

    from torch.distributed.optim import ZeroRedundancyOptimizer

    accepted = inspect.signature(type(opt).__init__).parameters  # defaults may hold internal keys
    defaults = {k: v for k, v in opt.defaults.items() if k in accepted}
    return ZeroRedundancyOptimizer([dict(g) for g in opt.param_groups], optimizer_class=type(opt), **defaults)


def _memory_total_bytes(torch, device: str) -> int:
    """What this rank may use: the GPU's memory, or its share of the host's RAM among local ranks."""
    if device == "cuda":
        return int(torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory)
    local = int(os.environ.get("LOCAL_WORLD_SIZE", os.environ.get("WORLD_SIZE", "1")))
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // max(1, local)


def _to_device(batch, device: str, non_blocking: bool, channels_last: bool):
    import torch

    def move(x, first: bool):
        if not isinstance(x, torch.Tensor):
            return x
        x = x.to(device, non_blocking=non_blocking)
        return (
            x.contiguous(memory_format=torch.channels_last) if first and channels_last and x.dim() == 4 else x
        )

    if isinstance(batch, (list, tuple)):
        return type(batch)(move(x, i == 0) for i, x in enumerate(batch))
    return move(batch, True)


def train(
    spec: TrainingSpec,
    s: LoopSettings,
    *,
    device: str,
    batch_size: int,
    steps: int,
    on_step: Callable[[StepRecord], None],
    labels: bool = False,
    after_step: Callable[[], None] | None = None,
) -> dict:
    """Run `steps` global steps; call `on_step` after each. Returns facts about the run (memory, wrapping)."""
    import torch

    rank, world = int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
    micro = batch_size // s.accumulation
    dtype, scaler = _precision(torch, s, device)
    model = spec.model.to(device)
    if s.channels_last:
        model = model.to(memory_format=torch.channels_last)
    info: dict = {
        "checkpointed_blocks": _wrap_checkpointing(model, spec.checkpoint_blocks) if s.checkpointing else 0
    }
    if s.precision == "fp8":
        from torchao.float8 import convert_to_float8_training

        convert_to_float8_training(model)
    impl = {"default": {}, "foreach": {"foreach": True}, "fused": {"fused": True}}[s.optimizer_impl]
    if s.sharding != "none" and world < 2:
        raise ValueError(f"sharding={s.sharding} needs two or more data-parallel ranks")
    fsdp = s.sharding == "fsdp"
    if fsdp:
        _fully_shard(
            model, spec.checkpoint_blocks
        )  # parameters become DTensors before the optimizer sees them
    opt = spec.optimizer(model.parameters(), **impl)
    if s.sharding == "zero1":
        opt = _zero1(opt)
    if world > 1 and not fsdp:
        model = _ddp(torch, model, s, device)
    info["sharding"] = s.sharding
    run_model = (
        torch.compile(model, mode=None if s.compile == "default" else s.compile)
        if s.compile != "off"
        else model
    )
    loader = _loader(torch, spec, s, micro, rank, world)
    batches = iter(loader)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    for index in range(steps):
        start = time.perf_counter()
        wait, total = 0.0, 0.0
        for micro_i in range(s.accumulation):
            t0 = time.perf_counter()
            with _label(labels, "gpuwise/data"):
                try:
                    batch = next(batches)
                except StopIteration:
                    batches = iter(loader)
                    batch = next(batches)
                batch = _to_device(batch, device, s.pin_memory, s.channels_last)
            wait += time.perf_counter() - t0
            last = micro_i == s.accumulation - 1
            if fsdp:
                model.set_requires_gradient_sync(last)  # FSDP2's no_sync: reduce-scatter once per step
            no_sync = (
                run_model.no_sync() if world > 1 and not last and hasattr(run_model, "no_sync") else None
            )
            with no_sync or contextlib.nullcontext():
                with (
                    _label(labels, "gpuwise/forward"),
                    torch.autocast(device, dtype=dtype, enabled=dtype is not None),
                ):
                    loss = spec.loss(run_model, batch) / s.accumulation
                with _label(labels, "gpuwise/backward"):
                    (scaler.scale(loss) if scaler else loss).backward()
            total += float(loss.detach())
        with _label(labels, "gpuwise/optimizer"):
            if scaler:
                scaler.step(opt)
                scaler.update()
            else:
                opt.step()
            opt.zero_grad(set_to_none=True)
        sync()
        on_step(StepRecord(index, time.perf_counter() - start, wait, total))
        if after_step:
            after_step()
    info["memory_total_bytes"] = _memory_total_bytes(torch, device)
    if device == "cuda":
        info["peak_memory_bytes"] = int(torch.cuda.max_memory_allocated())
        info["memory_kind"] = N_("CUDA max_memory_allocated")  # English here; reports translate it
    else:
        import resource

        info["peak_memory_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        info["memory_kind"] = N_("peak RSS of the trial process")
    return info
