"""Helpers the evidence rules share: GPUs named as nvidia-smi and DCGM name them, and kernel-log events
grouped per device with how often and how recently they happened."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuwise.facts.models import Facts, Gpu, KernelEvent, KernelLog
from gpuwise.i18n import joined, msg


def bus_key(bus_id: str | None) -> tuple[int, int, int] | None:
    """(domain, bus, device) from '00000000:3B:00.0' (NVML, nvidia-smi) or '0000:3b:00' (kernel lines)."""
    if not bus_id:
        return None
    parts = bus_id.split(".")[0].split(":")
    try:
        return (int(parts[-3], 16), int(parts[-2], 16), int(parts[-1], 16)) if len(parts) >= 3 else None
    except ValueError:
        return None


def gpu_label(g: Gpu, pos: int) -> str:
    """'GPU 2 (00000000:3B:00.0)': the index (nvidia-smi's, else the GPU's position) and PCI bus id."""
    index = g.index if g.index is not None else pos
    return f"GPU {index} ({g.pci_bus_id})" if g.pci_bus_id else f"GPU {index}"


def gpu_name(facts: Facts, index: int | None = None, bus: str | None = None) -> str:
    """'GPU 3 (00000000:3B:00.0)': the index and PCI bus id, from whichever the evidence gives."""
    key = bus_key(bus)
    for pos, g in enumerate(facts.gpus):
        idx = g.index if g.index is not None else pos
        if (index is not None and idx == index) or (key is not None and bus_key(g.pci_bus_id) == key):
            return gpu_label(g, pos)
    if index is not None:
        return f"GPU {index}" + (f" ({bus})" if bus else "")
    return msg("the GPU at {bus}").format(bus=bus) if bus else msg("an unknown GPU")


def gpu_model(facts: Facts, index: int) -> str | None:
    for pos, g in enumerate(facts.gpus):
        if (g.index if g.index is not None else pos) == index:
            return g.name
    return None


def has_nvlink(name: str | None) -> bool:
    """Whether the catalog lists this model with NVLink (unknown models: no, so no false alarm)."""
    if not name:
        return False
    from gpuwise.catalog.gpus import match_gpu

    try:
        spec = match_gpu(name, warn=False)
    except Exception:  # a broken catalog must not turn into a finding
        return False
    return bool(spec and spec.nvlink_bandwidth_gb_s)


@dataclass
class Group:
    """The events of one kind family on one device in one log."""

    device: str
    log: KernelLog
    events: list[KernelEvent] = field(default_factory=list)

    @property
    def count(self) -> int:
        return sum(e.count for e in self.events)

    @property
    def kinds(self) -> set[str]:
        return {e.kind for e in self.events}

    def span_s(self) -> float | None:
        times = [e.t for e in self.events if e.t is not None]
        return max(times) - min(times) if len(times) >= 2 else None

    def ago_s(self) -> float | None:
        """Seconds from the last event to the log's last stamped line (the log's 'now')."""
        last = self.events[-1]
        end = self.log.end.get(last.clock or "")
        return max(0.0, end - last.t) if last.t is not None and end is not None else None

    def max_in_window(self, window_s: float) -> int:
        """The most events within any window_s (all of them when the log has no times)."""
        times = sorted(e.t for e in self.events if e.t is not None)
        if len(times) < len(self.events):
            return self.count
        best, lo = 0, 0
        for hi, t in enumerate(times):
            while t - times[lo] > window_s:
                lo += 1
            best = max(best, hi - lo + 1)
        return best


def groups(logs: list[KernelLog] | None, kinds: tuple[str, ...]) -> list[Group]:
    out: dict[tuple[str, str], Group] = {}
    for log in logs or []:
        for e in log.events:
            if e.kind in kinds:
                out.setdefault((log.source, e.device), Group(e.device, log)).events.append(e)
    return list(out.values())


def ranked(items: list[Group], recent_s: float, repeat: int) -> list[Group]:
    """Recent repeated events first, old one-off events last."""

    def key(g: Group) -> tuple[int, int, int]:
        ago = g.ago_s()
        recent = ago is None or ago <= recent_s
        return (0 if recent and g.count >= repeat else 1, 0 if recent else 1, -g.count)

    return sorted(items, key=key)


def when(g: Group) -> str:
    """'6 times in 5 s, the last 0 s before the log's last line' (parts left out when the log has no times)."""
    parts = [msg("{n} times").format(n=g.count) if g.count != 1 else msg("once")]
    span = g.span_s()
    if span is not None:
        parts.append(msg("within {span}").format(span=duration(span)))
    ago = g.ago_s()
    if ago is not None:
        parts.append(msg("the last {ago} before the log's last line").format(ago=duration(ago)))
    stamp = g.events[-1].stamp
    if stamp:
        parts.append(msg("at {stamp}").format(stamp=stamp))
    return joined(", ", parts)


def duration(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms" if seconds > 0 else "0 s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86400:.0f} d"
