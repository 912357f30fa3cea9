"""`gpuwise watch`: a live per-GPU view while a job runs, then a summary and the findings it implies."""

from __future__ import annotations

from pathlib import Path

import typer

from gpuwise.commands.output import FormatOpt, JsonOpt, OutputOpt
from gpuwise.i18n import N_, _

WATCH_HELP = N_(
    """\
Watch the GPUs live while a job runs; then summarise it and list the findings it implies.

Per GPU: utilisation, memory, power vs limit, clocks vs max, throttle reasons, PCIe, with gpuwise's
tuning signals highlighted. With `-- CMD ...` it runs CMD, and with --pid it follows a
running process; at the end it prints a summary (time idle, time power-limited, peak memory; the
process's wall time, CPU time and peak RSS) and the findings doctor would raise from it.

Exit codes: the command's own exit code when one was run (so `watch` composes in scripts), else 0;
3 = could not run (bad option, unreadable recording, command not found)."""
)


def watch(
    command: list[str] = typer.Argument(None, help=N_("A command to start and watch (put it after `--`).")),
    pid: int = typer.Option(None, "--pid", help=N_("Watch until this running process exits.")),
    source: Path = typer.Option(
        None,
        "--from",
        help=N_(
            "Replay a recording instead of watching live: a `--record` file, a capture, or nvidia-smi "
            "--query-gpu CSV / dmon output."
        ),
    ),
    record: Path = typer.Option(
        None, "--record", help=N_("Keep every sample in FILE (JSON lines) to replay later.")
    ),
    interval: float = typer.Option(1.0, "--interval", min=0.1, help=N_("Seconds between samples.")),
    duration: float = typer.Option(None, "--duration", min=0.1, help=N_("Stop after this many seconds.")),
    fmt: str = FormatOpt,
    output: Path = OutputOpt,
    as_json: bool = JsonOpt,
) -> None:
    import sys

    from gpuwise.commands.output import check_output, emit, output_format
    from gpuwise.errors import UserInputError

    fmt = output_format(fmt, as_json)
    check_output(output)
    if command and pid is not None:
        raise UserInputError(
            _("both --pid and a command given"), _("watch either a running PID or `-- CMD ...`")
        )
    if source is not None and (command or pid is not None or record is not None):
        raise UserInputError(
            _("--from replays a recording; it cannot also watch a process or record"),
            _("drop --from to watch live, or drop the command / --pid / --record"),
        )
    if record is not None:
        from gpuwise.commands import check_output_path

        check_output_path(record, "--record")
    if source is not None:
        emit(_replay(source, interval), fmt, output)
        return
    summary, findings = _live(command, pid, record, interval, duration)
    from gpuwise.report.views.watch import summary_view

    emit(summary_view(summary, findings), fmt, output)
    code = summary.host.exit_code if summary.host is not None else None
    if code:
        sys.stdout.flush()
        raise typer.Exit(code if code > 0 else 128 - code)  # killed by signal N: 128+N, as a shell says


def _live(command, pid, record, interval, duration):
    import sys

    from rich.console import Console
    from rich.live import Live
    from rich.text import Text

    from gpuwise.advise.watch import frame_signals, watch_findings
    from gpuwise.export.recording import RecordWriter
    from gpuwise.export.signals import load_config
    from gpuwise.export.sources import LiveSource
    from gpuwise.export.watch import Watcher
    from gpuwise.report.formats import get_renderer
    from gpuwise.report.views.watch import frame_view

    source = LiveSource()
    config, text = load_config(), get_renderer("text")
    writer = (
        RecordWriter(record, {"source": source.description, "command": command, "pid": pid})
        if record
        else None
    )
    console = Console(stderr=True)
    live = Live(console=console, transient=True, auto_refresh=False) if sys.stderr.isatty() else None

    def show(frame, elapsed):
        if live is not None:
            doc = frame_view(frame, elapsed, frame_signals(frame, config))
            live.update(Text.from_ansi(text(doc, width=console.width, color=True)), refresh=True)

    try:
        if live is not None:
            live.start()
        try:
            summary = Watcher(source, interval, writer).run(
                command=command or None, pid=pid, duration_s=duration, on_frame=show
            )
        finally:
            if live is not None:
                live.stop()
    except BaseException:
        if writer is not None:
            writer.abandon()
        raise
    finally:
        source.close()
    if writer is not None:
        host = summary.host
        writer.finish({"host": None if host is None else summary.to_dict()["host"]})
        typer.echo(_("recorded {n} samples to {path}").format(n=summary.samples, path=record), err=True)
    return summary, watch_findings(summary)


def _replay(path: Path, interval: float):
    from gpuwise.advise.watch import frame_signals, watch_findings
    from gpuwise.export.signals import load_config
    from gpuwise.export.sources import load_frames, recording_end
    from gpuwise.export.watch import HostSummary, summarize
    from gpuwise.report.document import Document, Heading
    from gpuwise.report.views.watch import frame_view, summary_view

    frames = load_frames(path)
    end = recording_end(path)
    host_data = end.host if end is not None else None
    host = None
    if isinstance(host_data, dict):
        known = set(HostSummary.__dataclass_fields__)
        host = HostSummary(**{k: v for k, v in host_data.items() if k in known})
    summary = summarize(frames, _("replay of {path}").format(path=path), interval, host)
    elapsed = frames[-1].taken_at - frames[0].taken_at
    last = frame_view(frames[-1], elapsed, frame_signals(frames[-1], load_config()), _("last sample"))
    result = summary_view(summary, watch_findings(summary))
    head = Heading("gpuwise watch — " + _("replay of {path}").format(path=path.name))
    return Document(title=result.title, blocks=[head, *last.blocks, *result.blocks[1:]], data=result.data)


def register(app: typer.Typer) -> None:
    app.command(
        "watch",
        help=WATCH_HELP,
        context_settings={"allow_interspersed_args": False, "ignore_unknown_options": True},
    )(watch)
