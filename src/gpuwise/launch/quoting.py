"""Values into generated files: one quoting function per language a launch writes.

Every value from a job file, a plan or a command-line option that reaches a generated file goes through
one of these, never an f-string into the file's syntax:

- sh (job.sbatch's body, node.sh, user-data.sh, SkyPilot's setup/run): `sh` / `sh_words` (shlex) make a
  value one literal word; `sh_say` prints a message that contains values with a fixed printf format, so a
  value is never inside a double-quoted string where `$(...)` and backticks would run;
- `#SBATCH` header lines, which no shell parses (sbatch reads them itself, by its own rules, and a
  newline would start a directive of its own): `sbatch_directive` refuses a value that is not a plain word (no space, quote, backslash,
  newline or other control character) instead of trying to quote it;
- YAML (SkyPilot's task, Prometheus' scrape config): `yaml_document`, PyYAML's safe serializer;
- JSON (the Tencent request, a file_sd list, a literal in embedded Python): the json module.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable

import yaml

from gpuwise.errors import UserInputError
from gpuwise.i18n import joined, msg

# what an #SBATCH value may hold: letters, digits and the punctuation of names, times and paths
# ('%' is not: sbatch expands %j, %N ... in file names)
_SBATCH_VALUE = re.compile(r"[A-Za-z0-9._/:@+,=~-]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def sh(value: object) -> str:
    """One literal shell word."""
    return shlex.quote(str(value))


def sh_words(words: Iterable[object]) -> str:
    """Literal shell words, one per item."""
    return shlex.join(str(w) for w in words)


def sh_say(template: str, *args: str, err: bool = False) -> str:
    """A `printf` of a fixed message: each %s takes one of args, each already a shell word
    (`sh(value)` for data, or '"$NODE"' for a variable of the script itself)."""
    if template.count("%s") != len(args) or "%" in template.replace("%s", ""):
        raise ValueError(f"template {template!r} does not take {len(args)} values")  # a bug in gpuwise
    fmt = sh(template + "\\n")  # printf's own \n escape
    return f"printf {fmt} {joined(' ', args)}{' >&2' if err else ''}"


def sh_comment(text: str) -> str:
    """A comment line: control characters (a newline would end the comment) become '?'."""
    return "# " + _CONTROL.sub("?", text)


def sbatch_directive(option: str, value: object, source: str, suffix: str = "") -> str:
    """`#SBATCH --option=VALUE` + suffix (gpuwise's own text, e.g. a %j pattern); value is refused unless it
    is a plain word, and source names where it came from (an option, a job-file field)."""
    text = str(value)
    if not _SBATCH_VALUE.fullmatch(text):
        raise UserInputError(
            msg(
                "{source} ({value!r}) cannot go into an #SBATCH line: only letters, digits and . _ / : @ + , = ~ - "
                "are accepted there (no space, quote, newline or control character)"
            ).format(source=source, value=text),
            msg("use a value without those characters for {source}").format(source=source),
        )
    return f"#SBATCH --{option}={text}{suffix}"


class _BlockDumper(yaml.SafeDumper):
    """Multi-line strings (scripts) as YAML literal blocks where PyYAML can write them so; it falls back
    to a quoted style by itself when a block cannot hold the value exactly. Lists are indented under their key."""

    def increase_indent(self, flow: bool = False, indentless: bool = False):
        return super().increase_indent(flow, False)


_BlockDumper.add_representer(
    str,
    lambda dumper, value: dumper.represent_scalar(
        "tag:yaml.org,2002:str", value, style="|" if "\n" in value else None
    ),
)


def yaml_document(data: object) -> str:
    """A YAML document of plain data (dicts, lists, strings, numbers), keys in the order given."""
    return yaml.dump(data, Dumper=_BlockDumper, sort_keys=False, width=1000, allow_unicode=True)


def json_text(data: object, indent: int | None = None) -> str:
    """JSON (also a valid Python literal for strings, numbers, lists and dicts of them)."""
    return json.dumps(data, indent=indent, ensure_ascii=True)
