"""Sourced model defaults for the planner (plan/data/plan_defaults.yaml), with user overrides.

`PlanDefaults.value("stragglers.compute_cv")` returns the number; `.source(...)` says where it came
from, so the plan can list every assumption it used next to its origin.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import yaml

from gpuwise.errors import DataValidationError


def _packaged() -> dict:
    text = resources.files("gpuwise.plan").joinpath("data/plan_defaults.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


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

    def value(self, dotted: str) -> Any:
        node = self._node(dotted)
        return node["value"] if isinstance(node, dict) and "value" in node else node

    def source(self, dotted: str) -> str:
        if dotted in self.overridden:
            return "options file (model_overrides)"
        node = self._node(dotted)
        return node.get("source", "") if isinstance(node, dict) else ""

    def storage(self, name: str) -> dict:
        classes = self.data["storage"]
        if name not in classes:
            raise DataValidationError(f"unknown storage class '{name}'", f"use one of: {', '.join(classes)}")
        return classes[name]

    def with_overrides(self, overrides: dict[str, Any] | None) -> PlanDefaults:
        """Copy with dotted-key overrides, e.g. {"stragglers.compute_cv": 0.02}."""
        out = PlanDefaults(copy.deepcopy(self.data), set(self.overridden))
        for dotted, val in (overrides or {}).items():
            try:
                node = out._node(dotted)
            except KeyError:
                raise DataValidationError(
                    f"model_overrides: unknown key '{dotted}'",
                    "use a dotted key from plan_defaults.yaml, e.g. stragglers.compute_cv",
                ) from None
            parent = out._node(dotted.rsplit(".", 1)[0]) if "." in dotted else out.data
            leaf = dotted.rsplit(".", 1)[-1]
            if isinstance(node, dict) and "value" in node:
                node["value"] = val
            else:
                parent[leaf] = val
            out.overridden.add(dotted)
        return out
