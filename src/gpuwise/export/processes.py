"""Host-side readings of the processes using a GPU: CPU share, block-I/O wait share, RSS, name (psutil).

The share of a core a process used is a rate, so the tracker keeps each pid's previous CPU times and
reports the change since the last call; the first sight of a pid gives None, never a guess.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import psutil


@dataclass
class ProcessReading:
    name: str | None
    cpu_pct: float | None
    iowait_pct: float | None
    rss_bytes: int | None


class ProcessTracker:
    def __init__(self, clock=time.monotonic) -> None:
        self._clock = clock
        self._last: dict[int, tuple[float, float, float | None]] = {}  # pid -> (t, cpu s, iowait s)

    def read(self, pid: int) -> ProcessReading | None:
        """None when the process is gone or not ours to read."""
        try:
            proc = psutil.Process(pid)
            with proc.oneshot():
                times = proc.cpu_times()
                name, rss = proc.name(), proc.memory_info().rss
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            self._last.pop(pid, None)
            return None
        now = self._clock()
        cpu = times.user + times.system
        iowait = getattr(times, "iowait", None)  # Linux only; stays 0 unless the kernel's delayacct is on
        previous = self._last.get(pid)
        self._last[pid] = (now, cpu, iowait)
        cpu_pct = iowait_pct = None
        if previous is not None and now > previous[0]:
            elapsed = now - previous[0]
            cpu_pct = 100.0 * (cpu - previous[1]) / elapsed
            if iowait is not None and previous[2] is not None:
                iowait_pct = 100.0 * (iowait - previous[2]) / elapsed
        return ProcessReading(name=name, cpu_pct=cpu_pct, iowait_pct=iowait_pct, rss_bytes=rss)

    def forget_except(self, pids: set[int]) -> None:
        for pid in set(self._last) - pids:
            del self._last[pid]
