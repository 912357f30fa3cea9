"""`plan --calibrate FLEET_DIR`: the plan's network and straggler terms from what a fleet measured.

From the fleet directory (layout.py):
* DIR/collective.json, the all-reduce across the fleet's nodes -> inter-node bandwidth and latency
  (α–β fit over its sizes, plan/network_fit.py) and the per-rank time spread (network straggler cv);
* each node's bench.json training step time (`step_ms` of train_transformer/train_cnn) -> the spread of
  step times across nodes (compute straggler cv): a synchronous step waits for the slowest node, and
  the plan's straggler term is E[max of N] ≈ mean + cv·mean·sqrt(2 ln N). Each node's own repeat-to-repeat
  spread ((max − min) / median of its timed repeats, /4 as a rough σ of a range of a few samples) is added
  in quadrature, so a fleet of identical but jittery nodes still gets a term.
The GPU the calibration applies to is the fleet's most common GPU (from the captures). Nothing is
guessed: what the directory lacks is listed in `Calibration.ignored`.
"""

from __future__ import annotations

import statistics
from collections import Counter
from pathlib import Path

from gpuwise.fleet.layout import node_dirs, read_json_report
from gpuwise.fleet.straggler import STEP_METRICS
from gpuwise.i18n import msg
from gpuwise.plan.calibrate import Calibration, add_network
from gpuwise.plan.network_fit import spread_cv


def fleet_calibration(directory: str | Path) -> Calibration:
    """A Calibration from a fleet directory; UserInputError when it is not one."""
    from gpuwise.fleet.analyze import load_nodes

    root = Path(directory).expanduser()
    nodes = load_nodes(node_dirs(root), run_rules=False)
    cal = Calibration(gpu_name=_fleet_gpu(nodes))
    if cal.gpu_name is None:
        cal.ignored.append(msg("no node capture names a GPU: nothing can be matched to an option's GPU"))
    _step_spread(cal, {n.name: n.bench for n in nodes if n.bench is not None})
    problems: list[str] = []
    report = read_json_report(root / "collective.json", problems)
    cal.ignored += problems
    measured = report.find("allreduce_busbw") if report is not None else None
    if measured is None:
        cal.ignored.append(
            msg("no collective.json with an allreduce_busbw result: inter-node network not measured")
        )
    elif measured.status != "ok":
        cal.ignored.append(
            msg("collective.json: {name} {status} ({reason})").format(
                name=measured.name, status=measured.status, reason=measured.reason
            )
        )
    else:
        measured.params.setdefault("source", "collective.json")
        add_network(cal, measured)
    if not cal.used:
        cal.ignored.append(msg("fleet {root}: nothing usable for the plan").format(root=root))
    return cal


def _fleet_gpu(nodes) -> str | None:
    names = Counter(
        n.facts.gpus[0].name for n in nodes if n.facts is not None and n.facts.gpus and n.facts.gpus[0].name
    )
    return names.most_common(1)[0][0] if names else None


def _step_spread(cal: Calibration, benches: dict) -> None:
    for metric in STEP_METRICS:
        steps, within = {}, []
        for node, bench in benches.items():
            m = bench.find(metric)
            if m is None or m.status != "ok" or not isinstance(m.extra.get("step_ms"), int | float):
                continue
            steps[node] = float(m.extra["step_ms"])
            if m.stats is not None and m.stats.median > 0 and m.stats.repeats >= 2:
                within.append((m.stats.max - m.stats.min) / m.stats.median / 4.0)
        between = spread_cv(list(steps.values()))
        if between is None:
            continue
        jitter = statistics.median(within) if within else 0.0
        cal.compute_cv = (between**2 + jitter**2) ** 0.5
        text = (
            msg(
                "{metric}: step time over {nodes} nodes, spread cv {between:.3f} across nodes, "
                "{jitter:.3f} within a node -> compute straggler cv {cv:.3f}"
            )
            if within
            else msg(
                "{metric}: step time over {nodes} nodes, spread cv {between:.3f} across nodes "
                "-> compute straggler cv {cv:.3f}"
            )
        )
        cal.used.append(
            text.format(metric=metric, nodes=len(steps), between=between, jitter=jitter, cv=cal.compute_cv)
        )
        return
    cal.ignored.append(
        msg(
            "fewer than two nodes with a training step time (bench.json train_*): "
            "compute straggler term stays 0"
        )
    )
