"""Rules over profiles of the user's training step (layer: framework), from `doctor --profile FILE`.

A probe sees the machine; a profile (`gpuwise profile --format json -o FILE`, schema gpuwise-profile/1)
sees where the step's time went. Each rule re-judges the profile's numbers with the thresholds of
gpuwise.profile.findings (one set, each with its public source), so a profile written by an older gpuwise
gets today's judgement, and hands back the measured evidence and the `gpuwise tune` command that
searches the settings which address it.
"""

from __future__ import annotations

import shlex

from gpuwise.advise.engine import RuleContext, rule
from gpuwise.advise.finding import Evidence
from gpuwise.i18n import N_, msg
from gpuwise.profile.findings import TB_PLUGIN, TUNING_GUIDE, judge
from gpuwise.profile.model import LoadedProfile

DDP_HOOKS = "https://pytorch.org/docs/stable/ddp_comm_hooks.html"
HTA_LAUNCH = "https://hta.readthedocs.io/en/latest/source/features/cuda_kernel_launch_stats.html"
PINNED = "https://pytorch.org/tutorials/intermediate/pinmem_nonblock.html"

# finding id -> the knobs `gpuwise tune --only` searches for it (names from gpuwise/tune/data/knobs.yaml)
TUNE_KNOBS = {
    "data-loader-bound": "num_workers,prefetch_factor,persistent_workers,pin_memory",
    "exposed-communication": "bucket_cap_mb,gradient_as_bucket_view,static_graph,comm_hook",
    "launch-bound": "compile,accumulation",
    "host-to-device-stall": "pin_memory,num_workers",
}


def _measured(p: LoadedProfile, path: str, value) -> Evidence:
    return Evidence(kind="measurement", path=f"profile[{p.source}].{path}", value=value)


def _phase(p: LoadedProfile, name: str) -> list[Evidence]:
    phase = next((ph for ph in p.result.phases if ph.name == name), None)
    if phase is None:
        return []
    return [
        _measured(p, f"phases.{name}.fraction", round(phase.fraction, 4)),
        _measured(p, f"phases.{name}.ms_per_step", round(phase.ms_per_step, 3)),
    ]


def _gpu(p: LoadedProfile, *keys: str) -> list[Evidence]:
    g = p.result.gpu_kernels
    return [_measured(p, f"gpu_kernels.{k}", g[k]) for k in keys if k in g]


def tune_command(p: LoadedProfile, finding_id: str) -> str:
    """The `gpuwise tune` line that searches what addresses `finding_id`, on the profiled spec and batch."""
    r = p.result
    target = shlex.quote(r.workload) if ":" in r.workload else f"--workload {shlex.quote(r.workload)}"
    nproc = " --nproc N" if finding_id == "exposed-communication" else ""  # N: your data-parallel ranks
    return (
        f"gpuwise tune {target} --batch-size {r.batch_size}{nproc} --profile {shlex.quote(p.source)} "
        f"--only {TUNE_KNOBS[finding_id]}"
    )


EVIDENCE = {
    "data-loader-bound": lambda p: _phase(p, "data"),
    "exposed-communication": lambda p: _phase(p, "all-reduce"),
    "launch-bound": lambda p: _gpu(
        p, "busy_fraction", "short_kernel_fraction", "kernels_per_step", "median_kernel_us"
    ),
    "host-to-device-stall": lambda p: _gpu(p, "memcpy_ms_per_step"),
}


def _findings_for(ctx: RuleContext, finding_id: str):
    out = []
    for p in ctx.profiles:
        for f in judge(p.result):
            if f.id != finding_id:
                continue
            evidence = [
                _measured(p, "step_ms", round(p.result.step_ms, 3)),
                _measured(p, "active_steps", p.result.active_steps),
                *EVIDENCE[finding_id](p),
            ]
            out.append(
                ctx.finding(
                    "warn" if f.severity == "warning" else "info",
                    evidence,
                    msg("Measured in {workload} on {device}: {evidence}. {recommendation}.").format(
                        workload=p.result.workload,
                        device=p.result.device,
                        evidence=f.evidence,
                        recommendation=f.recommendation,
                    ),
                    commands=[tune_command(p, finding_id)],
                    title=f.title,
                )
            )
    return out or None


@rule(
    id="profile.data_loader_bound",
    layer="framework",
    title=N_("The training step waits on the DataLoader"),
    source=f"PyTorch performance tuning guide (async data loading): {TUNING_GUIDE} ; "
    f"torch-tb-profiler's DataLoader recommendation: {TB_PLUGIN}",
    priority="high",
    references=(TUNING_GUIDE, TB_PLUGIN),
)
def data_loader_bound(ctx: RuleContext):
    return _findings_for(ctx, "data-loader-bound")


@rule(
    id="profile.exposed_communication",
    layer="framework",
    title=N_("Gradient all-reduce is exposed in the training step"),
    source=f"DDP communication hooks: {DDP_HOOKS} ; torch-tb-profiler's communication view: {TB_PLUGIN}",
    priority="high",
    references=(DDP_HOOKS, TB_PLUGIN),
)
def exposed_communication(ctx: RuleContext):
    return _findings_for(ctx, "exposed-communication")


@rule(
    id="profile.launch_bound",
    layer="framework",
    title=N_("The GPU waits on kernel launches"),
    source=f"HolisticTraceAnalysis, CUDA kernel launch statistics: {HTA_LAUNCH} ; {TUNING_GUIDE}",
    priority="medium",
    references=(HTA_LAUNCH, TUNING_GUIDE),
)
def launch_bound(ctx: RuleContext):
    return _findings_for(ctx, "launch-bound")


@rule(
    id="profile.host_to_device_stall",
    layer="framework",
    title=N_("Host-to-device copies stall the step"),
    source=f"PyTorch tutorial on pin_memory and non_blocking copies: {PINNED}",
    priority="medium",
    references=(PINNED,),
)
def host_to_device_stall(ctx: RuleContext):
    return _findings_for(ctx, "host-to-device-stall")


@rule(
    id="profile.step_breakdown",
    layer="framework",
    title=N_("Where the profiled training step's time went"),
    source=f"torch.profiler step spans (ProfilerStep#N) and gpuwise's phase labels: {TUNING_GUIDE}",
    priority="low",
    references=(TUNING_GUIDE,),
)
def step_breakdown(ctx: RuleContext):
    out = []
    for p in ctx.profiles:
        r = p.result
        evidence = [_measured(p, "samples_per_s", round(r.samples_per_s, 2))] + [
            _measured(p, f"phases.{ph.name}.fraction", round(ph.fraction, 4)) for ph in r.phases
        ]
        out.append(
            ctx.finding(
                "info",
                evidence,
                msg(
                    "For reference: {workload} on {device}, batch {batch}, {step_ms} ms per step over {steps} "
                    "profiled steps. Open the trace {trace} in https://ui.perfetto.dev to see the steps themselves."
                ).format(
                    workload=r.workload,
                    device=r.device,
                    batch=r.batch_size,
                    step_ms=f"{r.step_ms:.1f}",
                    steps=r.active_steps,
                    trace=r.trace_path,
                ),
            )
        )
    return out or None
