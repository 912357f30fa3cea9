"""`doctor --evidence FILE`: any log or tool output a user has, its kind detected from its content.

DCGM diagnostics, Fabric Manager logs, kernel logs and RDMA port listings go into the facts the rules read (as if the capture had
recorded them); nccl-tests outputs and NCCL_DEBUG=INFO logs go where `--nccl-log` puts them.
"""

from __future__ import annotations

from pathlib import Path

from gpuwise.bench.nccl_debug import NcclDebugLog
from gpuwise.bench.nccl_files import read_nccl_text
from gpuwise.datafiles import read_input_bytes
from gpuwise.documents.bench import Measurement
from gpuwise.errors import UserInputError
from gpuwise.facts.evidence import add_file, detect_kinds
from gpuwise.facts.models import Facts
from gpuwise.i18n import N_, _

MAX_BYTES = 64 * 1024 * 1024  # of a longer log, the newest 64 MiB are read
HOW = N_(
    "pass `dcgmi diag` output (table or -j JSON), a Fabric Manager log, a kernel log (dmesg, journalctl -k, "
    "/var/log/syslog, /var/log/kern.log), ibstat / ibstatus / ibv_devinfo / ibdev2netdev output, nccl-tests "
    "output or an NCCL_DEBUG=INFO log"
)


def read_tail(path: Path) -> str:
    """The file's text (its last MAX_BYTES when longer, from a whole line), read through the guarded reader
    (regular files only: a FIFO never blocks); DataValidationError naming the file and the fix otherwise."""
    data = read_input_bytes(path, N_("evidence file"), tail=MAX_BYTES)
    if len(data) == MAX_BYTES and b"\n" in data:
        data = data[data.index(b"\n") + 1 :]  # the tail began mid-line
    return data.decode("utf-8", errors="replace")


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
