"""`gpuwise bench`: measure each layer against its physical peak (needs the `gpuwise[bench]` extra)."""

from __future__ import annotations

from pathlib import Path

import typer
from typer.core import TyperCommand

from gpuwise.commands.history import HistoryOpt, NoHistoryOpt, record_run
from gpuwise.commands.output import FormatOpt, JsonOpt, OutputOpt
from gpuwise.i18n import N_, _

BENCH_HELP = N_(
    """\
Benchmark each layer (compute, memory, copies, collectives, storage, data, training) vs its peak.

Exit codes: 0 = every benchmark ran, or was skipped because this machine lacks the hardware (no GPU:
nothing to install); 5 = nothing failed, but some benchmarks were skipped because a tool they need
is missing (fio): the message says what to install, the other layers ran; 4 = a benchmark failed
(crashed, timed out, errored): the run stops there and the rest are listed as not run, unless
--keep-going; 3 = could not run (bad option, torch missing, output path not writable); 130/143 =
interrupted by SIGINT/SIGTERM (benchmark processes stopped, their files removed)."""
)


def bench(
    ctx: typer.Context,
    quick: bool = typer.Option(
        True,
        "--quick/--full",
        help=N_(
            "--quick: a few large shapes/sizes, under a minute on a small machine (default). --full: "
            "mamf-style sweeps, sizes up to 1 GiB, more repeats."
        ),
    ),
    only: str = typer.Option(
        None,
        "--only",
        help=N_("Comma list of benchmark names or aliases (listed below); default: all."),
    ),
    data_dir: Path = typer.Option(
        None,
        "--data-dir",
        help=N_(
            "Directory for the storage and data-loading benchmarks (use the filesystem you train from). "
            "Default: the system temp directory. Their files are removed afterwards."
        ),
    ),
    save: Path = typer.Option(
        None,
        "--save",
        metavar="FILE",
        help=N_(
            "Also save the results as JSON (schema gpuwise-bench/1, what doctor --bench-results, "
            "plan --calibrate and compare read), while still showing the tables."
        ),
    ),
    sizes: str = typer.Option(
        None, "--sizes", help=N_("Collective message sizes: '8:1G' (x2 steps), '8:1G:x8' or '1M,64M,1G'.")
    ),
    world_size: int = typer.Option(
        None,
        "--world-size",
        min=1,
        help=N_("Collective ranks on this node (default: all GPUs, or 2 on CPU)."),
    ),
    fmt: str = FormatOpt,
    output: Path = OutputOpt,
    as_json: bool = JsonOpt,
    keep_going: bool = typer.Option(
        False,
        "--keep-going",
        help=N_(
            "Run every benchmark even after one fails, and exit 0; failures stay rows with their reason."
        ),
    ),
    history: Path = HistoryOpt,
    no_history: bool = NoHistoryOpt,
) -> None:
    from gpuwise.bench.registry import select
    from gpuwise.bench.sizes import parse_sizes
    from gpuwise.commands import check_output_path
    from gpuwise.commands.output import check_output, emit, output_format
    from gpuwise.errors import UserInputError

    _reject_legacy_json_file(ctx.args, as_json)
    # Check every argument before starting workers or importing torch: a typo fails in a second,
    # and an output path that cannot be written fails before minutes of measuring, not after.
    fmt = output_format(fmt, as_json)
    entries = select(only)
    parsed_sizes = parse_sizes(sizes) if sizes else None
    if data_dir is not None:
        data_dir = data_dir.resolve()  # benchmark processes and fio must not depend on the cwd
    if data_dir is not None and (not data_dir.is_dir() or not _writable(data_dir)):
        raise UserInputError(
            _("--data-dir {data_dir} is not a writable directory").format(data_dir=data_dir),
            fix=_("create it first, or pass a directory you can write to"),
        )
    if save is not None:
        check_output_path(save, "--save")
    check_output(output)

    from gpuwise.bench import require_torch
    from gpuwise.bench.runner import start_workers

    start_workers()  # the worker server imports torch while we do
    require_torch()  # fail before anything else with the install command
    from gpuwise.bench.context import BenchOptions

    options = BenchOptions(
        mode="quick" if quick else "full",
        data_dir=str(data_dir) if data_dir else None,
        sizes=parsed_sizes,
        world_size=world_size,
    )
    from gpuwise.commands.progress import run_bench_with_progress

    report = run_bench_with_progress(options, only, len(entries), stop_on_failure=not keep_going)
    if save is not None:  # first: minutes of measurements are saved even if printing fails
        from gpuwise.commands import write_output

        write_output(save, report.model_dump_json(by_alias=True, indent=2) + "\n", "--save")
    from gpuwise.report.views.bench import bench_view

    emit(bench_view(report), fmt, output)
    record_run("bench", report.model_dump(mode="json", by_alias=True), history, no_history)
    if save is not None:
        typer.echo(_("wrote {path}").format(path=save), err=True)

    failed = [m.name for m in report.results if m.status == "failed"]
    if failed and not keep_going:
        from gpuwise.errors import EXIT_BENCH_FAILED

        typer.echo(
            _("{n} benchmark(s) failed: {names} (see the reasons above).").format(
                n=len(failed), names=", ".join(failed)
            )
            + " "
            + _("To fix: address the reason, or pass --keep-going to run the rest anyway and exit 0"),
            err=True,
        )
        raise typer.Exit(EXIT_BENCH_FAILED)
    _exit_if_a_tool_is_missing(report)


def _exit_if_a_tool_is_missing(report) -> None:
    """Exit EXIT_SKIPPED when a benchmark was skipped for a tool the user can install (not for no GPU)."""
    from gpuwise.errors import EXIT_SKIPPED

    missing = [m for m in report.results if m.status == "skipped" and m.missing_tool]
    if not missing:
        return
    typer.echo(
        _("{n} benchmark(s) skipped because a tool is missing: {names}; the other layers ran.").format(
            n=len(missing), names=", ".join(f"{m.name} ({m.missing_tool})" for m in missing)
        )
        + " "
        + _("To fix: install it (the reason above says how) and rerun with --only {names}").format(
            names=",".join(m.name for m in missing)
        ),
        err=True,
    )
    raise typer.Exit(EXIT_SKIPPED)


def _reject_legacy_json_file(extra: list[str], as_json: bool) -> None:
    """`--json FILE` used to write the results to FILE; now --json is the --format json switch."""
    from gpuwise.errors import UserInputError

    if extra and as_json:
        raise UserInputError(
            _("--json no longer takes a file name ({extra!r}): it prints JSON, like --format json").format(
                extra=extra[0]
            ),
            _("to save the results and still see the tables, use --save {extra}").format(extra=extra[0]),
        )
    if extra:
        raise UserInputError(
            _("unexpected argument {extra!r}").format(extra=extra[0]), _("see `gpuwise bench --help`")
        )


def _writable(path: Path) -> bool:
    """Can we create a file there? (commands.write_probe: tried for real.)"""
    from gpuwise.commands import write_probe

    try:
        write_probe(path)
    except OSError:
        return False
    return True


class BenchCommand(TyperCommand):
    """`gpuwise bench --help` lists the benchmarks as their modules declare them (bench/registry.py).

    The list is built when the help is shown, so other commands never import the benchmark modules."""

    def format_help(self, ctx, formatter) -> None:
        if not getattr(self, "_listed", False):
            from gpuwise.bench.registry import benchmarks

            lines = [
                f"{e.name}: {_(e.help)}"
                + (_(" (also: {aliases})").format(aliases=", ".join(e.aliases)) if e.aliases else "")
                for e in benchmarks()
            ]
            # the list goes before the last paragraph (the exit codes), in every language
            head, sep, tail = (self.help or "").rpartition("\n\n")
            self.help = head + "\n\n" + _("Benchmarks (--only):") + "\n\n" + "\n\n".join(lines) + sep + tail
            self._listed = True
        super().format_help(ctx, formatter)


def register(app: typer.Typer) -> None:
    # extra arguments are accepted only to explain the old `--json FILE` (see _reject_legacy_json_file)
    app.command("bench", help=BENCH_HELP, cls=BenchCommand, context_settings={"allow_extra_args": True})(
        bench
    )
