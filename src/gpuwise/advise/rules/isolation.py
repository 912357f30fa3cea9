"""Isolation rules (layer: isolation): containers, cgroup limits, environment detection.
Sources: REFERENCE §5 '/dev/shm and memlock (containers)', §6 #6, §1 (cgroup isolation, on-prem medium)."""

from __future__ import annotations

from gpuwise.advise.controls import CONTAINER
from gpuwise.advise.engine import RuleContext, rule
from gpuwise.advise.rules._links import DOCKER_RUN, KERNEL_CGROUP_V2, NCCL_TROUBLESHOOTING, TORCH_TUNING
from gpuwise.advise.rules._util import in_container, total_gpu_memory_bytes
from gpuwise.i18n import N_, msg


@rule(
    id="isolation.container_shm",
    layer="isolation",
    title=N_("Container /dev/shm is too small"),
    source=f"NCCL Troubleshooting, 'Sharing Data' ({NCCL_TROUBLESHOOTING}); Docker's default /dev/shm is 64 MB (docker run --shm-size, {DOCKER_RUN})",
    priority="high",
    controllable=CONTAINER,
    references=(NCCL_TROUBLESHOOTING,),
)
def container_shm(ctx: RuleContext):
    shm = ctx.facts.storage.shm_bytes
    if not in_container(ctx.facts) or shm is None:
        return None
    ev = [("platform.container", ctx.facts.platform.container), ("storage.shm_bytes", shm)]
    if shm >= ctx.t("shm_min_bytes"):
        return ctx.passed(ev, msg("container /dev/shm is at least 1 GB"))
    return ctx.finding(
        "fail",
        ev,
        msg(
            "Multi-worker DataLoaders and NCCL's shared-memory transport fail with 'Bus error' in a "
            "small /dev/shm."
        ),
        commands=[
            "docker run --ipc=host ...   # or --shm-size=16g",
            "kubernetes: mount an emptyDir {medium: Memory} at /dev/shm",
        ],
    )


@rule(
    id="isolation.cgroup_cpu_limit",
    layer="isolation",
    title=N_("A cgroup CPU limit is below the CPUs visible"),
    source=f"Linux cgroup v2, 'cpu.max' ({KERNEL_CGROUP_V2}); DataLoader workers need real CPU time (PyTorch Performance Tuning Guide, {TORCH_TUNING})",
    priority="medium",
    controllable=CONTAINER,
)
def cgroup_cpu(ctx: RuleContext):
    limit, threads = ctx.facts.platform.cgroup_cpu_limit, ctx.facts.cpu.threads
    if limit is None or not threads or limit >= threads:
        return None
    return ctx.finding(
        "warn",
        [("platform.cgroup_cpu_limit", limit), ("cpu.threads", threads)],
        msg(
            "Processes here may use only {limit:g} of {threads} CPUs. Tools that size thread pools "
            "from the CPU count (DataLoader num_workers, OMP/MKL threads) oversubscribe and get "
            "throttled. Raise the limit or set the thread counts to the limit."
        ).format(limit=limit, threads=threads),
        env={"OMP_NUM_THREADS": str(max(1, int(limit)))},
    )


@rule(
    id="isolation.cgroup_memory_limit",
    layer="isolation",
    title=N_("A cgroup memory limit is below host RAM"),
    source=f"Linux cgroup v2, 'memory.max': above it the OOM killer ends the job (exit 137), {KERNEL_CGROUP_V2}",
    priority="medium",
    controllable=CONTAINER,
)
def cgroup_memory(ctx: RuleContext):
    limit, ram = ctx.facts.platform.cgroup_memory_limit_bytes, ctx.facts.memory.total_bytes
    if limit is None or not ram or limit >= ram:
        return None
    gpu_mem = total_gpu_memory_bytes(ctx.facts)
    ev = [("platform.cgroup_memory_limit_bytes", limit), ("memory.total_bytes", ram)]
    small = gpu_mem and limit < gpu_mem
    if gpu_mem:
        ev.append(("gpus[*].memory_total_bytes (sum)", gpu_mem))
    return ctx.finding(
        "warn" if small else "info",
        ev,
        msg(
            "The container may use less memory than the host has; checkpoint loading and DataLoader "
            "workers count against it and the kernel kills the job (exit 137) at the limit."
        ),
        commands=["docker run --memory=<size> ...   # or raise the Kubernetes memory limit"],
    )


@rule(
    id="isolation.environment_unknown",
    layer="isolation",
    title=N_("Environment unknown: priorities assume either kind"),
    source="heuristic: what can be changed, and how urgent a fix is, differ between a cloud instance and your own hardware",
    priority="low",
)
def environment(ctx: RuleContext):
    pf = ctx.facts.platform
    ev = [
        ("platform.environment", pf.environment),
        ("platform.environment_reason", pf.environment_reason),
        ("doctor --env", ctx.env),
    ]
    if pf.cloud_provider:
        ev.append(("platform.cloud_provider", pf.cloud_provider))
    if pf.instance_type:
        ev.append(("platform.instance_type", pf.instance_type))
    if ctx.env != "unknown":
        return None  # the report header states the kind and its reason
    return ctx.finding(
        "info",
        ev,
        msg(
            "gpuwise could not tell whether this is a cloud VM or your own hardware, so each finding "
            "gives both answers to 'can I change it'. Pass --env cloud or --env onprem."
        ),
    )
