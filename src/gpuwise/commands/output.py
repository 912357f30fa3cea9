"""The output options every command takes, and the one place a Document is rendered and written.

A command does: `check_output(output)` before any work, builds its model, then
`emit(view(model), output_format(fmt, as_json), output)`.
"""

from __future__ import annotations

from pathlib import Path

import typer

from gpuwise.commands.helptext import help_text
from gpuwise.i18n import N_, _, worded


def _format_list() -> str:
    """The formats in report/formats/, by module name (listing, not importing: --help stays fast)."""
    from gpuwise.report.formats import FORMATS

    return ", ".join(FORMATS.module_names())


FormatOpt = typer.Option(
    "text",
    "--format",
    metavar="FORMAT",
    help=help_text(N_("Output format: {formats}."), formats=_format_list()),
)
OutputOpt = typer.Option(None, "-o", "--output", help=N_("Write to FILE (atomically) instead of stdout."))
JsonOpt = typer.Option(False, "--json", help=N_("Same as --format json."))

FILE_WIDTH = 100  # text written to a file, or piped with no COLUMNS set


def output_format(fmt: str, as_json: bool) -> str:
    """The validated --format name; --json means json (and contradicts any other explicit format)."""
    from gpuwise.errors import UserInputError
    from gpuwise.report.formats import get_renderer

    name = get_renderer(fmt).name
    if as_json and name not in ("json", "text"):
        raise UserInputError(
            _("--json and --format {name} both given").format(name=name), _("use one of them")
        )
    return "json" if as_json else name


def check_output(path: Path | None) -> None:
    """Before any work: fail in a second if -o cannot be written, not after minutes of measuring."""
    if path is not None:
        from gpuwise.commands import check_output_path

        check_output_path(path, "-o")


def _stdout_width() -> tuple[int, bool]:
    """(width, color) for stdout: the terminal's width and colours on a tty (unless NO_COLOR is set);
    else no colours and COLUMNS or FILE_WIDTH columns."""
    import os
    import sys

    if sys.stdout.isatty():
        from rich.console import Console

        # NO_COLOR (https://no-color.org) and TERM=dumb turn colours off
        color = not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
        return Console().width, color
    columns = os.environ.get("COLUMNS", "")
    return (int(columns) if columns.isdigit() and int(columns) > 0 else FILE_WIDTH), False


def emit(doc, fmt: str, output: Path | None, *, note: str = "") -> None:
    """Render `doc` (a report.document.Document) as `fmt` and print it, or write it atomically to
    `output` (width FILE_WIDTH, no colour) and say so on stderr, followed by `note` if given."""
    from gpuwise.report.formats import get_renderer

    renderer = get_renderer(fmt)
    if renderer.name != "json":  # JSON is the model's own text (English); the rest is read by people
        doc = worded(doc)
    if output is None:
        import sys

        width, color = _stdout_width()
        rendered = renderer(doc, width=width, color=color)
        if isinstance(rendered, bytes):
            sys.stdout.flush()
            sys.stdout.buffer.write(rendered)
            sys.stdout.buffer.flush()
        else:
            sys.stdout.write(rendered)
            sys.stdout.flush()
        return
    from gpuwise.commands import write_output

    write_output(output, renderer(doc, width=FILE_WIDTH, color=False), "-o")
    said = _("wrote {path}").format(path=output)
    typer.echo(_("{said} — {note}").format(said=said, note=note) if note else said, err=True)
