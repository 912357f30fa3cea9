"""The doctor pipeline as a library call: Facts (+ BenchReport) -> Report with ranked findings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuwise.advise.engine import run_rules

if TYPE_CHECKING:
    from gpuwise.bench.models import BenchReport
    from gpuwise.facts.models import Facts
    from gpuwise.report.model import EnvInfo, Report

ENV_CHOICES = ("auto", "cloud", "onprem")


def resolve_env(facts: Facts, override: str = "auto") -> EnvInfo:
    """The environment kind the rules use: the detected one, unless --env overrides it."""
    from gpuwise.report.model import EnvInfo

    detected = facts.platform.environment or "unknown"
    reason = facts.platform.environment_reason or facts.platform.unknown.get("environment", "")
    if override in ("cloud", "onprem"):
        return EnvInfo(kind=override, detected=detected, reason=reason, overridden=True)
    return EnvInfo(kind=detected, detected=detected, reason=reason, overridden=False)


def diagnose(facts: Facts, bench: BenchReport | None = None, env: str = "auto") -> Report:
    """Run every rule over `facts` (and `bench`) for the resolved environment kind and build the Report."""
    from gpuwise.report.model import build_report

    info = resolve_env(facts, env)
    findings = run_rules(facts, bench, info.kind)
    return build_report(facts, findings, info, bench)
