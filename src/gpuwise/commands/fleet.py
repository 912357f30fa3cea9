"""`gpuwise fleet`: run gpuwise across a Slurm cluster, compare the nodes, and health-check one node.

gpuwise fleet run --slurm -N 16 --out /shared/fleet    capture + bench on every node, then the
                                                       multi-node all-reduce and link test
gpuwise fleet report /shared/fleet                     drift, outliers, findings by reach, verdict
gpuwise fleet healthcheck --expect gpus=8,ib=4 --drain for slurm.conf HealthCheckProgram / Prolog
"""

from __future__ import annotations

from pathlib import Path

import typer

from gpuwise.commands.history import HistoryOpt, NoHistoryOpt, record_run
from gpuwise.commands.output import FormatOpt, JsonOpt, OutputOpt
from gpuwise.i18n import N_, _

app = typer.Typer(
    help=N_("Many nodes: run through Slurm, compare nodes with their peers, health-check a node.")
)


REPORT_HELP = N_(
    """\
Compare N node results: drift, peer-relative outliers, findings by reach, straggler verdict.

Layout: DIR/<node>/capture.tar.gz (or capture/), optional DIR/<node>/bench.json and doctor.json,
optional DIR/collective.json and DIR/links.json. Exit codes: 0 = no node differs from its peers;
1 = drift or outliers found; 3 = could not run."""
)


@app.command("report", help=REPORT_HELP)
def report(
    directory: Path = typer.Argument(
        ..., help=N_("Fleet folder: one sub-folder per node (see `fleet run --out`).")
    ),
    fmt: str = FormatOpt,
    output: Path = OutputOpt,
    as_json: bool = JsonOpt,
    no_rules: bool = typer.Option(
        False, "--no-rules", help=N_("Skip running the doctor rules on nodes without doctor.json (faster).")
    ),
    history: Path = HistoryOpt,
    no_history: bool = NoHistoryOpt,
) -> None:
    from gpuwise.commands.output import check_output, emit, output_format
    from gpuwise.fleet.analyze import analyze_fleet
    from gpuwise.report.views.fleet import fleet_view

    name = output_format(fmt, as_json)
    check_output(output)
    result = analyze_fleet(directory, run_rules=not no_rules)
    emit(fleet_view(result), name, output)
    _record(result, history, no_history)
    raise typer.Exit(1 if result.odd_nodes() else 0)


def _record(result, history: Path | None, no_history: bool) -> None:
    """The fleet run in the history, under its set of nodes (masked) as its identity."""
    from gpuwise.store.records import fleet_identity

    document = result.to_json_dict()
    record_run("fleet", document, history, no_history, host=fleet_identity(document))


RUN_HELP = N_(
    """\
Capture and benchmark every node of a Slurm allocation, then measure the inter-node all-reduce.

Exit codes: 0 = ran, no node differs; 1 = ran, drift or outliers found; 2 = the job failed on a
node (its report still shows what came back); 3 = could not run."""
)


@app.command("run", help=RUN_HELP)
def run(
    slurm: bool = typer.Option(
        False, "--slurm", help=N_("Submit through Slurm (sbatch/srun); the only launcher so far.")
    ),
    out: Path = typer.Option(..., "--out", help=N_("Output folder on a filesystem every node sees.")),
    nodes: int = typer.Option(None, "-N", "--nodes", min=1, help=N_("Number of nodes (sbatch -N).")),
    nodelist: str = typer.Option(None, "--nodelist", help=N_("Nodes to use (sbatch --nodelist).")),
    partition: str = typer.Option(None, "--partition", help="sbatch --partition."),
    account: str = typer.Option(None, "--account", help="sbatch --account."),
    time_limit: str = typer.Option(None, "--time", help=N_("sbatch --time, e.g. 00:30:00.")),
    qos: str = typer.Option(None, "--qos", help="sbatch --qos."),
    gpus_per_node: int = typer.Option(
        None,
        "--gpus-per-node",
        min=0,
        help=N_(
            "GPUs to ask for on each node (default: the GPU GRES `sinfo` lists for the nodes, 0 = none). "
            "A cluster with ConstrainDevices shows a job only the GPUs it asked for."
        ),
    ),
    gpu_request: str = typer.Option(
        "gpus-per-node",
        "--gpu-request",
        metavar="gpus-per-node|gres|none",
        help=N_(
            "How to ask for them: --gpus-per-node=N, --gres=gpu:N, or none (no GPU GRES on the cluster)."
        ),
    ),
    exclusive: bool = typer.Option(False, "--exclusive", help=N_("Whole nodes (sbatch --exclusive).")),
    bench_only: str = typer.Option(
        None,
        "--bench-only",
        help=N_("Benchmarks per node: a `bench --only` list, or 'none'. Default: bench --quick."),
    ),
    collective_sizes: str = typer.Option(
        "1M:256M", "--collective-sizes", help=N_("All-reduce message sizes.")
    ),
    link_bytes: str = typer.Option(
        "64M", "--link-bytes", help=N_("Buffer per transfer in the pairwise link test.")
    ),
    port: int = typer.Option(
        29500, "--port", help=N_("Rendezvous port on the first node (this and the next one).")
    ),
    wait_timeout: float = typer.Option(
        None, "--wait-timeout", help=N_("Cancel the job after this many seconds.")
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help=N_("Print the job script and exit.")),
    fmt: str = FormatOpt,
    output: Path = OutputOpt,
    as_json: bool = JsonOpt,
    history: Path = HistoryOpt,
    no_history: bool = NoHistoryOpt,
) -> None:
    from gpuwise.commands.output import check_output, emit, output_format
    from gpuwise.errors import UserInputError
    from gpuwise.fleet.slurm import JobOptions, job_script, submit
    from gpuwise.slurm.client import cluster_gpus
    from gpuwise.slurm.request import check_gpu_request

    if not slurm:
        raise UserInputError(_("fleet run needs a launcher"), _("add --slurm (run it on a Slurm login node)"))
    opts = JobOptions(
        out=out,
        nodes=nodes,
        nodelist=nodelist,
        partition=partition,
        account=account,
        time=time_limit,
        bench_only=bench_only,
        collective_sizes=collective_sizes,
        link_bytes=link_bytes,
        port=port,
        gpus_per_node=cluster_gpus(partition) if gpus_per_node is None else gpus_per_node,
        gpu_request=check_gpu_request(gpu_request),
        exclusive=exclusive,
        qos=qos,
    )
    script = job_script(opts)
    if dry_run:
        typer.echo(script, nl=False)
        return
    name = output_format(fmt, as_json)
    check_output(output)
    job, rc = submit(script, out, wait_timeout)
    typer.echo(
        _("job {job} finished (exit {rc}); results in {out}").format(job=job, rc=rc, out=out), err=True
    )
    from gpuwise.fleet.analyze import analyze_fleet
    from gpuwise.report.views.fleet import fleet_view

    result = analyze_fleet(out)
    emit(fleet_view(result), name, output)
    _record(result, history, no_history)
    raise typer.Exit(2 if rc != 0 else 1 if result.odd_nodes() else 0)


HEALTHCHECK_HELP = N_(
    """\
Doctor with expectations, for slurm.conf HealthCheckProgram or Prolog (a few seconds at most).

Exit codes (as Slurm uses them): 0 = healthy (warnings included); 1 = critical finding (as Prolog,
Slurm drains the node and requeues the job); 3 = could not run (bad --expect, or --drain with --from
a capture of another node)."""
)


@app.command("healthcheck", help=HEALTHCHECK_HELP)
def healthcheck(
    expect: str = typer.Option(
        None, "--expect", help=N_("What this node must have, e.g. gpus=8,ib=4,pcie_width=16.")
    ),
    drain: bool = typer.Option(False, "--drain", help=N_("On a critical finding, drain this node in Slurm.")),
    node: str = typer.Option(
        None, "--node", help=N_("Slurm node name (default: $SLURMD_NODENAME, else the hostname).")
    ),
    from_capture: Path = typer.Option(None, "--from", help=N_("Check a capture instead of this machine.")),
    timeout: float = typer.Option(
        4.0, "--timeout", help=N_("The whole check (and the drain) ends within this many seconds.")
    ),
    fmt: str = FormatOpt,
    output: Path = OutputOpt,
    as_json: bool = JsonOpt,
) -> None:
    import time

    from gpuwise.advise.expect import parse_expect
    from gpuwise.commands.output import check_output, emit, output_format
    from gpuwise.fleet import healthcheck as hc
    from gpuwise.report.views.fleet import health_view

    start = time.monotonic()
    name = output_format(fmt, as_json)
    check_output(output)
    expected = parse_expect(expect) if expect else None
    this_node = hc.node_name(node)
    # with --drain, a quarter of the time is kept for scontrol, so the whole command stays within --timeout
    budget = max(0.0, timeout * (0.75 if drain else 1.0) - (time.monotonic() - start))
    checked, broken = hc.collect_with_deadline(
        lambda: hc.check_node(lambda: _collect(from_capture), expected), budget, timeout
    )
    result = hc.HealthResult(node=this_node, findings=[broken] if broken else checked.findings)
    if from_capture is not None:
        result.node = hc.short_host(checked.hostname if checked else None) or str(from_capture)
        if drain and result.node != this_node:
            timed_out = broken is not None and broken.id == "health.timeout"
            _refuse_drain(
                from_capture, result.node if checked else None, this_node, timeout if timed_out else None
            )
    if (
        drain and result.critical
    ):  # findings are English until worded: Slurm shows the reason to every operator
        left = max(0.5, timeout - (time.monotonic() - start))
        result.drain_error = hc.drain(result.node, result.findings, left)
        result.drained = result.drain_error is None
    result.seconds = time.monotonic() - start
    emit(health_view(result), name, output)
    raise typer.Exit(result.exit_code)


def _refuse_drain(capture: Path, host: str | None, this_node: str, timed_out_s: float | None = None) -> None:
    """--drain acts on the node the check runs on; a capture of another node (or of no known node) is
    checked, never drained here: `scontrol` would drain this machine for another machine's fault.
    `timed_out_s`: the check ran out of --timeout (that many seconds) before the capture was read."""
    from gpuwise.datafiles import shown_name
    from gpuwise.errors import UserInputError

    if host is None and timed_out_s is not None:
        raise UserInputError(
            _(
                "--drain: the capture {capture} was not read within --timeout {seconds} s, so its node is unknown"
            ).format(capture=shown_name(capture), seconds=f"{timed_out_s:g}"),
            _("raise --timeout, or drop --drain to check the capture only"),
        )
    if host is None:
        message = _("--drain: the capture {capture} could not be read, so its node is unknown").format(
            capture=shown_name(capture)
        )
    else:
        message = _("--drain: the capture is of node {host}, not of this node ({node})").format(
            host=host, node=this_node
        )
    raise UserInputError(
        message,
        _(
            "run `gpuwise fleet healthcheck --drain` on that node itself, or drop --drain to check the capture only"
        ),
    )


def _collect(capture: Path | None):
    from gpuwise.capture.host import CaptureHost, LiveHost
    from gpuwise.facts.collect import collect_facts

    return collect_facts(CaptureHost(capture) if capture else LiveHost())


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="fleet")
