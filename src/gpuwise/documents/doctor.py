"""What gpuwise reads back from a doctor report (REPORT_SCHEMA, written by report/model.py's Report):
the history records it (store/records.py) and `fleet report` takes a node's findings from it.

The findings stay JSON objects here: their model is the writer's own (advise/finding.py's Finding),
which the fleet validates them with; this view never copies its shape.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from gpuwise.documents.bench import BenchReport
from gpuwise.documents.ids import REPORT_SCHEMA
from gpuwise.documents.view import View


class GpuName(View):
    name: str | None = None


class Kernel(View):
    release: str | None = None


class DoctorFacts(View):
    """The part of the report's facts (FACTS_SCHEMA, facts/models.py) the history keeps."""

    software: dict[str, Any] = Field(default_factory=dict)  # versions: driver, CUDA, torch, NCCL, ...
    gpus: list[GpuName] = Field(default_factory=list)
    kernel: Kernel | None = None


class DoctorSummary(View):
    by_status: dict[str, int] = Field(default_factory=dict)  # pass / warn / fail / ... -> count


class DoctorReport(View):
    schema_: Literal[REPORT_SCHEMA] = Field(alias="schema")  # type: ignore[valid-type]
    created_at: str | None = None
    hostname: str | None = None
    source: str | None = None  # "live", or the capture the facts were read from
    facts: DoctorFacts = Field(default_factory=DoctorFacts)
    measurements: BenchReport | None = None  # the bench results it judged (--bench-results), if any
    findings: list[dict[str, Any]] = Field(default_factory=list)  # advise.finding.Finding, as JSON
    summary: DoctorSummary = Field(default_factory=DoctorSummary)
