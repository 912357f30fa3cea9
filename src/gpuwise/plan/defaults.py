"""Sourced model defaults for the planner (plan/data/plan_defaults.yaml), with user overrides.

`PlanDefaults.value("stragglers.compute_cv")` returns the number; `.source(...)` says where it came
from, so the plan can list every assumption it used next to its origin. The structured sections come
out typed: `storage(name)`, `mfu_per_gpu_class()`, `default_builds()` and `decision()`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, fields
from importlib import resources
from typing import Any

import yaml

from gpuwise.errors import DataValidationError
from gpuwise.i18n import joined, msg


def _packaged() -> dict:
    text = resources.files("gpuwise.plan").joinpath("data/plan_defaults.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


@dataclass(frozen=True)
class StorageDefaults:
    """One storage class: read throughput and IOPS per node, or for the whole cluster when shared."""

    name: str
    read_gb_s: float
    iops: float
    shared: bool
    source: str


@dataclass(frozen=True)
class GpuClassMfu:
    gpu_class: str  # matched as a case-insensitive substring of the GPU name
    value: float
    source: str


@dataclass(frozen=True)
class DefaultBuild:
    name: str
    gpu: str
    fabric: str
    source: str


@dataclass(frozen=True)
class DecisionThresholds:
    """How the verdict weighs context against cost (plan_defaults.yaml `decision:`, each a sourced heuristic)."""

    bursty_peak_ratio: float  # peak/average at or above which demand counts as bursty
    long_horizon_years: float  # horizons shorter than this favour renting
    close_cost_margin: float  # relative cost gap below which the context decides
    steady_utilisation: float  # utilisation at or above which a long, non-bursty load is "steady"
    context_votes_override_cost: float  # net cloud votes that overturn a clearly cheaper build
    context_votes_tip_close_call: float  # net build votes that tip a close call to building
    node_tie_tolerance: float  # relative cost within which node counts tie and the fewest nodes win


@dataclass
class PlanDefaults:
    data: dict = field(default_factory=_packaged)
    overridden: set[str] = field(default_factory=set)

    def _node(self, dotted: str) -> Any:
        node: Any = self.data
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                raise KeyError(dotted)
            node = node[part]
        return node

    def value(self, dotted: str) -> float:
        """The number at `dotted` (an int stays an int, so listings print it as written)."""
        node = self._node(dotted)
        value = node["value"] if isinstance(node, dict) and "value" in node else node
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise DataValidationError(
                msg("plan default '{dotted}' is {value!r}, not a number").format(dotted=dotted, value=value),
                msg("give a number in plan_defaults.yaml or under model_overrides"),
            )
        return value

    def source(self, dotted: str) -> str:
        if dotted in self.overridden:
            return "options file (model_overrides)"
        node = self._node(dotted)
        return node.get("source", "") if isinstance(node, dict) else ""

    def storage(self, name: str) -> StorageDefaults:
        classes = self.data["storage"]
        if name not in classes:
            raise DataValidationError(
                msg("unknown storage class '{name}'").format(name=name),
                msg("use one of: {join}").format(join=joined(", ", classes)),
            )
        entry = classes[name]
        return StorageDefaults(
            name=name,
            read_gb_s=float(entry["read_gb_s"]),
            iops=float(entry["iops"]),
            shared=entry["scope"] == "shared",
            source=str(entry["source"]),
        )

    def mfu_per_gpu_class(self) -> list[GpuClassMfu]:
        table = self.data["mfu"].get("per_gpu_class") or {}
        return [GpuClassMfu(str(k), float(v["value"]), str(v["source"])) for k, v in table.items()]

    def default_builds(self) -> list[DefaultBuild]:
        return [
            DefaultBuild(str(e["name"]), str(e["gpu"]), str(e["fabric"]), str(e.get("source", "")))
            for e in self.data.get("default_builds", [])
        ]

    def decision(self) -> DecisionThresholds:
        return DecisionThresholds(
            **{f.name: float(self.value(f"decision.{f.name}")) for f in fields(DecisionThresholds)}
        )

    def with_overrides(self, overrides: dict[str, Any] | None) -> PlanDefaults:
        """Copy with dotted-key overrides, e.g. {"stragglers.compute_cv": 0.02}."""
        out = PlanDefaults(copy.deepcopy(self.data), set(self.overridden))
        for dotted, val in (overrides or {}).items():
            try:
                node = out._node(dotted)
            except KeyError:
                raise DataValidationError(
                    msg("model_overrides: unknown key '{dotted}'").format(dotted=dotted),
                    msg("use a dotted key from plan_defaults.yaml, e.g. stragglers.compute_cv"),
                ) from None
            parent = out._node(dotted.rsplit(".", 1)[0]) if "." in dotted else out.data
            leaf = dotted.rsplit(".", 1)[-1]
            if isinstance(node, dict) and "value" in node:
                node["value"] = val
            else:
                parent[leaf] = val
            out.overridden.add(dotted)
        return out
