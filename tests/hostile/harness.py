"""Run gpuwise the way a user would, on hostile input, and measure what it cost.

Each case runs the real CLI in a subprocess with an address-space cap (RLIMIT_AS), so a bomb ends in a
MemoryError instead of taking the machine down, and reads back the child's peak RSS and wall time from
wait4(). The sandbox gives the child its own HOME, TMPDIR and working directory inside pytest's temp
dir, and afterwards checks that no input file changed and that nothing was left in the sandbox's
temp and home folders, so "no file outside the temp dir changed" is checked, not assumed.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

PEAK_RSS_LIMIT_BYTES = 500 * 1024 * 1024  # issue 10: the worst case must peak under 500 MB
SECONDS_LIMIT = 10.0  # ... and under 10 s: of CPU time (user + system, the child and what it waited for),
# which other work on the machine does not stretch; the wall time is bounded by the wait's kill at 3x that
# The address-space cap is higher than the RSS limit: Python, numpy and pydantic map far more virtual
# memory than they touch. It only has to stop a runaway allocation long before the machine suffers.
ADDRESS_SPACE_CAP_BYTES = 2 * 1024**3

# The child writes its own peak RSS (VmHWM) at exit: wait4's ru_maxrss also counts the pytest process's
# RSS at fork (Linux keeps the pre-exec mm's high-water mark), so after a long test session every child
# would seem to peak at pytest's size.
_BOOT = (
    "import atexit, os, resource, sys; "
    "resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap})); "
    "atexit.register(lambda p=os.environ.get('HOSTILE_HWM_FILE'): p and open(p, 'w').write("
    "next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')))); "
    "sys.argv = ['gpuwise', *sys.argv[1:]]; "
    "from gpuwise.cli import main; main()"
)


def _vm_hwm_kib(pid: int) -> int:
    """A live process's peak RSS so far (VmHWM, KiB); 0 when it cannot be read."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            return next((int(line.split()[1]) for line in fh if line.startswith("VmHWM:")), 0)
    except (OSError, ValueError):
        return 0


@dataclass
class Outcome:
    rc: int
    stdout: str
    stderr: str
    seconds: float  # wall time
    peak_rss_bytes: int
    cpu_seconds: float = 0.0  # user + system time of the child and the children it waited for (wait4)

    def check(self, rc: int, *needles: str) -> Outcome:
        """Assert the exit code, the bounds, and that stderr/stdout say each of `needles`."""
        text = self.stdout + self.stderr
        assert self.rc == rc, f"exit {self.rc}, expected {rc}\n{text[-3000:]}"
        assert "Traceback" not in text, text[-3000:]
        for needle in needles:
            assert needle in text, f"{needle!r} not in output:\n{text[-3000:]}"
        if rc == 3:
            assert "To fix" in text, text[-3000:]
        _record(self)
        assert self.peak_rss_bytes < PEAK_RSS_LIMIT_BYTES, f"peak RSS {self.peak_rss_bytes / 2**20:.0f} MiB"
        assert self.cpu_seconds < SECONDS_LIMIT, (
            f"took {self.cpu_seconds:.1f} s of CPU ({self.seconds:.1f} s)"
        )
        return self


def _record(outcome: Outcome) -> None:
    """With GPUWISE_HOSTILE_REPORT=FILE, append each checked case's cost (how NOTES' worst case was measured)."""
    report = os.environ.get("GPUWISE_HOSTILE_REPORT")
    if report:
        case = os.environ.get("PYTEST_CURRENT_TEST", "?").split(" ")[0]
        with open(report, "a") as fh:
            fh.write(
                f"{outcome.peak_rss_bytes / 2**20:.1f} MiB {outcome.seconds:.2f} s"
                f" (cpu {outcome.cpu_seconds:.2f} s) rc={outcome.rc} {case}\n"
            )


class Sandbox:
    """A working directory, HOME and TMPDIR for one case, all inside pytest's tmp_path."""

    def __init__(self, root: Path):
        self.root = root
        self.work = root / "work"
        self.home = root / "home"
        self.tmp = root / "tmp"
        self.logs = root / "logs"
        self.history = root / "history"  # bench and doctor record their runs (gpuwise history): kept apart
        for d in (self.work, self.home, self.tmp, self.logs, self.history):
            d.mkdir(parents=True, exist_ok=True)
        self._inputs: dict[str, str] = {}
        self.allowed_outputs: set[str] = set()

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("GPUWISE_", "XDG_")) and k != "TMPDIR"
        }
        env.update(
            HOME=str(self.home),
            TMPDIR=str(self.tmp),
            GPUWISE_HISTORY=str(self.history / "history.db"),
            COLUMNS="120",
            PYTHONDONTWRITEBYTECODE="1",  # no __pycache__ written into the source tree
            OPENBLAS_NUM_THREADS="1",
            OMP_NUM_THREADS="1",
        )
        env.update(extra)
        return env

    def freeze_inputs(self) -> None:
        """Remember every regular file in the work dir: none may change."""
        self._inputs = _hashes(self.work)

    def start(
        self, *args: str, env: dict[str, str] | None = None, new_session: bool = True
    ) -> subprocess.Popen:
        n = len(list(self.logs.glob("*.out")))
        out = open(self.logs / f"{n}.out", "w")  # noqa: SIM115 - closed when the Popen is collected by wait()
        err = open(self.logs / f"{n}.err", "w")  # noqa: SIM115
        hwm = self.logs / f"{n}.hwm"
        proc = subprocess.Popen(
            [sys.executable, "-c", _BOOT.format(cap=ADDRESS_SPACE_CAP_BYTES), *args],
            cwd=self.work,
            env={**(env or self.env()), "HOSTILE_HWM_FILE": str(hwm)},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=new_session,
        )
        proc.log_paths = (out, err)  # type: ignore[attr-defined]
        proc.hwm_path = hwm  # type: ignore[attr-defined]
        proc.started = time.monotonic()  # type: ignore[attr-defined]
        return proc

    def wait(self, proc: subprocess.Popen, timeout: float = 3 * SECONDS_LIMIT) -> Outcome:
        deadline = proc.started + timeout  # type: ignore[attr-defined]
        polled = 0  # VmHWM read while it runs (after exec): the peak when it dies before writing its own
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - proc.started > 0.2:  # type: ignore[attr-defined]
                polled = max(polled, _vm_hwm_kib(proc.pid))
            if time.monotonic() > deadline:
                os.killpg(proc.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.01)
        seconds = time.monotonic() - proc.started  # type: ignore[attr-defined]
        proc.returncode = os.waitstatus_to_exitcode(status)
        out, err = proc.log_paths  # type: ignore[attr-defined]
        out.close()
        err.close()
        read = lambda f: Path(f.name).read_text(errors="replace")  # noqa: E731
        try:
            peak_kib = int(proc.hwm_path.read_text())  # type: ignore[attr-defined]
        except (OSError, ValueError):
            peak_kib = polled or usage.ru_maxrss
        cpu = usage.ru_utime + usage.ru_stime
        return Outcome(proc.returncode, read(out), read(err), seconds, peak_kib * 1024, cpu)

    def run(
        self, *args: str, env: dict[str, str] | None = None, timeout: float = 3 * SECONDS_LIMIT
    ) -> Outcome:
        return self.wait(self.start(*args, env=env), timeout)

    def check_untouched(self) -> None:
        """No input changed, and nothing but the declared outputs appeared; TMPDIR and HOME are empty."""
        now = _hashes(self.work)
        changed = sorted(p for p, h in self._inputs.items() if now.get(p) != h)
        assert not changed, f"input files changed or vanished: {changed}"
        new = sorted(set(now) - set(self._inputs) - self.allowed_outputs)
        assert not new, f"unexpected files left in the work dir: {new}"
        hidden = sorted(p.name for p in self.work.iterdir() if p.name.startswith("."))
        assert not hidden, f"temporaries left in the work dir: {hidden}"
        assert not list(self.tmp.iterdir()), f"left in TMPDIR: {[p.name for p in self.tmp.iterdir()]}"
        assert not list(self.home.iterdir()), f"written to HOME: {[p.name for p in self.home.iterdir()]}"


def _hashes(root: Path) -> dict[str, str]:
    out = {}
    for p in root.rglob("*"):
        if p.is_symlink() or not p.is_file():
            continue
        if p.stat().st_size > 64 * 1024 * 1024:  # sparse giants: size and mtime are enough
            st = p.stat()
            out[str(p.relative_to(root))] = f"{st.st_size}:{st.st_mtime_ns}"
            continue
        out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def session_processes(sid: int) -> list[int]:
    """Processes still in session `sid` (the CLI was started as a session leader)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def processes_with_env(marker: str) -> list[int]:
    """Processes whose environment holds `marker` (inherited by everything the CLI started, any session)."""
    needle = marker.encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in (entry / "environ").read_bytes():
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state not in ("Z", "X"):
                    found.append(int(entry.name))
        except OSError:
            continue
    return found
