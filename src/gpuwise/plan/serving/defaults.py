"""Sourced defaults of the serving model (plan/serving/data/serving_defaults.yaml), with overrides.

Overrides come from the options file's `model_overrides` under keys starting with `serving.`
(e.g. `serving.max_load_fraction: 0.7`); the plan lists every value it used with its source.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from importlib import resources

import yaml

from gpuwise.errors import DataValidationError
from gpuwise.i18n import N_, joined, msg

PREFIX = "serving."
OVERRIDDEN = N_("options file (model_overrides)")  # the source of an overridden value


def _packaged() -> dict:
    path = resources.files("gpuwise.plan.serving").joinpath("data/serving_defaults.yaml")
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@dataclass
class ServingDefaults:
    data: dict = field(default_factory=_packaged)
    overridden: set[str] = field(default_factory=set)

    def names(self) -> list[str]:
        return [k for k, v in self.data.items() if isinstance(v, dict) and "value" in v]

    def value(self, key: str) -> float:
        return float(self.data[key]["value"])

    def source(self, key: str) -> str:
        if key in self.overridden:
            return OVERRIDDEN
        return str(self.data[key]["source"])

    def with_overrides(self, overrides: dict[str, float]) -> ServingDefaults:
        """Copy with `serving.<key>` overrides applied; other keys are left to the training defaults."""
        out = ServingDefaults(copy.deepcopy(self.data), set(self.overridden))
        for dotted, val in overrides.items():
            if not dotted.startswith(PREFIX):
                continue
            key = dotted[len(PREFIX) :]
            if key not in out.names():
                raise DataValidationError(
                    msg("model_overrides: unknown key '{key}'").format(key=dotted),
                    msg("use one of: {keys}").format(keys=joined(", ", (PREFIX + k for k in out.names()))),
                )
            if isinstance(val, bool) or not isinstance(val, int | float) or val < 0:
                raise DataValidationError(
                    msg("model_overrides: '{key}' is {value!r}, not a number of 0 or more").format(
                        key=dotted, value=val
                    ),
                    msg("give a number for '{key}'").format(key=dotted),
                )
            out.data[key]["value"] = val
            out.overridden.add(key)
        return out
