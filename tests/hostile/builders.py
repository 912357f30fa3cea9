"""Hostile inputs, built small and fast: bombs are sparse files or repeated gzip members, never 1 GB writes."""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import tarfile
import zlib
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
CAPTURE = TESTS / "captures" / "cpu-vm-kvm-docker"
WORKLOAD = TESTS.parent / "examples" / "resnet50-imagenet.yaml"
META = {"format": "gpuwise-capture/1", "commands": {}}
GiB = 1024**3


def yaml_alias_bomb(path: Path, levels: int = 100) -> Path:
    """`a0: &a0 [x, x]`, `a1: &a1 [*a0, *a0]`, ...: 2**levels items once expanded."""
    lines = ["a0: &a0 [x, x]"] + [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}]" for i in range(1, levels)]
    path.write_text("\n".join(lines) + "\n")
    return path


def gzip_bomb_tar(path: Path, member_bytes: int = 2 * GiB) -> Path:
    """A tar.gz (~2 MB) whose one member `top/files/proc/cpuinfo` is `member_bytes` of zeros.

    Built from concatenated gzip members (RFC 1952 allows it; gzip readers join them), so making it
    costs one 1 MiB compression, not 2 GiB of work.
    """
    chunk = 1024 * 1024
    info = tarfile.TarInfo("top/files/proc/cpuinfo")
    info.size = member_bytes
    header = info.tobuf(format=tarfile.GNU_FORMAT)
    meta = json.dumps(META).encode()
    meta_info = tarfile.TarInfo("top/meta.json")
    meta_info.size = len(meta)
    first = meta_info.tobuf(format=tarfile.GNU_FORMAT) + meta + b"\0" * (-len(meta) % 512) + header
    zeros = gzip.compress(b"\0" * chunk, compresslevel=9)
    with open(path, "wb") as fh:
        fh.write(gzip.compress(first))
        for _ in range(member_bytes // chunk):
            fh.write(zeros)
        fh.write(gzip.compress(b"\0" * 1024))  # end-of-archive blocks
    return path


def many_members_tar(path: Path, members: int = 100_000) -> Path:
    """A tar.gz with `members` empty files (plus meta.json), written with one compressor."""
    raw = io.BytesIO()
    comp = zlib.compressobj(1, zlib.DEFLATED, 31)  # gzip container
    with open(path, "wb") as fh:
        with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
            meta = json.dumps(META).encode()
            info = tarfile.TarInfo("meta.json")
            info.size = len(meta)
            tar.addfile(info, io.BytesIO(meta))
            for i in range(members):
                tar.addfile(tarfile.TarInfo(f"files/sys/x/{i}"))
                if raw.tell() > 1 << 20:
                    fh.write(comp.compress(raw.getvalue()))
                    raw.seek(0)
                    raw.truncate()
        fh.write(comp.compress(raw.getvalue()))
        fh.write(comp.flush())
    return path


def capture_copy(dest: Path) -> Path:
    shutil.copytree(CAPTURE, dest)
    return dest


def sparse_file(path: Path, size: int = GiB, head: bytes = b"") -> Path:
    """A file of `size` bytes that uses no disk: one line, no newline (sparse zeros after `head`)."""
    with open(path, "wb") as fh:
        fh.write(head)
        fh.truncate(size)
    return path


def deep_json(depth: int = 100_000) -> str:
    return "[" * depth + "]" * depth


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def pax_path_bomb_tar(path: Path, record_bytes: int = 160 * 1024 * 1024) -> Path:
    """A capture tar.gz (~200 KB) whose first member carries a PAX `path` record of `record_bytes`
    ('a' repeated): streamed through gzip in chunks, never built in memory."""
    body_len = record_bytes - len(" path=\n")
    digits = len(str(record_bytes))
    record_len = body_len + len(" path=\n") + digits  # "LEN path=VALUE\n", LEN counts itself
    while len(str(record_len)) != digits:
        digits = len(str(record_len))
        record_len = body_len + len(" path=\n") + digits
    header = tarfile.TarInfo("././@PaxHeader")
    header.type, header.size = tarfile.XHDTYPE, record_len
    meta = json.dumps(META).encode()
    member = tarfile.TarInfo("cap/meta.json")
    member.size = len(meta)
    with gzip.open(path, "wb", compresslevel=6) as gz:
        gz.write(header.tobuf(tarfile.USTAR_FORMAT))
        gz.write(f"{record_len} path=".encode())
        chunk = b"a" * (1 << 20)
        left = body_len
        while left:
            gz.write(chunk[: min(left, len(chunk))])
            left -= min(left, len(chunk))
        gz.write(b"\n" + b"\0" * ((-record_len) % 512))
        gz.write(member.tobuf(tarfile.USTAR_FORMAT) + meta + b"\0" * ((-len(meta)) % 512))
        gz.write(b"\0" * 1024)
    return path
