"""Findings from a step breakdown, each with its threshold's public source."""

from __future__ import annotations

from gpuwise.i18n import msg
from gpuwise.profile.attribute import Breakdown
from gpuwise.profile.model import ProfileFinding, ProfileResult

DATA_FRACTION = 0.05  # torch-tb-profiler's DataLoader recommendation threshold
COMM_FRACTION = 0.10  # torch-tb-profiler: communication above 10 % of the step deserves bucket/overlap tuning
BUSY_FRACTION = 0.50  # GPU kernels busy under half the step: the GPU waits on the host
H2D_FRACTION = 0.05
TUNING_GUIDE = "https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html"
TB_PLUGIN = "https://github.com/pytorch/kineto/tree/main/tb_plugin"


def findings(b: Breakdown, device: str) -> list[ProfileFinding]:
    out: list[ProfileFinding] = []
    data = b.fraction("data")
    if data > DATA_FRACTION:
        out.append(
            ProfileFinding(
                id="data-loader-bound",
                severity="warning",
                title=msg("The step waits on the DataLoader for {share} of its time").format(
                    share=f"{data:.0%}"
                ),
                evidence=msg(
                    "gpuwise/data spans: {share} of {steps} profiled steps (threshold {threshold})"
                ).format(share=f"{data:.1%}", steps=b.steps, threshold=f"{DATA_FRACTION:.0%}"),
                recommendation=msg(
                    "Raise num_workers (2, 4, 8 ... up to the cores per GPU), persistent_workers=True, "
                    "a larger prefetch_factor; `gpuwise tune --profile FILE` searches these first"
                ),
                source=f"{TUNING_GUIDE}#enable-async-data-loading-and-augmentation ; {TB_PLUGIN}",
            )
        )
    comm = b.fraction("all-reduce")
    if comm > COMM_FRACTION:
        out.append(
            ProfileFinding(
                id="exposed-communication",
                severity="warning",
                title=msg("All-reduce takes {share} of the step").format(share=f"{comm:.0%}"),
                evidence=msg("collective ops cover {share} of the step (threshold {threshold})").format(
                    share=f"{comm:.1%}", threshold=f"{COMM_FRACTION:.0%}"
                ),
                recommendation=msg(
                    "A/B bucket_cap_mb (25-200), gradient_as_bucket_view, static_graph; on slow links a "
                    "bf16/fp16 compression hook or PowerSGD (changes numerics); "
                    "`gpuwise tune --nproc N --profile FILE`"
                ),
                source="https://pytorch.org/docs/stable/ddp_comm_hooks.html ; " + TB_PLUGIN,
            )
        )
    gpu = b.gpu
    if device == "cuda" and gpu and b.step_ms > 0:
        if gpu.get("busy_fraction", 1.0) < BUSY_FRACTION and gpu.get("short_kernel_fraction", 0.0) > 0.5:
            out.append(
                ProfileFinding(
                    id="launch-bound",
                    severity="warning",
                    title=msg("GPU kernels are busy {share} of the step, most shorter than 10 us").format(
                        share=f"{gpu['busy_fraction']:.0%}"
                    ),
                    evidence=msg("{kernels} kernels per step, median {median} us").format(
                        kernels=f"{gpu.get('kernels_per_step', 0):.0f}",
                        median=f"{gpu.get('median_kernel_us', 0):.1f}",
                    ),
                    recommendation=msg(
                        "torch.compile (mode='reduce-overhead' uses CUDA Graphs) or a larger batch"
                    ),
                    source="https://hta.readthedocs.io/en/latest/source/features/cuda_kernel_launch_stats.html ; "
                    + TUNING_GUIDE,
                )
            )
        h2d = sum(v for k, v in gpu.get("memcpy_ms_per_step", {}).items() if "HtoD" in k)
        pageable = any("Pageable" in k for k in gpu.get("memcpy_ms_per_step", {}))
        if h2d / b.step_ms > H2D_FRACTION or pageable:
            out.append(
                ProfileFinding(
                    id="host-to-device-stall",
                    severity="warning" if h2d / b.step_ms > H2D_FRACTION else "info",
                    title=(
                        msg("Host-to-device copies take {ms} ms per step from pageable memory")
                        if pageable
                        else msg("Host-to-device copies take {ms} ms per step")
                    ).format(ms=f"{h2d:.2f}"),
                    evidence=msg("HtoD memcpy {share} of the step").format(share=f"{h2d / b.step_ms:.1%}"),
                    recommendation=msg("DataLoader(pin_memory=True) and .to(device, non_blocking=True)"),
                    source="https://pytorch.org/tutorials/intermediate/pinmem_nonblock.html",
                )
            )
    return out


def judge(result: ProfileResult) -> list[ProfileFinding]:
    """The findings for a profile read back from its JSON, by today's thresholds (doctor --profile)."""
    b = Breakdown(
        steps=result.active_steps,
        step_ms=result.step_ms,
        phases=list(result.phases),
        top_ops=list(result.top_ops),
        gpu=dict(result.gpu_kernels),
    )
    return findings(b, result.device)
