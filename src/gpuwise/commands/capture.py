"""`gpuwise capture`: save this machine's raw data for later or for someone else."""

from __future__ import annotations

from pathlib import Path

import typer


def capture(
    output: Path = typer.Option(..., "-o", "--output", help="Destination: a new directory, or a file ending in .tar.gz."),
    mask: bool = typer.Option(False, "--mask", help="Replace hostnames, serials, UUIDs and MACs with stable placeholders."),
) -> None:
    """Record files and command outputs (format gpuwise-capture/1). Secrets in the environment are redacted."""
    from rich.console import Console

    from gpuwise.capture.writer import write_capture

    console = Console(stderr=True)
    with console.status("capturing…") as status:
        summary = write_capture(output, mask=mask, progress=lambda msg: status.update(f"capturing: {msg}"))
    missing = sorted(c for c, s in summary.commands.items() if s == "missing")
    failed = sorted(f"{c} ({s})" for c, s in summary.commands.items() if s not in ("ok", "missing"))
    console.print(f"[green]wrote[/] {summary.path}: {summary.files} files, {len(summary.commands)} commands")
    if missing:
        console.print(f"[dim]not installed here (recorded as missing): {', '.join(missing)}[/]")
    if failed:
        console.print(f"[yellow]ran with errors (recorded):[/] {', '.join(failed)}")
    if summary.redacted_env:
        console.print(f"redacted {len(summary.redacted_env)} secret-looking environment variables")
    if mask:
        console.print(f"masked: {summary.masked or 'nothing found to mask'}")


def register(app: typer.Typer) -> None:
    app.command("capture")(capture)
