"""`gpuwise stability`: repeat short probes of each layer for a while; verdict per layer, slow windows."""

from __future__ import annotations

import re
from pathlib import Path

import typer

from gpuwise.commands.history import HistoryOpt, NoHistoryOpt, record_run
from gpuwise.commands.output import FormatOpt, JsonOpt, OutputOpt
from gpuwise.i18n import N_, _

STABILITY_HELP = N_(
    """\
Is this machine steady? Repeat short probes of each layer (matmul, memory bandwidth, host<->device
copy, fio random reads, local all-reduce, TCP to a peer) every --interval for --for, with the context
of each sample (CPU steal, cgroup throttling, involuntary context switches, page faults, TCP
retransmits, GPU clock/power/temperature/clock-event reasons). Per layer: median, p5/p95/p99, cv with
its 95 percent interval, the windows where it slowed (PELT change points) and the context signal that moved
with them, and a verdict: stable / variable / unstable.

--save FILE keeps the gpuwise-stability/1 result, which doctor --stability, plan --calibrate,
compare and history read. Exit codes: 0 = every layer stable; 1 = a layer is variable or unstable; 3 = could not
run; 130/143 = interrupted."""
)

_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def parse_duration(text: str, option: str) -> float:
    """'90', '90s', '2m', '1.5h' -> seconds."""
    from gpuwise.errors import UserInputError

    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(s|m|min|h)?\s*", text or "")
    if not match or float(match.group(1)) <= 0:
        raise UserInputError(
            _("{option} {value} is not a duration").format(option=option, value=text),
            _("use seconds, minutes or hours, e.g. {option} 90s, 2m or 1h").format(option=option),
        )
    return float(match.group(1)) * _UNITS[match.group(2) or ""]


def register(app: typer.Typer) -> None:
    @app.command("stability", help=STABILITY_HELP)
    def stability_command(
        duration: str = typer.Option(
            "3m", "--for", metavar="DURATION", help=N_("How long to probe: 90s, 2m, 1h (default 3m).")
        ),
        interval: str = typer.Option(
            "5s",
            "--interval",
            metavar="DURATION",
            help=N_("Time from one probe round to the next (default 5s)."),
        ),
        layers: str | None = typer.Option(
            None,
            "--layers",
            help=N_(
                "Comma list of compute, memory, host-device, storage, network, collective "
                "(default: every layer this machine has; network needs --peer)."
            ),
        ),
        data_dir: Path | None = typer.Option(
            None, "--data-dir", help=N_("Directory for the storage probe's 64 MiB fio file (default: temp).")
        ),
        peer: str | None = typer.Option(
            None, "--peer", metavar="HOST:PORT", help=N_("A peer running `gpuwise stability --sink PORT`.")
        ),
        sink: int | None = typer.Option(
            None,
            "--sink",
            metavar="PORT",
            min=1,
            max=65535,
            help=N_("Be the peer: count the bytes a --peer probe sends to PORT, until Ctrl-C."),
        ),
        source: Path | None = typer.Option(
            None,
            "--from",
            metavar="FILE",
            help=N_("Show a saved result (--save FILE) again, e.g. as --format html; probes nothing."),
        ),
        rank: Path | None = typer.Option(
            None,
            "--rank",
            metavar="DIR",
            help=N_("Rank the nodes of a fleet: DIR holds one --save result per node; least stable first."),
        ),
        save: Path | None = typer.Option(
            None, "--save", metavar="FILE", help=N_("Also save the result as JSON (gpuwise-stability/1).")
        ),
        fmt: str = FormatOpt,
        output: Path | None = OutputOpt,
        as_json: bool = JsonOpt,
        history: Path = HistoryOpt,
        no_history: bool = NoHistoryOpt,
    ) -> None:
        from gpuwise.commands import check_output_path, write_output
        from gpuwise.commands.output import check_output, emit, output_format
        from gpuwise.errors import EXIT_WARNINGS, UserInputError

        if sink is not None:
            from gpuwise.stability.network_probe import serve

            typer.echo(
                _("gpuwise sink listening on port {port} (Ctrl-C stops it)").format(port=sink), err=True
            )
            try:
                serve("0.0.0.0", sink)
            except OSError as exc:
                raise UserInputError(
                    _("cannot listen on port {port}: {error}").format(port=sink, error=exc.strerror or exc),
                    _("choose a free port"),
                ) from None
            return
        fmt = output_format(fmt, as_json)
        if rank is not None:
            from gpuwise.report.views.stability import rank_view
            from gpuwise.stability.rank import load_folder
            from gpuwise.stability.rank import rank as rank_nodes

            check_output(output)
            emit(rank_view(rank_nodes(load_folder(rank))), fmt, output)
            return
        if source is not None:
            from gpuwise.report.views.stability import stability_view
            from gpuwise.stability.document_file import read_stability

            check_output(output)
            emit(stability_view(read_stability(source, "--from")), fmt, output)
            return
        seconds, every = parse_duration(duration, "--for"), parse_duration(interval, "--interval")
        from gpuwise.stability.probes import LAYERS

        chosen = tuple(x.strip() for x in layers.split(",") if x.strip()) if layers else None
        for layer in chosen or ():
            if layer not in LAYERS:
                raise UserInputError(
                    _("unknown layer {layer}").format(layer=layer),
                    _("choose from {layers}").format(layers=", ".join(LAYERS)),
                )
        if peer is not None:
            from gpuwise.stability.network_probe import parse_peer

            parse_peer(peer)
        if data_dir is not None:
            data_dir = data_dir.resolve()
        if save is not None:
            check_output_path(save, "--save")
        check_output(output)
        from gpuwise.stability.runner import RunOptions, run_stability

        def say(text: str) -> None:
            typer.echo(text, err=True)

        report = run_stability(
            RunOptions(seconds, every, chosen, str(data_dir) if data_dir else None, peer), say=say
        )
        document = report.to_json()
        if save is not None:
            import json

            write_output(save, json.dumps(document, indent=2) + "\n", "--save")
        from gpuwise.report.views.stability import stability_view

        emit(stability_view(report), fmt, output)
        record_run("stability", document, history, no_history)
        if save is not None:
            typer.echo(_("wrote {path}").format(path=save), err=True)
        if any(layer.verdict in ("variable", "unstable") for layer in report.layers):
            raise typer.Exit(EXIT_WARNINGS)
