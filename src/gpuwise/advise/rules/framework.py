"""Framework rules (layer: framework): precision and compiler settings the facts can support.
Sources: REFERENCE §6 #13 (AMP), #14 (TF32), #20 (torch.compile), #1 (DataLoader workers), §1 (framework
optimisations are high priority on both kinds; mixed precision 2-3x)."""

from __future__ import annotations

from gpuwise.advise.engine import RuleContext, rule
from gpuwise.advise.finding import ExpectedGain
from gpuwise.advise.rules._links import (
    AMP_DOC,
    CUDA_NOTES_TF32,
    MLE_ACCELERATOR,
    MLE_PERFORMANCE,
    TORCH_CUDA_NOTES,
    TORCH_TUNING,
    TRANSFORMER_ENGINE,
)
from gpuwise.advise.rules._util import cc_value, version_tuple
from gpuwise.i18n import N_, msg


def _min_cc(ctx: RuleContext) -> float | None:
    ccs = [c for c in (cc_value(g) for g in ctx.facts.gpus) if c is not None]
    return min(ccs) if ccs else None


def _catalog_support(ctx: RuleContext, peak_field: str) -> tuple[bool | None, list]:
    """Does every GPU have a `peak_field` (e.g. bf16_tflops) in the catalog? None when the catalog cannot say.

    Used when the facts carry no compute capability (nvidia-smi XML/text reports). A catalog row with figures
    but no value for the field means the GPU lacks it (V100: fp16 125, bf16 none); a row without any
    figures says nothing.
    """
    try:
        from gpuwise.catalog.gpus import match_gpu
    except ImportError:
        return None, []
    verdicts, evidence = [], []
    for name in sorted({g.name for g in ctx.facts.gpus if g.name}):
        spec = match_gpu(name, warn=False)
        if spec is None or (spec.fp16_tflops is None and spec.fp32_tflops is None):
            return None, []
        value = getattr(spec, peak_field, None)
        verdicts.append(value is not None)
        evidence.append((f"catalog[{spec.key}].{peak_field}", value))
    return (all(verdicts) if verdicts else None), evidence


def _supports(ctx: RuleContext, min_cc_threshold: str, peak_field: str) -> tuple[bool | None, list]:
    """(supported, evidence): from compute capability when known, else from the catalog's peak table."""
    cc = _min_cc(ctx)
    if cc is not None:
        return cc >= ctx.t(min_cc_threshold), [("gpus[*].compute_capability (min)", cc)]
    return _catalog_support(ctx, peak_field)


@rule(
    id="framework.amp_bf16",
    layer="framework",
    title=N_("Train in bf16 mixed precision (GPU supports bf16)"),
    source=f"PyTorch Automatic Mixed Precision (bf16 autocast on compute capability >= 8.0), {AMP_DOC}; PyTorch Performance Tuning Guide, {TORCH_TUNING}",
    priority="high",
    affects_numerics=True,
    references=(AMP_DOC,),
    gain=ExpectedGain(
        text=N_("up to 3x on Tensor-Core GPUs (model-dependent)"),
        source=f"PyTorch Performance Tuning Guide, 'Use mixed precision and AMP', {TORCH_TUNING}",
    ),
)
def amp_bf16(ctx: RuleContext):
    ok, evidence = _supports(ctx, "amp_bf16_min_cc", "bf16_tflops")
    if not ok:
        return None
    return ctx.finding(
        "info",
        evidence,
        msg(
            "bf16 — detected from {evidence} = {evidence2}: these GPUs have bf16 Tensor Cores. If "
            "the model trains in fp32, wrap the forward pass in bf16 autocast (no GradScaler "
            "needed). Changes numerics: validate the loss curve."
        ).format(evidence=evidence[0][0], evidence2=evidence[0][1]),
        config=["with torch.autocast('cuda', dtype=torch.bfloat16):", "    loss = model(batch)"],
    )


@rule(
    id="framework.amp_fp16",
    layer="framework",
    title=N_("Train in fp16 mixed precision with a GradScaler (no bf16 on this GPU)"),
    source=f"PyTorch Automatic Mixed Precision (fp16 autocast with GradScaler; Tensor Cores from compute capability 7.0), {AMP_DOC}",
    priority="high",
    affects_numerics=True,
    references=(AMP_DOC,),
    gain=ExpectedGain(
        text=N_("up to 3x on Tensor-Core-eligible models"),
        source=f"PyTorch Performance Tuning Guide, 'Use mixed precision and AMP', {TORCH_TUNING}",
    ),
)
def amp_fp16(ctx: RuleContext):
    fp16, ev16 = _supports(ctx, "amp_fp16_min_cc", "fp16_tflops")
    bf16, _bf16_evidence = _supports(ctx, "amp_bf16_min_cc", "bf16_tflops")
    if not fp16 or bf16 is not False:
        return None
    return ctx.finding(
        "info",
        ev16,
        msg(
            "These GPUs ({ev16} = {ev162}) have fp16 Tensor Cores but no bf16: use fp16 autocast "
            "with torch.amp.GradScaler to avoid gradient underflow. Changes numerics: validate the "
            "loss curve."
        ).format(ev16=ev16[0][0], ev162=ev16[0][1]),
        config=[
            "scaler = torch.amp.GradScaler('cuda')",
            "with torch.autocast('cuda', dtype=torch.float16): loss = model(batch)",
            "scaler.scale(loss).backward(); scaler.step(opt); scaler.update()",
        ],
    )


@rule(
    id="framework.tf32",
    layer="framework",
    title=N_("Allow TF32 for fp32 matmuls"),
    source=f"PyTorch CUDA semantics, 'TensorFloat-32 (TF32) on Ampere (and later) devices', {TORCH_CUDA_NOTES}",
    priority="medium",
    affects_numerics=True,
    references=(CUDA_NOTES_TF32,),
    gain=ExpectedGain(
        text=N_("~7x on the fp32 matmul itself (A100, 10240^2); less end to end"),
        source=f"PyTorch CUDA semantics, TF32 ({TORCH_CUDA_NOTES})",
    ),
)
def tf32(ctx: RuleContext):
    ok, evidence = _supports(ctx, "tf32_min_cc", "tf32_tflops")
    if not ok:
        return None
    return ctx.finding(
        "info",
        evidence,
        msg(
            "PyTorch keeps fp32 matmuls in full fp32 by default; whatever still runs in fp32 "
            "(outside autocast) can use TF32 Tensor Cores. Reduces matmul mantissa to 10 bits: "
            "affects numerics."
        ),
        config=["torch.set_float32_matmul_precision('high')"],
    )


@rule(
    id="framework.fp8",
    layer="framework",
    title=N_("FP8 training is possible on this GPU"),
    source=f"ml-engineering MAMF table: FP8 matmul reaches ~1.8x bf16 on H100/H200 ({MLE_ACCELERATOR}); FP8 Tensor Cores from compute capability 8.9",
    priority="low",
    affects_numerics=True,
    references=(TRANSFORMER_ENGINE,),
)
def fp8(ctx: RuleContext):
    ok, evidence = _supports(ctx, "fp8_min_cc", "fp8_tflops")
    if not ok:
        return None
    return ctx.finding(
        "info",
        evidence,
        msg(
            "FP8 matmuls (Transformer Engine, torchao float8) roughly double peak matmul throughput "
            "over bf16 on large GEMMs, with scaling recipes that need convergence checks. Consider "
            "it for large transformer training."
        ),
    )


@rule(
    id="framework.torch_compile",
    layer="framework",
    title=N_("Try torch.compile"),
    source=f"ml-engineering torch.compile measurements: 2.4-3.9x on small overhead-bound models, ~0.94-0.98x on large GEMM-bound ones ({MLE_PERFORMANCE})",
    priority="medium",
    gain=ExpectedGain(
        text=N_("2.4-3.9x on small, overhead-bound models; ~0.94-0.98x on large GEMM-bound (measure)"),
        source=f"ml-engineering, {MLE_PERFORMANCE}",
    ),
)
def torch_compile(ctx: RuleContext):
    v = version_tuple(ctx.facts.software.torch_version)
    if not ctx.facts.gpus or not v or v < (2, 0):
        return None
    return ctx.finding(
        "info",
        [("software.torch_version", ctx.facts.software.torch_version)],
        msg(
            "torch.compile fuses elementwise and normalisation kernels and cuts launch overhead. "
            "Measure: it can be slower on large GEMM-bound models, and compiling costs tens of "
            "seconds to minutes up front."
        ),
        config=["model = torch.compile(model)", "TORCH_LOGS=graph_breaks,recompiles python train.py"],
    )


@rule(
    id="framework.dataloader_workers",
    layer="framework",
    title=N_("Size DataLoader workers to the CPUs per GPU"),
    source=f"PyTorch Performance Tuning Guide, 'Enable asynchronous data loading and augmentation' (num_workers > 0, pin_memory), {TORCH_TUNING}",
    priority={"cloud": "high", "onprem": "high"},
    gain=ExpectedGain(
        text=N_("up to several x when data-bound (5.39 -> 0.84 s with 0 -> 3 workers)"),
        source=f"ml-engineering DataLoader num_workers benchmark, {MLE_PERFORMANCE}",
    ),
)
def dataloader_workers(ctx: RuleContext):
    n_gpu, threads = len(ctx.facts.gpus), ctx.facts.cpu.threads
    if not n_gpu or not threads:
        return None
    per = max(1, threads // n_gpu - 1)  # leave one CPU per rank for the training process itself
    return ctx.finding(
        "info",
        [("cpu.threads", threads), ("gpus.count", n_gpu)],
        msg(
            "With {threads} CPUs and {n_gpu} GPUs, start each rank's DataLoader with up to {per} "
            "workers, persistent workers and pinned memory, and raise it while data loading shows in "
            "the step time."
        ).format(threads=threads, n_gpu=n_gpu, per=per),
        config=[
            f"DataLoader(ds, batch_size=..., num_workers={min(per, 8)}, persistent_workers=True, "
            "pin_memory=True)",
            "batch = batch.to('cuda', non_blocking=True)",
        ],
    )
