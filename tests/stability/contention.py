"""Plumbing for the injected-contention tests: run `gpuwise stability` in a subprocess, and change the
machine for a window of its run (a CPU hog, a cgroup CPU quota cut, a tbf rate change).

The window is scheduled from the moment the run's first round is reported on stderr and recorded in
wall-clock time; the test converts it to run time with the result's `started_unix`, so the start-up
time of the subprocess (importing torch under load) does not matter.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

GPUWISE = [sys.executable, "-m", "gpuwise.cli"]
PREFIX = "gw-st-"


@dataclass
class Injection:
    start_s: float  # run time the change starts at
    end_s: float
    begin: object  # callables
    end: object
    wall: list[float] = field(default_factory=list)  # wall-clock times the change began and ended


def run_with_injection(
    args: list[str], save: Path, injection: Injection | None, *, prefix: list[str] | None = None,
    env: dict | None = None, preexec=None, timeout: float = 120.0,
) -> tuple[dict, Injection | None, str]:  # fmt: skip
    """Run `gpuwise stability ARGS --save SAVE`; inject the change; return (result JSON, injection, stderr)."""
    argv = [
        *(prefix or []),
        *GPUWISE,
        "stability",
        *args,
        "--save",
        str(save),
        "--no-history",
        "--format",
        "json",
    ]
    full_env = {**os.environ, "OMP_NUM_THREADS": "1", "LC_ALL": "C.UTF-8", **(env or {})}
    proc = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=full_env, preexec_fn=preexec,
        start_new_session=True,
    )  # fmt: skip
    raise_priority(proc.pid)
    lines: list[str] = []
    first_round = threading.Event()

    def read() -> None:
        for line in proc.stderr:
            lines.append(line)
            if line.startswith("round 1/"):
                first_round.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    ended = False
    try:
        if injection is not None:
            if not first_round.wait(timeout=90):
                raise AssertionError("the run never started:\n" + "".join(lines))
            t0 = time.time()  # round 1 started up to its probe time before this: corrected below
            time.sleep(max(injection.start_s - 0.3 - (time.time() - t0), 0))
            injection.begin()
            injection.wall.append(time.time())
            time.sleep(max(injection.end_s - injection.start_s, 0))
            injection.end()
            injection.wall.append(time.time())
            ended = True
        proc.wait(timeout=timeout)
    finally:
        if injection is not None and not ended:
            injection.end()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(timeout=5)
    stderr = "".join(lines)
    assert proc.returncode in (0, 1), f"exit {proc.returncode}:\n{stderr}"
    doc = json.loads(save.read_text())
    if injection is not None:  # wall clock -> run time
        injection.start_s = injection.wall[0] - doc["started_unix"]
        injection.end_s = injection.wall[1] - doc["started_unix"]
    return doc, injection, stderr


def windows_of(doc: dict, metric: str) -> list[dict]:
    result = next(r for r in doc["results"] if r["info"]["name"] == metric)
    return result["windows"]


def matching_window(doc: dict, metric: str, injection: Injection, tolerance_s: float) -> dict | None:
    """The slow window whose start and end are both within `tolerance_s` of the injected ones."""
    for w in windows_of(doc, metric):
        if (
            abs(w["start_s"] - injection.start_s) <= tolerance_s
            and abs(w["end_s"] - injection.end_s) <= tolerance_s
        ):
            return w
    return None


def describe(doc: dict, metric: str, injection: Injection | None) -> str:
    """For assertion messages: the series, the windows found and the injected one."""
    rows = [f"{s['t']:6.2f} {s['values'].get(metric)} {s['context']}" for s in doc["samples"]]
    inj = f"injected {injection.start_s:.2f}-{injection.end_s:.2f} s" if injection else "no injection"
    return f"{inj}; windows {windows_of(doc, metric)}\n" + "\n".join(rows)


def outside_cv(doc: dict, metric: str, injection: Injection) -> float:
    """Robust cv (1.4826*MAD/median) of the metric's samples outside the injected window: the noise the
    machine itself made while the test changed nothing."""
    import statistics

    xs = [
        s["values"][metric]
        for s in doc["samples"]
        if s["values"].get(metric) is not None
        and not (injection.start_s - 1 <= s["t"] <= injection.end_s + 1)
    ]
    if len(xs) < 3:
        return float("inf")
    med = statistics.median(xs)
    return 1.4826 * statistics.median(abs(x - med) for x in xs) / med if med else float("inf")


CPU_SIGNALS = ("steal_pct", "runq_wait_ms_per_s", "nonvol_cs_per_s")  # another task had the probe's CPU


def cpu_signal_that_moved(doc: dict) -> str | None:
    """The first CPU-contention context signal whose range over the run is at least the smallest move
    that counts as explaining a slowdown (context.SLOWDOWN_DIRECTION), or None: the CPU was quiet."""
    from gpuwise.stability.context import SLOWDOWN_DIRECTION

    for name in CPU_SIGNALS:
        seen = [s["context"][name] for s in doc["samples"] if s["context"].get(name) is not None]
        if seen and max(seen) - min(seen) >= SLOWDOWN_DIRECTION[name][1]:
            return name
    return None


def raise_priority(pid: int, nice: int = -10) -> None:
    """Give the session of `pid` (its own, from start_new_session) an autogroup nice value: with
    CONFIG_SCHED_AUTOGROUP the scheduler shares a CPU between sessions first, so a process's own nice
    value would not lift it above other users' sessions (sched(7), "The autogroup feature")."""
    path = Path(f"/proc/{pid}/autogroup")
    if path.exists():
        path.write_text(f"{nice}\n")
    else:
        os.setpriority(os.PRIO_PROCESS, pid, nice)


def start_hogs(cpu: int, n: int = 3) -> subprocess.Popen:
    """`n` CPU-bound processes pinned to `cpu`, in one new session with the same raised priority as the
    probe: together they take about half of that CPU from it."""
    loop = f"{sys.executable} -c 'while True: pass'"
    hog = subprocess.Popen(
        ["taskset", "-c", str(cpu), "sh", "-c", " & ".join([loop] * n) + " & wait"], start_new_session=True
    )
    raise_priority(hog.pid)
    return hog


def stop_hogs(hog: subprocess.Popen) -> None:
    import signal

    with contextlib.suppress(ProcessLookupError):
        os.killpg(hog.pid, signal.SIGKILL)
    hog.wait()


# ---- cgroups ----------------------------------------------------------------------------------


class CpuCgroup:
    """A CPU cgroup named gw-st-*: v2 where the cpu controller is enabled, else the v1 cpu hierarchy."""

    def __init__(self, name: str):
        v2_root = Path("/sys/fs/cgroup")
        self.version = None
        controllers = v2_root / "cgroup.controllers"
        if controllers.exists() and "cpu" in controllers.read_text().split():
            subtree = (v2_root / "cgroup.subtree_control").read_text().split()
            if "cpu" not in subtree:
                raise RuntimeError("cgroup v2 without the cpu controller enabled in cgroup.subtree_control")
            self.version, self.path = "v2", v2_root / name
        elif (v2_root / "cpu" / "cpu.cfs_quota_us").exists():
            self.version, self.path = "v1", v2_root / "cpu" / name
        else:
            raise RuntimeError("no cgroup with a cpu controller (v2 cpu.max or v1 cpu.cfs_quota_us)")
        self.path.mkdir()
        # weight as a session at nice -10 would have (sched_prio_to_weight: 9548 vs 1024 at nice 0), so
        # other users' load does not drown the quota cut
        if self.version == "v2":
            (self.path / "cpu.weight").write_text("900\n")
        else:
            (self.path / "cpu.shares").write_text("9548\n")

    @property
    def procs(self) -> Path:
        return self.path / "cgroup.procs"

    def limit(self, fraction: float | None, period_us: int = 20_000) -> None:
        """A quota of `fraction` of one CPU per `period_us` (short, so every probe sample is cut)."""
        if self.version == "v2":
            quota = "max" if fraction is None else str(int(period_us * fraction))
            (self.path / "cpu.max").write_text(f"{quota} {period_us}\n")
        else:
            (self.path / "cpu.cfs_period_us").write_text(f"{period_us}\n")
            quota = -1 if fraction is None else int(period_us * fraction)
            (self.path / "cpu.cfs_quota_us").write_text(f"{quota}\n")

    def remove(self) -> None:
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.1)


# ---- network namespace ------------------------------------------------------------------------


def sh(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True, timeout=30)


class NamespacedPeer:
    """A network namespace gw-st-n<id> joined by a veth pair, a tbf qdisc on the host end, and a
    gpuwise sink listening inside the namespace."""

    def __init__(self, tag: str, subnet: int, rate: str):
        self.ns, self.host_if, self.peer_if = f"{PREFIX}n{tag}", f"{PREFIX}h{tag}", f"{PREFIX}p{tag}"
        self.host_ip, self.peer_ip = f"10.251.{subnet}.1", f"10.251.{subnet}.2"
        self.sink = None
        try:
            sh("ip", "netns", "add", self.ns)
            sh("ip", "link", "add", self.host_if, "type", "veth", "peer", "name", self.peer_if)
            sh("ip", "link", "set", self.peer_if, "netns", self.ns)
            sh("ip", "addr", "add", f"{self.host_ip}/30", "dev", self.host_if)
            sh("ip", "link", "set", self.host_if, "up")
            sh("ip", "netns", "exec", self.ns, "ip", "addr", "add", f"{self.peer_ip}/30", "dev", self.peer_if)
            sh("ip", "netns", "exec", self.ns, "ip", "link", "set", self.peer_if, "up")
            sh("ip", "netns", "exec", self.ns, "ip", "link", "set", "lo", "up")
            self.tbf("add", rate)
            self.sink = subprocess.Popen(
                ["ip", "netns", "exec", self.ns, sys.executable, "-m", "gpuwise.stability.network_probe",
                 "--host", self.peer_ip, "--port", "5201"],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            )  # fmt: skip
            line = self.sink.stdout.readline()
            if "listening" not in line:
                raise RuntimeError(f"the sink did not start: {line}")
        except BaseException:
            self.close()
            raise

    @property
    def peer(self) -> str:
        return f"{self.peer_ip}:5201"

    def tbf(self, verb: str, rate: str) -> None:
        sh(
            "tc",
            "qdisc",
            verb,
            "dev",
            self.host_if,
            "root",
            "tbf",
            "rate",
            rate,
            "burst",
            "32kb",
            "latency",
            "50ms",
        )

    def close(self) -> None:
        if self.sink is not None and self.sink.poll() is None:
            self.sink.kill()
            self.sink.wait()
        subprocess.run(["ip", "link", "del", self.host_if], capture_output=True, timeout=30)
        subprocess.run(["ip", "netns", "del", self.ns], capture_output=True, timeout=30)
