"""How every view writes a value: one token for unknown, one way to write numbers, sizes, money,
durations and percentages. Bottom of the layers (no gpuwise imports), so plan and report share it.
"""

from __future__ import annotations

import math

UNKNOWN = "—"  # a value gpuwise could not read, or a figure without a source
CURRENCY_SYMBOL = {"USD": "$", "CNY": "¥", "EUR": "€"}


def missing(x) -> bool:
    """None, NaN or a non-number in a numeric slot: shown as UNKNOWN."""
    return x is None or (isinstance(x, float) and math.isnan(x))


def value(x) -> str:
    """Any fact value as recorded: yes/no for booleans, a comma list (or 'none') for lists."""
    if missing(x):
        return UNKNOWN
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, (list, tuple)):
        return ", ".join(map(value, x)) if x else "none"
    if isinstance(x, float):
        return str(round(x, 6))  # as recorded (9.0 stays 9.0), without float noise (0.30000000000000004)
    return str(x)


def number(x: float | int | None, digits: int | None = None, unit: str = "") -> str:
    """A number with thousands separators. digits=None: about three significant figures (1,234 · 56.7 ·
    1.23 · 0.0456); digits=N: at most N decimals, trailing zeros dropped (989.5, 67)."""
    if missing(x):
        return UNKNOWN
    if isinstance(x, float) and math.isinf(x):
        text = "∞" if x > 0 else "-∞"
    elif digits is not None:
        text = f"{x:,.{digits}f}"
        if digits:
            text = text.rstrip("0").rstrip(".")
    elif isinstance(x, int) and not isinstance(x, bool):
        text = f"{x:,}"
    elif abs(x) >= 1000:
        text = f"{x:,.0f}"
    elif abs(x) >= 10:
        text = f"{x:.1f}"
    else:
        text = f"{x:.3g}"
    return f"{text} {unit}" if unit else text


def size(n_bytes: float | int | None) -> str:
    """Bytes in binary units, at most one decimal: 512 B, 1.5 KiB, 4 KiB, 125.9 GiB, 3.5 TiB."""
    if missing(n_bytes):
        return UNKNOWN
    n = float(n_bytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f}".removesuffix(".0") + f" {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def money(x: float | None, currency: str = "", compact: bool = False) -> str:
    """$3.50, ¥12,000.00, GBP 3.50; compact: $12.3k, $1.25M. currency="" when a table's title names it."""
    if missing(x):
        return UNKNOWN
    if compact and abs(x) >= 1e6:
        text = f"{x / 1e6:,.2f}M"
    elif compact and abs(x) >= 1e3:
        text = f"{x / 1e3:,.1f}k"
    else:
        text = f"{x:,.2f}"
    if not currency:
        return text
    symbol = CURRENCY_SYMBOL.get(currency)
    return f"{symbol}{text}" if symbol else f"{currency} {text}"


def seconds(x: float | None) -> str:
    """A short time with the unit that keeps it short: 13.8 s, 160 ms, 780 us."""
    if missing(x):
        return UNKNOWN
    if x == 0 or abs(x) >= 1:
        return f"{x:.3g} s"
    if abs(x) >= 1e-3:
        return f"{x * 1e3:.3g} ms"
    return f"{x * 1e6:.3g} us"


def duration(x: float | None) -> str:
    """A long time: 2.5 d, 7.1 h, 42 min (under a minute: seconds())."""
    if missing(x):
        return UNKNOWN
    if math.isinf(x):
        return "never"
    if x >= 86400:
        return f"{x / 86400:,.1f} d"
    if x >= 3600:
        return f"{x / 3600:,.1f} h"
    if x >= 60:
        return f"{x / 60:,.0f} min"
    return seconds(x)


def percent(fraction: float | None, digits: int = 0) -> str:
    """A fraction as a percentage: 0.803 -> 80%."""
    if missing(fraction):
        return UNKNOWN
    return f"{fraction * 100:.{digits}f}%"


# Memory: one policy everywhere (probe, watch, catalog, plan, reports). GiB = bytes / 2**30, from the
# byte count (MiB readings are converted to bytes first), one decimal with a trailing .0 dropped:
# an H200 that nvidia-smi reports as 143771 MiB is 140.4 GiB in every view.
GIB = 2**30
MIB = 2**20


def mib_to_bytes(mib: float | None) -> int | None:
    """A MiB reading (nvidia-smi, NVML samples) as bytes, so it goes through gib() like every byte count."""
    return None if missing(mib) else int(round(float(mib) * MIB))


def gib(n_bytes: float | int | None, unit: bool = True) -> str:
    """Memory in GiB: 140.4 GiB (unit=False: 140.4, for a table whose header says GiB)."""
    if missing(n_bytes):
        return UNKNOWN
    text = f"{float(n_bytes) / GIB:,.1f}".removesuffix(".0")
    return f"{text} GiB" if unit else text
