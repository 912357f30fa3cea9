"""Stability rules (layer: isolation), from `doctor --stability FILE` (a `gpuwise stability` result).

A cloud instance may share its host with noisy neighbours; an own node is isolated. A layer that the
stability run judged variable or unstable becomes a finding with the measured evidence (its cv and
interval, each slow window and the context signal that moved with it) and what to do about the signal
that moved: on the cloud another instance or host, a dedicated host, a placement group; on own metal
the isolation settings (CPU pinning, cgroup limits, other jobs on the node).
"""

from __future__ import annotations

from gpuwise.advise.engine import RuleContext, rule
from gpuwise.advise.finding import Evidence
from gpuwise.advise.rules._links import AWS_PLACEMENT, KERNEL_CGROUP_V2, NVML_CLOCK_EVENTS
from gpuwise.i18n import N_, msg

KERNEL_SCHED_STATS = "https://docs.kernel.org/scheduler/sched-stats.html"
PROC_STAT = "https://man7.org/linux/man-pages/man5/proc_pid_stat.5.html"

# context signal -> (cloud advice, own-metal advice, commands)
ADVICE = {
    "steal_pct": (
        N_(
            "The hypervisor gave this instance's vCPUs to other tenants (steal time rose with the slowdown): "
            "move to another instance or host, or use a dedicated host or a size that fills the host."
        ),
        N_(
            "Steal time on own metal means this node is itself a VM sharing its host: give it dedicated "
            "cores (CPU pinning in the hypervisor) or run on the bare host."
        ),
        ["vmstat 1   # the 'st' column", "mpstat -P ALL 1"],
    ),
    "throttled_ms_per_s": (
        N_(
            "The container's CPU quota ran out (cgroup throttled time rose with the slowdown): raise the "
            "CPU limit of the pod or container, or request whole cores."
        ),
        N_(
            "The cgroup's CPU quota ran out (throttled time rose with the slowdown): raise cpu.max (or the "
            "container's --cpus), or drop the limit for training jobs."
        ),
        [
            "cat /sys/fs/cgroup/$(cut -d: -f3 /proc/self/cgroup | tail -1)/cpu.stat",
            "docker update --cpus N CONTAINER",
        ],
    ),
    "runq_wait_ms_per_s": (
        N_(
            "Other processes took the CPUs gpuwise ran on (run-queue wait rose with the slowdown): find them, "
            "and pin the training job to its own cores."
        ),
        N_(
            "Other processes took the CPUs gpuwise ran on (run-queue wait rose with the slowdown): stop other "
            "jobs on the node, pin training to its cores (taskset/numactl, a cpuset cgroup) or isolate them."
        ),
        ["pidstat -u 1   # who uses the CPUs", "taskset -c 0-31 python train.py"],
    ),
    "nonvol_cs_per_s": (
        N_(
            "Other processes preempted gpuwise (involuntary context switches rose with the slowdown): find "
            "them and pin the training job to its own cores."
        ),
        N_(
            "Other processes preempted gpuwise (involuntary context switches rose with the slowdown): stop "
            "other jobs on the node and pin training to its cores."
        ),
        ["pidstat -w 1"],
    ),
    "gpu_sm_mhz": (
        N_(
            "The GPU clock dropped with the slowdown: check the clock-event reasons (power or thermal "
            "limit); on the cloud, report the host or move to another one."
        ),
        N_(
            "The GPU clock dropped with the slowdown: check the clock-event reasons (power cap, thermal "
            "slowdown), the cooling and the power supply."
        ),
        [
            "nvidia-smi -q -d PERFORMANCE",
            "nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv -l 1",
        ],
    ),
    "tcp_retrans_per_s": (
        N_(
            "TCP retransmits rose with the slowdown (a congested or shared path): put the nodes in a "
            "placement group (cluster placement) or move to another host."
        ),
        N_(
            "TCP retransmits rose with the slowdown: check the switch ports, cabling and other traffic on "
            "the same links."
        ),
        ["nstat -az TcpRetransSegs", "ip -s link"],
    ),
}
GENERIC = (
    N_("No context signal moved with it: on the cloud this is what a noisy neighbour looks like from "
       "inside; try another instance or host, a dedicated host, or (for the network) a placement group, "
       "and compare with `gpuwise compare A.json B.json`."),
    N_("No context signal moved with it: check the node's isolation settings (other jobs, CPU pinning, "
       "cgroup limits, IRQ affinity) and run it again to see whether the windows come back."),
    ["gpuwise stability --for 1h --save stability.json"],
)  # fmt: skip


def _evidence(report, res) -> list[Evidence]:
    s = res.summary
    name = res.info.name
    out = [
        Evidence(kind="measurement", path=f"stability:{name}.verdict", value=res.verdict),
        Evidence(kind="measurement", path=f"stability:{name}.robust_cv", value=round(s.robust_cv or 0, 4)),
        Evidence(kind="measurement", path=f"stability:{name}.cv", value=round(s.cv or 0, 4)),
        Evidence(kind="measurement", path=f"stability:{name}.samples", value=s.n),
    ]
    if s.cv_ci:
        out.append(
            Evidence(kind="measurement", path=f"stability:{name}.cv_ci", value=[round(x, 4) for x in s.cv_ci])
        )
    for i, w in enumerate(res.windows[:3]):
        where = f"stability:{name}.windows[{i}]"
        out.append(
            Evidence(
                kind="measurement",
                path=where,
                value=f"{w.start_s:.0f}-{w.end_s:.0f} s, {w.change:.0%} worse, with {w.cause or 'no signal'}",
            )
        )
    return out


@rule(
    id="isolation.stability",
    layer="isolation",
    title=N_("A layer's performance varies over time on this machine"),
    source=(
        "gpuwise stability: repeated probes, PELT change points (Killick et al. 2012, "
        "https://doi.org/10.1080/01621459.2012.737745) and the context signal that moved with each window"
    ),
    priority={"cloud": "high", "onprem": "medium"},
    references=(AWS_PLACEMENT, KERNEL_CGROUP_V2, KERNEL_SCHED_STATS, PROC_STAT, NVML_CLOCK_EVENTS),
)
def stability_layers(ctx: RuleContext):
    report = ctx.stability
    if report is None:
        return None
    status_of, min_n = ctx.t("stability_verdict_status"), ctx.t("stability_min_samples")
    cloud = ctx.env == "cloud"
    findings = []
    for lv in report.layers:
        res = report.result(lv.metric)
        if res is None or res.summary.n < min_n:
            continue
        ev = _evidence(report, res)
        if lv.verdict not in status_of:
            findings.append(
                ctx.passed(
                    ev, msg("{layer}: stable over {n} samples").format(layer=lv.layer, n=res.summary.n)
                )
            )
            continue
        causes = [w.cause for w in res.windows if w.cause]
        cloud_text, own_text, commands = ADVICE.get(causes[0], GENERIC) if causes else GENERIC
        text = msg("{layer} is {verdict} ({reason}). ").format(
            layer=lv.layer, verdict=lv.verdict, reason=lv.reason
        ) + msg(cloud_text if cloud else own_text)
        findings.append(
            ctx.finding(
                status_of[lv.verdict],
                ev,
                text,
                commands=commands,
                title=msg("{layer} varies over time: {verdict}").format(layer=lv.layer, verdict=lv.verdict),
            )
        )
    return findings
