"""What `gpuwise compare` reads from a bench file (BENCH_SCHEMA), a doctor report (REPORT_SCHEMA) or a
stability run (STABILITY_SCHEMA): the result rows it lines up, the facts it diffs and the findings it
sets side by side.

compare also takes files edited by hand or written by other tools, so this view is lenient where the
writer's model (documents/bench.py, strict) is not: a result row needs no layer, a field of the wrong
JSON type inside a row reads as absent (a value or stats that are not finite numbers give no value or
no noise bound, never an error), and a row may carry its samples (stats.samples; gpuwise bench does not
write them, other tools may). What compare cannot read past (a results, facts or findings field that is
not a list or an object, a row that is not an object) is an error naming the field (documents/load.py).
The writers' models: documents/bench.py, report/model.py, stability/model.py.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from gpuwise.documents.ids import BENCH_SCHEMA, REPORT_SCHEMA, STABILITY_SCHEMA
from gpuwise.documents.view import View


def finite(x: Any) -> float | None:
    """A JSON number that is finite, as a float; anything else (text, a boolean, NaN, inf) is None."""
    ok = isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
    return float(x) if ok else None


def _count(x: Any) -> int | None:
    return x if isinstance(x, int) and not isinstance(x, bool) else None


def _samples(x: Any) -> list[float] | None:
    return [v for v in map(finite, x) if v is not None] if isinstance(x, list) else None


def _text(x: Any) -> str | None:
    return None if x is None else str(x)


def _object(x: Any) -> Any:
    return x if isinstance(x, dict) else None


def _object_or_empty(x: Any) -> Any:
    return x if isinstance(x, dict) else {}


Finite = Annotated[float | None, BeforeValidator(finite)]
Count = Annotated[int | None, BeforeValidator(_count)]
Samples = Annotated[list[float] | None, BeforeValidator(_samples)]
Text = Annotated[str | None, BeforeValidator(_text)]
Unit = Annotated[str, BeforeValidator(lambda x: str(x or ""))]


class ResultStats(View):
    """The repeats behind a result; a field that is not a usable number is None (no noise bound)."""

    min: Finite = None
    max: Finite = None
    repeats: Count = None
    samples: Samples = None  # the repeats themselves, non-numbers dropped


class ResultRow(View):
    name: Annotated[str, BeforeValidator(str)] = "?"
    device: Text = None
    unit: Unit = ""
    status: Text = "ok"
    value: Finite = None
    stats: Annotated[ResultStats | None, BeforeValidator(_object)] = None


class Hosted(View):
    hostname: Text = None  # what gpuwise bench and doctor write
    host: Text = None  # what gpuwise stability (and some other tools) write

    def host_name(self) -> str | None:
        return self.hostname or self.host


class ResultRows(Hosted):
    """A bench document's results (a bench file, or a doctor report's `measurements`)."""

    results: list[ResultRow] = Field(default_factory=list)


class ComparedBench(ResultRows):
    schema_: Literal[BENCH_SCHEMA] = Field(alias="schema")  # type: ignore[valid-type]


class ComparedFinding(View):
    id: Text = None
    title: Text = None
    status: Text = None


class ComparedReport(Hosted):
    schema_: Literal[REPORT_SCHEMA] = Field(alias="schema")  # type: ignore[valid-type]
    facts: dict[str, Any] = Field(default_factory=dict)  # the whole facts document: facts/diff.py walks it
    findings: list[ComparedFinding] = Field(default_factory=list)
    measurements: ResultRows | None = None  # the bench results the report judged, if any


class ComparedMetricInfo(View):
    name: Annotated[str, BeforeValidator(lambda x: str(x or "?"))] = "?"
    unit: Unit = ""


class ComparedMetricSummary(View):
    median: Finite = None
    p99: Finite = None
    cv: Finite = None


class ComparedMetric(View):
    """One metric of a stability run; an info or summary that is not an object reads as empty."""

    info: Annotated[ComparedMetricInfo, BeforeValidator(_object_or_empty)] = Field(
        default_factory=ComparedMetricInfo
    )
    summary: Annotated[ComparedMetricSummary, BeforeValidator(_object_or_empty)] = Field(
        default_factory=ComparedMetricSummary
    )


class ComparedStability(Hosted):
    schema_: Literal[STABILITY_SCHEMA] = Field(alias="schema")  # type: ignore[valid-type]
    results: list[ComparedMetric] = Field(default_factory=list)
