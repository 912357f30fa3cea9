"""What `gpuwise watch` judges: the signals on in each live sample, and the findings of a session.

export/signals.py evaluates each signal against its sourced threshold (export/data/signals.yaml) and
export/watch.py measures how long each was on, per GPU; this module judges. In a live frame, each GPU's
signals that are on and its active clock event reasons (`frame_signals`, which the view only formats).
Over a session, a signal on for at least `summary_min_fraction` of the time it could be judged becomes one
finding per signal, naming the GPUs and the share of time, with the advice and source from signals.yaml.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuwise.advise.finding import Evidence, Finding, Layer, Priority, Recommendation, Status
from gpuwise.export.sample import GpuSample, Snapshot
from gpuwise.export.signals import SignalConfig, evaluate
from gpuwise.export.watch import WatchSummary
from gpuwise.facts.gpu_fields import CLOCK_EVENT_REASON_BITS
from gpuwise.i18n import joined, msg

# An idle GPU's clocks drop by design: not a reason to show beside the signals.
NOT_A_SLOWDOWN = frozenset({"gpu_idle"})

# signal -> (layer, priority, status): how much each one costs a training run
_JUDGEMENT: dict[str, tuple[Layer, Priority, Status]] = {
    "memory_errors": ("hardware", "high", "fail"),
    "data_starved": ("framework", "high", "warn"),
    "idle_while_held": ("framework", "medium", "warn"),
    "thermal_limited": ("hardware", "medium", "warn"),
    "pcie_degraded": ("hardware", "medium", "warn"),
    # a compute-bound job at full load often sits at the power cap by design: worth knowing, not a fault
    "power_limited": ("hardware", "low", "info"),
}


@dataclass(frozen=True)
class GpuSignals:
    """One GPU in one sample: the tuning signals that are on (signals.yaml order) and the NVML clock event
    reasons that are active (an idle GPU's left out)."""

    on: tuple[str, ...]
    clock_reasons: tuple[str, ...]


def gpu_signals(gpu: GpuSample, config: SignalConfig) -> GpuSignals:
    mask = gpu.clock_event_mask or 0
    return GpuSignals(
        on=tuple(sid for sid, value in evaluate(gpu, config).items() if value),
        clock_reasons=tuple(
            name for bit, name in CLOCK_EVENT_REASON_BITS.items() if mask & bit and name not in NOT_A_SLOWDOWN
        ),
    )


def frame_signals(frame: Snapshot, config: SignalConfig) -> list[GpuSignals]:
    """Each GPU of the frame, in the frame's order."""
    return [gpu_signals(g, config) for g in frame.gpus]


def watch_findings(summary: WatchSummary) -> list[Finding]:
    threshold = summary.thresholds["summary_min_fraction"]
    findings = []
    for sid, info in summary.signals.items():
        hits = [
            (g, frac) for g in summary.gpus if (frac := g.fraction(sid)) is not None and frac >= threshold
        ]
        if not hits:
            continue
        layer, priority, status = _JUDGEMENT[sid]
        where = joined(", ", (f"GPU {g.index} {frac:.0%}" for g, frac in hits))
        findings.append(
            Finding(
                id=f"watch-{sid.replace('_', '-')}",
                layer=layer,
                priority=priority,
                status=status,
                title=msg("{title} ({where} of the watched time)").format(title=msg(info.title), where=where),
                evidence=[
                    Evidence(
                        kind="measurement",
                        path=f"watch.gpus[{g.index}].signal_fraction.{sid}",
                        value=round(frac, 3),
                    )
                    for g, frac in hits
                ],
                recommendation=Recommendation(text=msg(info.advice)),  # signals.yaml text, see babel.cfg
                source=info.source,
            )
        )
    return sorted(findings, key=Finding.sort_key)
