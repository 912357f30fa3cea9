"""On-prem cost defaults (data/onprem_costs.yaml): every value with its unit and source.

`load_onprem_defaults()` returns an `OnpremDefaults`; `.with_overrides(dict)` applies the `onprem:`
section of a user's plan file. A value the sources do not give is None ("no default"): the
accessors return None and the planner must ask the user instead of inventing a number.

    d = load_onprem_defaults().with_overrides({"pue": 1.1, "server_price_per_node": {"A100": 200000}})
    d.value("pue")                          # 1.1
    d.server_price_per_node("H100-SXM")     # 310000.0 (source: Cheah sheet)
    d.server_price_per_node("H100-PCIE")    # None: the sourced price is for SXM servers
    d.node_power_kw("H100-SXM", gpu_count=8, gpu_tdp_watts=700)

GPU classes match most-specific-first against a catalog key ("A100-SXM-80GB" tries A100-SXM-80GB,
A100-SXM, A100), so a figure sourced for SXM servers never prices a PCIe build.
"""

from __future__ import annotations

import datetime as dt
import functools
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field

from gpuwise.catalog.yamlfile import load_yaml_with_lines, validate_data
from gpuwise.datafiles import did_you_mean
from gpuwise.documents.ids import ONPREM_COSTS_SCHEMA as SCHEMA
from gpuwise.errors import DataValidationError, UserInputError
from gpuwise.i18n import joined, msg
from gpuwise.textmodel import TextModel

USER_SOURCE = "your plan file"


class CostValue(TextModel):
    """One default: its value (None = no sourced default), optional range, unit and source."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: float | None
    unit: str
    source: str
    note: str | None = None
    low: float | None = None
    high: float | None = None


class CommitmentDiscount(TextModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    one_year: float = Field(ge=0, le=1)
    three_year: float = Field(ge=0, le=1)


class SpotDiscount(TextModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    low: float = Field(ge=0, le=1)
    high: float = Field(ge=0, le=1)


class OnpremDefaults(TextModel):
    """The on-prem TCO inputs gpuwise starts from; see the YAML file for every source."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    schema_: str = Field(alias="schema")
    currency: str
    as_of: dt.date
    values: dict[str, CostValue]
    per_gpu_class: dict[str, dict[str, CostValue]]
    cloud_commitment_discounts: dict[str, CommitmentDiscount]
    cloud_commitment_discounts_source: str
    spot_discount: SpotDiscount
    spot_discount_source: str

    def entry(self, name: str, gpu_class: str | None = None) -> CostValue | None:
        """The full entry (value, unit, source) for a scalar or per-GPU-class default."""
        if name in self.values:
            return self.values[name]
        if name in self.per_gpu_class:
            if gpu_class is None:
                raise UserInputError(
                    msg("{name} depends on the GPU class").format(name=name),
                    msg("pass gpu_class, e.g. 'H100-SXM'"),
                )
            table = self.per_gpu_class[name]
            return next((table[c] for c in _class_candidates(gpu_class) if c in table), None)
        names = sorted([*self.values, *self.per_gpu_class])
        raise UserInputError(
            msg("unknown cost default {name!r}{did_you_mean_name}").format(
                name=name, did_you_mean_name=did_you_mean(name, names)
            ),
            msg("use one of: {join}").format(join=joined(", ", names)),
        )

    def value(self, name: str, gpu_class: str | None = None) -> float | None:
        """The number for `name` (None when no source gives a default and the plan did not set one)."""
        entry = self.entry(name, gpu_class)
        return None if entry is None else entry.value

    def server_price_per_node(self, gpu_class: str) -> float | None:
        """Price of one 8-GPU server of this class (e.g. "H100-SXM"), or None when unknown."""
        return self.value("server_price_per_node", gpu_class)

    def node_power_kw(
        self, gpu_class: str, gpu_count: int = 8, gpu_tdp_watts: float | None = None
    ) -> float | None:
        """Node power for the class; else GPU TDP × count × the sourced node/GPU ratio; else None."""
        direct = self.value("node_power_kw", gpu_class)
        if direct is not None:
            return direct * gpu_count / 8
        ratio = self.value("node_power_kw_per_gpu_tdp")
        if gpu_tdp_watts is None or ratio is None:
            return None
        return gpu_count * gpu_tdp_watts / 1000 * ratio

    def with_overrides(self, overrides: dict[str, Any] | None) -> OnpremDefaults:
        """A copy with values from a plan file: {name: number} or {per-class name: {class: number}}."""
        if not overrides:
            return self
        values = dict(self.values)
        per_class = {k: dict(v) for k, v in self.per_gpu_class.items()}
        for name, given in overrides.items():
            if name in values:
                values[name] = _override(values[name], name, given)
            elif name in per_class:
                if not isinstance(given, dict):
                    raise DataValidationError(
                        msg("onprem.{name} must map a GPU class to a number, got {given!r}").format(
                            name=name, given=given
                        ),
                        msg("write it as  {name}: {{H100: 310000}}").format(name=name),
                    )
                for gpu_class, number in given.items():
                    key = _gpu_class(str(gpu_class))
                    # The user's class covers its sub-classes too ("A100" is every A100), so shipped
                    # more specific entries must not shadow it.
                    table = {k: v for k, v in per_class[name].items() if not k.startswith(key + "-")}
                    table[key] = _override(per_class[name].get(key), f"{name}.{gpu_class}", number)
                    per_class[name] = table
            else:
                names = sorted([*values, *per_class])
                raise DataValidationError(
                    msg("unknown on-prem cost {name!r}{did_you_mean_name}").format(
                        name=name, did_you_mean_name=did_you_mean(name, names)
                    ),
                    msg("use one of: {join}").format(join=joined(", ", names)),
                )
        return self.model_copy(update={"values": values, "per_gpu_class": per_class})


def _gpu_class(name: str) -> str:
    return name.strip().upper()


def _class_candidates(gpu: str) -> list[str]:
    """Most specific first: 'A100-SXM-80GB' -> ['A100-SXM-80GB', 'A100-SXM', 'A100']."""
    parts = _gpu_class(gpu).split("-")
    return [joined("-", parts[:n]) for n in range(len(parts), 0, -1)]


def _override(current: CostValue | None, name: str, given: Any) -> CostValue:
    if isinstance(given, bool) or not isinstance(given, (int, float)) or given < 0:
        raise DataValidationError(
            msg("onprem.{name} must be a non-negative number, got {given!r}").format(name=name, given=given),
            msg("write a plain number"),
        )
    unit = current.unit if current else "see gpuwise/catalog/data/onprem_costs.yaml"
    return CostValue(value=float(given), unit=unit, source=USER_SOURCE)


def read_onprem_defaults(path: Path) -> OnpremDefaults:
    """Parse and validate an on-prem defaults YAML file; errors name file:line and the field."""
    data, lines = load_yaml_with_lines(path)
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise DataValidationError(
            msg("not a {schema} file").format(schema=SCHEMA),
            msg("the file must start with  schema: {schema}").format(schema=SCHEMA),
            path=str(path),
            line=1,
        )
    return validate_data(OnpremDefaults, data, lines, path)


def shipped_costs_path() -> Path:
    return Path(str(resources.files("gpuwise.catalog") / "data" / "onprem_costs.yaml"))


@functools.lru_cache(maxsize=1)
def load_onprem_defaults() -> OnpremDefaults:
    """The shipped on-prem cost defaults (cached; immutable)."""
    return read_onprem_defaults(shipped_costs_path())
