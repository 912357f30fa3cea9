"""What gpuwise reads back from a fleet report (FLEET_SCHEMA, written by fleet/model.py's FleetReport):
the history records the fleet's medians, odd nodes and all-reduce bandwidth."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from gpuwise.documents.ids import FLEET_SCHEMA
from gpuwise.documents.view import View


class FleetNode(View):
    node: str


class NodeValue(View):
    node: str | None = None
    value: float | None = None


class FleetDistribution(View):
    metric: str
    unit: str = ""
    median: float | None = None
    values: list[NodeValue] = Field(default_factory=list)


class FleetOutlier(View):
    node: str


class FleetDrift(View):
    group: str
    key: str
    majority: Any = None
    odd: dict[str, list[str]] = Field(default_factory=dict)  # value (as text) -> the nodes that have it


class FleetCollective(View):
    busbw_gb_s: float | None = None


class FleetDocument(View):
    schema_: Literal[FLEET_SCHEMA] = Field(alias="schema")  # type: ignore[valid-type]
    created_at: str | None = None
    nodes: list[FleetNode] = Field(default_factory=list)
    distributions: list[FleetDistribution] = Field(default_factory=list)
    outliers: list[FleetOutlier] = Field(default_factory=list)
    drift: list[FleetDrift] = Field(default_factory=list)
    collective: FleetCollective | None = None
