"""Timestamps of kernel and service log lines, in every format a GPU node writes them.

`dmesg` (seconds since boot, `-T`/`--ctime`, `-H` with `+delta` lines, `--time-format iso`), journald and
syslog (`Mar  3 18:39:57 host ...`, ISO 8601 with an offset, localised month names such as `11月`), and Fabric
Manager's own `[Jul 09 2024 18:14:07]`. Each becomes seconds on one of two clocks, "boot" or "wall", so
events of one log can be counted per time window; syslog lines carry no year, so wall times of one log are
only compared with each other.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

MONTHS = {
    m: i
    for i, m in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1
    )
}
_BOOT = re.compile(r"^\[\s*(\d+\.\d+)\]\s?")
_DELTA = re.compile(r"^\[\s*\+\s*(\d+\.\d+)\]\s?")  # dmesg -H / -d
_H_ANCHOR = re.compile(r"^\[([A-Z][a-z]{2})(\d{1,2}) (\d\d):(\d\d)\]\s?")  # dmesg -H "[May19 19:57]"
_CTIME = re.compile(r"^\[(?:[A-Z][a-z]{2} )?([A-Z][a-z]{2}) +(\d{1,2}) (\d\d):(\d\d):(\d\d) (\d{4})\]\s?")
_ISO = re.compile(r"^(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d+))?(Z|[+-]\d\d:?\d\d)?\s")
_SYSLOG = re.compile(r"^([A-Z][a-z]{2}) +(\d{1,2}) (\d\d):(\d\d):(\d\d)(?:\.(\d+))?\s")
_SYSLOG_CJK = re.compile(r"^(\d{1,2})月 +(\d{1,2}) (\d\d):(\d\d):(\d\d)\s")
_FM = re.compile(r"^\[([A-Z][a-z]{2}) (\d{1,2}) (\d{4}) (\d\d):(\d\d):(\d\d)\]\s?")
_SYSLOG_YEAR = 2001  # any non-leap year: syslog has none; Feb 29 falls back to no time


def _wall(year: int, month: int, day: int, h: int, m: int, s: int, frac: str | None = None) -> float | None:
    try:
        t = datetime(year, month, day, h, m, s, tzinfo=timezone.utc).timestamp()
    except ValueError:
        return None
    return t + (float("0." + frac) if frac else 0.0)


class LineClock:
    """Reads the stamp off each line of one log; keeps the state `dmesg -H` deltas need."""

    def __init__(self) -> None:
        self._last: float | None = None
        self._last_clock: str | None = None

    def read(self, line: str) -> tuple[float | None, str | None, str | None, str]:
        """(seconds, clock, stamp text, rest of the line) for one line; (None, None, None, line) if unstamped."""
        t, clock, stamp, rest = self._read(line)
        if t is not None:
            self._last, self._last_clock = t, clock
        return t, clock, stamp, rest

    def _read(self, line: str) -> tuple[float | None, str | None, str | None, str]:
        if m := _BOOT.match(line):
            return float(m.group(1)), "boot", m.group(1), line[m.end() :]
        if m := _DELTA.match(line):
            base = self._last if self._last is not None else 0.0
            return base + float(m.group(1)), self._last_clock or "boot", "+" + m.group(1), line[m.end() :]
        if m := _H_ANCHOR.match(line):
            month = MONTHS.get(m.group(1).lower())
            t = (
                _wall(_SYSLOG_YEAR, month, int(m.group(2)), int(m.group(3)), int(m.group(4)), 0)
                if month
                else None
            )
            return t, "wall" if t is not None else None, m.group(0).strip(), line[m.end() :]
        if m := _CTIME.match(line):
            month = MONTHS.get(m.group(1).lower())
            g = [int(x) for x in m.group(2, 3, 4, 5, 6)]
            t = _wall(g[4], month, g[0], g[1], g[2], g[3]) if month else None
            return t, "wall" if t is not None else None, m.group(0).strip(), line[m.end() :]
        if m := _FM.match(line):
            month = MONTHS.get(m.group(1).lower())
            g = [int(x) for x in m.group(2, 3, 4, 5, 6)]
            t = _wall(g[1], month, g[0], g[2], g[3], g[4]) if month else None
            return t, "wall" if t is not None else None, m.group(0).strip(), line[m.end() :]
        if m := _ISO.match(line):
            g = [int(x) for x in m.group(1, 2, 3, 4, 5, 6)]
            t = _wall(*g, m.group(7))
            offset = m.group(8)
            if t is not None and offset and offset != "Z":
                sign = -1 if offset[0] == "+" else 1
                digits = offset[1:].replace(":", "")
                t += sign * (int(digits[:2]) * 3600 + int(digits[2:]) * 60)
            return t, "wall" if t is not None else None, m.group(0).strip(), line[m.end() :]
        if m := _SYSLOG.match(line):
            month = MONTHS.get(m.group(1).lower())
            g = [int(x) for x in m.group(2, 3, 4, 5)]
            t = _wall(_SYSLOG_YEAR, month, *g, m.group(6)) if month else None
            return t, "wall" if t is not None else None, m.group(0).strip(), line[m.end() :]
        if m := _SYSLOG_CJK.match(line):
            g = [int(x) for x in m.group(1, 2, 3, 4, 5)]
            t = _wall(_SYSLOG_YEAR, *g)
            return t, "wall" if t is not None else None, m.group(0).strip(), line[m.end() :]
        return None, None, None, line
