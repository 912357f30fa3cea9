"""Load a YAML file into a pydantic model, turning every mistake into a file:line message.

Used for the planner's workload and options files and the catalog's on-prem cost defaults; the CSV
counterpart is gpuwise/datafiles.py (which also reads the file: size cap, regular files, UTF-8).

We compose the document ourselves from PyYAML's event stream (libyaml's C parser where installed), so
every limit holds *while* the file is read, before anything large is built: at most MAX_NODES nodes,
MAX_DEPTH levels of nesting, MAX_SCALAR_CHARS characters in one value, MAX_INT_DIGITS digits in one
integer, and no aliases (30 nested aliases of a two-item list expand to 2**30 items: a "billion
laughs" bomb; no gpuwise file needs them). PyYAML's own composer builds the whole tree first: a 4 MiB flow list took
`plan` 2 min 49 s and 1.67 GB (benchmarks/yaml_input_limits.py measures both). Each node keeps its
start mark, so we remember the line of each key path (("training", "parallelism", "tp") -> 12) and
construct plain Python data from the same node tree. When pydantic rejects the data, its error location is a key path too, so we
can point at the line the user has to edit, name the field, list allowed values and suggest the
closest known field name.
"""

from __future__ import annotations

import difflib
import math
import re
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from gpuwise.datafiles import read_input_bytes
from gpuwise.errors import DataValidationError
from gpuwise.i18n import N_, joined, msg

M = TypeVar("M", bound=BaseModel)
KeyPath = tuple[str | int, ...]


def _walk(node: yaml.Node, path: KeyPath, lines: dict[KeyPath, int], file: Path) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node.value)
            child = (*path, key)
            if child in lines:  # PyYAML keeps the last value silently; the user meant one of them
                field = joined(".", map(str, child))
                raise DataValidationError(
                    msg("'{field}' is set twice (first on line {first})").format(
                        field=field, first=lines[child]
                    ),
                    msg("keep one of the two lines: YAML would silently use only the last one"),
                    path=str(file),
                    line=key_node.start_mark.line + 1,
                )
            lines[child] = key_node.start_mark.line + 1  # the key's line is where the user looks
            _walk(value_node, child, lines, file)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, (*path, i), lines, file)


# Real gpuwise YAML files (workloads, options, costs, jobs) hold at most ~1,000 nodes (the largest shipped,
# plan_defaults.yaml, 12 kB) and lines of under 200 characters; these bounds leave 50x that and keep
# the worst 64 MiB file under 5 s and 250 MB (benchmarks/yaml_input_limits.py).
MAX_NODES = 50_000
MAX_DEPTH = 64
MAX_SCALAR_CHARS = 64 * 1024
MAX_INT_DIGITS = 100  # int() refuses > 4300 digits (CVE-2020-10735) with a ValueError; no count is this long
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's C parser when PyYAML was built with it
_NUMBER = re.compile(r"[-+]?(?:\d[\d_]*)?\.?[\d_]*(?:[eE][-+]?\d+)?")
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"


class _Refused(Exception):
    """A bound or rule broken while composing: (message, fix, 1-based line)."""

    def __init__(self, message: str, fix: str, line: int):
        self.message, self.fix, self.line = message, fix, line


def _compose(loader) -> yaml.Node | None:
    """The single document of `loader`'s event stream as a node tree, within the bounds above."""
    loader.get_event()  # StreamStart
    if loader.check_event(yaml.StreamEndEvent):
        return None
    loader.get_event()  # DocumentStart
    count = [0]
    node = _node(loader, 0, count)
    loader.get_event()  # DocumentEnd
    if not loader.check_event(yaml.StreamEndEvent):
        event = loader.peek_event()
        raise _Refused(
            msg("the file holds more than one YAML document ('---')"),
            msg("keep one document per file"),
            event.start_mark.line + 1,
        )
    return node


def _node(loader, depth: int, count: list[int]) -> yaml.Node:
    event = loader.get_event()
    line = event.start_mark.line + 1
    count[0] += 1
    if count[0] > MAX_NODES:
        raise _Refused(
            msg("the YAML has more than {limit:,} values; a gpuwise file has a few hundred").format(
                limit=MAX_NODES
            ),
            msg("check that this is the right file"),
            line,
        )
    if depth > MAX_DEPTH:
        raise _Refused(
            msg("the YAML is nested more than {limit} levels deep").format(limit=MAX_DEPTH),
            msg("check that this is the right file"),
            line,
        )
    if isinstance(event, yaml.AliasEvent):
        raise _Refused(
            msg("YAML aliases are not accepted (*{anchor})").format(anchor=event.anchor),
            msg("write the value out in full instead of referring to an &anchor"),
            line,
        )
    if isinstance(event, yaml.ScalarEvent):
        return _scalar(loader, event, line)
    if isinstance(event, yaml.SequenceStartEvent):
        tag = (
            event.tag
            if event.tag not in (None, "!")
            else loader.resolve(yaml.SequenceNode, None, event.implicit)
        )
        items = []
        while not loader.check_event(yaml.SequenceEndEvent):
            items.append(_node(loader, depth + 1, count))
        end = loader.get_event()
        return yaml.SequenceNode(tag, items, event.start_mark, end.end_mark, flow_style=event.flow_style)
    tag = (
        event.tag if event.tag not in (None, "!") else loader.resolve(yaml.MappingNode, None, event.implicit)
    )
    pairs = []
    while not loader.check_event(yaml.MappingEndEvent):
        key = _node(loader, depth + 1, count)
        pairs.append((key, _node(loader, depth + 1, count)))
    end = loader.get_event()
    return yaml.MappingNode(tag, pairs, event.start_mark, end.end_mark, flow_style=event.flow_style)


def _scalar(loader, event, line: int) -> yaml.ScalarNode:
    value = event.value
    if len(value) > MAX_SCALAR_CHARS:
        raise _Refused(
            msg("a value of {length:,} characters (the limit is {limit:,})").format(
                length=len(value), limit=MAX_SCALAR_CHARS
            ),
            msg("check that this is the right file"),
            line,
        )
    tag = (
        event.tag if event.tag not in (None, "!") else loader.resolve(yaml.ScalarNode, value, event.implicit)
    )
    plain = not event.style  # None (PyYAML) or "" (libyaml): a plain, unquoted scalar
    if tag == _INT_TAG or (plain and tag == "tag:yaml.org,2002:str" and _NUMBER.fullmatch(value)):
        digits = sum(c.isdigit() for c in value.split("e")[0].split("E")[0])
        if digits > MAX_INT_DIGITS:
            raise _Refused(
                msg("a number with {digits:,} digits; gpuwise accepts at most {limit}").format(
                    digits=digits, limit=MAX_INT_DIGITS
                ),
                msg("write the number in scientific notation (e.g. 1.5e9), or check the file"),
                line,
            )
    if plain and tag in (_FLOAT_TAG, "tag:yaml.org,2002:str") and _NUMBER.fullmatch(value):
        try:  # 1.0e400 is a string to YAML 1.1 (no sign in the exponent) and infinity to pydantic
            number = float(value.replace("_", ""))
        except ValueError:
            number = 0.0
        if not math.isfinite(number):
            raise _Refused(
                msg("{value} is out of range for a number (it would be infinite)").format(value=value[:40]),
                msg("write a number between -1e308 and 1e308"),
                line,
            )
    return yaml.ScalarNode(tag, value, event.start_mark, event.end_mark, style=event.style)


def load_yaml_with_lines(path: str | Path) -> tuple[Any, dict[KeyPath, int]]:
    """Read a YAML file; return (data, {key path: 1-based line}).

    Bounded: the file is read through datafiles.read_input_bytes (regular files, size cap), must be
    UTF-8, and is composed within MAX_NODES, MAX_DEPTH, MAX_SCALAR_CHARS and MAX_INT_DIGITS; aliases,
    a key set twice in one mapping and a number that is NaN, infinite or out of range (`.nan`,
    `.inf`, `1.0e400`) are errors at their line.
    """
    p = Path(path)
    data = read_input_bytes(p, N_("YAML file"))
    _check_utf8(data, p)
    loader = _LOADER(data)  # bytes: libyaml reads them without a second, decoded copy
    try:
        node = _compose(loader)
        data = loader.construct_document(node) if node is not None else None
    except _Refused as exc:
        raise DataValidationError(exc.message, exc.fix, path=str(p), line=exc.line) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise DataValidationError(
            msg("not valid YAML: {problem}").format(problem=problem),
            msg("fix the YAML syntax at that line (indentation, ':' after keys, quotes)"),
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


def _check_utf8(data: bytes, path: Path) -> None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataValidationError(
            msg("not UTF-8 text (byte 0x{data:02x} at byte {start})").format(
                data=data[exc.start], start=exc.start
            ),
            msg("save the file as UTF-8"),
            path=str(path),
            line=data.count(b"\n", 0, exc.start) + 1,
        ) from None


def _refuse_non_finite(data: Any, path: KeyPath, lines: dict[KeyPath, int], file: Path) -> None:
    """`.inf` and `.nan` parse as floats; no gpuwise field means them, and numpy would warn on them."""
    if isinstance(data, float) and not math.isfinite(data):
        field = joined(".", map(str, path)) or "(top level)"
        raise DataValidationError(
            msg("'{field}' is {data!r}, not a finite number").format(field=field, data=data),
            msg("write a number for '{field}' (or remove the line to use the default)").format(field=field),
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
    field = joined(".", (str(p) for p in loc)) or msg("(top level)")
    kind = err["type"]
    if kind == "extra_forbidden":
        known = _fields_at(model, loc[:-1])
        close = difflib.get_close_matches(str(loc[-1]), known, n=1, cutoff=0.6)
        hint = msg("did you mean '{name}'? ").format(name=close[0]) if close else ""
        return (
            msg("unknown field '{field}'").format(field=field),
            hint + msg("known fields here: {names}").format(names=joined(", ", known) or msg("none")),
        )
    if kind == "missing":
        parent = joined(".", map(str, loc[:-1]))
        where = msg("under '{parent}'").format(parent=parent) if parent else msg("at the top level")
        return (
            msg("missing required field '{field}'").format(field=field),
            msg("add '{key}:' {where}").format(key=loc[-1], where=where),
        )
    if kind in ("literal_error", "enum"):
        expected = err.get("ctx", {}).get("expected", "")
        got = err.get("input")
        choices = [c.strip().strip("'") for c in expected.replace(" or ", ",").split(",") if c.strip()]
        close = difflib.get_close_matches(str(got), choices, n=1, cutoff=0.5)
        hint = msg("did you mean '{name}'? ").format(name=close[0]) if close else ""
        return (
            msg("'{field}' is {got}, which is not allowed").format(field=field, got=repr(got)),
            hint + msg("allowed values: {expected}").format(expected=expected),
        )
    raised = (err.get("ctx") or {}).get("error")  # a validator's ValueError keeps the message it was given
    text = (
        raised.args[0]
        if isinstance(raised, ValueError) and raised.args
        else err.get("msg", msg("invalid value"))
    )
    if text.startswith("Value error, "):
        text = text[len("Value error, ") :]
    fix = msg("edit '{field}' in the file").format(field=field)
    return (
        msg("'{field}': {msg} (got {got})").format(field=field, msg=text, got=repr(err.get("input"))),
        msg("{fix}; {see_also}").format(fix=fix, see_also=see_also) if see_also else fix,
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
            msg("the file must be a YAML mapping (key: value lines) at the top level"),
            msg("start the file with keys such as {join}").format(
                join=joined(", ", (repr(f + ":") for f in fields))
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
        model_obj = model.model_validate(data)
    except ValidationError as exc:
        described = []
        for err in exc.errors():
            loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and "[" in p))
            described.append((_line_for(loc, lines), *_describe(err, model, see_also)))
        line, message, fix = described[0]
        for other_line, other_message, other_fix in described[1:]:
            where = f"{path}:{other_line}" if other_line else str(path)
            message += "\n" + msg("also {where}: {message} ({fix})").format(
                where=where, message=other_message, fix=other_fix
            )
        raise DataValidationError(message, fix, path=str(path), line=line) from None
    # a quoted "1e400" or "nan" is a string to YAML and a float to pydantic: refused here, at its line
    _refuse_non_finite(model_obj.model_dump(by_alias=True), (), lines, Path(path))
    return model_obj
