"""Reading input files (data CSVs, YAML, JSON) safely, and CSV files row by row with located errors.

A bottom-layer module (imports only gpuwise.errors): the catalog's loaders, facts/data files, the
planner's YAML and bench-result JSON all read through here, so a malformed shipped or user file
always fails the same way: a `DataValidationError` whose message starts with `path:line:`, names
the column, says what was wrong, offers a did-you-mean, and ends with "To fix: ...".

`read_input_text` is the one way to read a user's input file: regular files only (a FIFO or device
would block or never end), at most MAX_INPUT_BYTES (env GPUWISE_MAX_INPUT_BYTES), UTF-8. CSV headers
are strict: an unknown or duplicated column is an error with a did-you-mean, and `nan`/`inf` are
never numbers. Nothing here writes files.
"""

from __future__ import annotations

import csv
import datetime as dt
import difflib
import os
import re
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from gpuwise.errors import DataValidationError
from gpuwise.i18n import N_, joined, msg

# A cell that means "no value". "nan" is not one: a NaN price is an error, not an unknown price.
_EMPTY = {"", "none", "null", "-"}
# The largest shipped catalog input, SkyPilot's GCP vms.csv, is ~2.3 MB; 64 MiB leaves room for any
# real file while a stray multi-GB file fails at once instead of filling memory.
MAX_INPUT_ENV = "GPUWISE_MAX_INPUT_BYTES"
DEFAULT_MAX_INPUT_BYTES = 64 * 1024 * 1024


def max_input_bytes() -> int:
    raw = os.environ.get(MAX_INPUT_ENV, "").strip()
    if raw.isdigit() and int(raw) > 0:
        return int(raw)
    return DEFAULT_MAX_INPUT_BYTES


def shown_name(name: object, limit: int = 160) -> str:
    """`name` as it may be echoed in a message: a hostile member name or path can be megabytes long
    (a PAX `path` record), so anything past `limit` characters is cut, and the cut is said."""
    text = str(name)
    if len(text) <= limit:
        return text
    return text[: limit - 20] + msg("... ({count:,} characters)").format(count=len(text))


def read_input_bytes(path: str | Path, kind: str = N_("file"), tail: int | None = None) -> bytes:
    """The bytes of a user's input file (regular files only, at most MAX_INPUT_BYTES); with `tail`,
    only its last `tail` bytes (a log may be any size: its end is what matters). DataValidationError
    (naming the file and the fix) otherwise. `kind` names the file in the messages ("YAML file")."""
    path = Path(path)
    kind = msg(kind)
    limit = max_input_bytes()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # O_NONBLOCK: opening a FIFO must not hang
    except FileNotFoundError:
        raise DataValidationError(
            msg("{kind} not found").format(kind=kind),
            msg("check the path (relative paths start in the current directory)"),
            path=shown_name(path),
        ) from None
    except OSError as exc:
        raise DataValidationError(
            msg("cannot open the {kind}: {strerror}").format(kind=kind, strerror=exc.strerror),
            msg("check the path and its permissions"),
            path=shown_name(path),
        ) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise DataValidationError(
                msg("is a directory, not a {kind}").format(kind=kind),
                msg("pass the file inside it"),
                path=shown_name(path),
            )
        if not stat.S_ISREG(info.st_mode):
            raise DataValidationError(
                msg(
                    "is not a regular file (a FIFO, device or socket), so it cannot be read as a {kind}"
                ).format(kind=kind),
                msg("save the input to a file first and pass that file"),
                path=shown_name(path),
            )
        if tail is not None:
            os.lseek(fd, max(0, info.st_size - min(tail, limit)), os.SEEK_SET)
            with os.fdopen(fd, "rb", closefd=False) as fh:
                return fh.read(min(tail, limit))
        if info.st_size > limit:
            data = b""
        else:
            with os.fdopen(fd, "rb", closefd=False) as fh:
                data = fh.read(limit + 1)  # a file that grows meanwhile still stops here
    except OSError as exc:
        raise DataValidationError(
            msg("cannot read the {kind}: {strerror}").format(kind=kind, strerror=exc.strerror or exc),
            msg("check the path and its permissions"),
            path=shown_name(path),
        ) from None
    finally:
        os.close(fd)
    if info.st_size > limit or len(data) > limit:
        raise DataValidationError(
            msg("the {kind} is larger than the limit of {limit:,} bytes ({st_size:,} bytes)").format(
                kind=kind, limit=limit, st_size=info.st_size
            ),
            msg("check that this is the right file; to read a larger one, set {max_input_env}=N").format(
                max_input_env=MAX_INPUT_ENV
            ),
            path=shown_name(path),
        )
    return data


def read_input_text(path: str | Path, kind: str = N_("file"), encoding: str = "utf-8") -> str:
    """The text of a user's input file within read_input_bytes' limits; not UTF-8 is an error at its line.
    `kind` names the file in the messages ("YAML file"): mark it with N_() where it is written."""
    data = read_input_bytes(path, kind)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DataValidationError(
            msg("not UTF-8 text (byte 0x{data:02x} at byte {start})").format(
                data=data[exc.start], start=exc.start
            ),
            msg("save the file as UTF-8"),
            path=shown_name(path),
            line=line,
        ) from None


def _no_constants(name: str):
    raise ValueError(f"{name} is not a number gpuwise accepts (NaN and Infinity are not valid JSON)")


def read_json(
    path: str | Path, kind: str = N_("JSON file"), fix: str = N_("pass a valid JSON file")
) -> object:
    """Parse a user's JSON file within read_input_text's limits; NaN/Infinity and runaway nesting
    are errors naming the file and, where known, the line. `kind` and `fix` are translated here (an
    already translated text passes through unchanged)."""
    import json

    text = read_input_text(path, kind)
    kind, fix = msg(kind), msg(fix)
    try:
        return json.loads(text, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        raise DataValidationError(
            msg("not valid JSON: {msg}").format(msg=exc.msg), fix, path=str(path), line=exc.lineno
        ) from None
    except ValueError as exc:
        raise DataValidationError(str(exc), fix, path=str(path)) from None
    except RecursionError:
        raise DataValidationError(
            msg("the {kind} is nested too deeply to parse").format(kind=kind), fix, path=str(path)
        ) from None


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
        shown = joined(", ", (f'"{a}"' for a in containing[:6]))
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
            msg("column {field!r}: {reason}").format(field=field, reason=reason),
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
            raise self.error(
                field,
                f"{value!r} is not a finite number",
                f"write a number on line {self.line} of {self.path}, or leave the cell empty for 'unknown'",
            )
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
            f"use one of: {joined(', ', allowed)} (line {self.line} of {self.path})",
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
    (with a did-you-mean against `known_columns`), has a column not in `known_columns` (a typo such as
    "Prise" must not silently drop the prices) or a column twice, or a row has more cells than the header.
    """
    path = Path(path)
    text = read_input_text(path, N_("CSV file"), encoding="utf-8-sig")
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
            msg("file is empty (no header row)"), msg("add a header row"), path=str(path), line=skipped + 1
        ) from None
    known = list(known_columns or required_columns)
    for column in required_columns:
        if column not in header:
            hint = ""
            close = difflib.get_close_matches(column, header, n=1, cutoff=0.6)
            if close:
                hint = f' (found "{close[0]}": did you mean "{column}"?)'
            raise DataValidationError(
                msg("missing column {column!r}{hint}").format(column=column, hint=hint),
                msg("the header needs: {join}; optional: {join2}").format(
                    join=joined(", ", required_columns),
                    join2=joined(", ", (c for c in known if c not in required_columns)),
                ),
                path=str(path),
                line=skipped + 1,
            )
    _check_header(path, skipped + 1, header, list(required_columns), known)
    try:
        for cells in reader:
            line = reader.line_num + skipped
            if not cells or all(not c.strip() for c in cells):
                continue
            if cells[0].lstrip().startswith("#"):
                continue  # comment lines let a data file explain itself
            if len(cells) > len(header):
                raise DataValidationError(
                    msg("{n_cells} cells but the header has {n_header} columns").format(
                        n_cells=len(cells), n_header=len(header)
                    ),
                    msg("quote cells that contain commas, or remove the extra cells"),
                    path=str(path),
                    line=line,
                )
            yield Row(
                path, line, dict(zip(header, cells, strict=False))
            )  # short rows: missing cells read as empty
    except csv.Error as exc:
        raise DataValidationError(
            msg("not valid CSV: {exc}").format(exc=exc),
            msg("fix the quoting on that line"),
            path=str(path),
            line=reader.line_num + skipped,
        ) from None


def _check_header(path: Path, line: int, header: list[str], required: list[str], known: list[str]) -> None:
    seen: set[str] = set()
    for column in header:
        if column in seen:
            raise DataValidationError(
                msg("column {column!r} appears twice in the header").format(column=column),
                msg("remove or rename one of them (which one holds the right values is not knowable)"),
                path=str(path),
                line=line,
            )
        seen.add(column)
    for column in header:
        if column not in known and column:
            raise DataValidationError(
                msg("unknown column {column!r}{did_you_mean_column}").format(
                    column=column, did_you_mean_column=did_you_mean(column, known)
                ),
                msg("rename or remove it; the columns are: {join} (required: {join2})").format(
                    join=joined(", ", known), join2=joined(", ", required)
                ),
                path=str(path),
                line=line,
            )
