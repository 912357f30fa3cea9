"""Reading catalog CSV files row by row, with errors that name file:line, the field and the reason.

Every loader in this package goes through `read_rows` and the `Row` field parsers, so a malformed
shipped or user file always fails the same way: a `DataValidationError` whose message starts with
`path:line:`, names the column, says what was wrong, offers a did-you-mean for enum columns, and
ends with "To fix: ...". Nothing here writes files.
"""

from __future__ import annotations

import csv
import datetime as dt
import difflib
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from gpuwise.errors import DataValidationError

# A cell that means "no value" in our files and in SkyPilot's (pandas writes NaN for empty floats).
_EMPTY = {"", "nan", "none", "null", "-"}


def did_you_mean(value: str, allowed: Iterable[str]) -> str:
    """' (did you mean "x"?)' when `value` is close to one of `allowed`, else ''.

    Names that contain `value` come first ("H100" suggests H100-SXM, H100-PCIE, H100-NVL), so a
    partial name is not "corrected" into a different product.
    """
    allowed = list(dict.fromkeys(allowed))
    wanted = value.strip().lower()
    # Whole-word containment only: "pu" suggests "pue", not "node_power_kw_per_gpu_tdp".
    word = re.compile(rf"(?:^|[-_ .]){re.escape(wanted)}") if wanted else None
    containing = [a for a in allowed if word and word.search(a.lower())]
    if containing:
        shown = ", ".join(f'"{a}"' for a in containing[:6])
        return f" (did you mean {'one of ' if len(containing) > 1 else ''}{shown}?)"
    by_lower = {a.lower(): a for a in allowed}
    close = difflib.get_close_matches(wanted, list(by_lower), n=1, cutoff=0.6)
    return f' (did you mean "{by_lower[close[0]]}"?)' if close else ""


class Row:
    """One CSV record with its origin, and typed accessors that raise located errors."""

    def __init__(self, path: Path, line: int, cells: dict[str, str]):
        self.path, self.line, self.cells = path, line, cells

    def error(self, field: str, reason: str, fix: str | None = None) -> DataValidationError:
        return DataValidationError(
            f"column {field!r}: {reason}",
            fix or f"correct column {field!r} on line {self.line} of {self.path}",
            path=str(self.path),
            line=self.line,
        )

    def raw(self, field: str) -> str | None:
        value = (self.cells.get(field) or "").strip()
        return None if value.lower() in _EMPTY else value

    def text(self, field: str, required: bool = False) -> str | None:
        value = self.raw(field)
        if value is None and required:
            raise self.error(field, "is empty but required")
        return value

    def number(
        self, field: str, required: bool = False, minimum: float = 0.0, maximum: float | None = None
    ) -> float | None:
        value = self.text(field, required)
        if value is None:
            return None
        try:
            number = float(value)
        except ValueError:
            raise self.error(field, f"{value!r} is not a number") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise self.error(field, f"{value!r} is not a finite number")
        if number < minimum:
            raise self.error(field, f"{number:g} is below the minimum {minimum:g}")
        if maximum is not None and number > maximum:
            raise self.error(field, f"{number:g} is above the maximum {maximum:g}")
        return number

    def integer(self, field: str, required: bool = False, minimum: int = 0) -> int | None:
        number = self.number(field, required, minimum=minimum)
        if number is None:
            return None
        if number != int(number):
            raise self.error(field, f"{number:g} is not a whole number")
        return int(number)

    def fraction(self, field: str) -> float | None:
        """A share in (0, 1]: achieved fractions, discounts."""
        return self.number(field, minimum=0.0, maximum=1.0)

    def boolean(self, field: str, default: bool = False) -> bool:
        value = self.text(field)
        if value is None:
            return default
        lowered = value.lower()
        if lowered in ("true", "yes", "1"):
            return True
        if lowered in ("false", "no", "0"):
            return False
        raise self.error(field, f"{value!r} is not true/false")

    def choice(self, field: str, allowed: Iterable[str], required: bool = False) -> str | None:
        allowed = list(allowed)
        value = self.text(field, required)
        if value is None:
            return None
        for option in allowed:
            if value.lower() == option.lower():
                return option
        raise self.error(
            field,
            f"unknown value {value!r}{did_you_mean(value, allowed)}",
            f"use one of: {', '.join(allowed)} (line {self.line} of {self.path})",
        )

    def date(self, field: str, required: bool = False) -> dt.date | None:
        value = self.text(field, required)
        if value is None:
            return None
        try:
            return dt.date.fromisoformat(value[:10])
        except ValueError:
            raise self.error(field, f"{value!r} is not a date in YYYY-MM-DD form") from None


def read_rows(
    path: Path, required_columns: Iterable[str], known_columns: Iterable[str] | None = None
) -> Iterator[Row]:
    """Yield each data row of a CSV file as a `Row` that knows its file and line number.

    Blank lines and lines starting with '#' (before or after the header) are skipped.
    Raises DataValidationError when the file cannot be read, is not CSV, lacks a required column
    (with a did-you-mean against `known_columns`), or a row has more cells than the header.
    Columns not in `known_columns` are allowed and ignored (SkyPilot's GpuInfo, Arch...).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise DataValidationError("file not found", "check the path", path=str(path)) from None
    except UnicodeDecodeError as exc:
        raise DataValidationError(
            f"not UTF-8 text ({exc.reason})", "save the file as UTF-8 CSV", path=str(path)
        ) from None
    except OSError as exc:
        raise DataValidationError(
            f"cannot read: {exc.strerror}", "check the file's permissions", path=str(path)
        ) from None
    lines = text.splitlines()
    # Comment lines may also precede the header (a data file explaining its columns). They are skipped
    # as text, before CSV parsing, so a quote in a comment cannot open a field; `skipped` keeps the
    # reported line numbers those of the file.
    skipped = 0
    while skipped < len(lines) and (not lines[skipped].strip() or lines[skipped].lstrip().startswith("#")):
        skipped += 1
    reader = csv.reader(lines[skipped:])
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise DataValidationError(
            "file is empty (no header row)", "add a header row", path=str(path), line=skipped + 1
        ) from None
    known = list(known_columns or required_columns)
    for column in required_columns:
        if column not in header:
            hint = ""
            close = difflib.get_close_matches(column, header, n=1, cutoff=0.6)
            if close:
                hint = f' (found "{close[0]}": did you mean "{column}"?)'
            raise DataValidationError(
                f"missing column {column!r}{hint}",
                f"the header needs: {', '.join(required_columns)}; optional: "
                f"{', '.join(c for c in known if c not in required_columns)}",
                path=str(path),
                line=skipped + 1,
            )
    try:
        for cells in reader:
            line = reader.line_num + skipped
            if not cells or all(not c.strip() for c in cells):
                continue
            if cells[0].lstrip().startswith("#"):
                continue  # comment lines let a data file explain itself
            if len(cells) > len(header):
                raise DataValidationError(
                    f"{len(cells)} cells but the header has {len(header)} columns",
                    "quote cells that contain commas, or remove the extra cells",
                    path=str(path),
                    line=line,
                )
            yield Row(
                path, line, dict(zip(header, cells, strict=False))
            )  # short rows: missing cells read as empty
    except csv.Error as exc:
        raise DataValidationError(
            f"not valid CSV: {exc}",
            "fix the quoting on that line",
            path=str(path),
            line=reader.line_num + skipped,
        ) from None
