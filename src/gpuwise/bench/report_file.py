"""Reading a `gpuwise bench --save` file back: the one loader for everything that consumes bench results.

`gpuwise plan --calibrate` and `gpuwise doctor --bench-results` both take such a file; reading it here
keeps their checks (readable JSON, schema gpuwise-bench/1, valid fields) and their messages the same.
Importing this module does not import torch.
"""

from __future__ import annotations

from pathlib import Path

from gpuwise.datafiles import read_json
from gpuwise.documents.bench import BenchReport
from gpuwise.documents.ids import BENCH_SCHEMA
from gpuwise.errors import DataValidationError, UserInputError
from gpuwise.i18n import N_, joined, msg


def _fix() -> str:
    return msg("pass a file written by `gpuwise bench --save FILE` (schema {schema})").format(
        schema=BENCH_SCHEMA
    )


def read_bench_report(path: str | Path, option: str) -> BenchReport:
    """Load and validate a bench report given to `option` (e.g. "--calibrate"), named in every error.

    Raises UserInputError when the file does not exist, DataValidationError (naming the file) when it
    is not JSON, has another schema, or a field is invalid.
    """
    from pydantic import ValidationError

    p = Path(path).expanduser()
    if not p.exists() and not p.is_symlink():
        raise UserInputError(msg("{option} {p}: no such file").format(option=option, p=p), _fix())
    try:
        raw = read_json(p, N_("bench report"), _fix())  # size cap, no FIFOs, NaN/Infinity refused
    except DataValidationError as exc:
        fix = _fix() if exc.fix == _fix() else f"{exc.fix} ({_fix()})"
        raise DataValidationError(
            msg("{option}: not a readable JSON bench report ({reason})").format(
                option=option, reason=exc.reason
            ),
            fix,
            path=str(p),
            line=exc.line,
        ) from None
    if not isinstance(raw, dict) or raw.get("schema") != BENCH_SCHEMA:
        got = raw.get("schema") if isinstance(raw, dict) else type(raw).__name__
        raise DataValidationError(
            msg("{option}: schema is {got!r}, expected {bench_schema!r}").format(
                option=option, got=got, bench_schema=BENCH_SCHEMA
            ),
            _fix(),
            path=str(p),
        )
    try:
        return BenchReport.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = joined(".", (str(part) for part in first["loc"]))
        raise DataValidationError(
            msg("{option}: field {where}: {first}").format(option=option, where=where, first=first["msg"]),
            _fix(),
            path=str(p),
        ) from None
