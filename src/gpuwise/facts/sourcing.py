"""Small helpers the layer parsers share: read a command or file from a Host, or say why not.

A reason is an Unknown: its kind keeps DESIGN.md's cases apart for code (not captured: run() is
None; tool missing: status "missing"; failed: rc != 0, timeout, error; absent file), its text
says the same for people.
"""

from __future__ import annotations

import json
import re

from gpuwise.capture.host import CommandResult, Host
from gpuwise.capture.sources import COMMANDS
from gpuwise.datafiles import read_rows
from gpuwise.facts.models import Unknown, UnknownKind
from gpuwise.i18n import joined, msg


def tool_name(command_id: str) -> str:
    src = COMMANDS.get(command_id)
    return src.argv[0] if src else command_id


def failure_kind(result: CommandResult | None) -> UnknownKind:
    """The kind of reason a command result that gave no usable output stands for."""
    if result is None:
        return "not_captured"
    return "tool_missing" if result.status == "missing" else "failed"


def command_reason(command_id: str, result: CommandResult | None) -> Unknown | None:
    """Why `result` gives no usable output (None when it does)."""
    tool = tool_name(command_id)
    if result is None:
        return Unknown(kind="not_captured", text=msg("`{command}` not captured").format(command=command_id))
    if result.status == "missing":
        return Unknown(kind="tool_missing", text=msg("{tool} not installed").format(tool=tool))
    if result.status == "timeout":
        return Unknown(kind="failed", text=msg("{tool} timed out").format(tool=tool))
    if result.status == "error":
        detail = result.stderr.strip().splitlines()[:1]
        text = msg("{tool} failed to run").format(tool=tool)
        return Unknown(kind="failed", text=text + (f": {detail[0][:160]}" if detail else ""))
    if result.rc not in (0, None):
        first = (result.stderr or result.stdout).strip().splitlines()[:1]
        text = msg("{tool} exited {rc}").format(tool=tool, rc=result.rc)
        return Unknown(kind="failed", text=text + (f": {first[0][:160]}" if first else ""))
    return None


def command_text(
    host: Host, command_id: str, allow_rc: tuple[int, ...] = ()
) -> tuple[str | None, Unknown | None]:
    """(stdout, None) when the command ran and succeeded, else (None, reason).

    `allow_rc` lists exit codes that still carry a usable answer (systemctl is-active exits 3
    when a unit is inactive; systemd-detect-virt exits 1 when it prints "none").
    """
    result = host.run(command_id)
    if result is not None and result.status == "ok" and (result.rc in (0, None) or result.rc in allow_rc):
        return result.stdout, None
    return None, command_reason(command_id, result) or Unknown(
        kind="failed", text=msg("{tool} gave no usable output").format(tool=tool_name(command_id))
    )


def command_json(host: Host, command_id: str) -> tuple[object | None, Unknown | None]:
    """Parsed JSON stdout of a command, or (None, reason) naming what went wrong."""
    text, reason = command_text(host, command_id)
    if text is None:
        return None, reason
    try:
        return json.loads(text), None
    except (json.JSONDecodeError, ValueError, RecursionError) as exc:
        return None, Unknown(
            kind="unparsable",
            text=msg("{tool} output is not valid JSON ({error})").format(
                tool=tool_name(command_id), error=exc
            ),
        )


def file_reason(host: Host, path: str) -> Unknown:
    # One wording for live hosts and captures alike, so a replayed capture gives identical facts:
    # a capture holds exactly the files that were readable on the machine.
    return Unknown(
        kind="absent", text=msg("{path} not found (absent or unreadable when probed)").format(path=path)
    )


def file_text(host: Host, path: str) -> tuple[str | None, Unknown | None]:
    text = host.read_file(path)
    return (text, None) if text is not None else (None, file_reason(host, path))


def to_int(text: object) -> int | None:
    try:
        return int(str(text).strip())
    except (TypeError, ValueError):
        return None


def to_float(text: object) -> float | None:
    try:
        value = float(str(text).strip().replace(",", "."))
    except (TypeError, ValueError):
        return None
    return value if value == value and value not in (float("inf"), float("-inf")) else None


# Linux and NVIDIA tools print sizes in powers of 1024 whatever the spelling: meminfo "kB", numactl
# "MB", nvidia-smi "MiB", lscpu "KiB", mount options "size=64g". One table for all of them.
_BINARY_SCALE = {prefix: 1024**power for power, prefix in enumerate(("", "k", "m", "g", "t"))}


def binary_scale(unit: str) -> int | None:
    """Bytes per unit for '', B, k/K, kB/KB, KiB, ... up to T (all binary); None for anything else."""
    u = unit.strip().lower()
    if len(u) == 3 and u.endswith("ib"):
        u = u[0]
    elif u.endswith("b"):
        u = u[:-1]
    return _BINARY_SCALE.get(u)


_RANGE = re.compile(r"^(\d+)(?:-(\d+)(?::(\d+))?)?$")


def parse_cpulist(text: str) -> list[int] | None:
    """'0-3,8,10-14:2' -> [0,1,2,3,8,10,12,14]; None when malformed."""
    cpus: list[int] = []
    text = text.strip()
    if not text:
        return []
    for part in text.split(","):
        m = _RANGE.match(part.strip())
        if not m:
            return None
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        step = int(m.group(3)) if m.group(3) else 1
        if hi < lo or step < 1 or hi - lo > 1_000_000:
            return None
        cpus.extend(range(lo, hi + 1, step))
    return cpus


def format_cpulist(cpus: list[int]) -> str:
    """[0,1,2,3,8] -> '0-3,8'."""
    out: list[str] = []
    ordered = sorted(set(cpus))
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        out.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return joined(",", out)


def load_data_csv(
    name: str, required: tuple[str, ...] = (), optional: tuple[str, ...] = ()
) -> list[dict[str, str]]:
    """Rows of src/gpuwise/facts/data/<name> as {column: text}; lines starting with '#' are comments.

    Read through the one CSV reader (gpuwise.datafiles), so a broken data file fails like a broken
    catalog file (file:line, the column, "To fix: ..."). Every row must fill `required` and cite its
    `source`; `optional` columns may be empty, and any other column is an error.
    """
    from importlib import resources
    from pathlib import Path

    path = Path(str(resources.files("gpuwise.facts") / "data" / name))
    columns = (*required, "source")
    rows = []
    for row in read_rows(path, columns, (*columns, *optional)):
        for column in columns:
            row.text(column, required=True)
        rows.append({k: (v or "").strip() for k, v in row.cells.items() if k})
    return rows
