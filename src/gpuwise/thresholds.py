"""Sourced thresholds: the data files whose rows are `name: {value, source, unit, notes}`.

Doctor's rules (advise/data/thresholds.yaml), the fleet analysis, the history's regression check,
the exporter's HTTP limits and signals, and the stability verdict compare against numbers that a user
must be able to trace: every row names its `source` (a public document, or "heuristic: ..." for a
judgement call). One loader reads them all, so a row without a source or with a value that is not a
number fails the same way in every file: a DataValidationError naming the file and the key.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from importlib import resources
from typing import Any

import yaml

from gpuwise.errors import DataValidationError
from gpuwise.i18n import joined, msg

FIELDS = ("value", "source", "unit", "notes")


@dataclass(frozen=True)
class Threshold:
    name: str
    value: Any  # a number; in a file loaded with numbers=False also a list, a table or a word
    source: str
    unit: str = ""
    notes: str = ""


def load_thresholds(
    package: str, resource: str, section: str | None = None, numbers: bool = True
) -> dict[str, Threshold]:
    """The rows of a shipped data file (package resource), or of its top-level `section`, by name."""
    shown = f"{package.replace('.', '/')}/{resource}"
    text = resources.files(package).joinpath(resource).read_text(encoding="utf-8")
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise DataValidationError(
            msg("not valid YAML: {problem}").format(problem=joined(" ", str(e).split())),
            msg("fix the YAML syntax at that line (indentation, ':' after keys, quotes)"),
            path=shown,
        ) from None
    if section is not None:
        raw = raw.get(section) if isinstance(raw, dict) else None
    return parse_thresholds(raw, shown, numbers)


def parse_thresholds(raw: object, shown: str, numbers: bool = True) -> dict[str, Threshold]:
    """Rows already read from YAML; `shown` names their file in the errors."""
    if not isinstance(raw, dict):
        raise DataValidationError(
            msg("expected rows of the form `name: value, source`"),
            msg("give each threshold a value and the source it comes from"),
            path=shown,
        )
    return {str(name): _row(str(name), row, shown, numbers) for name, row in raw.items()}


def _row(name: str, row: object, shown: str, numbers: bool) -> Threshold:
    if not isinstance(row, dict) or "value" not in row:
        raise DataValidationError(
            msg("{key}: no value").format(key=name),
            msg("write the row as {key}: {{value: ..., source: ...}}").format(key=name),
            path=shown,
        )
    unknown = [k for k in row if k not in FIELDS]
    if unknown:
        raise DataValidationError(
            msg("{key}: unknown field {field!r} (a row has {fields})").format(
                key=name, field=str(unknown[0]), fields=joined(", ", FIELDS)
            ),
            msg("remove it, or move what it says into notes"),
            path=shown,
        )
    source = row.get("source")
    if not isinstance(source, str) or not source.strip():
        raise DataValidationError(
            msg("{key}: no source").format(key=name),
            msg(
                "name the public document the value comes from (URL, or vendor document and section), "
                "or write 'heuristic: ...' for a judgement call"
            ),  # fmt: skip
            path=shown,
        )
    value = row["value"]
    if numbers and not _is_number(value):
        raise DataValidationError(
            msg("{key}: value {value!r} is not a number").format(key=name, value=value),
            msg("write the value as a number (units go in unit)"),
            path=shown,
        )
    return Threshold(name, value, source, str(row.get("unit") or ""), str(row.get("notes") or ""))


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
