"""Monitoring facts: the DCGM version and which monitoring agents are running (from `ps -eo comm=`)."""

from __future__ import annotations

import re
from functools import lru_cache

from gpuwise.capture.host import Host
from gpuwise.facts.models import Monitoring
from gpuwise.facts.sourcing import command_text, load_data_csv
from gpuwise.i18n import msg

COMM_MAX = 15  # TASK_COMM_LEN - 1: the kernel keeps only this many characters of a process name


@lru_cache(maxsize=1)
def agent_table() -> tuple[tuple[str, frozenset[str]], ...]:
    """(agent, truncated process names) from data/monitoring_agents.csv."""
    return tuple(
        (row["agent"], frozenset(p.strip()[:COMM_MAX] for p in row["processes"].split("|") if p.strip()))
        for row in load_data_csv("monitoring_agents.csv", ("agent", "processes"))
    )


def parse_dcgmi_version(text: str) -> str | None:
    """`dcgmi --version` prints 'dcgmi  version: 3.3.5' (plus build lines)."""
    m = re.search(r"version:\s*([0-9][\w.\-]*)", text)
    return m.group(1) if m else None


def agents_running(ps_text: str) -> list[str]:
    comms = {line.strip()[:COMM_MAX] for line in ps_text.splitlines() if line.strip()}
    return [agent for agent, names in agent_table() if comms & names]


def collect_monitoring(host: Host) -> Monitoring:
    """DCGM version (dcgmi) and the monitoring agents among running processes."""
    mon = Monitoring()
    text, reason = command_text(host, "dcgmi-version")
    mon.dcgm_version = parse_dcgmi_version(text) if text else None
    if mon.dcgm_version is None:
        mon.why("dcgm_version", reason or msg("no version in dcgmi --version"), kind="unparsable")
    text, reason = command_text(host, "ps-comm")
    if text is None:
        mon.why("agents_running", reason)
    else:
        mon.agents_running = agents_running(text)
    return mon
