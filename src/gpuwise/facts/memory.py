"""Memory facts from /proc/meminfo, plus hugepage pools from /sys/kernel/mm/hugepages."""

from __future__ import annotations

import re

from gpuwise.capture.host import Host
from gpuwise.facts.models import Memory
from gpuwise.facts.sourcing import binary_scale, file_text, to_int
from gpuwise.i18n import msg


def parse_meminfo(text: str) -> dict[str, int]:
    """/proc/meminfo -> {"MemTotal": bytes, "HugePages_Total": count, ...}. Garbage lines are skipped."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        m = re.match(r"^\s*([A-Za-z0-9_()]+):\s+(\d+)(?:\s+(\w+))?\s*$", line)
        scale = binary_scale(m.group(3) or "") if m else None
        if scale is not None:
            out[m.group(1)] = int(m.group(2)) * scale
    return out


def collect_memory(host: Host) -> Memory:
    """Total, available and swap bytes; the default hugepage pool (or the first non-empty one)."""
    mem = Memory()
    text, reason = file_text(host, "/proc/meminfo")
    info = parse_meminfo(text) if text else {}
    mem.total_bytes = info.get("MemTotal")
    mem.available_bytes = info.get("MemAvailable")
    mem.swap_total_bytes = info.get("SwapTotal")
    mem.hugepages_total = info.get("HugePages_Total")
    mem.hugepage_size_bytes = info.get("Hugepagesize")

    # meminfo only shows the default page size; 1 GiB pages reserved on the command line live in sysfs.
    if not mem.hugepages_total:
        for path in host.glob("/sys/kernel/mm/hugepages/hugepages-*kB/nr_hugepages"):
            count = to_int(host.read_file(path))
            size = re.search(r"hugepages-(\d+)kB/", path)
            if count and size:
                mem.hugepages_total, mem.hugepage_size_bytes = count, int(size.group(1)) * 1024
                break

    for field, key in (
        ("total_bytes", "MemTotal"),
        ("available_bytes", "MemAvailable"),
        ("swap_total_bytes", "SwapTotal"),
        ("hugepages_total", "HugePages_Total"),
        ("hugepage_size_bytes", "Hugepagesize"),
    ):
        if getattr(mem, field) is None:
            mem.why(field, reason or msg("no {key} line in /proc/meminfo").format(key=key), kind="unparsable")
    return mem
