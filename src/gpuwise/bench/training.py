"""Training step throughput of two small reference models, in fp32 and with AMP (bf16 where supported).

Reports samples/s, tokens/s (transformer) and MFU. Model FLOPs per step (forward + backward, no
recomputation) are counted by torch's FlopCounterMode on a real step, not estimated from a formula;
the value is model TFLOP/s, so percent_of_peak is the MFU against the catalog peak (GPU) or the
derived peak (CPU) of the dtype the matmuls ran in.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuwise.bench.context import BenchContext
from gpuwise.bench.peaks import cpu_matmul_peak, matmul_peak
from gpuwise.bench.registry import BenchInfo
from gpuwise.bench.timing import measure
from gpuwise.bench.train_models import CNNConfig, GPTConfig, build_cnn, build_gpt
from gpuwise.documents.bench import Measurement
from gpuwise.i18n import N_, msg

BENCHMARK = BenchInfo(
    name="training",
    layer="training",
    title=N_("Training step"),
    help=N_("training-step throughput and MFU of two small reference models"),
    order=80,
    quick_timeout_s=120,
    full_timeout_s=1200,
    aliases=("train",),
)


@dataclass(frozen=True)
class Spec:
    gpt: GPTConfig = GPTConfig()
    gpt_batch: int = 8
    cnn: CNNConfig = CNNConfig()
    cnn_batch: int = 32
    precisions: tuple[str, ...] = ("fp32", "amp")
    warmup: int = 2
    repeats: int = 3
    target_sample_s: float = 0.1


def make_spec(ctx: BenchContext) -> Spec:
    if ctx.device == "cuda":
        gpt = GPTConfig(vocab=32768, seq_len=1024, d_model=768, n_layers=6, n_heads=12)
        return Spec(
            gpt=gpt,
            gpt_batch=8,
            cnn=CNNConfig(image_hw=64, width=64),
            cnn_batch=256,
            warmup=5,
            repeats=10 if ctx.mode == "full" else 5,
            target_sample_s=0.2,
        )
    if ctx.mode == "full":
        return Spec(gpt=GPTConfig(d_model=256, n_layers=4, seq_len=256), repeats=5, target_sample_s=0.5)
    return Spec(cnn=CNNConfig(width=16), cnn_batch=16)


def amp_dtype(ctx: BenchContext) -> tuple[str | None, str]:
    """The AMP dtype here, or None and why not."""
    if ctx.supports("bf16"):
        return "bf16", ctx.support_reason("bf16")
    if ctx.device == "cuda":
        return "fp16", msg("bf16 unsupported; fp16 with a GradScaler")
    return None, msg("AMP skipped: {why}").format(why=ctx.support_reason("bf16"))


def _batch(torch, model_name: str, spec: Spec, device: str):
    if model_name == "transformer":
        shape = (spec.gpt_batch, spec.gpt.seq_len)
        idx = torch.randint(0, spec.gpt.vocab, shape, device=device)
        return (idx, torch.roll(idx, -1, dims=1)), spec.gpt_batch, spec.gpt_batch * spec.gpt.seq_len
    hw = spec.cnn.image_hw
    images = torch.randn(spec.cnn_batch, 3, hw, hw, device=device)
    return (
        (images, torch.randint(0, spec.cnn.classes, (spec.cnn_batch,), device=device)),
        spec.cnn_batch,
        None,
    )


def make_step(torch, model, inputs, device: str, dtype: str | None):
    """One optimizer step; autocast to `dtype` when given (fp16 also gets a GradScaler)."""
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    torch_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(dtype or "")
    scaler = torch.amp.GradScaler(device) if dtype == "fp16" else None

    def step():
        with torch.autocast(device_type=device, dtype=torch_dtype, enabled=torch_dtype is not None):
            loss = model(*inputs)
        if scaler:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    return step


def count_flops(torch, step) -> int:
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        step()
    return counter.get_total_flops()


def run(ctx: BenchContext, spec: Spec) -> list[Measurement]:
    from gpuwise.bench import require_torch

    torch = require_torch()
    torch.manual_seed(0)
    results = []
    for model_name in ("transformer", "cnn"):
        for precision in spec.precisions:
            dtype, why = ("fp32", msg("fp32 weights and math")) if precision == "fp32" else amp_dtype(ctx)
            name = f"train_{model_name}_{precision if dtype is None else dtype}"
            if dtype is None:
                results.append(Measurement(name=name, layer="training", status="skipped", reason=why))
                continue
            ctx.say(msg("training step {model} {dtype}").format(model=model_name, dtype=dtype))
            results.append(_one(torch, ctx, spec, model_name, dtype, why, name))
            if ctx.device == "cuda":
                torch.cuda.empty_cache()
    return results


def _one(
    torch, ctx: BenchContext, spec: Spec, model_name: str, dtype: str, why: str, name: str
) -> Measurement:
    device = ctx.device
    model = (build_gpt(spec.gpt) if model_name == "transformer" else build_cnn(spec.cnn)).to(device)
    inputs, samples, tokens = _batch(torch, model_name, spec, device)
    step = make_step(torch, model, inputs, device, None if dtype == "fp32" else dtype)
    # cuDNN runs fp32 convolutions on TF32 tensor cores by default; an "fp32" step judged against the
    # fp32 peak must really run in fp32 (an H200 run showed the CNN at 105% of the fp32 peak otherwise).
    tf32 = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = dtype != "fp32"
    try:
        step()  # first step allocates optimizer state; FLOP counting below sees a steady-state step
        flops = count_flops(torch, step)
        timed = measure(
            step,
            device=device,
            warmup=spec.warmup,
            repeats=spec.repeats,
            target_sample_s=spec.target_sample_s,
            warmup_s=0.5 if device == "cuda" else 0.0,
        )
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = tf32
    stats = timed.stats_of(lambda s: flops / s / 1e12)
    step_s = timed.median_s
    peak = matmul_peak(ctx.gpu_name, dtype) if device == "cuda" else cpu_matmul_peak(ctx.cpu_peak, dtype)
    m = Measurement(
        name=name,
        layer="training",
        unit="TFLOP/s",
        stats=stats,
        device=device,
        params={
            "model": model_name,
            "precision": dtype,
            "why": why,
            "batch": samples,
            "config": (spec.gpt if model_name == "transformer" else spec.cnn).__dict__,
            "parameters": sum(p.numel() for p in model.parameters()),
            "optimizer": "AdamW",
            "flops_counted_by": "torch.utils.flop_counter.FlopCounterMode (forward+backward)",
            "tf32_allowed": dtype != "fp32",
        },
        extra={
            "samples_per_s": samples / step_s,
            "tokens_per_s": tokens / step_s if tokens else None,
            "step_ms": step_s * 1e3,
            "flops_per_step": flops,
        },
    )
    peak.apply(m)
    if m.peak:
        m.extra["mfu"] = stats.median / m.peak
    return m
