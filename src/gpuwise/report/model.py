"""The Report: facts, measurements and ranked findings of one machine (schema gpuwise-report/1).

This JSON is a contract: `gpuwise compare` reads two of them, and other tools may too. Fields are
only ever added; a reader ignores what it does not know (hence extra="ignore" on load).
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from gpuwise.advise.finding import PRIORITY_ORDER, STATUS_ORDER, EnvKind, Finding
from gpuwise.documents.ids import REPORT_SCHEMA
from gpuwise.i18n import msg
from gpuwise.textmodel import TextModel


class EnvInfo(TextModel):
    model_config = ConfigDict(extra="ignore")
    kind: EnvKind = "unknown"
    detected: EnvKind = "unknown"
    reason: str = ""
    overridden: bool = False


class Summary(TextModel):
    model_config = ConfigDict(extra="ignore")
    by_status: dict[str, int] = Field(default_factory=dict)
    by_priority: dict[str, int] = Field(default_factory=dict)  # not counting passes
    exit_code: int = 0
    verdict: str = ""


class Report(TextModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    schema_: str = Field(REPORT_SCHEMA, alias="schema")
    created_at: str | None = None
    gpuwise_version: str | None = None
    hostname: str | None = None
    source: str | None = None  # "live" or the capture path
    env: EnvInfo = Field(default_factory=EnvInfo)
    facts: dict[str, Any] = Field(default_factory=dict)  # Facts.to_json_dict()
    measurements: dict[str, Any] | None = None  # BenchReport.to_json_dict(), when given
    nccl_logs: list[dict[str, Any]] = Field(
        default_factory=list
    )  # NcclDebugLog summaries (doctor --nccl-log)
    findings: list[Finding] = Field(default_factory=list)
    summary: Summary = Field(default_factory=Summary)

    def to_json_dict(self) -> dict:
        return self.model_dump(mode="json", by_alias=True)


def exit_code_for(findings: list[Finding]) -> int:
    """Doctor's exit code: 2 if any finding fails (critical), 1 if any warns, else 0."""
    statuses = {f.status for f in findings}
    return 2 if "fail" in statuses else 1 if "warn" in statuses else 0


def summarize(findings: list[Finding], not_judged: str | None = None) -> Summary:
    """Counts, exit code and verdict. `not_judged` (why no node fact could be read) makes the verdict
    "could not judge" with exit 3, unless a finding is critical (exit 2 outranks it)."""
    by_status = {s: sum(1 for f in findings if f.status == s) for s in STATUS_ORDER}
    by_priority = {
        p: sum(1 for f in findings if f.priority == p and f.status != "pass") for p in PRIORITY_ORDER
    }
    code = exit_code_for(findings)
    if not_judged and code != 2:
        verdict = msg("could not judge this node: {why}").format(why=not_judged)
        return Summary(by_status=by_status, by_priority=by_priority, exit_code=3, verdict=verdict)
    verdict = {
        0: msg("no problems found"),
        1: msg("{warn} warning(s) to look at").format(warn=by_status["warn"]),
        2: msg("{fail} critical finding(s), {warn} warning(s)").format(
            fail=by_status["fail"], warn=by_status["warn"]
        ),
    }[code]
    return Summary(by_status=by_status, by_priority=by_priority, exit_code=code, verdict=verdict)
