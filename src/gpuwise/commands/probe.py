"""`gpuwise probe`: what is this machine, across eight layers."""

from __future__ import annotations

from pathlib import Path

import typer

from gpuwise.commands.helptext import help_text
from gpuwise.commands.output import FormatOpt, JsonOpt, OutputOpt
from gpuwise.i18n import N_, _
from gpuwise.layers import PROBE_LAYERS

LAYER_CHOICES = tuple(PROBE_LAYERS)


PROBE_HELP = N_(
    """\
Show what this machine is: GPUs, topology, CPU, memory, network, storage, kernel, software, platform.

A fact gpuwise could not read is shown as unknown, with the reason. --format json prints schema
gpuwise-facts/1. Exit codes: 0 = ok; 3 = could not run (a capture that cannot be read, an unknown
--layer)."""
)


def probe(
    source: Path = typer.Option(
        None, "--from", help=N_("Read a capture (directory or .tar.gz) instead of this machine.")
    ),
    layer: str = typer.Option(
        None, "--layer", help=help_text(N_("Show one layer: {layers}."), layers=", ".join(LAYER_CHOICES))
    ),
    fmt: str = FormatOpt,
    output: Path = OutputOpt,
    as_json: bool = JsonOpt,
) -> None:
    from gpuwise.commands.output import check_output, emit, output_format
    from gpuwise.errors import UserInputError

    fmt = output_format(fmt, as_json)
    if layer is not None and layer not in LAYER_CHOICES:
        import difflib

        near = difflib.get_close_matches(layer, LAYER_CHOICES, n=1)
        fix = _("use one of: {names}").format(names=", ".join(LAYER_CHOICES))
        if near:
            fix = _("did you mean {name!r}? {fix}").format(name=near[0], fix=fix)
        raise UserInputError(_("unknown layer {layer!r}").format(layer=layer), fix)
    check_output(output)
    from gpuwise.capture.host import CaptureHost, LiveHost
    from gpuwise.facts.collect import collect_facts
    from gpuwise.report.views.probe import probe_view

    host = CaptureHost(source) if source else LiveHost()
    emit(probe_view(collect_facts(host), layer), fmt, output)


def register(app: typer.Typer) -> None:
    app.command("probe", help=PROBE_HELP)(probe)
