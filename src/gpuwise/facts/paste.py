"""What people paste: strip what chat, Markdown and job launchers add around a tool's output.

CRLF line ends, Markdown code fences (```text ... ```), quote markers ("> "), and per-line prefixes of
`srun -l` ("0: ", "12: "), Open MPI `--tag-output` ("[1,0]<stdout>:"), `mpirun`'s rank tags ("[0] ") and
pdsh ("host: ", only when every line carries the same one).
"""

from __future__ import annotations

import re

from gpuwise.i18n import joined

_FENCE = re.compile(r"^\s*(```|~~~)")
_LAUNCHER = re.compile(r"^(?:\[\d+,\d+\]<(?:stdout|stderr)>:|\s*\d{1,5}: (?=\S|\s)|\[\d{1,5}\] (?=\S))")
_QUOTE = re.compile(r"^> ?")


def unpaste(text: str) -> str:
    """The tool's own lines: no CR, no quote markers, no fences, no launcher prefixes."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and sum(1 for ln in lines if ln.startswith(">")) > len([ln for ln in lines if ln.strip()]) // 2:
        lines = [_QUOTE.sub("", ln) for ln in lines]
    lines = [ln for ln in lines if not _FENCE.match(ln)]
    return joined("\n", (strip_launcher(ln) for ln in lines))


def strip_launcher(line: str) -> str:
    """One line without its srun / mpirun / Open MPI rank prefixes (srun -l around mpirun gives two)."""
    for _ in range(2):
        line = _LAUNCHER.sub("", line, count=1)
    return line
