"""`doctor --evidence FILE`: any log or tool output a user has, its kind detected from its content.

DCGM diagnostics, Fabric Manager logs and kernel logs go into the facts the rules read (as if the capture had
recorded them); nccl-tests outputs and NCCL_DEBUG=INFO logs go where `--nccl-log` puts them.
"""

from __future__ import annotations

from pathlib import Path

from gpuwise.bench.models import Measurement
from gpuwise.bench.nccl_debug import NcclDebugLog
from gpuwise.bench.nccl_files import read_nccl_text
from gpuwise.errors import UserInputError
from gpuwise.facts.evidence import add_file, detect_kinds
from gpuwise.facts.models import Facts
from gpuwise.i18n import N_, _

MAX_BYTES = 64 * 1024 * 1024  # of a longer log, the newest 64 MiB are read
HOW = N_(
    "pass `dcgmi diag` output (table or -j JSON), a Fabric Manager log, a kernel log (dmesg, journalctl -k, "
    "/var/log/syslog, /var/log/kern.log), nccl-tests output or an NCCL_DEBUG=INFO log"
)


def read_tail(path: Path) -> str:
    """The file's text (its last MAX_BYTES when longer), or UserInputError naming why it cannot be read."""
    try:
        with path.open("rb") as fh:
            size = path.stat().st_size
            if size > MAX_BYTES:
                fh.seek(size - MAX_BYTES)
                fh.readline()  # start at a whole line
            return fh.read(MAX_BYTES).decode("utf-8", errors="replace")
    except IsADirectoryError:
        raise UserInputError(_("--evidence {path} is a directory").format(path=path), _(HOW)) from None
    except OSError as exc:
        raise UserInputError(
            _("--evidence {path}: cannot read it ({value})").format(path=path, value=exc.strerror or exc),
            _(HOW),
        ) from None


def read_evidence(paths: list[Path], facts: Facts) -> tuple[list[Measurement], list[NcclDebugLog]]:
    """Add each file to `facts` or to the NCCL results; UserInputError for a file gpuwise cannot read."""
    measurements: list[Measurement] = []
    logs: list[NcclDebugLog] = []
    for path in map(Path, paths):
        text = read_tail(path)
        kinds = detect_kinds(text)
        if kinds in ([], ["kernel-log"]):
            nccl = read_nccl_text(text, path, "--evidence")
            if nccl is not None:
                measurements += nccl[0]
                logs += nccl[1]
                continue
        if not kinds:
            raise UserInputError(
                _("--evidence {path}: not a kind of evidence gpuwise reads").format(path=path), _(HOW)
            )
        for kind in kinds:
            try:
                add_file(facts, text, kind, path.name)
            except ValueError as exc:
                raise UserInputError(
                    _("--evidence {path}: looks like {kind} but could not be read ({error})").format(
                        path=path, kind=kind, error=exc
                    ),
                    _(HOW),
                ) from None
    return measurements, logs
