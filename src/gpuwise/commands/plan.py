"""`gpuwise plan`: rent or build? Time-to-train, scaling, cost and break-even for a workload file."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("plan")
    def plan_command(
        workload: Path = typer.Argument(..., help="Workload YAML (see examples/llm-7b-pretrain-1t.yaml)."),
        options: Path | None = typer.Option(
            None,
            "--options",
            help="Options YAML: cloud filters, on-prem builds, "
            "exchange rates (see examples/plan-options.yaml).",
        ),
        calibrate: Path | None = typer.Option(
            None,
            "--calibrate",
            help="`gpuwise bench --json` report: measured matmul / all-reduce / MFU replace defaults.",
        ),
        sweep: str | None = typer.Option(
            None, "--sweep", help="Node counts to evaluate, e.g. nodes=1,2,4,8,16,32."
        ),
        as_json: bool = typer.Option(
            False, "--json", help="Print the gpuwise-plan/1 JSON document instead of tables."
        ),
        output: Path | None = typer.Option(
            None, "--output", "-o", help="Also write the JSON document to this file."
        ),
        verbose: bool = typer.Option(
            False, "--verbose", "-v", help="List every model assumption with its source."
        ),
    ) -> None:
        """Compare cloud offers and on-prem builds for a training workload; recommend rent, build or hybrid.

        Exit codes: 0 = a plan was made (it may still say "undecided"); 3 = could not run (a workload,
        options or calibration file is invalid, or -o cannot be written).
        """
        import json

        from gpuwise.commands import check_output_path, write_output
        from gpuwise.plan.export import plan_to_json
        from gpuwise.plan.planner import make_plan, parse_sweep

        if output is not None:
            check_output_path(output, "-o")
        plan = make_plan(workload, options, calibrate, parse_sweep(sweep))
        doc = plan_to_json(plan)
        text = json.dumps(doc, indent=2, default=str) + "\n"
        if output is not None:
            write_output(output, text, "-o")
        if as_json:
            typer.echo(text, nl=False)
            return
        from gpuwise.report.plan_view import render_plan

        render_plan(plan, verbose=verbose)
        if output is not None:
            typer.echo(f"wrote {output}", err=True)
