"""Node groups: nodes are compared with the nodes of their own hardware only.

A group is the GPU model(s) a node's capture lists ("no GPU" when it lists none) and the instance
type (SKU) of its platform facts ("unknown" when the capture does not tell). A CPU VM and an H200 node
differ in everything, so judging one against the other's median names every node; drift and outliers
are found within a group, a group of one node is listed but not judged, and a node without a readable
capture is in the "unknown" group.
"""

from __future__ import annotations

from collections.abc import Iterable

from gpuwise.facts.models import Facts
from gpuwise.fleet.model import NodeGroup
from gpuwise.i18n import joined

UNKNOWN = "unknown"
NO_GPU = "no GPU"


def group_key(facts: Facts | None) -> tuple[str, str]:
    """(GPU model(s), instance type) of one node; ("unknown", "unknown") without facts."""
    if facts is None:
        return UNKNOWN, UNKNOWN
    gpus = joined(", ", sorted({g.name or "?" for g in facts.gpus})) or NO_GPU
    return gpus, facts.platform.instance_type or UNKNOWN


def group_name(gpu: str, instance_type: str) -> str:
    return f"{gpu} / {instance_type}"


def group_nodes(nodes: Iterable[tuple[str, tuple[str, str]]]) -> list[NodeGroup]:
    """(node, group_key) -> the groups, largest first (ties by name), each with its nodes in the given order."""
    by_key: dict[tuple[str, str], list[str]] = {}
    for name, key in nodes:
        by_key.setdefault(key, []).append(name)
    groups = [
        NodeGroup(name=group_name(gpu, sku), gpu=gpu, instance_type=sku, nodes=names)
        for (gpu, sku), names in by_key.items()
    ]
    return sorted(groups, key=lambda g: (-len(g.nodes), g.name))
