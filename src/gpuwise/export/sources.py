"""Where readings come from: live NVML, or a recording replayed frame by frame.

`open_source(None)` reads the GPUs of this machine through gpuwise.capture.nvml.Sampler; a path
replays what it holds, detected from its content:

- a gpuwise capture (directory or .tar.gz): its `nvidia-smi -q -x` output, one frame;
- a `gpuwise watch --record` file (JSON lines, "gpuwise-watch/1");
- `nvidia-smi --query-gpu=... --format=csv [-l N]` output, one frame per iteration;
- `nvidia-smi dmon` output, one frame per iteration.

A replay loops over its frames, one per read, stamped with the time of the read.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from pathlib import Path
from typing import Protocol

from pydantic import ValidationError

from gpuwise.documents.watch import WatchEnd, WatchHeader, WatchTrailer
from gpuwise.errors import UserInputError
from gpuwise.export.processes import ProcessTracker
from gpuwise.export.recording import RECORD_FORMAT
from gpuwise.export.replay_csv import is_dmon, snapshots_from_dmon, snapshots_from_query_csv
from gpuwise.export.replay_xml import snapshot_from_xml
from gpuwise.export.sample import GpuSample, Snapshot
from gpuwise.i18n import msg

_MAX_REPLAY_BYTES = 256 * 2**20  # a recording is text; past this it is the wrong file


class Source(Protocol):
    description: str

    def read(self) -> Snapshot: ...

    def close(self) -> None: ...


class LiveSource:
    """This machine's GPUs through NVML; host-side CPU/RSS of each GPU process through psutil."""

    def __init__(self, environment: str | None = None) -> None:
        from gpuwise.capture import nvml

        self.hostname = socket.gethostname()
        self.environment = environment if environment is not None else _live_environment()
        self._sampler = nvml.Sampler()
        self._sampler.open()
        self._processes = ProcessTracker()
        self.description = (
            msg("live NVML")
            if self._sampler.error is None
            else msg("live NVML ({error})").format(error=self._sampler.error)
        )

    def read(self) -> Snapshot:
        doc = self._sampler.sample()
        snap = Snapshot(
            taken_at=time.time(),
            hostname=self.hostname,
            gpus=[GpuSample.from_dict(g) for g in doc["gpus"]],
            driver_version=doc.get("driver_version"),
            cuda_version=doc.get("cuda_driver_version"),
            environment=self.environment,
            error=doc["error"],
        )
        seen = set()
        for gpu in snap.gpus:
            for proc in gpu.processes:
                seen.add(proc.pid)
                reading = self._processes.read(proc.pid)
                if reading is not None:
                    proc.name, proc.cpu_pct = reading.name, reading.cpu_pct
                    proc.iowait_pct, proc.rss_bytes = reading.iowait_pct, reading.rss_bytes
        self._processes.forget_except(seen)
        return snap

    def close(self) -> None:
        self._sampler.close()


class ReplaySource:
    def __init__(self, frames: list[Snapshot], description: str) -> None:
        self.frames, self.description, self._next = frames, description, 0

    def read(self) -> Snapshot:
        frame = self.frames[self._next % len(self.frames)]
        self._next += 1
        return Snapshot.from_dict({**frame.to_dict(), "taken_at": time.time()})

    def close(self) -> None:
        pass


def open_source(path: Path | None) -> Source:
    if path is None:
        return LiveSource()
    return ReplaySource(load_frames(path), msg("replay of {path}").format(path=path))


def load_frames(path: Path) -> list[Snapshot]:
    """Every frame a recording holds; a UserInputError saying how to fix a file that is not one."""
    if not path.exists():
        raise UserInputError(
            msg("{path} does not exist").format(path=path),
            msg("pass a capture, a watch recording or nvidia-smi output"),
        )
    if path.is_dir() or path.name.endswith((".tar.gz", ".tgz")):
        return [_capture_frame(path)]
    if path.stat().st_size > _MAX_REPLAY_BYTES:
        raise UserInputError(
            msg("{path} is {value:.0f} MiB: too large for a recording").format(
                path=path, value=path.stat().st_size / 2**20
            ),
            msg("pass nvidia-smi output, a watch recording or a capture"),
        )
    text = path.read_text(encoding="utf-8", errors="replace")
    stamp, host = path.stat().st_mtime, path.stem
    stripped = text.lstrip()
    if stripped.startswith("{"):
        return _recording_frames(path, text)
    if stripped.startswith("<"):
        return [snapshot_from_xml(text, hostname=host, taken_at=stamp)]
    if is_dmon(text):
        return snapshots_from_dmon(text, hostname=host, taken_at=stamp)
    return snapshots_from_query_csv(text, hostname=host, taken_at=stamp)


def _capture_frame(path: Path) -> Snapshot:
    from datetime import datetime

    from gpuwise.capture.host import CaptureHost
    from gpuwise.facts.platform import collect_platform

    host = CaptureHost(path)
    result = host.run("nvidia-smi-q-x")
    if result is None or not result.ok or not result.stdout.strip():
        raise UserInputError(
            msg("the capture {path} has no nvidia-smi -q -x output to replay").format(path=path),
            msg("capture a machine with GPUs (`gpuwise capture` runs nvidia-smi -q -x)"),
        )
    meta = host.meta()
    hostname, captured_at = meta.hostname, meta.captured_at
    taken_at = time.time()
    if isinstance(captured_at, str):
        with contextlib.suppress(ValueError):  # keep "now": the time is informational only
            taken_at = datetime.fromisoformat(captured_at).timestamp()
    snap = snapshot_from_xml(
        result.stdout,
        hostname=str(hostname or path.name),
        taken_at=taken_at,
        environment=collect_platform(host).environment,
    )
    _fill_xid(snap, host)
    return snap


def _fill_xid(snap: Snapshot, host) -> None:
    """The last Xid each GPU logged in the captured kernel log (0 = none); unknown without `dmesg`."""
    from gpuwise.facts.xid import parse_xid_lines

    dmesg = host.run("dmesg")
    if dmesg is None or not dmesg.ok:
        return
    last: dict[tuple[int, str, str], int] = {}
    for event in parse_xid_lines(dmesg.stdout):  # oldest first: the newest per GPU wins
        if event.pci_bus_id and (key := _bus_key(event.pci_bus_id)):
            last[key] = event.xid
    for gpu in snap.gpus:
        key = _bus_key(gpu.pci_bus_id or "")
        gpu.xid_last = last.get(key, 0) if key else None


def _bus_key(bus_id: str) -> tuple[int, str, str] | None:
    """'00000000:3B:00.0' (nvidia-smi) and '0000:3b:00' (the driver's Xid line) -> (0, '3b', '00')."""
    parts = bus_id.lower().split(":")
    if len(parts) != 3:
        return None
    try:
        return int(parts[0], 16), parts[1], parts[2].split(".")[0]
    except ValueError:
        return None


def _recording_frames(path: Path, text: str) -> list[Snapshot]:
    lines = text.splitlines()
    try:
        first = json.loads(lines[0])
        header = WatchHeader.model_validate(first) if isinstance(first, dict) else WatchHeader()
        if header.format != RECORD_FORMAT:
            raise ValueError(
                msg("format is {got}, not {expected}").format(
                    got=repr(header.format), expected=repr(RECORD_FORMAT)
                )
            )
        rows = [json.loads(ln) for ln in lines[1:] if ln.strip()]
        frames = [Snapshot.from_dict(row) for row in rows if "end" not in row]
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise UserInputError(
            msg("{path} is not a gpuwise watch recording ({exc})").format(path=path, exc=exc),
            msg("pass a file written by `gpuwise watch --record FILE`"),
        ) from exc
    if not frames:
        raise UserInputError(
            msg("{path} holds no samples").format(path=path),
            msg("record a longer session with `gpuwise watch --record`"),
        )
    return frames


def _live_environment() -> str:
    from gpuwise.capture.host import LiveHost
    from gpuwise.facts.platform import collect_platform

    try:
        return collect_platform(LiveHost()).environment
    except Exception:  # a platform probe must not stop the exporter: the kind is informational
        return "unknown"


def recording_end(path: Path) -> WatchEnd | None:
    """The host-side summary a `watch --record` file ends with, or None (another kind of recording, or
    a trailer that is not one)."""
    if path.is_dir() or not path.is_file():
        return None
    with path.open(encoding="utf-8", errors="replace") as fh:
        if not fh.readline().lstrip().startswith("{"):
            return None
        last = None
        for line in fh:
            if line.strip():
                last = line
    try:
        row = json.loads(last) if last else None
        return WatchTrailer.model_validate(row).end if isinstance(row, dict) and "end" in row else None
    except (ValueError, ValidationError):
        return None
