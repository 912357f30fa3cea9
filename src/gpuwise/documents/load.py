"""Reading a gpuwise document: the JSON file, its schema id, then its model.

Every failure is a DocumentError (a UserInputError, exit 3) that names the file, the schema it
should have and the first field that is wrong, with a "To fix"; never a KeyError or a traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from gpuwise.datafiles import read_json
from gpuwise.errors import DataValidationError
from gpuwise.i18n import N_, joined, msg

T = TypeVar("T")


class DocumentError(DataValidationError):
    """A file (or stored JSON) that is not the gpuwise document it should be."""


def _where(loc: tuple) -> str:
    # the tag of a discriminated union (a plan's "training"/"inference") is not a field of the file
    return joined(".", (str(part) for part in loc if part not in ("training", "inference"))) or "(document)"


def parse_document(
    data: object, model: Any, schema: str, *, path: str | Path, fix: str, unmarked: bool = False
) -> Any:
    """`data` (parsed JSON) as `model` (a pydantic model or an annotated union of them), after checking
    that its "schema" field is `schema`. `path` names the source in the message; `fix` is its To fix.
    `unmarked`: a JSON object with no "schema" field at all is read too (a hand-written file)."""
    from pydantic import ValidationError

    found = data.get("schema") if isinstance(data, dict) else None
    if unmarked and isinstance(data, dict) and "schema" not in data:
        data, found = {**data, "schema": schema}, schema
    if found != schema:
        what = (
            repr(found) if isinstance(data, dict) else msg("a JSON {kind}").format(kind=type(data).__name__)
        )
        raise DocumentError(
            msg("not a {schema} document (its schema is {found})").format(schema=schema, found=what),
            msg(fix),
            path=str(path),
        )
    try:
        return _adapter(model).validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise DocumentError(
            msg("not a valid {schema} document: field {where}: {msg}").format(
                schema=schema, where=_where(first["loc"]), msg=first["msg"]
            ),
            msg(fix),
            path=str(path),
        ) from None


_ADAPTERS: dict[int, Any] = {}


def _adapter(model: Any):
    from pydantic import TypeAdapter

    key = id(model)
    if key not in _ADAPTERS:
        _ADAPTERS[key] = TypeAdapter(model)
    return _ADAPTERS[key]


def read_document(path: str | Path, model: Any, schema: str, *, fix: str, kind: str = N_("JSON file")) -> Any:
    """The document in the file at `path` (size cap, regular files only, NaN/Infinity refused)."""
    try:
        data = read_json(path, kind, fix)
    except DataValidationError as exc:
        raise DocumentError(exc.reason, exc.fix, path=exc.path or str(path), line=exc.line) from None
    return parse_document(data, model, schema, path=path, fix=fix)
