"""`gpuwise fleet healthcheck`: doctor with expectations, fast enough for Slurm's HealthCheckProgram and prolog.

Exit codes follow what Slurm does with them: 0 = healthy (warnings included); 1 = a critical finding
(as Prolog, a non-zero exit makes slurmd drain the node and requeue the job; as HealthCheckProgram the
exit code is ignored, so use --drain to drain it here). The whole check is bounded by a deadline: a
GPU driver that hangs `nvidia-smi` or NVML is itself a critical finding, not a hung health check.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
from dataclasses import dataclass, field

from gpuwise.advise.finding import Evidence, Finding
from gpuwise.facts.models import Facts
from gpuwise.fleet.expect import check_expectations, short_reason
from gpuwise.i18n import N_, _, language, set_language

BROKEN_SOURCE = N_("heuristic: a node whose driver or tools hang cannot run a job either")


@dataclass
class HealthResult:
    node: str
    findings: list[Finding] = field(default_factory=list)
    drained: bool = False
    drain_error: str | None = None
    seconds: float = 0.0

    @property
    def critical(self) -> list[Finding]:
        return [f for f in self.findings if f.status == "fail"]

    @property
    def exit_code(self) -> int:
        return 1 if self.critical else 0


def node_name(given: str | None = None) -> str:
    """The Slurm node name: --node, else $SLURMD_NODENAME (set for prolog and health check), else the short hostname."""
    return given or os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]


def collect_with_deadline(collect, deadline_s: float) -> tuple[Facts | None, Finding | None]:
    """Run `collect()` in a daemon thread; a timeout becomes a critical finding instead of a hang."""
    box: dict = {}

    def work() -> None:
        try:
            box["facts"] = collect()
        except Exception as exc:  # reported as a finding, never a traceback in a prolog
            box["error"] = exc

    t = threading.Thread(target=work, daemon=True)
    t.start()
    t.join(deadline_s)
    if t.is_alive():
        return None, broken_finding("health.timeout", deadline_s)
    if "error" in box:
        return None, broken_finding("health.collect_failed", str(box["error"]))
    return box["facts"], None


def broken_finding(fid: str, value) -> Finding:
    """health.timeout (value: the deadline in seconds) or health.collect_failed (value: the error)."""
    if fid == "health.timeout":
        title = _("reading the node took longer than {seconds:g}s").format(seconds=value)
    else:
        title = _("could not read the node: {error}").format(error=value)
    return Finding(
        id=fid,
        layer="hardware",
        priority="high",
        status="fail",
        title=title,
        evidence=[Evidence(path="healthcheck", value=value)],
        source=_(BROKEN_SOURCE),
    )


def health_findings(facts: Facts, expected: dict[str, object] | None) -> list[Finding]:
    """The doctor's rules for this node's environment, plus the expectations."""
    from gpuwise.advise.engine import run_rules

    findings = check_expectations(facts, expected) if expected else []
    return findings + run_rules(facts, None, facts.platform.environment or "unknown")


def english_findings(
    findings: list[Finding], facts: Facts | None, expected: dict[str, object] | None
) -> list[Finding]:
    """The same findings with English titles, for the Slurm drain reason: slurmctld keeps it and `sinfo -R`
    shows it to every operator of the cluster, whatever language this run speaks."""
    if language() == "en":
        return findings
    current = language()
    set_language("en")
    try:
        if facts is None:  # the node could not be read: the findings are broken_finding()'s
            return [broken_finding(f.id, f.evidence[0].value) for f in findings]
        return health_findings(facts, expected)
    finally:
        set_language(current)


def drain(node: str, findings: list[Finding]) -> str | None:
    """`scontrol update nodename=NODE state=drain reason=...`; returns an error text, or None when done.
    `findings` in English (english_findings): the reason is read by Slurm's users, not this run's."""
    if shutil.which("scontrol") is None:
        return _("scontrol not found (not a Slurm node?)")
    cmd = ["scontrol", "update", f"nodename={node}", "state=drain", f"reason={short_reason(findings)}"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
    except subprocess.TimeoutExpired:
        return _("scontrol did not answer within {seconds} s").format(seconds=10)
    return (
        None if p.returncode == 0 else (p.stderr.strip() or _("scontrol exited {rc}").format(rc=p.returncode))
    )
