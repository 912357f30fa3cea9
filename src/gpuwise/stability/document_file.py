"""Reading a saved stability result (`gpuwise stability --save FILE`) back: doctor --stability and
plan --calibrate use it. A file that is not one gives a clear error, never a traceback."""

from __future__ import annotations

from pathlib import Path

from gpuwise.errors import UserInputError
from gpuwise.i18n import N_, joined, msg
from gpuwise.stability.model import SCHEMA, StabilityReport


def is_stability_document(doc: object) -> bool:
    return isinstance(doc, dict) and doc.get("schema") == SCHEMA


def parse_stability(doc: object, path: str | Path, option: str) -> StabilityReport:
    from pydantic import ValidationError

    if not is_stability_document(doc):
        raise UserInputError(
            msg("{option} {path}: not a {schema} document").format(option=option, path=path, schema=SCHEMA),
            msg("pass a file written by `gpuwise stability --save FILE`"),
        )
    try:
        return StabilityReport.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = joined(".", (str(p) for p in first.get("loc", ())))
        raise UserInputError(
            msg("{option} {path}: invalid {schema} document ({where}: {msg})").format(
                option=option, path=path, schema=SCHEMA, where=where, msg=first.get("msg")
            ),
            msg("pass a file written by `gpuwise stability --save FILE`"),
        ) from None


def read_stability(path: str | Path, option: str) -> StabilityReport:
    from gpuwise.datafiles import read_json

    doc = read_json(
        path, N_("stability result"), N_("pass a file written by `gpuwise stability --save FILE`")
    )
    return parse_stability(doc, path, option)
