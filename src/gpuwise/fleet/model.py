"""The fleet report model (schema gpuwise-fleet/1): what `gpuwise fleet report --format json` prints.

Fields are only ever added. Node names are the folder names of the fleet directory.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from gpuwise.documents.ids import FLEET_SCHEMA
from gpuwise.textmodel import TextModel


class _Strict(TextModel):
    model_config = ConfigDict(extra="forbid")


class NodeStatus(_Strict):
    """What was read for one node, and what could not be."""

    node: str
    hostname: str | None = None
    capture: bool = False
    bench: bool = False
    findings_from: Literal["doctor.json", "rules", "none"] = "none"
    problems: list[str] = Field(default_factory=list)


class NodeGroup(_Strict):
    """Nodes of one GPU model and instance type: drift and outliers are judged within a group only."""

    name: str  # "NVIDIA H200 / unknown"
    gpu: str  # the GPU model(s), "no GPU", or "unknown" (no capture)
    instance_type: str  # facts.platform.instance_type, or "unknown"
    nodes: list[str]
    judged: bool = True  # False for a group of one node: nothing to compare it with


class Drift(_Strict):
    """One setting or version that is not the same on every node of a group."""

    node_group: str | None = None  # NodeGroup.name
    group: str  # "software", "kernel", "firmware", "hardware", "settings"
    key: str  # "NVIDIA driver", "PCIe link width (GPU 0)": English, the setting's name in JSON and history
    label: str = Field("", exclude=True)  # the key in the language of the report (shown; not in the JSON)
    majority: Any = None
    majority_count: int = 0
    odd: dict[str, list[str]] = Field(default_factory=dict)  # value (as text) -> nodes

    def odd_nodes(self) -> list[str]:
        return sorted({n for nodes in self.odd.values() for n in nodes})


class Outlier(_Strict):
    """One node (or GPU, or link direction) whose measurement is far from its peers on the bad side."""

    metric: str  # "matmul_bf16", "link_rx_gbps"
    scope: Literal["node", "gpu", "link"]
    node_group: str | None = None  # NodeGroup.name; None for links (compared fleet-wide)
    node: str
    device: str | None = None
    value: float
    unit: str
    median: float  # of the nodes of its group (or of the others, for a small group)
    score: float | None = None  # robust z; None when the fleet is too small for one
    deviation_pct: float  # (value - median) / median x 100
    method: str  # "robust z" or "vs others' median"
    peers: int  # how many values it was compared with


class NodeValue(_Strict):
    node: str
    device: str | None = None
    value: float


class Distribution(_Strict):
    """Every node's (or GPU's, or link direction's) value of one metric: what the outliers are judged in."""

    metric: str
    unit: str
    scope: Literal["node", "gpu", "link"]
    node_group: str | None = None  # NodeGroup.name; None for links
    median: float
    values: list[NodeValue]


class ReachGroup(_Strict):
    """One doctor finding and the nodes it affects."""

    id: str
    title: str
    status: str
    priority: str
    layer: str
    nodes: list[str]

    @property
    def reach(self) -> int:
        return len(self.nodes)


class Straggler(_Strict):
    exclude: list[str] = Field(default_factory=list)
    reasons: dict[str, list[str]] = Field(default_factory=dict)
    sbatch_line: str | None = None
    kept_groups: list[str] = Field(default_factory=list)  # every node of these differed: none excluded
    step_metric: str | None = None  # the measurement the step time comes from
    step_ms_all: float | None = None
    step_ms_without: float | None = None
    throughput_all: float | None = None  # in node-equivalents of a median node
    throughput_without: float | None = None
    method: str = ""


class Collective(_Strict):
    """The multi-node collective from DIR/collective.json and the pairwise link test from DIR/links.json."""

    name: str | None = None
    busbw_gb_s: float | None = None
    algbw_gb_s: float | None = None
    world_size: int | None = None
    nodes: int | None = None
    backend: str | None = None
    per_rank_time_us: list[float] = Field(default_factory=list)
    slowest_rank: int | None = None
    links: list[dict[str, Any]] = Field(default_factory=list)  # {"src": node, "dst": node, "gbps": x}
    problems: list[str] = Field(default_factory=list)


class FleetReport(_Strict):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: str = Field(FLEET_SCHEMA, alias="schema")
    created_at: str
    directory: str
    nodes: list[NodeStatus]
    groups: list[NodeGroup] = Field(default_factory=list)  # more than one: a mixed fleet
    drift: list[Drift] = Field(default_factory=list)
    outliers: list[Outlier] = Field(default_factory=list)
    distributions: list[Distribution] = Field(default_factory=list)  # per metric, every node's value
    reach: list[ReachGroup] = Field(default_factory=list)
    collective: Collective | None = None
    straggler: Straggler = Field(default_factory=Straggler)
    thresholds: dict[str, dict[str, Any]] = Field(default_factory=dict)
    not_compared: list[str] = Field(default_factory=list)  # what the analysis could not look at, and why

    def odd_nodes(self) -> list[str]:
        """Every node named by drift or an outlier."""
        names = {n for d in self.drift for n in d.odd_nodes()} | {o.node for o in self.outliers}
        return sorted(names)

    def to_json_dict(self) -> dict:
        return self.model_dump(mode="json", by_alias=True)
