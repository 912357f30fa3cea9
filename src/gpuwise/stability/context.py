"""The context of each sample: counters read before and after a probe round, turned into rates.

Signals (all from files the kernel or NVML exposes; a signal this machine lacks is simply absent):
  steal_pct          CPU steal time, % of all CPU time (/proc/stat "cpu" line, 8th field; proc(5))
  cpu_busy_pct       non-idle CPU time of the whole machine, % (/proc/stat)
  runq_wait_ms_per_s time gpuwise's threads were runnable but waited for a CPU, ms per second: another
                     task held the CPU (/proc/self/task/*/schedstat, 2nd field, ns; the kernel's
                     Documentation/scheduler/sched-stats.rst)
  nonvol_cs_per_s    involuntary context switches of this process and its threads per second:
                     another task took our CPU (/proc/self/task/*/status nonvoluntary_ctxt_switches)
  throttled_ms_per_s time this process's cgroup was throttled by its CPU quota, ms per second
                     (cgroup v2 cpu.stat throttled_usec, or v1 cpu.stat throttled_time in ns)
  major_faults_per_s major page faults per second: pages read from disk, a page-cache miss
                     (/proc/vmstat pgmajfault)
  tcp_retrans_per_s  TCP segments retransmitted per second in this network namespace
                     (/proc/net/snmp Tcp RetransSegs; RFC 4022 tcpRetransSegs)
  gpu_sm_mhz, gpu_power_w, gpu_temp_c, gpu_clock_events
                     NVML SM clock, power draw, temperature and the clock-event reasons bit mask of GPU 0
"""

from __future__ import annotations

import contextlib
import glob
import os
import time
from pathlib import Path

from gpuwise.i18n import N_

SIGNALS = {
    "steal_pct": N_("CPU steal time (percent of CPU time; the hypervisor ran someone else)"),
    "cpu_busy_pct": N_("machine CPU busy (percent of all CPUs, non-idle)"),
    "runq_wait_ms_per_s": N_(
        "run-queue wait of gpuwise (ms per second runnable but not running: another task had the CPU)"
    ),
    "nonvol_cs_per_s": N_("involuntary context switches of gpuwise per second (another task took its CPU)"),
    "throttled_ms_per_s": N_("cgroup CPU throttled time (ms per second; the CPU quota ran out)"),
    "major_faults_per_s": N_("major page faults per second (page-cache misses read from disk)"),
    "tcp_retrans_per_s": N_("TCP retransmitted segments per second"),
    "gpu_sm_mhz": N_("GPU 0 SM clock (MHz)"),
    "gpu_power_w": N_("GPU 0 power draw (W)"),
    "gpu_temp_c": N_("GPU 0 temperature (°C)"),
    "gpu_clock_events": N_("GPU 0 clock-event reasons (NVML bit mask)"),
}

# Which way each signal moves when it explains a slowdown, and the smallest move that counts (a floor
# under the robust spread, so a signal that is flat at 0 does not "move" by 1 count).
SLOWDOWN_DIRECTION = {
    "steal_pct": (+1, 2.0),
    "cpu_busy_pct": (+1, 10.0),
    "runq_wait_ms_per_s": (+1, 50.0),
    "nonvol_cs_per_s": (+1, 20.0),
    "throttled_ms_per_s": (+1, 20.0),
    "major_faults_per_s": (+1, 50.0),
    "tcp_retrans_per_s": (+1, 5.0),
    "gpu_sm_mhz": (-1, 50.0),
    "gpu_power_w": (-1, 20.0),
    "gpu_temp_c": (+1, 5.0),
}


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return None


def proc_stat_cpu(text: str | None) -> tuple[float, float, float] | None:
    """(total, idle+iowait, steal) jiffies from /proc/stat's aggregate "cpu" line."""
    if not text:
        return None
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] == "cpu":
            try:
                v = [float(x) for x in parts[1:]]
            except ValueError:
                return None
            if len(v) < 4:
                return None
            v += [0.0] * (8 - len(v))
            # user nice system idle iowait irq softirq steal [guest guest_nice are inside user/nice]
            return sum(v[:8]), v[3] + v[4], v[7]
    return None


def nonvoluntary_switches(pid: int | str = "self") -> float | None:
    total, seen = 0.0, False
    for status in glob.glob(f"/proc/{pid}/task/*/status"):
        for line in (_read(status) or "").splitlines():
            if line.startswith("nonvoluntary_ctxt_switches:"):
                with contextlib.suppress(ValueError):
                    total += float(line.split(":", 1)[1])
                    seen = True
    return total if seen else None


def runqueue_wait_seconds(pid: int | str = "self") -> float | None:
    total, seen = 0.0, False
    for stat in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        parts = (_read(stat) or "").split()
        if len(parts) >= 2 and parts[1].isdigit():
            total += int(parts[1]) / 1e9
            seen = True
    return total if seen else None


def vmstat_field(text: str | None, key: str) -> float | None:
    for line in (text or "").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == key:
            with contextlib.suppress(ValueError):
                return float(parts[1])
    return None


def tcp_retrans(text: str | None) -> float | None:
    """RetransSegs from /proc/net/snmp (a "Tcp:" header line followed by a "Tcp:" value line)."""
    lines = [line.split() for line in (text or "").splitlines() if line.startswith("Tcp:")]
    if len(lines) >= 2 and "RetransSegs" in lines[0]:
        with contextlib.suppress(ValueError, IndexError):
            return float(lines[1][lines[0].index("RetransSegs")])
    return None


def cgroup_cpu_stat_path(proc_cgroup: str | None, mountinfo: str | None) -> tuple[str, str] | None:
    """(path of this process's cgroup cpu.stat, "v2" or "v1"): v2 when the cpu controller is enabled in
    the unified hierarchy, else the v1 hierarchy that holds the cpu controller."""
    if not proc_cgroup or not mountinfo:
        return None
    v2_mount, v1_mount = None, None
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        mount = fields[4]
        if tail[0] == "cgroup2" and v2_mount is None:
            v2_mount = mount
        elif tail[0] == "cgroup" and "cpu" in tail[2].split(",") and v1_mount is None:
            v1_mount = mount
    for line in proc_cgroup.splitlines():
        hid, _sep, rest = line.partition(":")
        controllers, _sep2, path = rest.partition(":")
        if hid == "0" and controllers == "" and v2_mount:
            candidate = os.path.join(v2_mount, path.lstrip("/"), "cpu.stat")
            if "throttled_usec" in (_read(candidate) or ""):
                return candidate, "v2"
        elif "cpu" in controllers.split(",") and v1_mount:
            candidate = os.path.join(v1_mount, path.lstrip("/"), "cpu.stat")
            if Path(candidate).exists():
                return candidate, "v1"
    return None


def throttled_seconds(text: str | None, version: str) -> float | None:
    key, scale = ("throttled_usec", 1e-6) if version == "v2" else ("throttled_time", 1e-9)
    value = vmstat_field(text, key)
    return None if value is None else value * scale


class _Gpu:
    """GPU 0 through NVML; absent (no values) where there is no driver or library."""

    def __init__(self) -> None:
        self.nvml, self.handle = None, None
        try:
            import pynvml

            pynvml.nvmlInit()
            self.handle = pynvml.nvmlDeviceGetHandleByIndex(0)
            self.nvml = pynvml
        except Exception:  # no driver, no GPU, no library: no GPU signals
            self.nvml = None

    def read(self) -> dict[str, float | None]:
        if self.nvml is None:
            return {}
        from gpuwise.capture.nvml import _clock_event_mask

        nvml, h, out = self.nvml, self.handle, {}
        getters = {
            "gpu_sm_mhz": lambda: float(nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_SM)),
            "gpu_power_w": lambda: nvml.nvmlDeviceGetPowerUsage(h) / 1000.0,
            "gpu_temp_c": lambda: float(nvml.nvmlDeviceGetTemperature(h, nvml.NVML_TEMPERATURE_GPU)),
            "gpu_clock_events": lambda: float(_clock_event_mask(nvml, h)),
        }
        for key, get in getters.items():
            try:
                out[key] = get()
            except Exception:
                out[key] = None
        return out

    def close(self) -> None:
        if self.nvml is not None:
            with contextlib.suppress(Exception):
                self.nvml.nvmlShutdown()


class ContextReader:
    """`start()` before a probe round, `stop()` after it: the signals over that round."""

    def __init__(self) -> None:
        self.cgroup = cgroup_cpu_stat_path(_read("/proc/self/cgroup"), _read("/proc/self/mountinfo"))
        self.gpu = _Gpu()
        self._before: dict[str, float | None] = {}
        self._t0 = 0.0

    def _counters(self) -> dict[str, float | None]:
        cpu = proc_stat_cpu(_read("/proc/stat"))
        c: dict[str, float | None] = {
            "cpu_total": cpu[0] if cpu else None,
            "cpu_idle": cpu[1] if cpu else None,
            "cpu_steal": cpu[2] if cpu else None,
            "nonvol_cs": nonvoluntary_switches(),
            "runq_wait": runqueue_wait_seconds(),
            "majflt": vmstat_field(_read("/proc/vmstat"), "pgmajfault"),
            "retrans": tcp_retrans(_read("/proc/net/snmp")),
        }
        if self.cgroup:
            c["throttled"] = throttled_seconds(_read(self.cgroup[0]), self.cgroup[1])
        return c

    def start(self) -> None:
        self._before, self._t0 = self._counters(), time.monotonic()

    def stop(self) -> dict[str, float | None]:
        after, dt = self._counters(), max(time.monotonic() - self._t0, 1e-6)
        b = self._before

        def delta(key: str) -> float | None:
            if b.get(key) is None or after.get(key) is None:
                return None
            return max(after[key] - b[key], 0.0)

        out: dict[str, float | None] = {}
        total = delta("cpu_total")
        if total:
            out["steal_pct"] = 100.0 * (delta("cpu_steal") or 0.0) / total
            out["cpu_busy_pct"] = 100.0 * (1.0 - (delta("cpu_idle") or 0.0) / total)
        for key, signal, scale in (
            ("nonvol_cs", "nonvol_cs_per_s", 1.0),
            ("runq_wait", "runq_wait_ms_per_s", 1000.0),
            ("majflt", "major_faults_per_s", 1.0),
            ("retrans", "tcp_retrans_per_s", 1.0),
            ("throttled", "throttled_ms_per_s", 1000.0),
        ):
            d = delta(key)
            if d is not None:
                out[signal] = d * scale / dt
        out.update(self.gpu.read())
        return out

    def close(self) -> None:
        self.gpu.close()
