"""`gpuwise plan`: rent or build? Time-to-train, scaling, cost and break-even for a workload file."""

from __future__ import annotations

from pathlib import Path

import typer

from gpuwise.commands.output import FormatOpt, JsonOpt, OutputOpt
from gpuwise.errors import UserInputError
from gpuwise.i18n import N_, _

PLAN_HELP = N_(
    """\
Compare cloud offers and on-prem builds for a training workload; recommend rent, build or hybrid.

A workload with `kind: inference` gets a serving plan instead: capacity per node at the latency
target, autoscaling / reserved / spot / owned / hybrid options costed against its traffic.

--format json prints the gpuwise-plan/1 document. Exit codes: 0 = a plan was made (it may still
say "undecided"); 3 = could not run (a workload, options or calibration file is invalid, or -o
cannot be written)."""
)


def register(app: typer.Typer) -> None:
    @app.command("plan", help=PLAN_HELP)
    def plan_command(
        workload: Path = typer.Argument(
            ..., help=N_("Workload YAML (see examples/llm-7b-pretrain-1t.yaml).")
        ),
        options: Path | None = typer.Option(
            None,
            "--options",
            help=N_(
                "Options YAML: cloud filters, on-prem builds, "
                "exchange rates (see examples/plan-options.yaml)."
            ),
        ),
        calibrate: Path | None = typer.Option(
            None,
            "--calibrate",
            help=N_(
                "Measured numbers replace defaults: a `gpuwise bench --save` file (matmul, MFU, all-reduce, "
                "also across nodes), an nccl-tests log of a multi-node all_reduce_perf, or a fleet directory "
                "(`gpuwise fleet run --out`: inter-node busbw and per-node spread); kind: inference: a "
                "requests/s result is a non-LLM model's throughput per GPU."
            ),
        ),
        sweep: str | None = typer.Option(
            None, "--sweep", help=N_("Node counts to evaluate, e.g. nodes=1,2,4,8,16,32.")
        ),
        verbose: bool = typer.Option(
            False, "--verbose", "-v", help=N_("List every model assumption with its source.")
        ),
        target: str | None = typer.Option(
            None,
            "--target",
            "--launchable",
            metavar="TARGET",
            help=N_(
                "Only what `gpuwise launch --target T` can launch: slurm, torchrun = on-prem builds, skypilot = the "
                "clouds SkyPilot supports, tencent = Tencent offers."
            ),
        ),
        fmt: str = FormatOpt,
        output: Path | None = OutputOpt,
        as_json: bool = JsonOpt,
    ) -> None:
        from gpuwise.commands.output import check_output, emit, output_format
        from gpuwise.plan.planner import make_plan, parse_sweep
        from gpuwise.plan.serving.workload import workload_kind

        fmt = output_format(fmt, as_json)
        check_output(output)
        if workload_kind(workload) == "inference":  # kind: inference -> a serving plan (no node sweep)
            from gpuwise.plan.serving.planner import make_serving_plan
            from gpuwise.report.views.serving import serving_view

            if sweep:
                raise UserInputError(
                    _("--sweep is for training workloads"), _("leave out --sweep for kind: inference")
                )
            emit(serving_view(make_serving_plan(workload, options, calibrate), verbose=verbose), fmt, output)
            return
        from gpuwise.report.views.plan import plan_view

        cal = None
        if calibrate is not None and calibrate.expanduser().is_dir():
            from gpuwise.fleet.calibration import fleet_calibration

            cal, calibrate = fleet_calibration(calibrate), None
        opts = None
        if target is not None:
            from gpuwise.plan.options_file import for_target, load_options

            opts = for_target(load_options(options), target)
        plan = make_plan(workload, options, calibrate, parse_sweep(sweep), options=opts, calibration=cal)
        emit(plan_view(plan, verbose=verbose), fmt, output)
