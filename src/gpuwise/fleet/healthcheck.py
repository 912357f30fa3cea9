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
        return None, _broken(
            "health.timeout", f"reading the node took longer than {deadline_s:g}s", deadline_s
        )
    if "error" in box:
        exc = box["error"]
        return None, _broken("health.collect_failed", f"could not read the node: {exc}", str(exc))
    return box["facts"], None


def _broken(fid: str, title: str, value) -> Finding:
    return Finding(
        id=fid,
        layer="hardware",
        priority="high",
        status="fail",
        title=title,
        evidence=[Evidence(path="healthcheck", value=value)],
        source="heuristic: a node whose driver or tools hang cannot run a job either",
    )


def health_findings(facts: Facts, expected: dict[str, object] | None) -> list[Finding]:
    """The doctor's rules for this node's environment, plus the expectations."""
    from gpuwise.advise.engine import run_rules

    findings = check_expectations(facts, expected) if expected else []
    return findings + run_rules(facts, None, facts.platform.environment or "unknown")


def drain(node: str, findings: list[Finding]) -> str | None:
    """`scontrol update nodename=NODE state=drain reason=...`; returns an error text, or None when done."""
    if shutil.which("scontrol") is None:
        return "scontrol not found (not a Slurm node?)"
    cmd = ["scontrol", "update", f"nodename={node}", "state=drain", f"reason={short_reason(findings)}"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
    except subprocess.TimeoutExpired:
        return "scontrol did not answer within 10 s"
    return None if p.returncode == 0 else (p.stderr.strip() or f"scontrol exited {p.returncode}")
