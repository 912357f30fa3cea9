"""Findings by reach: each doctor finding and the nodes it affects, widest reach first.

A finding on every node is a fleet-wide fix (image, BIOS profile); one on a single node is a repair.
"""

from __future__ import annotations

from collections.abc import Iterable

from gpuwise.advise.finding import PRIORITY_ORDER, STATUS_ORDER, Finding
from gpuwise.fleet.model import ReachGroup


def group_findings(nodes: Iterable[tuple[str, list[Finding]]]) -> list[ReachGroup]:
    groups: dict[str, ReachGroup] = {}
    for node, findings in nodes:
        for f in findings:
            if f.status == "pass":
                continue
            g = groups.get(f.id)
            if g is None:
                g = groups[f.id] = ReachGroup(
                    id=f.id, title=f.title, status=f.status, priority=f.priority, layer=f.layer, nodes=[]
                )
            elif STATUS_ORDER.index(f.status) < STATUS_ORDER.index(g.status):
                g.status, g.title = f.status, f.title  # the worst instance names the group
            if node not in g.nodes:
                g.nodes.append(node)
    return sorted(
        groups.values(),
        key=lambda g: (
            -len(g.nodes),
            STATUS_ORDER.index(g.status),
            PRIORITY_ORDER.index(g.priority),
            g.id,
        ),
    )
