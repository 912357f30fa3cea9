"""`gpuwise probe`: what is this machine, across eight layers."""

from __future__ import annotations

from pathlib import Path

import typer

LAYER_CHOICES = (
    "hardware",
    "driver-cuda",
    "network",
    "storage",
    "isolation",
    "monitoring",
    "toolchain",
    "kernel",
)


def probe(
    source: Path = typer.Option(
        None, "--from", help="Read a capture (directory or .tar.gz) instead of this machine."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print facts as JSON (schema gpuwise-facts/1)."),
    layer: str = typer.Option(None, "--layer", help=f"Show one layer: {', '.join(LAYER_CHOICES)}."),
) -> None:
    """Show what this machine is: GPUs, topology, CPU, memory, network, storage, kernel, software, platform.

    A fact gpuwise could not read is shown as unknown, with the reason. Exit codes: 0 = ok; 3 = could
    not run (a capture that cannot be read, an unknown --layer).
    """
    import json

    from gpuwise.errors import UserInputError

    if layer is not None and layer not in LAYER_CHOICES:
        import difflib

        near = difflib.get_close_matches(layer, LAYER_CHOICES, n=1)
        hint = f"did you mean {near[0]!r}? " if near else ""
        raise UserInputError(f"unknown layer {layer!r}", f"{hint}use one of: {', '.join(LAYER_CHOICES)}")
    from gpuwise.capture.host import CaptureHost, LiveHost
    from gpuwise.facts.collect import collect_facts
    from gpuwise.facts.models import LAYERS

    host = CaptureHost(source) if source else LiveHost()
    facts = collect_facts(host)
    if as_json:
        data = facts.to_json_dict()
        if layer:
            keep = {"schema", "meta", *LAYERS[layer]}
            data = {k: v for k, v in data.items() if k in keep}
        typer.echo(json.dumps(data, indent=2))
        return
    from gpuwise.report.probe_view import render_probe

    render_probe(facts, layer)


def register(app: typer.Typer) -> None:
    app.command("probe")(probe)
