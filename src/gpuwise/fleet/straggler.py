"""The straggler verdict: which nodes to leave out of the next job, and what the step time does.

The estimate is the simple synchronous data-parallel one (stated in the report): every step waits for
the slowest node, so with the per-GPU batch fixed a step takes the median node's measured step time
divided by the slowest node's speed (its worst compute/training measurement relative to its group's
median), and the fleet's throughput is nodes x that speed. The inter-node gradient sync is the same
with and without the excluded nodes to first order and is not modelled here (`gpuwise plan` does).
"""

from __future__ import annotations

import statistics

from gpuwise.documents.bench import BenchReport
from gpuwise.fleet.model import Drift, NodeGroup, Outlier, Straggler
from gpuwise.i18n import N_, joined, msg

SPEED_LAYERS = ("compute", "training")
STEP_METRICS = ("train_transformer_bf16", "train_transformer_fp32", "train_cnn_bf16", "train_cnn_fp32")
METHOD = N_(
    "synchronous data parallel, per-GPU batch fixed: step = median node's measured step time / slowest "
    "node's speed (its worst compute or training result relative to its group's median); throughput = "
    "nodes x slowest speed, in median-node units; gradient sync not modelled"
)


def verdict(
    benches: dict[str, BenchReport],
    drift: list[Drift],
    outliers: list[Outlier],
    groups: list[NodeGroup] | None = None,
) -> Straggler:
    """Exclude every node named by drift or an outlier, but never every node of a group (that is what
    the group's hardware does, or the whole group is set up alike: not a straggler); estimate the step
    time with and without them, each node's speed relative to its own group."""
    reasons: dict[str, list[str]] = {}
    for d in drift:
        for value, names in d.odd.items():
            for n in names:
                reasons.setdefault(n, []).append(
                    msg("{setting} {value} (fleet: {majority})").format(
                        setting=d.label or d.key, value=value, majority=d.majority
                    )
                )
    for o in outliers:
        where = f" {o.device}" if o.device and o.scope != "link" else ""
        reasons.setdefault(o.node, []).append(
            f"{o.metric}{where} {o.value:.4g} {o.unit} ({o.deviation_pct:+.0f}%)"
        )
    kept_groups = [g.name for g in groups or [] if g.nodes and all(n in reasons for n in g.nodes)]
    whole = {n for g in groups or [] if g.name in kept_groups for n in g.nodes}
    exclude = sorted(n for n in reasons if n not in whole)
    out = Straggler(
        exclude=exclude,
        reasons={n: reasons[n] for n in exclude},
        kept_groups=kept_groups,
        method=msg(METHOD),
    )
    if exclude:
        out.sbatch_line = "#SBATCH --exclude=" + joined(",", exclude)
    speed = _speeds(benches, {n: g.name for g in groups or [] for n in g.nodes})
    step_metric, step_ms = _median_step(benches)
    if speed and step_ms is not None:
        kept = [n for n in speed if n not in exclude]
        slow_all = min(speed.values())
        out.step_metric = step_metric
        out.step_ms_all = round(step_ms / slow_all, 3)
        out.throughput_all = round(len(speed) * slow_all, 2)
        if kept:
            slow_kept = min(speed[n] for n in kept)
            out.step_ms_without = round(step_ms / slow_kept, 3)
            out.throughput_without = round(len(kept) * slow_kept, 2)
    return out


def _speeds(benches: dict[str, BenchReport], group_of: dict[str, str]) -> dict[str, float]:
    """Each node's worst compute/training result relative to its group's median of that metric
    (<= 1 is slower)."""
    per_metric: dict[tuple[str, str, str | None], dict[str, float]] = {}
    for node, b in benches.items():
        for m in b.results:
            if m.layer in SPEED_LAYERS and m.status == "ok" and m.value:
                key = (group_of.get(node, ""), m.name, m.device)
                per_metric.setdefault(key, {})[node] = float(m.value)
    speed: dict[str, float] = {}
    for values in per_metric.values():
        median = statistics.median(values.values())
        for node, v in values.items():
            speed[node] = min(speed.get(node, 1.0), v / median if median else 1.0)
    return speed


def _median_step(benches: dict[str, BenchReport]) -> tuple[str | None, float | None]:
    for name in STEP_METRICS:
        steps = [
            float(m.extra["step_ms"])
            for b in benches.values()
            if (m := b.find(name)) is not None
            and m.status == "ok"
            and isinstance(m.extra.get("step_ms"), (int, float))
        ]
        if steps:
            return name, statistics.median(steps)
    return None, None
