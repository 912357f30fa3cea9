"""Why GPU clocks are held back (layer: hardware): each clock-event reason with its own meaning and
action, and whether it is one GPU's problem or the node's (every GPU shares the cause).

Sources: NVML nvmlClocksEventReasons (https://docs.nvidia.com/deploy/nvml-api/group__nvmlClocksEventReasons.html)
and the "Clocks Event Reasons" section of `nvidia-smi -q` (https://docs.nvidia.com/deploy/nvidia-smi/index.html).
SW Power Cap has its own rule (gpu.power_capped in gpu_health.py)."""

from __future__ import annotations

from gpuwise.advise.controls import CLOUD_HARDWARE
from gpuwise.advise.engine import RuleContext, rule
from gpuwise.advise.rules._evidence import gpu_label
from gpuwise.advise.rules._links import AZURE_NHC, DCGM_DIAG, NVML_CLOCK_EVENTS
from gpuwise.advise.rules._util import gpus
from gpuwise.facts.models import Gpu
from gpuwise.i18n import N_, joined, msg

NVIDIA_SMI_DOC = "https://docs.nvidia.com/deploy/nvidia-smi/index.html"

# reason -> (title, what it means); the status comes from thresholds.yaml throttle_fail_reasons. Meanings from NVML's nvmlClocksEventReasons documentation.
CAUSES: dict[str, tuple[str, str]] = {
    "hw_power_brake_slowdown": (
        N_("HW Power Brake Slowdown: an external power signal slows the GPUs"),
        N_(
            "HW Power Brake Slowdown is asserted by a signal from outside the GPU (the baseboard, "
            "power supply or BMC), not by the GPU's own temperature or power draw."
        ),
    ),
    "hw_slowdown": (
        N_("HW Slowdown: hardware cut the GPU clocks"),
        N_(
            "HW Slowdown cuts clocks by half or more; the hardware asserts it for its temperature limit, "
            "an external power brake or a power-supply alert."
        ),
    ),
    "hw_thermal_slowdown": (
        N_("HW Thermal Slowdown: a GPU reached its hardware temperature limit"),
        N_(
            "HW Thermal Slowdown means the GPU (or its memory) reached the hardware temperature limit "
            "and the hardware cut its clocks."
        ),
    ),
    "sw_thermal_slowdown": (
        N_("SW Thermal Slowdown: the driver lowers clocks to keep a GPU cool"),
        N_(
            "SW Thermal Slowdown means the driver lowered clocks because the GPU or its memory is near "
            "its maximum operating temperature."
        ),
    ),
}


# HW Slowdown is the umbrella nvidia-smi prints these two under: when one is active, it names the cause
SPECIFIC_HW = ("hw_power_brake_slowdown", "hw_thermal_slowdown")


def _state(g: Gpu) -> str:
    parts = []
    if g.temperature_c is not None:
        parts.append(f"{g.temperature_c:g} C")
    if g.power_draw_watts is not None:
        limit = f"/{g.power_limit_watts:g}" if g.power_limit_watts else ""
        parts.append(f"{g.power_draw_watts:g}{limit} W")
    if g.utilization_gpu_percent is not None:
        parts.append(f"util {g.utilization_gpu_percent:g}%")
    return joined(", ", parts)


def _action(reason: str, hit: list[tuple[int, Gpu]], n_gpus: int, ctx: RuleContext) -> str:
    cool = all(g.temperature_c is not None and g.temperature_c < ctx.t("throttle_cool_c") for _i, g in hit)
    low_power = all(
        g.power_draw_watts is not None
        and g.power_limit_watts
        and g.power_draw_watts < 0.5 * g.power_limit_watts
        for _i, g in hit
    )
    node = len(hit) == n_gpus and n_gpus > 1
    names = joined(", ", (gpu_label(g, i) for i, g in hit))
    parts = []
    if reason in ("hw_power_brake_slowdown", "hw_slowdown") and cool and low_power:
        parts.append(
            msg(
                "These GPUs are cool and draw little power, so heat and load are ruled out: the signal "
                "comes from the power side."
            )
        )
    if reason in ("hw_power_brake_slowdown", "hw_slowdown"):
        parts.append(
            msg(
                "All {n} GPUs share it: a node-level fault. Drain the node from the scheduler and check "
                "the power supplies and the BMC event log before it runs jobs again."
            ).format(n=n_gpus)
            if node
            else msg(
                "Only {names} show it: look at that GPU's board, slot and power cables (reseat, swap "
                "with a neighbour); report it to the hardware vendor if it stays."
            ).format(names=names)
        )
    elif reason in ("hw_thermal_slowdown", "sw_thermal_slowdown"):
        if cool:
            parts.append(
                msg(
                    "The recorded GPU temperature is low, so read the memory temperature too "
                    "(`nvidia-smi -q -d TEMPERATURE`) and re-check under load."
                )
            )
        parts.append(
            msg(
                "All {n} GPUs share it: check the node's cooling (inlet temperature, fans, airflow in "
                "the rack)."
            ).format(n=n_gpus)
            if node
            else msg(
                "Only {names} show it: check that GPU's cooling (its fan or heatsink, blocked airflow at "
                "its position)."
            ).format(names=names)
        )
    return joined(" ", parts)


@rule(
    id="gpu.throttle_active",
    layer="hardware",
    title=N_("GPU clocks are held back (thermal, power or hardware slowdown)"),
    source=f"NVML clocks event reasons (nvmlClocksEventReasons), {NVML_CLOCK_EVENTS}; nvidia-smi -q 'Clocks Event Reasons', {NVIDIA_SMI_DOC}; DCGM diagnostics, {DCGM_DIAG}; Azure HPC health checks check_gpu_clock_throttling, {AZURE_NHC}",
    priority={"cloud": "medium", "onprem": "high"},
    controllable=CLOUD_HARDWARE,
    references=(NVML_CLOCK_EVENTS,),
)
def throttle_active(ctx: RuleContext):
    bad, fail = ctx.t("throttle_bad_reasons"), ctx.t("throttle_fail_reasons")
    all_gpus = gpus(ctx.facts)
    findings = []
    for reason, (title, meaning) in CAUSES.items():
        if reason not in bad:
            continue
        hit = [
            (i, g)
            for i, (_p, g) in enumerate(all_gpus)
            if reason in (g.clock_event_reasons or [])
            and not (reason == "hw_slowdown" and set(g.clock_event_reasons or []) & set(SPECIFIC_HW))
        ]
        if not hit:
            continue
        evidence = [
            (f"gpus[{i}].clock_event_reasons", f"{gpu_label(g, i)}: {reason}; {_state(g)}".rstrip("; "))
            for i, g in hit
        ]
        findings.append(
            ctx.finding(
                "fail" if reason in fail else "warn",
                evidence,
                msg(meaning) + " " + _action(reason, hit, len(all_gpus), ctx),
                title=msg(title),
                commands=[
                    "nvidia-smi -q -d PERFORMANCE,POWER,TEMPERATURE",
                    "sudo ipmitool sel list | tail -n 30   # BMC event log: power-supply and power-brake events",
                    "dcgmi diag -r 2",
                ],
            )
        )
    return findings or None
