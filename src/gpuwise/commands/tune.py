"""`gpuwise tune`: search training settings on this machine and keep only gains beyond the noise."""

from __future__ import annotations

from pathlib import Path

import typer

from gpuwise.commands.history import HistoryOpt, NoHistoryOpt, record_run
from gpuwise.commands.output import FormatOpt, JsonOpt, OutputOpt
from gpuwise.i18n import C_, N_, _


def default_storage() -> Path:
    import os

    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return state / "gpuwise" / "tune.sqlite3"


TUNE_HELP = N_(
    """\
Tune the training step: baseline, one-knob probes, then Optuna; a winner only beyond the noise, reduced
to the changes that each beat it.

Exit codes: 0 = the search ran (with or without a winner); 3 = could not run."""
)


def tune(
    target: list[str] = typer.Argument(
        None,
        help=N_(
            "Your spec as module.path:function (spec(cfg) -> TrainingSpec), or after -- a command to run "
            "per trial (command mode: it reads gpuwise.tune.trial_knobs() and calls gpuwise.tune.report())."
        ),
    ),
    workload: str = typer.Option(
        None, "--workload", help=N_("A reference spec instead: gpt-small, cnn-small or mlp-slow-data.")
    ),
    trials: int = typer.Option(
        20,
        "--trials",
        min=2,
        help=N_(
            "Trials the search runs, the first baseline included; the winner's reduction (one trial per "
            "change) and the closing baseline come after."
        ),
    ),
    steps: int = typer.Option(
        10, "--steps", min=5, help=N_("Timed steps per trial (at least 5: the noise interval needs samples).")
    ),
    warmup: int = typer.Option(3, "--warmup", min=1, help=N_("Untimed steps first (compile, worker start).")),
    batch_size: int = typer.Option(
        None, "--batch-size", min=4, help=N_("Global batch per step (a multiple of 4).")
    ),
    timeout: float = typer.Option(300, "--timeout", min=5, help=N_("Seconds before a trial is killed.")),
    study: str = typer.Option(
        None, "--study", help=N_("Study name: the same name resumes an interrupted run.")
    ),
    storage: Path = typer.Option(
        None, "--storage", help=N_("SQLite file of studies (default ~/.local/state/gpuwise).")
    ),
    keep_numerics: bool = typer.Option(
        False,
        "--keep-numerics",
        help=N_("Leave out knobs that change results (precision, accumulation, compression)."),
    ),
    nproc: int = typer.Option(
        1, "--nproc", min=1, help=N_("Data-parallel ranks on this machine (gloo on CPU).")
    ),
    profile: Path = typer.Option(
        None, "--profile", help=N_("A gpuwise-profile/1 JSON whose findings order the search.")
    ),
    only: str = typer.Option(
        None, "--only", help=N_("Comma list of knobs to search (default: all that apply).")
    ),
    seed: int = typer.Option(0, "--seed", help=N_("Seed for the model, the data and the sampler.")),
    fmt: str = FormatOpt,
    output: Path = OutputOpt,
    as_json: bool = JsonOpt,
    history: Path = HistoryOpt,
    no_history: bool = NoHistoryOpt,
) -> None:
    from gpuwise.commands.output import check_output, emit, output_format
    from gpuwise.errors import UserInputError

    name = output_format(fmt, as_json)
    check_output(output)
    target = list(target or [])
    command = target if len(target) > 1 or (target and ":" not in target[0]) else None
    spec = target[0] if target and not command else None
    if bool(spec or command) == bool(workload):
        raise UserInputError(
            _("give either a spec (module.path:function), a command after --, or --workload NAME"),
            fix=_("pass exactly one"),
        )
    if command and not batch_size:
        raise UserInputError(
            _("command mode needs --batch-size: the samples one reported step processes"), fix=_("pass it")
        )
    from gpuwise.tune.search import TuneOptions
    from gpuwise.workloads.reference import DEFAULT_BATCH

    name_of = workload or spec or " ".join(command)
    opts = TuneOptions(
        target=name_of,
        command=command,
        device=_device(),
        batch_size=batch_size or DEFAULT_BATCH.get(name_of, 32),
        warmup=warmup,
        steps=steps,
        trials=trials,
        timeout_s=timeout,
        seed=seed,
        keep_numerics=keep_numerics,
        study=study or _fresh_name(command[0] if command else name_of),
        storage=(storage or default_storage()).expanduser().resolve(),
        nproc=nproc,
        prior=_prior(profile) if profile else None,
        only=[k.strip() for k in only.split(",") if k.strip()] if only else [],
    )
    result = _run_with_progress(opts)
    from gpuwise.report.views.tune import view

    emit(view(result), name, output, note=result.verdict)
    import socket

    record_run("tune", result.to_json_dict(), history, no_history, host=socket.gethostname(),
               extra_facts=_software(opts.device))  # fmt: skip


def _software(device: str) -> dict:
    """What the trials ran on, for the history's facts digest: a torch or GPU change explains a shift."""
    import torch

    facts = {"torch": torch.__version__, "cuda": torch.version.cuda}
    if device == "cuda":
        facts["gpu"] = torch.cuda.get_device_name(0)
    return facts


def _device() -> str:
    from gpuwise.bench import require_torch

    return "cuda" if require_torch().cuda.is_available() else "cpu"


def _fresh_name(target: str) -> str:
    from datetime import datetime, timezone

    from gpuwise.tune.storage import safe_name

    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    return f"{safe_name(Path(target).name)}-{stamp}"


def _prior(path: Path) -> str | None:
    from gpuwise.profile.model import read_profile

    return read_profile(path).prior()


def _run_with_progress(opts):
    import statistics

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from gpuwise.tune.run import tune as run_tune

    state = {"baseline": None, "best": 1.0}
    columns = (
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(_("starting"), total=opts.trials + 1)

        def progress(event: str, data: dict) -> None:
            if event == "trial-start":
                if data.get("total", 0) + 1 > bar.tasks[0].total:  # the reduction adds trials
                    bar.update(task, total=data["total"] + 1)
                what = (
                    ", ".join(f"{k}={v}" for k, v in data["params"].items())
                    if data["role"] == "search"
                    else _role(data["role"])
                )
                trial = _("trial {number} ({what})").format(number=data["number"], what=what)
                best = _("best {speedup}x").format(speedup=f"{state['best']:.2f}")
                bar.update(task, description=f"{trial[:70]}  {best}")
                return
            outcome = data["outcome"]
            timed = [s.seconds for s in outcome.steps[data.get("warmup", opts.warmup) :]]
            if outcome.status == "ok" and timed:
                median = statistics.fmean(timed)
                if data["role"] == "baseline":
                    state["baseline"] = median
                elif state["baseline"]:
                    state["best"] = max(state["best"], state["baseline"] / median)
            bar.advance(task)

        return run_tune(opts, progress)


def _role(role: str) -> str:
    """A trial's role (baseline, probe, ... : the JSON's values) in words, for the progress bar."""
    words = {
        "baseline": _("baseline"),
        "baseline-end": _("baseline (again, at the end)"),
        "probe": C_("trial", "probe"),
        "neighbour": C_("trial", "neighbour"),
        "reduction": C_("trial", "reduction"),
    }
    return words.get(role, role)


def register(app: typer.Typer) -> None:
    app.command("tune", help=TUNE_HELP)(tune)
