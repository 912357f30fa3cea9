"""Message sizes: parse "8:1G", "8:1G:x2", "1M,64M,1G" and build nccl-tests style geometric ranges."""

from __future__ import annotations

import re

from gpuwise.errors import UserInputError
from gpuwise.i18n import N_, msg

_UNITS = {
    "": 1,
    "B": 1,
    "K": 1 << 10,
    "KB": 1 << 10,
    "KIB": 1 << 10,
    "M": 1 << 20,
    "MB": 1 << 20,
    "MIB": 1 << 20,
    "G": 1 << 30,
    "GB": 1 << 30,
    "GIB": 1 << 30,
}
_FIX = N_("write sizes like '8:1G' (8 B to 1 GiB, x2 steps), '8:1G:x8', or a list '1M,64M,1G'")


def parse_size(text: str) -> int:
    """'64M' -> 67108864 (binary units, as nccl-tests uses)."""
    match = re.fullmatch(r"\s*(\d+)\s*([A-Za-z]*)\s*", text)
    if not match or match.group(2).upper() not in _UNITS:
        raise UserInputError(msg("'{text}' is not a size").format(text=text), fix=msg(_FIX))
    return int(match.group(1)) * _UNITS[match.group(2).upper()]


def geometric(lo: int, hi: int, factor: int = 2) -> tuple[int, ...]:
    """lo, lo*f, lo*f^2, ... up to hi; hi itself is always included."""
    if lo <= 0 or hi < lo or factor < 2:
        raise UserInputError(
            msg("bad size range {lo}..{hi} x{factor}").format(lo=lo, hi=hi, factor=factor), fix=msg(_FIX)
        )
    out, size = [], lo
    while size < hi:
        out.append(size)
        size *= factor
    out.append(hi)
    return tuple(out)


def parse_sizes(text: str) -> tuple[int, ...]:
    """'8:1G' | '8:1G:x4' | '1M,64M,1G' -> sorted sizes in bytes."""
    text = text.strip()
    if ":" in text:
        parts = text.split(":")
        if len(parts) not in (2, 3):
            raise UserInputError(msg("'{text}' is not a size range").format(text=text), fix=msg(_FIX))
        factor = 2
        if len(parts) == 3:
            if not re.fullmatch(r"x?\d+", parts[2].strip()):
                raise UserInputError(
                    msg("'{parts}' is not a step factor").format(parts=parts[2]), fix=msg(_FIX)
                )
            factor = int(parts[2].strip().lstrip("x"))
        return geometric(parse_size(parts[0]), parse_size(parts[1]), factor)
    sizes = sorted({parse_size(p) for p in text.split(",") if p.strip()})
    if not sizes or sizes[0] <= 0:
        raise UserInputError(msg("'{text}' has no positive size").format(text=text), fix=msg(_FIX))
    return tuple(sizes)


def human(nbytes: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale and nbytes % scale == 0:
            return f"{nbytes // scale} {unit}"
    return f"{nbytes} B"
