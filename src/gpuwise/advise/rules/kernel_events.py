"""Kernel-log events (the captured journal / dmesg / syslog, or `doctor --evidence FILE`): link flaps, PCIe AER
errors, OOM kills, hung tasks and machine checks. Each finding says how often and how recently, recent
repeated events first and old one-off ones last."""

from __future__ import annotations

from gpuwise.advise.controls import CLOUD_HARDWARE
from gpuwise.advise.engine import RuleContext, rule
from gpuwise.advise.rules._evidence import Group, gpu_name, groups, ranked, when
from gpuwise.advise.rules._links import (
    AZURE_NHC,
    KERNEL_AER,
    KERNEL_EDAC,
    KERNEL_HUNG_TASK,
    KERNEL_MCE,
    KERNEL_OOM,
    MLE_NETWORK,
)
from gpuwise.i18n import N_, joined, msg


def _recent(ctx: RuleContext, g: Group) -> bool:
    ago = g.ago_s()
    return ago is None or ago <= ctx.t("kernel_event_recent_s")


def _path(g: Group, what: str) -> str:
    return f"evidence.kernel_logs[{g.log.source}].{what}[{g.device}]"


@rule(
    id="kernel.link_flaps",
    layer="network",
    title=N_("Network links went down and up"),
    source=f"link state lines of the NIC drivers in the kernel log; IB link-flap check of the Azure HPC node "
    f"health checks, {AZURE_NHC}; ml-engineering network chapter, {MLE_NETWORK}",
    priority="high",
    controllable=CLOUD_HARDWARE,
    references=(AZURE_NHC, MLE_NETWORK),
)
def link_flaps(ctx: RuleContext):
    found = groups(ctx.facts.evidence.kernel_logs, ("link_down", "link_up"))
    if not found:
        return None
    need, window = ctx.t("link_flap_min_events"), ctx.t("link_flap_window_s")
    found = ranked(found, ctx.t("kernel_event_recent_s"), need)
    flapping = [g for g in found if g.max_in_window(window) >= need and _recent(ctx, g)]
    evidence = [(_path(g, "link_events"), when(g)) for g in found[:8]]
    if not flapping:
        return ctx.finding(
            "info",
            evidence,
            msg(
                "A link went down or up, but not repeatedly: a cable change, a switch reboot or a restart. "
                "Nothing to do unless it coincides with a failed job."
            ),
            priority="low",
        )
    names = joined(", ", (g.device for g in flapping))
    return ctx.finding(
        "warn",
        evidence,
        msg(
            "{names} went down and up {need} or more times within {window} s: a flapping link (cable, "
            "transceiver or switch port). Every flap stalls NCCL and can time a job out. Check the port's error "
            "counters and replace the cable or optic if they grow."
        ).format(names=names, need=need, window=window),
        commands=[
            "ip -s link show",
            "ibstat",
            "sudo mlxlink -d <mlx5_N> -m -c",
            "sudo dmesg -T | grep -iE 'link (is )?(up|down)|carrier'",
        ],
    )


@rule(
    id="kernel.pcie_aer",
    layer="hardware",
    title=N_("PCIe errors (AER) in the kernel log"),
    source=f"Linux PCI Express Advanced Error Reporting HOWTO (corrected, non-fatal and fatal errors), {KERNEL_AER}",
    priority="high",
    controllable=CLOUD_HARDWARE,
    references=(KERNEL_AER,),
)
def pcie_aer(ctx: RuleContext):
    found = groups(ctx.facts.evidence.kernel_logs, ("aer_corrected", "aer_nonfatal", "aer_fatal"))
    if not found:
        return None
    repeat = ctx.t("aer_corrected_repeat")
    found = ranked(found, ctx.t("kernel_event_recent_s"), repeat)

    def sev(g: Group) -> str:
        if "aer_fatal" in g.kinds:
            return "fail"
        if "aer_nonfatal" in g.kinds or (g.count >= repeat and _recent(ctx, g)):
            return "warn"
        return "info"

    order = ("fail", "warn", "info")
    found.sort(key=lambda g: order.index(sev(g)))
    worst = sev(found[0])
    evidence = []
    for g in found[:8]:
        kinds = joined(", ", sorted(k.removeprefix("aer_") for k in g.kinds))
        gpu = gpu_name(ctx.facts, bus=g.device) if "nvidia" in g.events[-1].detail else g.device
        evidence.append(
            (
                _path(g, "pcie_aer"),
                msg("{device}: {kinds}, {when}; {detail}").format(
                    device=gpu, kinds=kinds, when=when(g), detail=g.events[-1].detail
                ),
            )
        )
    texts = {
        "fail": msg(
            "An uncorrected fatal PCIe error: the link or device had to be reset and whatever used it (a GPU, "
            "a NIC) failed. Drain the node; reseat or replace the device and check the slot and riser."
        ),
        "warn": msg(
            "PCIe errors repeat on one device (or are uncorrected): the link is marginal. Expect GPU or NIC "
            "resets, Xid 79 and slow transfers; check the slot, riser and cabling, and the link width and speed."
        ),
        "info": msg(
            "A few corrected PCIe errors: the hardware recovered each one. Nothing to do unless they repeat."
        ),
    }
    return ctx.finding(
        worst,
        evidence,
        texts[worst],
        commands=[
            "sudo lspci -vvv -s <device> | grep -E 'LnkSta|DevSta|UESta|CESta'",
            "sudo dmesg -T | grep -i aer",
        ],
        priority="low" if worst == "info" else None,
    )


@rule(
    id="kernel.oom_kills",
    layer="kernel",
    title=N_("The kernel killed processes for lack of memory"),
    source=f"Linux memory management concepts, 'OOM killer', {KERNEL_OOM}",
    priority="high",
    references=(KERNEL_OOM,),
)
def oom_kills(ctx: RuleContext):
    found = groups(ctx.facts.evidence.kernel_logs, ("oom_kill",))
    if not found:
        return None
    prefixes = tuple(ctx.t("training_process_prefixes"))
    found = ranked(found, ctx.t("kernel_event_recent_s"), 1)
    training = [g for g in found if g.device.lower().startswith(prefixes)]
    evidence = [
        (_path(g, "oom_kills"), f"{g.device}: {when(g)}; {g.events[-1].detail}")
        for g in (training + [g for g in found if g not in training])[:8]
    ]
    if not training:
        return ctx.finding(
            "info",
            evidence,
            msg("The OOM killer stopped processes, none of them a training process."),
            priority="low",
        )
    return ctx.finding(
        "warn",
        evidence,
        msg(
            "The kernel killed {names} for lack of host memory: the job died without a Python error. Lower "
            "DataLoader workers or prefetch, pin less memory, or run on a node with more RAM; in a container, "
            "raise its memory limit."
        ).format(names=joined(", ", sorted({g.device for g in training}))),
        commands=["sudo dmesg -T | grep -iE 'killed process|oom'", "free -g"],
    )


@rule(
    id="kernel.hung_tasks",
    layer="kernel",
    title=N_("Tasks hung in the kernel"),
    source=f"Linux kernel sysctl, hung_task_timeout_secs ('task ... blocked for more than N seconds'), {KERNEL_HUNG_TASK}",
    priority="medium",
    references=(KERNEL_HUNG_TASK,),
)
def hung_tasks(ctx: RuleContext):
    found = groups(ctx.facts.evidence.kernel_logs, ("hung_task",))
    if not found:
        return None
    found = ranked(found, ctx.t("kernel_event_recent_s"), 2)
    evidence = [(_path(g, "hung_tasks"), f"{g.device}: {when(g)}; {g.events[-1].detail}") for g in found[:8]]
    in_driver = any("nvidia" in e.detail for g in found for e in g.events)
    text = (
        msg(
            "A task hung inside the NVIDIA driver: the GPU or driver stopped answering. Look for Xid lines at "
            "the same time; reset the GPU or reboot, and update the driver if it repeats."
        )
        if in_driver
        else msg(
            "Tasks waited minutes in the kernel (storage, network file systems or a driver): jobs stall while "
            "it happens. Find the resource in the stack trace below each line."
        )
    )
    return ctx.finding("warn", evidence, text, commands=["sudo dmesg -T | grep -A20 'blocked for more than'"])


@rule(
    id="kernel.machine_checks",
    layer="hardware",
    title=N_("Machine check (CPU / memory) errors"),
    source=f"Linux x86 machine check documentation, {KERNEL_MCE}; EDAC (corrected / uncorrected memory errors), "
    f"{KERNEL_EDAC}",
    priority="high",
    controllable=CLOUD_HARDWARE,
    references=(KERNEL_MCE, KERNEL_EDAC),
)
def machine_checks(ctx: RuleContext):
    found = groups(ctx.facts.evidence.kernel_logs, ("mce", "mce_corrected", "mce_uncorrected"))
    if not found:
        return None
    found = ranked(found, ctx.t("kernel_event_recent_s"), 2)
    ue = [g for g in found if "mce_uncorrected" in g.kinds]
    ce = [g for g in found if "mce_corrected" in g.kinds]
    evidence = [
        (_path(g, "machine_checks"), f"{g.device}: {when(g)}; {g.events[-1].detail}")
        for g in (ue + ce + found)[:8]
    ]
    evidence = list(dict.fromkeys(evidence))
    if ue:
        return ctx.finding(
            "fail",
            evidence,
            msg(
                "An uncorrected (UE) memory or CPU error: data was lost and the process using it (or the node) "
                "crashed. Drain the node and have the DIMM named by EDAC replaced."
            ),
            commands=["sudo ras-mc-ctl --errors", "sudo dmesg -T | grep -iE 'mce|edac'"],
        )
    if ce:
        n = sum(g.count for g in ce)
        repeat = ctx.t("mce_corrected_repeat")
        return ctx.finding(
            "warn" if n >= repeat else "info",
            evidence,
            msg(
                "{n} corrected (CE) memory errors: ECC fixed them. A count that keeps growing on one DIMM predicts "
                "an uncorrected error; plan to replace it if it does."
            ).format(n=n),
            commands=["sudo ras-mc-ctl --summary", "grep . /sys/devices/system/edac/mc/mc*/ce_count"],
            priority=None if n >= repeat else "low",
        )
    return ctx.finding(
        "warn",
        evidence,
        msg(
            "The CPU reported machine check events, and nothing in the log says what they were. Install "
            "rasdaemon or mcelog to decode them; until then treat the node as suspect."
        ),
        commands=["sudo ras-mc-ctl --errors", "sudo journalctl -k | grep -i mce"],
    )
