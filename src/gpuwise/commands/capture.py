"""`gpuwise capture`: save this machine's raw data for later or for someone else."""

from __future__ import annotations

from pathlib import Path

import typer

from gpuwise.commands.output import JsonOpt
from gpuwise.i18n import N_, _

CAPTURE_HELP = N_(
    """\
Record files and command outputs (format gpuwise-capture/1). Secrets in the environment are redacted.

-o is where the capture goes (here it is not the summary's file); the summary is printed on stdout,
with --format json as schema gpuwise-capture-summary/1. Exit codes: 0 = captured (tools that are
missing or fail are recorded, not errors); 3 = could not run (OUTPUT exists or cannot be written).
The capture appears at OUTPUT only once it is complete."""
)


def capture(
    output: Path = typer.Option(
        ..., "-o", "--output", help=N_("Destination: a new directory, or a file ending in .tar.gz.")
    ),
    mask: bool = typer.Option(
        False, "--mask", help=N_("Replace hostnames, serials, UUIDs and MACs with stable placeholders.")
    ),
    fmt: str = typer.Option(
        "text", "--format", metavar="FORMAT", help=N_("Format of the summary printed: text, json or md.")
    ),
    as_json: bool = JsonOpt,
) -> None:
    from rich.console import Console
    from rich.markup import escape

    from gpuwise.capture.writer import write_capture
    from gpuwise.commands import check_output_path
    from gpuwise.commands.output import emit, output_format
    from gpuwise.errors import UserInputError

    fmt = output_format(fmt, as_json)
    if not output.exists():  # an existing OUTPUT gets write_capture's own message
        check_output_path(output, "-o")
    console = Console(stderr=True)
    try:
        with console.status(_("capturing…")) as status:
            summary = write_capture(
                output,
                mask=mask,
                progress=lambda msg: status.update(_("capturing: {step}").format(step=escape(msg))),
            )
    except OSError as exc:
        raise UserInputError(
            _("could not write the capture to {output} ({value}); nothing was left there").format(
                output=output, value=exc.strerror or exc
            ),
            _("choose another path with -o (with free space)"),
        ) from None
    from gpuwise.report.views.capture import capture_view

    emit(capture_view(summary, mask), fmt, None)


def register(app: typer.Typer) -> None:
    app.command("capture", help=CAPTURE_HELP)(capture)
