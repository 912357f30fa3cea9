"""`gpuwise capture`: save this machine's raw data for later or for someone else."""

from __future__ import annotations

from pathlib import Path

import typer


def capture(
    output: Path = typer.Option(
        ..., "-o", "--output", help="Destination: a new directory, or a file ending in .tar.gz."
    ),
    mask: bool = typer.Option(
        False, "--mask", help="Replace hostnames, serials, UUIDs and MACs with stable placeholders."
    ),
) -> None:
    """Record files and command outputs (format gpuwise-capture/1). Secrets in the environment are redacted.

    Exit codes: 0 = captured (tools that are missing or fail are recorded, not errors); 3 = could not
    run (OUTPUT exists or cannot be written). The capture appears at OUTPUT only once it is complete.
    """
    from rich.console import Console
    from rich.markup import escape

    from gpuwise.capture.writer import write_capture
    from gpuwise.commands import check_output_path
    from gpuwise.errors import UserInputError

    if not output.exists():  # an existing OUTPUT gets write_capture's own message
        check_output_path(output, "-o")
    console = Console(stderr=True)
    try:
        with console.status("capturing…") as status:
            summary = write_capture(
                output, mask=mask, progress=lambda msg: status.update(f"capturing: {escape(msg)}")
            )
    except OSError as exc:
        raise UserInputError(
            f"could not write the capture to {output} ({exc.strerror or exc}); nothing was left there",
            "choose another path with -o (with free space)",
        ) from None
    missing = sorted(c for c, s in summary.commands.items() if s == "missing")
    failed = sorted(f"{c} ({s})" for c, s in summary.commands.items() if s not in ("ok", "missing"))
    console.print(
        f"[green]wrote[/] {escape(str(summary.path))}: {summary.files} files, "
        f"{len(summary.commands)} commands"
    )
    if missing:
        console.print(f"[dim]not installed here (recorded as missing): {escape(', '.join(missing))}[/]")
    if failed:
        console.print(f"[yellow]ran with errors (recorded):[/] {escape(', '.join(failed))}")
    if summary.redacted_env:
        console.print(f"redacted {len(summary.redacted_env)} secret-looking environment variables")
    if mask:
        console.print(escape(f"masked: {summary.masked or 'nothing found to mask'}"))


def register(app: typer.Typer) -> None:
    app.command("capture")(capture)
