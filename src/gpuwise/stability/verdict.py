"""From samples to results: each metric's summary, slow windows with their context, and a verdict per
metric and per layer. Thresholds: stability/data/stability.yaml (each with its source or assumption)."""

from __future__ import annotations

from functools import lru_cache

from gpuwise.i18n import joined, msg
from gpuwise.stability.changepoints import context_moves, slow_windows
from gpuwise.stability.model import (
    VERDICT_ORDER,
    LayerVerdict,
    MetricInfo,
    MetricResult,
    StabilityReport,
)
from gpuwise.stability.stats import summarize
from gpuwise.thresholds import Threshold, load_thresholds

MIN_SAMPLES = 5  # fewer samples than this cannot say whether a metric is stable


@lru_cache(maxsize=1)
def settings() -> dict[str, Threshold]:
    """stability.yaml's rows (value, source), by name."""
    return load_thresholds("gpuwise.stability", "data/stability.yaml", numbers=False)


def setting(name: str):
    return settings()[name].value


def judge_metric(report: StabilityReport, info: MetricInfo) -> MetricResult:
    values = {name: setting(name) for name in settings()}
    pts = [
        (s.t, s.values[info.name], s.context, s.probe_s)
        for s in report.samples
        if s.values.get(info.name) is not None
    ]
    t = [p[0] for p in pts]
    x = [float(p[1]) for p in pts]
    summary = summarize(x, values["cv_ci_bootstrap"])
    result = MetricResult(info=info, summary=summary)
    if summary.n < MIN_SAMPLES:
        result.verdict = "unknown"
        result.reason = msg("{n} samples: at least {min} are needed to judge").format(
            n=summary.n, min=MIN_SAMPLES
        )
        return result
    contexts = [p[2] for p in pts]
    for a, b, window in slow_windows(t, x, info.higher_is_better, [p[3] for p in pts], values):
        window.context = context_moves(contexts, range(a, b), float(values["context_min_z"]))
        result.windows.append(window)
    rcv = summary.robust_cv or 0.0
    worst = max((w.change for w in result.windows), default=0.0)
    if rcv >= values["unstable_cv_min"] or worst >= values["unstable_window_change"]:
        result.verdict = "unstable"
    elif rcv > values["stable_cv_max"] or result.windows:
        result.verdict = "variable"
    else:
        result.verdict = "stable"
    parts = [msg("robust cv {cv}").format(cv=f"{rcv:.1%}")]
    if result.windows:
        parts.append(
            msg("{n} slow window(s), the worst {pct} worse than the baseline").format(
                n=len(result.windows), pct=f"{worst:.0%}"
            )
        )
    result.reason = joined("; ", parts)
    return result


def judge(report: StabilityReport) -> StabilityReport:
    """Fill report.results and report.layers from report.samples (in place; returned for chaining)."""
    report.results = [judge_metric(report, info) for info in report.metrics]
    layers: dict[str, LayerVerdict] = {}
    for r in report.results:
        cur = layers.get(r.info.layer)
        if cur is None or VERDICT_ORDER[r.verdict] > VERDICT_ORDER[cur.verdict]:
            layers[r.info.layer] = LayerVerdict(
                layer=r.info.layer, verdict=r.verdict, metric=r.info.name, reason=r.reason
            )
    report.layers = list(layers.values())
    return report
