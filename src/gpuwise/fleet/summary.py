"""What `fleet report` keeps of one node once it is read: the few values the comparison needs.

A node's facts and bench result take about a third of a megabyte in memory (every command's parsed
output, every benchmark's samples and per-size tables), and the report compares only a few dozen
values per node. Each node is reduced as soon as it is read (in the worker that read it, so the full
results never cross to the parent): its group, its drift values (drift.node_values), its usable
measurements without their samples, and its doctor findings without evidence. The report then holds
N small summaries instead of N full results.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from gpuwise.advise.finding import Finding
from gpuwise.documents.bench import BenchReport
from gpuwise.fleet.drift import node_values
from gpuwise.fleet.grouping import group_key
from gpuwise.fleet.layout import NodeResult, load_node
from gpuwise.fleet.model import NodeStatus

KEPT_EXTRA = ("step_ms",)  # the straggler verdict's step time (straggler._median_step)


class Value(NamedTuple):
    """One usable measurement: the attributes of documents.bench.Measurement that the report reads."""

    name: str
    layer: str
    value: float
    unit: str
    device: str | None
    extra: dict[str, Any]
    status: str = "ok"


@dataclass(slots=True)
class Values:
    """A node's usable measurements, read like a BenchReport (results, find)."""

    results: list[Value]

    def find(self, name: str) -> Value | None:
        return next((m for m in self.results if m.name == name), None)


class Headline(NamedTuple):
    """What findings by reach show of a doctor finding (fleet/reach.py)."""

    id: str
    layer: str
    priority: str
    status: str
    title: str


@dataclass(slots=True)
class NodeSummary:
    name: str
    status: NodeStatus
    group: tuple[str, str]  # grouping.group_key: (GPU model(s), instance type)
    values: dict[tuple[str, str], tuple[str, str]] | None = None  # drift values; None without a capture
    bench: Values | None = None  # the usable measurements only
    findings: list[Headline] = field(default_factory=list)  # not "pass", without evidence


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


def shared(s: NodeSummary) -> NodeSummary:
    """The summary with its repeated texts (setting names, labels, metric names) held once for the
    whole fleet: each summary a worker sends back arrives with its own copies of the same words."""
    if s.values is not None:
        s.values = {(_i(g), _i(k)): (_i(v), _i(label)) for (g, k), (v, label) in s.values.items()}
    if s.bench is not None:
        s.bench.results = [
            m._replace(name=_i(m.name), layer=_i(m.layer), unit=_i(m.unit)) for m in s.bench.results
        ]
    s.findings = [Headline(*map(_i, f)) for f in s.findings]
    s.group = (_i(s.group[0]), _i(s.group[1]))
    return s


def _i(text: str) -> str:
    """Many nodes repeat the same strings: keep one copy (a message keeps its id, so it is kept as it is)."""
    return sys.intern(text) if type(text) is str else text


def _usable(report: BenchReport) -> Values:
    """The measurements with a value (what outliers, spreads and speeds use), without samples or tables."""
    return Values(
        [
            Value(
                name=m.name,
                layer=m.layer,
                value=float(m.value),
                unit=m.unit,
                device=m.device,
                extra={k: m.extra[k] for k in KEPT_EXTRA if k in m.extra},
            )
            for m in report.results
            if m.status == "ok" and m.value is not None
        ]
    )


def _headline(f: Finding) -> Headline:
    return Headline(id=f.id, layer=f.layer, priority=f.priority, status=f.status, title=f.title)
