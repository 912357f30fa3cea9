"""The doctor pipeline as a library call: Facts (+ BenchReport) -> findings -> Report.

It sits above both `advise` (which turns facts into findings) and `report` (which holds the Report
model and renders it), so neither of those imports the other's work: `report` depends on models only.
"""

from __future__ import annotations

from datetime import datetime, timezone

from gpuwise import __version__
from gpuwise.advise.engine import run_rules
from gpuwise.advise.expect import check_expectations
from gpuwise.advise.finding import Finding
from gpuwise.bench.nccl_debug import NcclDebugLog
from gpuwise.documents.bench import BenchReport
from gpuwise.facts.models import Facts
from gpuwise.i18n import msg
from gpuwise.profile.model import LoadedProfile
from gpuwise.report.model import EnvInfo, Report, summarize


def resolve_env(facts: Facts, override: str = "auto") -> EnvInfo:
    """The environment kind the rules use: the detected one, unless --env overrides it."""
    detected = facts.platform.environment or "unknown"
    reason = facts.platform.environment_reason
    if override in ("cloud", "onprem"):
        return EnvInfo(kind=override, detected=detected, reason=reason, overridden=True)
    return EnvInfo(kind=detected, detected=detected, reason=reason, overridden=False)


def diagnose(
    facts: Facts,
    bench: BenchReport | None = None,
    env: str = "auto",
    nccl_logs: tuple[NcclDebugLog, ...] = (),
    expected: dict[str, object] | None = None,
    profiles: tuple[LoadedProfile, ...] = (),
    stability=None,
) -> Report:
    """Run every rule over `facts` (and `bench`, NCCL debug logs and step profiles of the user's runs) for
    the resolved environment kind, check the operator's expectations (`--expect gpus=8,ib=4`), and build
    the Report. `stability`: a gpuwise-stability/1 result of this machine (doctor --stability)."""
    info = resolve_env(facts, env)
    findings = run_rules(facts, bench, info.kind, nccl_logs=nccl_logs, profiles=profiles, stability=stability)
    if expected:
        findings = sorted(findings + check_expectations(facts, expected), key=Finding.sort_key)
    return build_report(facts, findings, info, bench, nccl_logs)


NOT_RUN = ("missing", "not captured", "timeout", "error")  # Meta.commands statuses that gave no output


def nothing_read(facts: Facts) -> str | None:
    """Why no fact about the node could be read, or None when at least one command gave output.

    A capture in which every command is missing, not captured, timed out or failed to start has no
    GPU, network or software facts: "no problems found" would be a claim about evidence never seen."""
    statuses = facts.meta.commands
    if not statuses or any(status not in NOT_RUN for status in statuses.values()):
        return None  # no record of commands (facts read from text, not a host) is no claim either way
    return msg(
        "none of the {n} commands gave output (missing or not captured); capture again on the node "
        "with the tools installed (`gpuwise capture`), or run `gpuwise doctor` there"
    ).format(n=len(statuses))


def build_report(
    facts: Facts,
    findings: list[Finding],
    env: EnvInfo,
    bench: BenchReport | None = None,
    nccl_logs: tuple[NcclDebugLog, ...] = (),
) -> Report:
    """Assemble a Report from Facts, findings, the environment decision and a BenchReport."""
    return Report(
        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        gpuwise_version=__version__,
        hostname=facts.meta.hostname,
        source=facts.meta.source,
        env=env,
        facts=facts.to_json_dict(),
        measurements=bench.to_json_dict() if bench is not None else None,
        nccl_logs=[log.model_dump(mode="json") for log in nccl_logs],
        findings=findings,
        summary=summarize(findings, not_judged=nothing_read(facts)),
    )
