"""A watch session: sample the GPUs while a process runs, keep the samples, sum up what they show.

`Watcher.run()` samples a Source every `interval_s` (and once more when the process ends) until the
command it started exits, the process it watches is gone, `duration_s` passes, or Ctrl-C. It renders
nothing: each frame goes to an `on_frame` callback (the command draws it). `summarize()` turns frames
into a WatchSummary: per GPU, how long it was idle, power-limited and under each tuning signal, and its
peak memory; for the process, wall time, CPU time and peak RSS (from the kernel's wait4 rusage).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import psutil

from gpuwise.documents.ids import WATCH_SUMMARY_SCHEMA as SCHEMA
from gpuwise.errors import UserInputError
from gpuwise.export import signals
from gpuwise.export.recording import RecordWriter
from gpuwise.export.sample import Snapshot
from gpuwise.export.sources import Source
from gpuwise.i18n import msg


@dataclass
class HostSummary:
    command: list[str] | None = None
    pid: int | None = None
    exit_code: int | None = None
    wall_s: float = 0.0
    cpu_s: float | None = None  # user + system, the process and the children it waited for
    peak_rss_bytes: int | None = None

    @property
    def cpu_pct(self) -> float | None:
        return None if self.cpu_s is None or self.wall_s <= 0 else 100.0 * self.cpu_s / self.wall_s


@dataclass
class GpuSummary:
    index: int
    name: str | None
    uuid: str | None
    samples: int = 0
    seconds: float = 0.0
    idle_s: float = 0.0
    util_mean_pct: float | None = None
    peak_memory_mib: float | None = None
    memory_total_mib: float | None = None
    signal_s: dict[str, float] = field(default_factory=dict)  # time each signal was on
    signal_known_s: dict[str, float] = field(default_factory=dict)  # time each signal could be judged

    @property
    def power_limited_s(self) -> float:
        return self.signal_s.get("power_limited", 0.0)

    def fraction(self, signal_id: str) -> float | None:
        known = self.signal_known_s.get(signal_id, 0.0)
        return None if known <= 0 else self.signal_s.get(signal_id, 0.0) / known


@dataclass
class WatchSummary:
    source: str
    samples: int
    gpu_error: str | None
    gpus: list[GpuSummary]
    host: HostSummary | None
    signals: dict[str, signals.SignalInfo]
    thresholds: dict[str, float]

    def to_dict(self) -> dict:
        gpus = []
        for g in self.gpus:
            d = asdict(g)
            d["power_limited_s"] = g.power_limited_s
            d["signal_fraction"] = {sid: g.fraction(sid) for sid in g.signal_known_s}
            gpus.append(d)
        host = None if self.host is None else {**asdict(self.host), "cpu_pct": self.host.cpu_pct}
        return {
            "schema": SCHEMA,
            "source": self.source,
            "samples": self.samples,
            "gpu_error": self.gpu_error,
            "gpus": gpus,
            "host": host,
        }


def summarize(
    frames: list[Snapshot], source: str, interval_s: float, host: HostSummary | None = None
) -> WatchSummary:
    """Each frame stands for the time until the next one (the nominal interval when stamps do not move)."""
    config = signals.load_config()
    idle_pct = config.thresholds["idle_util_pct"]
    by_index: dict[int, GpuSummary] = {}
    util_time: dict[int, tuple[float, float]] = {}
    errors = [f.error for f in frames if f.error and not f.gpus]
    for i, frame in enumerate(frames):
        nxt = frames[i + 1].taken_at if i + 1 < len(frames) else None
        dt = nxt - frame.taken_at if nxt is not None and nxt > frame.taken_at else interval_s
        for g in frame.gpus:
            s = by_index.setdefault(g.index, GpuSummary(index=g.index, name=g.name, uuid=g.uuid))
            s.samples += 1
            s.seconds += dt
            if g.util_gpu_pct is not None:
                if g.util_gpu_pct <= idle_pct:
                    s.idle_s += dt
                total, weight = util_time.get(g.index, (0.0, 0.0))
                util_time[g.index] = (total + g.util_gpu_pct * dt, weight + dt)
            if g.fb_used_mib is not None:
                s.peak_memory_mib = max(s.peak_memory_mib or 0.0, g.fb_used_mib)
            if g.memory_total_mib is not None:
                s.memory_total_mib = g.memory_total_mib
            for sid, on in signals.evaluate(g, config).items():
                if on is not None:
                    s.signal_known_s[sid] = s.signal_known_s.get(sid, 0.0) + dt
                    s.signal_s[sid] = s.signal_s.get(sid, 0.0) + (dt if on else 0.0)
    for index, (total, weight) in util_time.items():
        by_index[index].util_mean_pct = total / weight if weight > 0 else None
    gpus = [by_index[i] for i in sorted(by_index)]
    return WatchSummary(
        source=source,
        samples=len(frames),
        gpu_error=errors[0] if errors and not gpus else None,
        gpus=gpus,
        host=host,
        signals=config.signals,
        thresholds=config.thresholds,
    )


class Watcher:
    def __init__(self, source: Source, interval_s: float, record: RecordWriter | None = None) -> None:
        self.source, self.interval_s, self.record = source, interval_s, record
        self.frames: list[Snapshot] = []

    def run(
        self,
        *,
        command: list[str] | None = None,
        pid: int | None = None,
        duration_s: float | None = None,
        on_frame: Callable[[Snapshot, float], None] = lambda frame, elapsed: None,
    ) -> WatchSummary:
        started = time.monotonic()
        child = _start(command) if command else None
        target = _attach(pid) if pid is not None else None
        host = HostSummary(command=command, pid=child.pid if child else pid)
        cpu_at_start = _cpu_seconds(target) if target else None
        peak_rss = 0
        try:
            while True:
                self._sample(on_frame, started)
                if target is not None:
                    peak_rss = max(peak_rss, _rss(target))
                next_at = time.monotonic() + self.interval_s
                done = False
                while not done and time.monotonic() < next_at:
                    time.sleep(min(0.05, max(0.0, next_at - time.monotonic())))
                    done = _finished(child, host, target, started, duration_s)
                if done:
                    break
        except KeyboardInterrupt:
            if child is not None:  # the terminal sent SIGINT to the child too; give it a moment
                _stop(child, host)
        self._sample(on_frame, started)  # the state at the end, after the process
        host.wall_s = time.monotonic() - started
        if target is not None:
            end = _cpu_seconds(target)
            host.cpu_s = None if end is None or cpu_at_start is None else end - cpu_at_start
            host.peak_rss_bytes = peak_rss or None
        if command is None and pid is None:
            host = None
        return summarize(self.frames, self.source.description, self.interval_s, host)

    def _sample(self, on_frame: Callable[[Snapshot, float], None], started: float) -> None:
        frame = self.source.read()
        self.frames.append(frame)
        if self.record is not None:
            self.record.add(frame)
        on_frame(frame, time.monotonic() - started)


def _start(command: list[str]) -> subprocess.Popen:
    try:
        return subprocess.Popen(command)
    except OSError as exc:
        raise UserInputError(
            msg("cannot run {command!r}: {value}").format(command=command[0], value=exc.strerror or exc),
            msg("check the command after `--` (is it installed and on PATH?)"),
        ) from exc


def _attach(pid: int) -> psutil.Process:
    try:
        return psutil.Process(pid)
    except psutil.NoSuchProcess as exc:
        raise UserInputError(
            msg("no process with PID {pid}").format(pid=pid),
            msg("pass the PID of a running process (see `ps`)"),
        ) from exc


def _finished(child, host: HostSummary, target, started: float, duration_s: float | None) -> bool:
    if child is not None and _reap(child, host):
        return True
    if target is not None and child is None and not target.is_running():
        return True
    return duration_s is not None and time.monotonic() - started >= duration_s


def _reap(child: subprocess.Popen, host: HostSummary, block: bool = False) -> bool:
    """wait4 the child: its exit code, CPU time and peak RSS from the kernel's accounting."""
    try:
        pid, status, usage = os.wait4(child.pid, 0 if block else os.WNOHANG)
    except ChildProcessError:
        return True
    if pid == 0:
        return False
    child.returncode = os.waitstatus_to_exitcode(status)
    host.exit_code = child.returncode
    host.cpu_s = usage.ru_utime + usage.ru_stime
    host.peak_rss_bytes = usage.ru_maxrss * 1024  # Linux reports KiB
    return True


def _stop(child: subprocess.Popen, host: HostSummary) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if _reap(child, host):
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(child.pid, signal.SIGKILL)
    _reap(child, host, block=True)


def _cpu_seconds(proc: psutil.Process) -> float | None:
    try:
        t = proc.cpu_times()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None
    return t.user + t.system + t.children_user + t.children_system


def _rss(proc: psutil.Process) -> int:
    try:
        return proc.memory_info().rss
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return 0
