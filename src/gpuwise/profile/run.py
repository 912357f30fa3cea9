"""Run a spec's steps under torch.profiler with a wait/warm-up/active schedule and write the trace."""

from __future__ import annotations

from pathlib import Path

from gpuwise.i18n import N_, msg
from gpuwise.profile.model import ProfileResult

HTA_NOTE = N_(
    "Analysed from the profiler's own events (gpuwise labels data/forward/backward/optimizer). "
    "HolisticTraceAnalysis was not used: its package pulls in JupyterLab (about 70 packages) and its "
    "temporal breakdown, idle-time and overlap views read GPU streams, which a CPU-only trace has none of."
)


def profile(
    target: str,
    *,
    device: str,
    batch_size: int,
    trace_path: Path,
    wait: int = 1,
    warmup: int = 2,
    active: int = 5,
    seed: int = 0,
    num_workers: int = 0,
) -> ProfileResult:
    """Profile `wait + warmup + active` steps; the trace of the active steps goes to `trace_path`."""
    from gpuwise.bench import require_torch
    from gpuwise.profile.attribute import attribute
    from gpuwise.profile.findings import findings
    from gpuwise.workloads import loop
    from gpuwise.workloads.spec import SpecConfig, build

    torch = require_torch()
    spec = build(target, SpecConfig(device=device, seed=seed, batch_size=batch_size))
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    trace_path = Path(trace_path)
    trace_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = trace_path.with_name(f".{trace_path.name}.tmp")

    def export(prof) -> None:
        prof.export_chrome_trace(str(tmp))
        tmp.replace(trace_path)  # the trace appears whole or not at all

    schedule = torch.profiler.schedule(wait=wait, warmup=warmup, active=active, repeat=1)
    with torch.profiler.profile(activities=activities, schedule=schedule, on_trace_ready=export) as prof:
        loop.train(
            spec,
            loop.LoopSettings(num_workers=num_workers),
            device=device,
            batch_size=batch_size,
            steps=wait + warmup + active,
            on_step=lambda rec: None,
            labels=True,
            after_step=prof.step,
        )
    breakdown = attribute(trace_path)
    step_ms = breakdown.step_ms
    return ProfileResult(
        workload=target,
        device=device,
        batch_size=batch_size,
        wait_steps=wait,
        warmup_steps=warmup,
        active_steps=active,
        trace_path=str(trace_path),
        step_ms=step_ms,
        samples_per_s=batch_size / (step_ms / 1000) if step_ms else 0.0,
        phases=breakdown.phases,
        top_ops=breakdown.top_ops,
        gpu_kernels=breakdown.gpu,
        findings=findings(breakdown, device),
        analysis=msg(HTA_NOTE),
    )
