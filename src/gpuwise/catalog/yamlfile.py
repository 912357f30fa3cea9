"""Load a YAML file into a pydantic model, turning every mistake into a file:line message.

Used for the planner's workload and options files and the catalog's on-prem cost defaults; the CSV
counterpart is gpuwise/datafiles.py (which also reads the file: size cap, regular files, UTF-8).

PyYAML's composer keeps a start mark on every node, so we compose the document once (refusing
aliases), remember the line of each key path (("training", "parallelism", "tp") -> 12), and construct plain Python data
from the same node tree. When pydantic rejects the data, its error location is a key path too, so we
can point at the line the user has to edit, name the field, list allowed values and suggest the
closest known field name.
"""

from __future__ import annotations

import difflib
import math
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from gpuwise.datafiles import read_input_text
from gpuwise.errors import DataValidationError
from gpuwise.i18n import N_, _

M = TypeVar("M", bound=BaseModel)
KeyPath = tuple[str | int, ...]


def _walk(node: yaml.Node, path: KeyPath, lines: dict[KeyPath, int], file: Path) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node.value)
            child = (*path, key)
            if child in lines:  # PyYAML keeps the last value silently; the user meant one of them
                field = ".".join(map(str, child))
                raise DataValidationError(
                    _("'{field}' is set twice (first on line {first})").format(
                        field=field, first=lines[child]
                    ),
                    _("keep one of the two lines: YAML would silently use only the last one"),
                    path=str(file),
                    line=key_node.start_mark.line + 1,
                )
            lines[child] = key_node.start_mark.line + 1  # the key's line is where the user looks
            _walk(value_node, child, lines, file)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, (*path, i), lines, file)


class _NoAliasLoader(yaml.SafeLoader):
    """SafeLoader that refuses aliases: `*a` re-uses a node, and 30 nested aliases of a two-item list
    expand to 2**30 items (a "billion laughs" bomb). No gpuwise file needs them."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise _AliasRefused(event.anchor, event.start_mark.line + 1)
        return super().compose_node(parent, index)


class _AliasRefused(Exception):
    def __init__(self, anchor: str, line: int):
        self.anchor, self.line = anchor, line


def load_yaml_with_lines(path: str | Path) -> tuple[Any, dict[KeyPath, int]]:
    """Read a YAML file; return (data, {key path: 1-based line}).

    Bounded: the file is read through datafiles.read_input_text (regular files, size cap, UTF-8),
    aliases and a key set twice in one mapping are refused, nesting deeper than Python's recursion limit is an error, and a number that
    is NaN or infinite (`.nan`, `.inf`) is an error at its line.
    """
    p = Path(path)
    text = read_input_text(p, N_("YAML file"))
    loader = _NoAliasLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except _AliasRefused as exc:
        raise DataValidationError(
            _("YAML aliases are not accepted (*{anchor})").format(anchor=exc.anchor),
            _("write the value out in full instead of referring to an &anchor"),
            path=str(p),
            line=exc.line,
        ) from None
    except RecursionError:
        raise DataValidationError(
            _("the YAML is nested too deeply to be a gpuwise file"),
            _("check that this is the right file"),
            path=str(p),
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise DataValidationError(
            _("not valid YAML: {problem}").format(problem=problem),
            _("fix the YAML syntax at that line (indentation, ':' after keys, quotes)"),
            path=str(p),
            line=line,
        ) from None
    finally:
        loader.dispose()
    lines: dict[KeyPath, int] = {}
    if node is not None:
        _walk(node, (), lines, p)
    _refuse_non_finite(data, (), lines, p)
    return data, lines


def _refuse_non_finite(data: Any, path: KeyPath, lines: dict[KeyPath, int], file: Path) -> None:
    """`.inf` and `.nan` parse as floats; no gpuwise field means them, and numpy would warn on them."""
    if isinstance(data, float) and not math.isfinite(data):
        field = ".".join(map(str, path)) or "(top level)"
        raise DataValidationError(
            _("'{field}' is {data!r}, not a finite number").format(field=field, data=data),
            _("write a number for '{field}' (or remove the line to use the default)").format(field=field),
            path=str(file),
            line=_line_for(path, lines),
        )
    if isinstance(data, dict):
        for key, value in data.items():
            _refuse_non_finite(value, (*path, key), lines, file)
    elif isinstance(data, list):
        for i, value in enumerate(data):
            _refuse_non_finite(value, (*path, i), lines, file)


def _line_for(loc: KeyPath, lines: dict[KeyPath, int]) -> int | None:
    """The line of the longest prefix of `loc` that exists in the file (a missing key -> its parent)."""
    for n in range(len(loc), -1, -1):
        if loc[:n] in lines:
            return lines[loc[:n]]
    return None


def _fields_at(model: type[BaseModel], loc: KeyPath) -> list[str]:
    """Field names (aliases where set) of the sub-model at key path `loc`, for did-you-mean."""
    current: Any = model
    for part in loc:
        if isinstance(part, int) or not (isinstance(current, type) and issubclass(current, BaseModel)):
            current = _inner_model(current)
            if isinstance(part, int):
                continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return []
        field = _field_by_name(current, str(part))
        if field is None:
            return []
        current = _inner_model(field.annotation)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return [f.alias or name for name, f in current.model_fields.items()]
    return []


def _field_by_name(model: type[BaseModel], name: str):
    for fname, f in model.model_fields.items():
        if name in (fname, f.alias):
            return f
    return None


def _inner_model(annotation: Any) -> Any:
    """Unwrap Optional[...] / list[...] to the pydantic model inside, if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        inner = _inner_model(arg)
        if inner is not None:
            return inner
    return None


def _describe(err: dict, model: type[BaseModel], see_also: str) -> tuple[str, str]:
    """(message, fix) for one pydantic error dict. Pydantic's own wording of a constraint ("Input should
    be greater than 0") stays as pydantic writes it; everything around it is translated."""
    loc: KeyPath = tuple(p for p in err["loc"] if not (isinstance(p, str) and "[" in p))  # drop union tags
    field = ".".join(str(p) for p in loc) or _("(top level)")
    kind = err["type"]
    if kind == "extra_forbidden":
        known = _fields_at(model, loc[:-1])
        close = difflib.get_close_matches(str(loc[-1]), known, n=1, cutoff=0.6)
        hint = _("did you mean '{name}'? ").format(name=close[0]) if close else ""
        return (
            _("unknown field '{field}'").format(field=field),
            hint + _("known fields here: {names}").format(names=", ".join(known) or _("none")),
        )
    if kind == "missing":
        parent = ".".join(map(str, loc[:-1]))
        where = _("under '{parent}'").format(parent=parent) if parent else _("at the top level")
        return (
            _("missing required field '{field}'").format(field=field),
            _("add '{key}:' {where}").format(key=loc[-1], where=where),
        )
    if kind in ("literal_error", "enum"):
        expected = err.get("ctx", {}).get("expected", "")
        got = err.get("input")
        choices = [c.strip().strip("'") for c in expected.replace(" or ", ",").split(",") if c.strip()]
        close = difflib.get_close_matches(str(got), choices, n=1, cutoff=0.5)
        hint = _("did you mean '{name}'? ").format(name=close[0]) if close else ""
        return (
            _("'{field}' is {got}, which is not allowed").format(field=field, got=repr(got)),
            hint + _("allowed values: {expected}").format(expected=expected),
        )
    msg = err.get("msg", _("invalid value"))
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    fix = _("edit '{field}' in the file").format(field=field)
    return (
        _("'{field}': {msg} (got {got})").format(field=field, msg=msg, got=repr(err.get("input"))),
        _("{fix}; {see_also}").format(fix=fix, see_also=see_also) if see_also else fix,
    )


def validate_file(model: type[M], path: str | Path, see_also: str = "") -> M:
    """Load `path` and validate it as `model`; raise DataValidationError with file:line on the first error.

    All errors are listed in the message (first one's line in the header) so a user fixes them in one go.
    `see_also` is appended to the fix of a bad value, e.g. where valid example files are.
    """
    data, lines = load_yaml_with_lines(path)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        fields = [f.alias or name for name, f in model.model_fields.items()][:3]
        raise DataValidationError(
            _("the file must be a YAML mapping (key: value lines) at the top level"),
            _("start the file with keys such as {join}").format(
                join=", ".join(repr(f + ":") for f in fields)
            ),
            path=str(path),
            line=1,
        )
    return validate_data(model, data, lines, path, see_also)


def validate_data(
    model: type[M], data: dict, lines: dict[KeyPath, int], path: str | Path, see_also: str = ""
) -> M:
    """Validate data read by `load_yaml_with_lines` as `model`; errors name file:line (see validate_file)."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        described = []
        for err in exc.errors():
            loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and "[" in p))
            described.append((_line_for(loc, lines), *_describe(err, model, see_also)))
        line, message, fix = described[0]
        for other_line, other_message, other_fix in described[1:]:
            where = f"{path}:{other_line}" if other_line else str(path)
            message += "\n" + _("also {where}: {message} ({fix})").format(
                where=where, message=other_message, fix=other_fix
            )
        raise DataValidationError(message, fix, path=str(path), line=line) from None
