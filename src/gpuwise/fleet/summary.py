"""What `fleet report` keeps of one node once it is read: the few values the comparison needs.

A node's facts and bench result take about a third of a megabyte in memory (every command's parsed
output, every benchmark's samples and per-size tables), and the report compares only a few dozen
values per node. Each node is reduced as soon as it is read (in the worker that read it, so the full
results never cross to the parent): its group, its drift values (drift.node_values), its usable
measurements without their samples, and its doctor findings without evidence. The report then holds
N small summaries instead of N full results.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gpuwise.advise.finding import Finding
from gpuwise.bench.models import BenchReport, Measurement
from gpuwise.fleet.drift import node_values
from gpuwise.fleet.grouping import group_key
from gpuwise.fleet.layout import NodeResult, load_node
from gpuwise.fleet.model import NodeStatus

KEPT_EXTRA = ("step_ms",)  # the straggler verdict's step time (straggler._median_step)


@dataclass
class NodeSummary:
    name: str
    status: NodeStatus
    group: tuple[str, str]  # grouping.group_key: (GPU model(s), instance type)
    values: dict[tuple[str, str], tuple[str, str]] | None = None  # drift values; None without a capture
    bench: BenchReport | None = None  # the usable measurements only
    findings: list[Finding] = field(default_factory=list)  # not "pass", without evidence


def summarize(result: NodeResult) -> NodeSummary:
    return NodeSummary(
        name=result.name,
        status=result.status,
        group=group_key(result.facts),
        values=node_values(result.facts) if result.facts is not None else None,
        bench=_usable(result.bench) if result.bench is not None else None,
        findings=[_headline(f) for f in result.findings if f.status != "pass"],
    )


def read_summary(node_dir: Path, run_rules: bool = True) -> NodeSummary:
    """Read one node (layout.load_node) and keep its summary."""
    return summarize(load_node(node_dir, run_rules))


def _usable(report: BenchReport) -> BenchReport:
    """The measurements with a value (what outliers, spreads and speeds use), without samples or tables."""
    results = [
        Measurement.model_construct(
            name=m.name,
            layer=m.layer,
            value=m.value,
            unit=m.unit,
            status=m.status,
            device=m.device,
            extra={k: m.extra[k] for k in KEPT_EXTRA if k in m.extra},
        )
        for m in report.results
        if m.status == "ok" and m.value is not None
    ]
    return BenchReport.model_construct(hostname=report.hostname, results=results)


def _headline(f: Finding) -> Finding:
    """What findings by reach show (fleet/reach.py): id, title, status, priority, layer."""
    return Finding.model_construct(
        id=f.id, layer=f.layer, priority=f.priority, status=f.status, title=f.title
    )
