"""`gpuwise fleet healthcheck`: doctor with expectations, fast enough for Slurm's HealthCheckProgram and prolog.

Exit codes follow what Slurm does with them: 0 = healthy (warnings included); 1 = a critical finding
(as Prolog, a non-zero exit makes slurmd drain the node and requeue the job; as HealthCheckProgram the
exit code is ignored, so use --drain to drain it here). The whole check is bounded by a deadline: a
GPU driver that hangs `nvidia-smi` or NVML is itself a critical finding, not a hung health check.

The check runs in a forked child that is killed at the deadline. A thread cannot be stopped, and a
thread stuck in C code that holds the GIL (a regex or a tar header over a huge hostile input) keeps
the main thread from even noticing the deadline: `--timeout 2` once took 4 s that way.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import socket
import threading
import time
from dataclasses import dataclass, field

from gpuwise.advise.expect import check_expectations, short_reason
from gpuwise.advise.finding import Evidence, Finding
from gpuwise.errors import GpuwiseError
from gpuwise.facts.models import Facts
from gpuwise.i18n import N_, msg
from gpuwise.slurm import client as slurm

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


@dataclass
class Checked:
    """What the child of collect_with_deadline sends back: the node's host name and its findings
    (messages: English, worded where they are shown; a drain reason is their English text)."""

    hostname: str | None
    findings: list[Finding]


def check_node(collect, expected: dict[str, object] | None) -> Checked:
    """Read the node (`collect()` -> Facts) and judge it: the work that the deadline bounds."""
    facts = collect()
    return Checked(facts.meta.hostname, health_findings(facts, expected))


def short_host(hostname: str | None) -> str | None:
    """node07.cluster.example -> node07 (the name Slurm knows a node by)."""
    return hostname.split(".")[0] if hostname else None


def node_name(given: str | None = None) -> str:
    """The Slurm node name: --node, else $SLURMD_NODENAME (set for prolog and health check), else the short hostname."""
    return given or os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]


def collect_with_deadline(
    collect, deadline_s: float, timeout_s: float | None = None
) -> tuple[Facts | None, Finding | None]:
    """Run `collect()` within `deadline_s` seconds; a timeout or an error becomes a critical finding
    (naming `timeout_s`, the user's --timeout, when given) instead of a hang or a traceback. `collect`
    runs in a forked child (killed at the deadline) and its result comes back pickled; without fork
    (not Linux/macOS), in a daemon thread."""
    if not hasattr(os, "fork"):
        return _in_thread(collect, deadline_s)
    kind, value = _in_child(collect, deadline_s)
    if kind == "timeout":
        return None, broken_finding("health.timeout", deadline_s if timeout_s is None else timeout_s)
    if kind == "error":
        return None, broken_finding("health.collect_failed", value)
    return value, None


def _in_child(work, deadline_s: float) -> tuple[str, object]:
    """("ok", work()) or ("error", text) or ("timeout", None); the child never outlives the deadline."""
    end = time.monotonic() + deadline_s
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: compute, send, and leave without running the parent's exit handlers
        os.close(read_fd)
        try:
            try:
                payload = pickle.dumps(("ok", work()))
            except BaseException as exc:  # noqa: BLE001 - every failure is a finding, never a traceback
                payload = pickle.dumps(("error", str(exc) or type(exc).__name__))
            view = memoryview(payload)
            while view:
                view = view[os.write(write_fd, view) :]
        finally:
            os._exit(0)
    os.close(write_fd)
    chunks: list[bytes] = []
    try:
        while True:
            left = end - time.monotonic()
            if left <= 0 or not select.select([read_fd], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                return "timeout", None
            chunk = os.read(read_fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_fd)
        os.waitpid(pid, 0)
    try:
        kind, value = pickle.loads(b"".join(chunks))
    except Exception:  # noqa: BLE001 - the child died (killed, out of memory) before it sent a result
        return "error", msg("the check ended without a result")
    return kind, value


def _in_thread(collect, deadline_s: float) -> tuple[Facts | None, Finding | None]:
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
        title = msg("reading the node took longer than {seconds:g}s").format(seconds=value)
    else:
        title = msg("could not read the node: {error}").format(error=value)
    return Finding(
        id=fid,
        layer="hardware",
        priority="high",
        status="fail",
        title=title,
        evidence=[Evidence(path="healthcheck", value=value)],
        source=msg(BROKEN_SOURCE),
    )


def health_findings(facts: Facts, expected: dict[str, object] | None) -> list[Finding]:
    """The doctor's rules for this node's environment, plus the expectations."""
    from gpuwise.advise.engine import run_rules

    findings = check_expectations(facts, expected) if expected else []
    return findings + run_rules(facts, None, facts.platform.environment or "unknown")


def drain(node: str, findings: list[Finding], timeout_s: float = 10.0) -> str | None:
    """`scontrol update nodename=NODE state=drain reason=...`; returns an error text, or None when done.
    The reason is the findings' English text (never this run's --lang): Slurm's users read it."""
    try:
        slurm.drain(node, short_reason(findings), timeout_s)
    except GpuwiseError as e:
        return e.message
    return None
