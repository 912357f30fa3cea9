"""NVIDIA Fabric Manager's log (/var/log/fabricmanager.log, or its journal): NVSwitch errors, NVLink
training failures, degraded GPUs, service starts and failures.

Line shapes are those of FM itself (`[Jul 09 2024 18:14:07] [ERROR] [tid 12727] detected NVSwitch non-fatal
error 12028 on fid 0 on NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 61`) and of systemd's journal
for the nvidia-fabricmanager unit. What each means is in NVIDIA's Fabric Manager user guide; the rule cites it.
"""

from __future__ import annotations

import re

from gpuwise.facts.log_time import LineClock
from gpuwise.facts.models import FabricEvent, FabricManagerLog
from gpuwise.facts.paste import unpaste

MAX_EVENTS = 500
_NVSWITCH = re.compile(
    r"detected NVSwitch (?P<fatal>non-fatal|fatal) error (?P<err>\d+)"
    r"(?: on (?:fid|NodeId) \d+)?(?: on NVSwitch pci bus id (?P<bus>[0-9A-Fa-f:.]+))?"
    r"(?: physical id (?P<phys>\d+))?(?: port (?P<port>\d+))?",
    re.IGNORECASE,
)
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("no_nvswitch", re.compile(r"NV_WARN_NOTHING_TO_DO|No NVSwitch devices? (?:found|detected)", re.I)),
    (
        "training_failed",
        re.compile(r"train\w*\s+(?:has\s+)?fail|fail\w*\s+to\s+train|training (?:error|failure)", re.I),
    ),
    ("degraded", re.compile(r"\bdegraded\b|excluded from|will be excluded", re.I)),
    (
        "fm_failed",
        re.compile(
            r"fabricmanager\.service: (?:Failed|Main process exited, code=exited, status=[1-9]|Control process "
            r"exited, code=exited, status=[1-9])|nv-fabricmanager.*failed! Exit code|Failed to start NVIDIA fabric",
            re.I,
        ),
    ),
    (
        "fm_start",
        re.compile(r"Fabric Manager version \S+ is running|Starting NVIDIA fabric manager service", re.I),
    ),
    ("error", re.compile(r"\[ERROR\]")),
)


def looks_like_fabric_manager(text: str) -> bool:
    return bool(
        re.search(r"NVSwitch|fabric ?manager|nv-fabricmanager|NV_WARN_NOTHING_TO_DO", text, re.I)
        and re.search(
            r"\[(?:INFO|ERROR|WARNING)\] \[tid \d+\]|fabricmanager\[\d+\]|fabricmanager", text, re.I
        )
    )


def parse_fabric_manager(text: str, source: str) -> FabricManagerLog:
    log = FabricManagerLog(source=source)
    clock = LineClock()
    for raw in unpaste(text).splitlines():
        t, _clock, stamp, line = clock.read(raw)
        event = _event(line.strip())
        if event is not None:
            event.t, event.stamp = t, stamp
            log.events.append(event)
    log.events = log.events[-MAX_EVENTS:]
    return log


def _event(line: str) -> FabricEvent | None:
    if m := _NVSWITCH.search(line):
        return FabricEvent(
            kind="nvswitch_fatal" if m.group("fatal").lower() == "fatal" else "nvswitch_nonfatal",
            error=int(m.group("err")),
            switch=m.group("bus"),
            physical_id=int(m.group("phys")) if m.group("phys") else None,
            port=int(m.group("port")) if m.group("port") else None,
            line=line[:300],
        )
    for kind, pattern in _RULES:
        if pattern.search(line):
            return FabricEvent(kind=kind, line=line[:300])  # type: ignore[arg-type]
    return None
