"""Read a capture's members from a directory or a tarball, within limits, never outside its root.

Captures arrive from strangers (support tickets), so reading one must not exhaust memory, follow a
link onto the reader's own machine, or block on a FIFO:

- a tarball is streamed member by member (never listed whole); each member, the total of all
  members and the number of members are capped, and so is the decompressed stream itself, so a
  gzip bomb or a huge PAX header stops at the cap instead of filling memory;
- a PAX or GNU long-name header record is capped too (HEADER_RECORD_BYTES): tarfile would read a
  160 MiB `path` record whole and parse it, costing seconds and gigabytes before any member cap;
- only regular files (and directories) are accepted: links, devices and FIFOs are refused by name,
  and a name is echoed cut to a bounded length (datafiles.shown_name);
- in a directory capture, no path may leave the capture root after resolving symlinks.

The caps are environment variables so a user with a legitimately huge capture can raise them.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import stat
import tarfile
from dataclasses import dataclass
from pathlib import Path

from gpuwise.datafiles import shown_name
from gpuwise.errors import CaptureFormatError
from gpuwise.i18n import msg

# Real captures hold ~100 small files (the largest seen: 43 kB ldconfig -p; nvidia-smi -q -x for 8 GPUs
# is ~250 kB), so these defaults leave two orders of magnitude of headroom and still bound memory.
LIMIT_ENV = {
    "member_bytes": ("GPUWISE_CAPTURE_MAX_FILE_BYTES", 16 * 1024 * 1024),
    "total_bytes": ("GPUWISE_CAPTURE_MAX_TOTAL_BYTES", 128 * 1024 * 1024),
    "members": ("GPUWISE_CAPTURE_MAX_FILES", 10_000),
}
_HEADER_ALLOWANCE = 4096  # per member: tar header, PAX/GNU long-name records and padding
# A PAX record holds a path (PATH_MAX is 4096 on Linux), link target, times and sizes: 64 KiB is 16
# paths' worth, and bounds what one header may make tarfile read and parse.
HEADER_RECORD_BYTES = 64 * 1024
_HEADER_TYPES = (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE, *tarfile.GNU_TYPES)


class _BoundedTarInfo(tarfile.TarInfo):
    """A TarInfo whose extended-header records (PAX, GNU long name/link) may not exceed
    HEADER_RECORD_BYTES; tarfile.open(tarinfo=...) builds every member with it."""

    def _proc_member(self, tarfile_):
        extended = self.type in _HEADER_TYPES and self.type != tarfile.GNUTYPE_SPARSE
        if extended and self.size > HEADER_RECORD_BYTES:
            raise _HeaderTooLarge(self.size)
        return super()._proc_member(tarfile_)


class _HeaderTooLarge(Exception):
    def __init__(self, size: int):
        self.size = size


@dataclass(frozen=True)
class Limits:
    member_bytes: int
    total_bytes: int
    members: int

    @classmethod
    def from_env(cls) -> Limits:
        values = {}
        for field, (var, default) in LIMIT_ENV.items():
            raw = os.environ.get(var, "").strip()
            try:
                values[field] = int(raw) if raw else default
            except ValueError:
                raise CaptureFormatError(
                    msg("{var}={raw!r} is not a whole number").format(var=var, raw=raw),
                    msg("set {var} to a number of bytes/files, or unset it").format(var=var),
                ) from None
            if values[field] <= 0:
                raise CaptureFormatError(
                    msg("{var}={raw} must be positive").format(var=var, raw=raw),
                    msg("set {var} above 0, or unset it").format(var=var),
                )
        return cls(**values)


def _over(path: Path, what: str, limit: int, var: str) -> CaptureFormatError:
    return CaptureFormatError(
        msg("{path}: {what} exceeds the limit of {limit:,} (a capture is ~100 small text files)").format(
            path=path, what=what, limit=limit
        ),
        msg(
            "check that this is a gpuwise capture; if it really is this large, raise the limit: {var}=N"
        ).format(var=var),
    )


class _Counted(io.RawIOBase):
    """A read-only stream that fails once more than `limit` bytes were asked of it (decompressed)."""

    def __init__(self, inner, limit: int, error: CaptureFormatError):
        self.inner, self.limit, self.error, self.count = inner, limit, error, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        want = len(buffer)
        if self.count + want > self.limit:
            want = self.limit - self.count
            if want <= 0:
                raise self.error
        data = self.inner.read(want)
        buffer[: len(data)] = data
        self.count += len(data)
        return len(data)


def _open_decompressed(path: Path):
    with open(path, "rb") as fh:
        magic = fh.read(6)
    if magic.startswith(b"\x1f\x8b"):
        return gzip.open(path, "rb")
    if magic.startswith(b"BZh"):
        return bz2.open(path, "rb")
    if magic.startswith(b"\xfd7zXZ\x00"):
        return lzma.open(path, "rb")
    return open(path, "rb")


def _kind(member: tarfile.TarInfo) -> str:
    if member.issym() or member.islnk():
        return msg("a link to {target}").format(target=repr(shown_name(member.linkname)))
    if member.isfifo():
        return msg("a FIFO")
    if member.ischr() or member.isblk():
        return msg("a device file")
    return msg("not a regular file")


def read_tar(path: Path, limits: Limits) -> dict[str, bytes]:
    """{member name: bytes} for every regular file, streamed; names keep their top directory."""
    out: dict[str, bytes] = {}
    total = 0
    stream_cap = limits.total_bytes + limits.members * _HEADER_ALLOWANCE
    stream_error = _over(path, msg("the decompressed archive"), stream_cap, LIMIT_ENV["total_bytes"][0])
    raw = _open_decompressed(path)
    try:
        counted = io.BufferedReader(_Counted(raw, stream_cap, stream_error), 1 << 16)
        with tarfile.open(fileobj=counted, mode="r|", tarinfo=_BoundedTarInfo) as tar:
            for n, member in enumerate(tar, start=1):
                if n > limits.members:
                    raise _over(path, msg("the number of members"), limits.members, LIMIT_ENV["members"][0])
                if member.isdir():
                    continue
                if not member.isfile():
                    raise CaptureFormatError(
                        msg(
                            "{path}: member {name!r} is {kind_member}; a capture holds only regular files"
                        ).format(path=path, name=shown_name(member.name), kind_member=_kind(member)),
                        msg(
                            "re-create the tarball with `gpuwise capture -o NAME.tar.gz` (links are not followed)"
                        ),
                    )
                if member.size > limits.member_bytes:
                    raise _over(
                        path,
                        msg("member {name} ({size} bytes)").format(
                            name=repr(shown_name(member.name)), size=f"{member.size:,}"
                        ),
                        limits.member_bytes,
                        LIMIT_ENV["member_bytes"][0],
                    )
                total += member.size
                if total > limits.total_bytes:
                    raise _over(
                        path, msg("the members' total size"), limits.total_bytes, LIMIT_ENV["total_bytes"][0]
                    )
                fh = tar.extractfile(member)
                out[member.name] = fh.read() if fh is not None else b""
    except _HeaderTooLarge as exc:  # raised while tarfile reads a header (tarfile.open reads the first)
        raise _header_too_large(path, exc.size) from None
    finally:
        raw.close()
    return out


def _header_too_large(path: Path, size: int) -> CaptureFormatError:
    return CaptureFormatError(
        msg(
            "{path}: a tar header record (PAX or GNU long name) of {size:,} bytes exceeds the limit of {limit:,}"
        ).format(path=path, size=size, limit=HEADER_RECORD_BYTES),
        msg("check that this is a gpuwise capture; re-create it with `gpuwise capture -o NAME.tar.gz`"),
    )


def read_dir(root: Path, limits: Limits) -> dict[str, bytes]:
    """{relative posix path: bytes} for every file under `root`; links may not leave `root`."""
    root = root.resolve()
    out: dict[str, bytes] = {}
    total = 0
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        for name in sorted(files) + sorted(d for d in dirs if os.path.islink(os.path.join(folder, d))):
            rel = Path(folder, name).relative_to(root).as_posix()
            if len(out) >= limits.members:
                raise _over(root, msg("the number of files"), limits.members, LIMIT_ENV["members"][0])
            target = Path(folder, name).resolve()
            if target != root and root not in target.parents:
                raise CaptureFormatError(
                    msg("{root}: {rel} is a symlink that leads outside the capture ({target})").format(
                        root=root, rel=rel, target=target
                    ),
                    msg(
                        "a capture holds copies of files, not links; re-create it with `gpuwise capture -o DIR`"
                    ),
                )
            try:
                info = os.stat(target)
            except OSError as exc:
                raise CaptureFormatError(
                    msg("{root}: cannot read {rel} ({value}; a broken link?)").format(
                        root=root, rel=rel, value=exc.strerror or exc
                    ),
                    msg("re-copy the capture folder"),
                ) from None
            if stat.S_ISDIR(info.st_mode):
                continue  # a link to a folder inside the capture: its files are read under their own path
            if not stat.S_ISREG(info.st_mode):
                raise CaptureFormatError(
                    msg("{root}: {rel} is not a regular file (a FIFO, socket or device)").format(
                        root=root, rel=rel
                    ),
                    msg("remove it from the capture folder; a capture holds only regular files"),
                )
            if info.st_size > limits.member_bytes:
                raise _over(
                    root,
                    msg("{file} ({size} bytes)").format(file=rel, size=f"{info.st_size:,}"),
                    limits.member_bytes,
                    LIMIT_ENV["member_bytes"][0],
                )
            data = _read_regular(target, limits.member_bytes)
            if data is None:
                raise _over(
                    root,
                    msg("{file} (grew while read)").format(file=rel),
                    limits.member_bytes,
                    LIMIT_ENV["member_bytes"][0],
                )
            total += len(data)
            if total > limits.total_bytes:
                raise _over(
                    root, msg("the files' total size"), limits.total_bytes, LIMIT_ENV["total_bytes"][0]
                )
            out[rel] = data
    return out


def _read_regular(path: Path, cap: int) -> bytes | None:
    """The file's bytes, or None when it holds more than `cap`. O_NONBLOCK: a FIFO swapped in never blocks."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = fh.read(cap + 1)
    return None if len(data) > cap else data
