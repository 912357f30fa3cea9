"""NVIDIA Fabric Manager and NVSwitch (layer: hardware): errors in the Fabric Manager log and NVSwitch SXid
lines in the kernel log, and whether the service started. Meanings and actions: NVIDIA's Fabric Manager user
guide (chapters 'Error Handling' and 'NVSwitch and GPU error handling')."""

from __future__ import annotations

from collections import Counter

from gpuwise.advise.controls import CLOUD_HARDWARE
from gpuwise.advise.engine import RuleContext, rule
from gpuwise.advise.rules._links import FABRIC_MANAGER
from gpuwise.i18n import N_, msg

_FATAL = ("nvswitch_fatal", "training_failed", "degraded")


@rule(
    id="fabric.nvswitch_errors",
    layer="hardware",
    title=N_("NVSwitch / NVLink fabric errors"),
    source=f"NVIDIA Fabric Manager user guide, 'Error Handling' (NVSwitch fatal and non-fatal errors, NVLink "
    f"training failures, GPU degraded mode), {FABRIC_MANAGER}",
    priority="high",
    controllable=CLOUD_HARDWARE,
    references=(FABRIC_MANAGER,),
)
def nvswitch_errors(ctx: RuleContext):
    ev = ctx.facts.evidence
    rows: Counter[tuple[str, str]] = Counter()
    last: dict[tuple[str, str], str] = {}
    for log in ev.fabric_manager or []:
        for e in log.events:
            if e.kind not in (*_FATAL, "nvswitch_nonfatal"):
                continue
            if e.error is not None:
                what = msg(
                    "{kind} error {error} on NVSwitch {switch} (physical id {phys}) port {port}"
                ).format(
                    kind=msg("fatal") if e.kind == "nvswitch_fatal" else msg("non-fatal"),
                    error=e.error,
                    switch=e.switch or "?",
                    phys="?" if e.physical_id is None else e.physical_id,
                    port="?" if e.port is None else e.port,
                )
            else:
                what = e.line[:200]
            key = ("fail" if e.kind in _FATAL else "warn", what)
            rows[key] += 1
            last[key] = f"evidence.fabric_manager[{log.source}]" + (f" {e.stamp}" if e.stamp else "")
    for log in ev.kernel_logs or []:
        for e in log.events:
            if e.kind in ("sxid_fatal", "sxid_nonfatal"):
                key = ("fail" if e.kind == "sxid_fatal" else "warn", f"{e.detail} ({e.device})")
                rows[key] += 1
                last[key] = f"evidence.kernel_logs[{log.source}]" + (f" {e.stamp}" if e.stamp else "")
    if not rows:
        if ev.fabric_manager:
            return ctx.passed(
                [
                    (f"evidence.fabric_manager[{log.source}].events", len(log.events))
                    for log in ev.fabric_manager
                ],
                msg("no NVSwitch errors in the Fabric Manager log"),
            )
        return None
    ordered = sorted(rows.items(), key=lambda kv: (kv[0][0] != "fail", -kv[1]))
    worst = ordered[0][0][0]
    evidence = [(last[key], msg("{n}x {what}").format(n=n, what=key[1])) for key, n in ordered[:10]]
    text = (
        msg(
            "A fatal NVSwitch error or NVLink training failure stops NVLink traffic of the GPUs behind that "
            "switch port: jobs on them hang or fail. Drain the node, reset the GPUs and NVSwitches (or reboot) "
            "and check that Fabric Manager starts cleanly; if the same switch and port fail again, the baseboard "
            "or cable needs service."
        )
        if worst == "fail"
        else msg(
            "Non-fatal NVSwitch errors are corrected or contained by the fabric; a few are harmless, but the same "
            "switch and port repeating point at a marginal link. Watch the count and plan a reset and a service "
            "check if it grows."
        )
    )
    return ctx.finding(
        worst,
        evidence,
        text,
        commands=[
            "sudo grep -E 'NVSwitch (non-)?fatal error' /var/log/fabricmanager.log | tail",
            "sudo dmesg -T | grep -i sxid",
            "nvidia-smi nvlink -s",
        ],
    )


@rule(
    id="fabric.manager_start",
    layer="hardware",
    title=N_("Fabric Manager service"),
    source=f"NVIDIA Fabric Manager user guide, 'Starting Fabric Manager' and restart requirements, {FABRIC_MANAGER}",
    priority="high",
    controllable=CLOUD_HARDWARE,
    references=(FABRIC_MANAGER,),
)
def manager_start(ctx: RuleContext):
    logs = ctx.facts.evidence.fabric_manager or []
    events = [(log.source, e) for log in logs for e in log.events]
    if not events:
        return None
    none_found = [(s, e) for s, e in events if e.kind == "no_nvswitch"]
    if none_found:
        source, e = none_found[-1]
        return ctx.finding(
            "info",
            [(f"evidence.fabric_manager[{source}]", e.line[:200])],
            msg(
                "Fabric Manager exited because the driver reports no NVSwitch (NV_WARN_NOTHING_TO_DO). It is "
                "needed only on NVSwitch systems (HGX/DGX baseboards); on PCIe GPUs, with or without NVLink "
                "bridges, disable the service instead of restarting it."
            ),
            commands=["sudo systemctl disable --now nvidia-fabricmanager"],
            priority="low",
        )
    failed = [(s, e) for s, e in events if e.kind == "fm_failed"]
    if failed:
        source, e = failed[-1]
        return ctx.finding(
            "fail",
            [(f"evidence.fabric_manager[{source}]", e.line[:200])],
            msg(
                "Fabric Manager failed to start. On an NVSwitch system CUDA cannot use the GPUs until it runs: "
                "install the nvidia-fabricmanager package of exactly the driver's version and read its log for "
                "the reason."
            ),
            commands=["systemctl status nvidia-fabricmanager", "sudo tail -50 /var/log/fabricmanager.log"],
        )
    starts = [(s, e) for s, e in events if e.kind == "fm_start"]
    times = sorted(e.t for _s, e in starts if e.t is not None)
    window = ctx.t("fm_restart_window_s")
    close = sum(1 for a, b in zip(times, times[1:], strict=False) if b - a <= window)
    if close:
        return ctx.finding(
            "warn",
            [(f"evidence.fabric_manager[{s}]", e.stamp or e.line[:120]) for s, e in starts[-4:]],
            msg(
                "Fabric Manager was started {n} times, {close} of them within {window} s of the previous start: "
                "a restart, not a reboot. After a restart the GPUs need a reset before NVLink multicast (NCCL "
                "NVLS) works again; reset them or reboot the node."
            ).format(n=len(starts), close=close, window=window),
            commands=["sudo nvidia-smi -r", "journalctl -u nvidia-fabricmanager --no-pager | tail -50"],
        )
    return None
