"""NVIDIA Xid events from the kernel log (`dmesg`, and the previous boot's journal).

The driver logs every GPU error it handles as `NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.`
(older drivers omit the `PCI:` prefix). A GPU that drops off the bus while the driver loads, or on drivers that
print no Xid for it, is logged only as `NVRM: GPU at PCI:0000:01:00.0 has fallen off the bus.` or as three
lines `NVRM: The NVIDIA GPU 0000:b3:00.0` / `NVRM: (PCI ID: 10de:26b5) installed in this system has` /
`NVRM: fallen off the bus and is not responding to commands.`: read as Xid 79, which is what it is. These lines are what DCGM's and Slurm health checks watch; the
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
_BUS = r"(?:PCI:)?(?P<bus>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)"
_FELL_OFF = re.compile(rf"NVRM: GPU at {_BUS} has fallen off the bus")
_THE_GPU = re.compile(rf"NVRM: The NVIDIA GPU {_BUS}\s*$")  # the first of the three-line report
FELL_OFF_DETAIL = "GPU has fallen off the bus (logged without an Xid line)"


def parse_xid_lines(text: str) -> list[XidEvent]:
    """Every Xid line in a kernel log, oldest first (the newest MAX_EVENTS when there are more); a GPU
    reported fallen off the bus without an Xid line counts as Xid 79 unless the log has that Xid for it."""
    events: list[XidEvent] = []
    pending: tuple[str, str | None] | None = None  # "The NVIDIA GPU <bus>" seen: (bus, timestamp)
    for line in text.splitlines():
        ts = _TIMESTAMP.match(line)
        stamp = ts.group("ts").strip() if ts else None
        if m := _THE_GPU.search(line):
            pending = (m.group("bus").lower(), stamp)
            continue
        if pending and "fallen off the bus" in line:
            events.append(
                XidEvent(xid=79, pci_bus_id=pending[0], detail=FELL_OFF_DETAIL, timestamp=pending[1])
            )
            pending = None
            continue
        if pending and "NVRM:" not in line:
            pending = None
        if m := _FELL_OFF.search(line):
            events.append(
                XidEvent(xid=79, pci_bus_id=m.group("bus").lower(), detail=FELL_OFF_DETAIL, timestamp=stamp)
            )
            continue
        if "NVRM: Xid" not in line:
            continue
        m = _XID.search(line)
        if not m:
            continue
        events.append(
            XidEvent(
                xid=int(m.group("code")),
                pci_bus_id=m.group("bus").lower(),
                detail=m.group("detail").strip()[:300],
                timestamp=stamp,
            )
        )
    logged = {_bus_prefix(e.pci_bus_id) for e in events if e.xid == 79 and e.detail != FELL_OFF_DETAIL}
    events = [e for e in events if e.detail != FELL_OFF_DETAIL or _bus_prefix(e.pci_bus_id) not in logged]
    return events[-MAX_EVENTS:]


def _bus_prefix(bus: str) -> str:
    """'0000:01:00.0' and the Xid line's '0000:01:00' name one GPU."""
    return bus.split(".")[0]


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
