"""`gpuwise profile`: run a spec under torch.profiler, keep the trace, and say where the step's time goes."""

from __future__ import annotations

from pathlib import Path

import typer

from gpuwise.commands.output import FormatOpt, JsonOpt, OutputOpt
from gpuwise.i18n import N_, _

PROFILE_HELP = N_(
    """\
Profile the training step: phases (data, forward, backward, optimizer, all-reduce) and findings.

Exit codes: 0 = profiled; 3 = could not run."""
)


def profile(
    spec: str = typer.Argument(
        None, help=N_("Your spec as module.path:function (spec(cfg) -> TrainingSpec).")
    ),
    workload: str = typer.Option(
        None, "--workload", help=N_("A reference spec instead: gpt-small, cnn-small or mlp-slow-data.")
    ),
    active: int = typer.Option(5, "--steps", min=1, help=N_("Profiled (active) steps.")),
    warmup: int = typer.Option(
        2, "--warmup", min=0, help=N_("Profiler warm-up steps (traced, then discarded).")
    ),
    wait: int = typer.Option(1, "--wait", min=0, help=N_("Steps run before the profiler starts.")),
    batch_size: int = typer.Option(None, "--batch-size", min=1, help=N_("Samples per step.")),
    num_workers: int = typer.Option(
        0, "--num-workers", min=0, help=N_("DataLoader workers (the setting to profile).")
    ),
    trace: Path = typer.Option(
        Path("gpuwise-trace.json"),
        "--trace",
        help=N_("Where to write the Chrome/Kineto trace (Perfetto opens it)."),
    ),
    fmt: str = FormatOpt,
    output: Path = OutputOpt,
    as_json: bool = JsonOpt,
) -> None:
    from gpuwise.commands import check_output_path
    from gpuwise.commands.output import check_output, emit, output_format
    from gpuwise.errors import UserInputError

    name = output_format(fmt, as_json)
    check_output(output)
    check_output_path(trace, "--trace")
    if bool(spec) == bool(workload):
        raise UserInputError(
            _("give either a spec (module.path:function) or --workload NAME"), fix=_("pass exactly one")
        )
    from gpuwise.bench import require_torch
    from gpuwise.profile.run import profile as run_profile
    from gpuwise.workloads.reference import DEFAULT_BATCH

    torch = require_torch()
    target = workload or spec
    typer.echo(
        _("profiling {target}: {steps} steps ...").format(target=target, steps=wait + warmup + active),
        err=True,
    )
    result = run_profile(
        target,
        device="cuda" if torch.cuda.is_available() else "cpu",
        batch_size=batch_size or DEFAULT_BATCH.get(target, 32),
        trace_path=trace.expanduser().resolve(),
        wait=wait,
        warmup=warmup,
        active=active,
        num_workers=num_workers,
    )
    emit(view_of(result), name, output, note=_("{n} finding(s)").format(n=len(result.findings)))


def view_of(result):
    from gpuwise.report.views.profile import view

    return view(result)


def register(app: typer.Typer) -> None:
    app.command("profile", help=PROFILE_HELP)(profile)
