"""NVIDIA Xid events from the kernel log (`dmesg`, and the previous boot's journal).

The driver logs every GPU error it handles as `NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.`
(older drivers omit the `PCI:` prefix). These lines are what DCGM's and Slurm health checks watch; the
meaning of each code is looked up by the doctor rule, not here.
"""

from __future__ import annotations

import re

from gpuwise.capture.host import Host
from gpuwise.facts.models import Kernel, XidEvent
from gpuwise.facts.sourcing import command_text

MAX_EVENTS = 1000  # a GPU in an error storm logs thousands of lines; the newest ones are kept

_XID = re.compile(
    r"NVRM: Xid \((?:PCI:)?(?P<bus>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)\):\s*"
    r"(?P<code>\d{1,4})\b,?\s*(?P<detail>.*)$"
)
_TIMESTAMP = re.compile(r"^\[\s*(?P<ts>[^\]]+)\]")


def parse_xid_lines(text: str) -> list[XidEvent]:
    """Every Xid line in a kernel log, oldest first (the newest MAX_EVENTS when there are more)."""
    events: list[XidEvent] = []
    for line in text.splitlines():
        if "NVRM: Xid" not in line:
            continue
        m = _XID.search(line)
        if not m:
            continue
        ts = _TIMESTAMP.match(line)
        events.append(
            XidEvent(
                xid=int(m.group("code")),
                pci_bus_id=m.group("bus").lower(),
                detail=m.group("detail").strip()[:300],
                timestamp=ts.group("ts").strip() if ts else None,
            )
        )
    return events[-MAX_EVENTS:]


def collect_xid(k: Kernel, host: Host) -> None:
    """Fill `k.xid_events` from `dmesg` (this boot), then the previous boot's journal where the capture has
    it: a node that crashed on a GPU error logged the Xid before the reboot. Else record why not."""
    text, reason = command_text(host, "dmesg")
    if text is None:
        k.why("xid_events", reason)
        return
    previous, _reason = command_text(host, "journalctl-k-b-1")
    earlier = [e.model_copy(update={"boot": "previous"}) for e in parse_xid_lines(previous or "")]
    k.xid_events = (earlier + parse_xid_lines(text))[-MAX_EVENTS:]
