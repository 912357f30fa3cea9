"""Findings from a `gpuwise watch` session: the tuning signals that were on for a real share of the run.

export/watch.py measures (how long each signal was on, per GPU); this module judges. A signal on for
at least `summary_min_fraction` of the time it could be judged becomes one finding per signal, naming
the GPUs and the share of time, with the advice and source from export/data/signals.yaml.
"""

from __future__ import annotations

from gpuwise.advise.finding import Evidence, Finding, Layer, Priority, Recommendation, Status
from gpuwise.export.watch import WatchSummary
from gpuwise.i18n import _

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
        where = ", ".join(f"GPU {g.index} {frac:.0%}" for g, frac in hits)
        findings.append(
            Finding(
                id=f"watch-{sid.replace('_', '-')}",
                layer=layer,
                priority=priority,
                status=status,
                title=_("{title} ({where} of the watched time)").format(title=_(info.title), where=where),
                evidence=[
                    Evidence(
                        kind="measurement",
                        path=f"watch.gpus[{g.index}].signal_fraction.{sid}",
                        value=round(frac, 3),
                    )
                    for g, frac in hits
                ],
                recommendation=Recommendation(text=_(info.advice)),  # signals.yaml text, see babel.cfg
                source=info.source,
            )
        )
    return sorted(findings, key=Finding.sort_key)
