"""`gpuwise capture`: record a machine's raw data in the gpuwise-capture/1 format.

The capture is assembled in a hidden temporary directory next to the destination (and tarred into a
hidden temporary file) and published with a no-replace rename (atomic.publish_noreplace), so:
- an interrupted capture (SIGINT, SIGTERM, an error) removes its temporaries and publishes nothing;
- a file that appears at the destination meanwhile, or a second capture to the same path, is never
  replaced: the capture that finds the name taken fails with exit 3 and removes its temporaries.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import tarfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from gpuwise import __version__, interrupts
from gpuwise.atomic import publish_noreplace
from gpuwise.capture.host import CAPTURE_FORMAT, CommandResult, LiveHost, absent_source
from gpuwise.capture.mask import Masker, find_serials
from gpuwise.capture.redact import redact_text
from gpuwise.capture.sources import ALL_COMMAND_IDS, FILES, GLOBS
from gpuwise.errors import UserInputError
from gpuwise.i18n import msg

DMI_SERIAL_FILES = (
    "/sys/class/dmi/id/product_serial",
    "/sys/class/dmi/id/board_serial",
    "/sys/class/dmi/id/chassis_serial",
    "/sys/class/dmi/id/product_uuid",
)


@dataclass
class CaptureSummary:
    path: Path
    files: int = 0
    commands: dict[str, str] = field(default_factory=dict)  # id -> ok / missing / absent / timeout / rc=N
    # id -> why its source is absent: the file a `tail` reads does not exist, the journal has no such boot or
    # no entries (the command ran; the data is not on this machine)
    absent: dict[str, str] = field(default_factory=dict)
    redacted_env: list[str] = field(default_factory=list)
    redacted_values: dict[str, int] = field(default_factory=dict)  # value rule id -> hits in files/outputs
    masked: dict[str, int] = field(default_factory=dict)


def write_capture(
    out: str | Path,
    host: LiveHost | None = None,
    mask: bool = False,
    progress: Callable[[str], None] | None = None,
) -> CaptureSummary:
    """Capture `host` (this machine by default) to `out`: a directory, or a tarball if it ends in .tar.gz."""
    host = host or LiveHost()
    out = Path(out)
    as_tar = out.name.endswith((".tar.gz", ".tgz"))
    if out.exists() and (as_tar or not out.is_dir() or any(out.iterdir())):
        raise UserInputError(
            msg("{out} already exists").format(out=out),
            msg("choose a new path, or remove the old capture first"),
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    note = progress or (lambda _msg: None)

    note(msg("reading files"))
    files = _read_files(host)
    note(msg("running {n} commands").format(n=len(ALL_COMMAND_IDS)))
    host.prefetch(list(ALL_COMMAND_IDS))
    results = {cid: host.run(cid) for cid in ALL_COMMAND_IDS}

    summary = CaptureSummary(path=out)
    env_result = results.get("env")
    if env_result is not None and env_result.ok:
        summary.redacted_env = json.loads(env_result.stdout).get("redacted", [])

    hostname = socket.gethostname()
    masker = None
    if mask:
        serials = find_serials([r.stdout for r in results.values() if r is not None])
        serials += [files[p].strip() for p in DMI_SERIAL_FILES if files.get(p)]
        names = [hostname, socket.getfqdn(), (files.get("/etc/hostname") or "").strip()]
        masker = Masker(names, serials)

    def clean(text: str) -> str:
        text = redact_text(text, summary.redacted_values)
        return masker.apply(text) if masker else text

    meta = {
        "format": CAPTURE_FORMAT,
        "captured_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "hostname": clean(hostname),
        "gpuwise_version": __version__,
        "redacted": {
            "env": summary.redacted_env,
            "rule": "names containing PASSWORD, SECRET, TOKEN, API_KEY, CREDENTIAL, DSN, _PAT, ... (detect-secrets "
            "keywords); values with URL userinfo, Bearer tokens and gitleaks token formats",
        },
        "masked": bool(mask),
        "commands": {},
    }
    # Named before it is created, so a signal at any point leaves a name the clean-up can remove.
    tmp = _temp_name(out, "")
    tar_tmp = _temp_name(out, ".part") if as_tar else None
    try:
        tmp.mkdir(mode=0o700)
        for path, text in files.items():
            dest = tmp / "files" / path.lstrip("/")
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(clean(text), encoding="utf-8")
        summary.files = len(files)
        for cid, res in results.items():
            meta["commands"][cid] = _write_command(tmp / "commands", cid, res, clean)
            summary.commands[cid] = (
                meta["commands"][cid]["status"]
                if meta["commands"][cid]["status"] != "ok"
                else ("ok" if res.rc == 0 else f"rc={res.rc}")
            )
            why = absent_source(res)
            if why is not None:
                summary.commands[cid], summary.absent[cid] = "absent", clean(why)
        meta["redacted"]["values"] = dict(sorted(summary.redacted_values.items()))  # rule ids only
        if masker:
            summary.masked = masker.counts
            meta["masked_counts"] = masker.counts  # kinds only: host, serial, mac, uuid, ipv4, ipv6
        (tmp / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        note(msg("writing"))
        if tar_tmp is not None:
            write_tarball(tmp, tar_tmp, out.name.removesuffix(".tar.gz").removesuffix(".tgz"))
        _publish(tar_tmp or tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if tar_tmp is not None:
            tar_tmp.unlink(missing_ok=True)
    return summary


def _temp_name(out: Path, suffix: str) -> Path:
    return out.parent / f".{out.name}.{os.getpid()}.{secrets.token_hex(4)}.gwtmp{suffix}"


def _read_files(host: LiveHost) -> dict[str, str]:
    paths = list(FILES)
    for pattern in GLOBS:
        paths.extend(host.glob(pattern))
    out = {}
    for p in dict.fromkeys(paths):
        text = host.read_file(p)
        if text is not None:
            out[p] = text
    return out


def _write_command(folder: Path, cid: str, res: CommandResult | None, clean: Callable[[str], str]) -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    if res is None:
        return {"status": "error", "detail": "unknown command id"}
    info: dict = {"status": res.status, "rc": res.rc, "seconds": res.seconds}
    if res.status == "missing":
        return info  # recorded as missing: no .txt, so parsers see 'tool not installed', not empty output
    (folder / f"{cid}.txt").write_text(clean(res.stdout), encoding="utf-8")
    if res.stderr.strip():
        (folder / f"{cid}.err").write_text(clean(res.stderr), encoding="utf-8")
    if res.rc is not None:
        (folder / f"{cid}.rc").write_text(f"{res.rc}\n", encoding="utf-8")
    return info


def _plain_member(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """Whole-second times and no owner names, so a member needs no PAX record (only a very long name does).

    tarfile writes a PAX record for a fractional mtime, i.e. for every file on a modern filesystem,
    and reading those records doubles the cost of opening a capture (fleet report reads thousands).
    The owner's user and group names are dropped too: they say nothing about the machine.
    """
    info.mtime = int(info.mtime)
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def write_tarball(folder: Path, tar_path: Path, top: str) -> None:
    """Pack `folder` as `top/` into a new gzip tarball at `tar_path` (which must not exist yet)."""
    fd = os.open(tar_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh, tarfile.open(fileobj=fh, mode="w:gz") as tar:
        tar.add(folder, arcname=top, filter=_plain_member)
        fh.flush()
        os.fsync(fh.fileno())


def _publish(finished: Path, out: Path) -> None:
    """Move the finished capture to `out` unless something is there; a signal meanwhile undoes it."""
    with interrupts.deferred():
        if out.is_dir() and not any(out.iterdir()):
            out.rmdir()  # an empty directory the user created for us
        try:
            publish_noreplace(finished, out)
        except FileExistsError:
            raise UserInputError(
                msg(
                    "{out} appeared while capturing (another capture or program wrote it); it was left as it "
                    "is"
                ).format(out=out),
                msg("choose a new path with -o, or remove the other file and capture again"),
            ) from None
        if interrupts.received() is not None:  # asked to stop while publishing: publish nothing
            if out.is_dir():
                os.rename(out, finished)  # back to the temporary name, which the caller removes
            else:
                out.unlink()
            return
        interrupts.commit()
