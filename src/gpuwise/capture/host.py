"""The Host protocol: the only way the rest of gpuwise reads a machine.

A LiveHost reads this machine's files and runs commands (argv lists, no shell, a timeout each).
A CaptureHost replays a capture directory or .tar.gz written by `gpuwise capture`. Parsers take
text from a Host and never touch the machine themselves, so everything can be replayed. Code
outside capture/ uses only the protocol (never the concrete class or its private state), so a
live machine, a capture directory and a tarball are interchangeable.
"""

from __future__ import annotations

import fnmatch
import glob as globlib
import json
import lzma
import os
import socket
import subprocess
import tarfile
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal, Protocol

from gpuwise import __version__
from gpuwise.capture import archive
from gpuwise.capture.sources import COMMANDS, INTERNAL_COLLECTORS, CommandSource
from gpuwise.documents.ids import CAPTURE_FORMAT
from gpuwise.errors import CaptureFormatError
from gpuwise.i18n import msg

MAX_FILE_BYTES = 8 * 1024 * 1024  # /proc and /sys files are small; this guards against surprises

Status = Literal["ok", "missing", "timeout", "error"]


@dataclass(frozen=True)
class CommandResult:
    """One command's outcome. `status` keeps 'tool missing' apart from 'ran and failed'."""

    id: str
    stdout: str
    stderr: str = ""
    rc: int | None = 0
    status: Status = "ok"
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.rc == 0

    def reason(self) -> str:
        """A short human reason when the command gave no usable output."""
        if self.status == "missing":
            return msg("`{command}`: tool not installed").format(command=self.id)
        if self.status == "timeout":
            return msg("`{command}`: timed out").format(command=self.id)
        if self.status == "error":
            detail = self.stderr.strip()[:200] or msg("failed to run")
            return f"`{self.id}`: {detail}"
        if self.rc != 0:
            first = (self.stderr or self.stdout).strip().splitlines()[:1]
            exited = msg("`{command}` exited {rc}").format(command=self.id, rc=self.rc)
            return exited + (f": {first[0][:200]}" if first else "")
        return ""


@dataclass(frozen=True)
class HostMeta:
    """Where the data came from: the machine's name, when it was read, by which gpuwise, and the source
    ("live" or the capture path)."""

    hostname: str | None
    captured_at: str | None
    gpuwise_version: str | None
    source: str


class Host(Protocol):
    """What parsers may ask of a machine. None always means 'not captured / not present'."""

    name: str

    def read_file(self, path: str) -> str | None: ...

    def glob(self, pattern: str) -> list[str]: ...

    def run(self, command_id: str) -> CommandResult | None: ...

    def meta(self) -> HostMeta:
        """Hostname, time of reading, gpuwise version and source of this data."""
        ...

    def executed(self) -> list[str]:
        """Ids of the commands that have a result: run so far on a live machine, recorded in a capture."""
        ...

    def prefetch(self, command_ids: list[str]) -> None:
        """A hint that these commands will be asked for (a live host runs them concurrently; a capture
        has them already and ignores it)."""
        ...


class LiveHost:
    """This machine. Commands run lazily, once each, and are cached."""

    def __init__(self, env: dict[str, str] | None = None):
        self.name = "live"
        self.env = dict(os.environ if env is None else env)
        self._cache: dict[str, CommandResult] = {}
        self._started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")

    def meta(self) -> HostMeta:
        return HostMeta(socket.gethostname(), self._started_at, __version__, "live")

    def executed(self) -> list[str]:
        return list(self._cache)

    def read_file(self, path: str) -> str | None:
        # Read in small chunks: some /proc/sys files fail with ENOMEM on one large read().
        chunks, size = [], 0
        try:
            with open(path, "rb") as fh:
                while size < MAX_FILE_BYTES:
                    chunk = fh.read(min(1 << 16, MAX_FILE_BYTES - size))
                    if not chunk:
                        break
                    chunks.append(chunk)
                    size += len(chunk)
        except (OSError, ValueError):
            return None
        return b"".join(chunks).decode("utf-8", errors="replace")

    def glob(self, pattern: str) -> list[str]:
        return sorted(globlib.glob(pattern))

    def prefetch(self, command_ids: list[str]) -> None:
        """Run several commands concurrently so a live probe costs the slowest one, not the sum."""
        todo = [c for c in command_ids if c not in self._cache]
        if not todo:
            return
        with ThreadPoolExecutor(max_workers=min(8, len(todo))) as pool:
            for cid, result in zip(todo, pool.map(self._execute, todo), strict=True):
                self._cache[cid] = result

    def run(self, command_id: str) -> CommandResult | None:
        if command_id not in self._cache:
            if command_id not in COMMANDS and command_id not in INTERNAL_COLLECTORS:
                return None
            self._cache[command_id] = self._execute(command_id)
        return self._cache[command_id]

    def _execute(self, command_id: str) -> CommandResult:
        if command_id in INTERNAL_COLLECTORS:
            return _run_internal(command_id, self)
        return run_argv(COMMANDS[command_id], self.env)


def run_argv(src: CommandSource, env: dict[str, str] | None = None) -> CommandResult:
    """Run one command as an argv list with a timeout. Never raises."""
    start = time.monotonic()
    try:
        proc = subprocess.run(
            list(src.argv),
            capture_output=True,
            timeout=src.timeout_s,
            env={**(env or os.environ), "LC_ALL": "C", "LANG": "C"},
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except FileNotFoundError:
        return CommandResult(src.id, "", f"{src.argv[0]}: not found", None, "missing")
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode("utf-8", errors="replace")
        return CommandResult(
            src.id, out, f"timed out after {src.timeout_s:g} s", None, "timeout", src.timeout_s
        )
    except OSError as exc:
        return CommandResult(src.id, "", str(exc), None, "error")
    return CommandResult(
        src.id,
        proc.stdout.decode("utf-8", errors="replace"),
        proc.stderr.decode("utf-8", errors="replace"),
        proc.returncode,
        "ok",
        round(time.monotonic() - start, 3),
    )


def _run_internal(command_id: str, host: LiveHost) -> CommandResult:
    """Run an in-process collector (NVML, environment, Python packages) with a timeout."""
    collector = INTERNAL_COLLECTORS[command_id]
    start = time.monotonic()
    pool = ThreadPoolExecutor(max_workers=1)
    try:
        text = pool.submit(collector.load(), host.env).result(timeout=collector.timeout_s)
    except FutureTimeout:
        return CommandResult(command_id, "", f"timed out after {collector.timeout_s:g} s", None, "timeout")
    except (
        Exception
    ) as exc:  # a collector bug must not sink the probe; it is reported as this command's error
        return CommandResult(command_id, "", f"{type(exc).__name__}: {exc}", None, "error")
    finally:
        pool.shutdown(wait=False)
    return CommandResult(command_id, text, "", 0, "ok", round(time.monotonic() - start, 3))


class CaptureHost:
    """Replays a capture written by `gpuwise capture`: a directory or a .tar.gz of one."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.name = str(path)
        self._files: dict[str, str] = {}
        self._commands: dict[str, dict[str, str]] = {}
        if not self.path.exists():
            raise CaptureFormatError(
                msg("capture not found: {path}").format(path=self.path),
                msg("check the path, or make one with `gpuwise capture -o node.tar.gz`"),
            )
        entries = self._read_tar() if self.path.is_file() else self._read_dir()
        if "meta.json" not in entries:
            raise CaptureFormatError(
                msg("{path} is not a gpuwise capture (no meta.json)").format(path=self.path),
                msg("pass a directory or .tar.gz written by `gpuwise capture -o PATH`"),
            )
        try:
            self.recorded_meta = json.loads(entries.pop("meta.json"))
        except (json.JSONDecodeError, RecursionError) as exc:
            raise CaptureFormatError(
                msg("{path}: meta.json is not valid JSON ({str_exc})").format(
                    path=self.path, str_exc=str(exc)[:200]
                ),
                msg("re-run `gpuwise capture`"),
            ) from exc
        if not isinstance(self.recorded_meta, dict) or self.recorded_meta.get("format") != CAPTURE_FORMAT:
            got = self.recorded_meta.get("format") if isinstance(self.recorded_meta, dict) else None
            raise CaptureFormatError(
                msg("{path}: meta.json format is {got!r}, expected {capture_format!r}").format(
                    path=self.path, got=got, capture_format=CAPTURE_FORMAT
                ),
                msg("re-capture with this gpuwise version"),
            )
        for rel, text in entries.items():
            if rel.startswith("files/"):
                self._files["/" + rel[len("files/") :]] = text
            elif rel.startswith("commands/"):
                stem, _dot, ext = rel[len("commands/") :].rpartition(".")
                self._commands.setdefault(stem, {})[ext] = text

    def _read_dir(self) -> dict[str, str]:
        return {
            rel: _text(data) for rel, data in archive.read_dir(self.path, archive.Limits.from_env()).items()
        }

    def _read_tar(self) -> dict[str, str]:
        try:
            members = archive.read_tar(self.path, archive.Limits.from_env())
        except (tarfile.TarError, OSError, EOFError, zlib.error, lzma.LZMAError) as exc:
            raise CaptureFormatError(
                msg("{path}: cannot read the tarball ({exc})").format(path=self.path, exc=exc),
                msg("re-copy the file; it may be truncated"),
            ) from exc
        prefix = _common_top_dir(list(members))
        return {name[len(prefix) :]: _text(data) for name, data in members.items()}

    def meta(self) -> HostMeta:
        m = self.recorded_meta
        return HostMeta(
            _str_or_none(m.get("hostname")),
            _str_or_none(m.get("captured_at")),
            _str_or_none(m.get("gpuwise_version")),
            str(self.path),
        )

    def executed(self) -> list[str]:
        return sorted(set(self._commands) | set(self._recorded_commands()))

    def prefetch(self, command_ids: list[str]) -> None:
        """Nothing to run: the capture holds every result it will ever have."""

    def _recorded_commands(self) -> dict:
        commands = self.recorded_meta.get("commands")
        return commands if isinstance(commands, dict) else {}

    def read_file(self, path: str) -> str | None:
        return self._files.get(path)

    def glob(self, pattern: str) -> list[str]:
        return sorted(p for p in self._files if fnmatch.fnmatchcase(p, pattern))

    def run(self, command_id: str) -> CommandResult | None:
        parts = self._commands.get(command_id)
        info = self._recorded_commands().get(command_id) or {}
        status = info.get("status") if isinstance(info, dict) else None
        if parts is None and status is None:
            return None
        parts = parts or {}
        if "txt" not in parts and status in (None, "ok"):
            # meta.json says it ran, but its output is not here: a partly copied capture
            return CommandResult(
                command_id, "", "output missing from the capture (incomplete copy?)", None, "error"
            )
        rc_text = parts.get("rc", "").strip()
        rc = int(rc_text) if rc_text.lstrip("-").isdigit() else (0 if status in (None, "ok") else None)
        return CommandResult(
            command_id,
            parts.get("txt", ""),
            parts.get("err", ""),
            rc,
            status if status in ("ok", "missing", "timeout", "error") else "ok",
        )


def _str_or_none(value: object) -> str | None:
    return None if value is None else str(value)


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _common_top_dir(names: list[str]) -> str:
    """A tarball usually holds one top directory; return 'top/' so paths are relative to it."""
    if any(n == "meta.json" for n in names):
        return ""
    tops = {n.split("/", 1)[0] for n in names if "/" in n}
    if len(tops) == 1 and all("/" in n for n in names):
        return tops.pop() + "/"
    return ""


# the commands that read a log (a file's tail, the journal), and what they print when it is not there
LOG_READERS = ("tail-", "journalctl-")
_ABSENT_MARKS = (
    "No such file or directory",
    "No such boot ID",
    "Specifying boot ID or boot offset has no effect",
    "No journal files were found",
)


def absent_source(res: CommandResult | None) -> str | None:
    """Why a command that ran found no data: its own message (stderr's first matching line, or the
    journal's "-- No entries --"); None when it found data or failed for another reason, and for commands
    that are not log readers (ibstat's "No such file or directory" is a failure, not an absent log)."""
    if res is None or res.status != "ok" or not res.id.startswith(LOG_READERS):
        return None
    if res.rc == 0 and res.stdout.strip().startswith("-- No entries --") and len(res.stdout.strip()) < 40:
        return "-- No entries --"
    if res.rc == 0:
        return None
    for line in (res.stderr or "").splitlines():
        if any(mark in line for mark in _ABSENT_MARKS):
            return line.strip()[:200]
    return None
