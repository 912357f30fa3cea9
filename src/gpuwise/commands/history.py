"""`gpuwise history list | show ID | trend METRIC`, and the recording that bench, doctor, tune and fleet call.

Recording never costs the user the run: any history failure (corrupt, locked, unwritable database)
is a warning on stderr with its "To fix", and the command carries on with its result.
"""

from __future__ import annotations

from pathlib import Path

import typer

from gpuwise.commands.output import FormatOpt, JsonOpt, OutputOpt
from gpuwise.i18n import N_, _

HistoryOpt = typer.Option(
    None,
    "--history",
    help=N_("History database (default: $GPUWISE_HISTORY or ~/.local/share/gpuwise/history.db)."),
)
NoHistoryOpt = typer.Option(False, "--no-history", help=N_("Do not record this run in the history database."))

history_app = typer.Typer(
    help=N_("Past bench, doctor, tune and fleet runs: list them, show one, follow a metric over time."),
    no_args_is_help=True,
)


def record_run(
    kind: str,
    document: dict,
    path: Path | None = None,
    skip: bool = False,
    *,
    host: str | None = None,
    extra_facts: dict | None = None,
) -> None:
    """Record a bench, doctor, tune or fleet JSON document under `host` (default: the document's hostname),
    masked, with the GPU model and origin (live or replay) of its data; for a live bench, warn about
    regressions vs the same host and GPU model's history. Never raises for the history."""
    if skip:
        return
    from datetime import datetime, timezone

    from gpuwise.errors import GpuwiseError
    from gpuwise.store import records
    from gpuwise.store.history import History, mask_host
    from gpuwise.store.identity import LIVE
    from gpuwise.store.regress import check

    try:
        run = records.summarize(kind, document)
        facts, metrics = {**run.facts, **(extra_facts or {})}, run.metrics
        host = mask_host(host or run.hostname)
        gpu, origin = run.gpu, run.origin
        created = run.created_at or datetime.now(timezone.utc).isoformat(timespec="seconds")
        with History(path) as db:
            past = db.runs(kind=kind, host=host, gpu=gpu, origin=origin, limit=50)
            run_id = db.record(kind, host, created, facts, metrics, document, gpu=gpu, origin=origin)
    except GpuwiseError as err:
        typer.echo(
            _("warning: this run was not recorded in the history: {error}").format(error=err), err=True
        )
        return
    if origin != LIVE:
        typer.echo(
            _(
                "recorded as run {id} in {path}, a replay of {host}'s data: this host's trends and "
                "regression checks leave it out (gpuwise history trend METRIC --host all shows it)"
            ).format(id=run_id, path=db.path, host=host),
            err=True,
        )
        return
    typer.echo(
        _("recorded as run {id} in {path} (gpuwise history show {id})").format(id=run_id, path=db.path),
        err=True,
    )
    if kind == "bench" and metrics:
        found = check(metrics, facts, past)
        for regression in found.regressions:
            typer.secho(_("regression: {what}").format(what=regression.sentence()), err=True, fg="yellow")
        if (short := found.not_enough_history()) is not None:
            typer.echo(_("regression check: {what}").format(what=short), err=True)


def _open(path: Path | None):
    from gpuwise.store.history import History

    return History(path)


def _host_id(host: str | None) -> str | None:
    """--host takes a hostname or a masked id (host-...); the history stores masked ids."""
    from gpuwise.store.history import mask_host

    return host if host is None or host.startswith("host-") else mask_host(host)


LIST_HELP = N_(
    """\
List recorded runs, newest first."""
)


@history_app.command("list", help=LIST_HELP)
def list_runs(
    kind: str = typer.Option(None, "--kind", help=N_("Only bench, doctor, tune or fleet runs.")),
    host: str = typer.Option(None, "--host", help=N_("Only this host (its name or its host-... id).")),
    limit: int = typer.Option(50, "--limit", min=1, help=N_("At most this many runs, newest first.")),
    history: Path = HistoryOpt,
    fmt: str = FormatOpt,
    output: Path = OutputOpt,
    as_json: bool = JsonOpt,
) -> None:
    from gpuwise.commands.output import check_output, emit, output_format
    from gpuwise.report.views.history import list_view

    fmt = output_format(fmt, as_json)
    check_output(output)
    with _open(history) as db:
        runs = db.runs(kind=kind, host=_host_id(host), limit=limit)
        emit(list_view(runs, str(db.path)), fmt, output)


SHOW_RUN_HELP = N_(
    """\
One run: its facts and metrics (--format json adds the run's full JSON document)."""
)


@history_app.command("show", help=SHOW_RUN_HELP)
def show_run(
    run_id: int = typer.Argument(..., metavar="ID", help=N_("A run id from `gpuwise history list`.")),
    history: Path = HistoryOpt,
    fmt: str = FormatOpt,
    output: Path = OutputOpt,
    as_json: bool = JsonOpt,
) -> None:
    from gpuwise.commands.output import check_output, emit, output_format
    from gpuwise.errors import UserInputError
    from gpuwise.report.views.history import show_view

    fmt = output_format(fmt, as_json)
    check_output(output)
    with _open(history) as db:
        run = db.get(run_id)
        if run is None:
            raise UserInputError(
                _("no run {run_id} in {path}").format(run_id=run_id, path=db.path),
                _("list the runs with `gpuwise history list`"),
            )
        emit(show_view(run), fmt, output)


TREND_HELP = N_(
    """\
A metric over time: every recorded median with its min and max (--format html draws it).

By default only this host's live runs, one series per GPU model (fleet/ metrics: one series per
fleet, i.e. node set); --host NAME (or its host-... id) shows that host's runs, live and replayed;
--host all shows every host, one series per host, GPU model and origin (live, or replay:
`doctor --from` a capture)."""
)


@history_app.command("trend", help=TREND_HELP)
def trend(
    metric: str = typer.Argument(
        ..., help=N_("A metric name, e.g. matmul_bf16 (see `gpuwise history show ID`).")
    ),
    host: str = typer.Option(
        None, "--host", help=N_("This host's id, name or `all` (default: this host, live runs only).")
    ),
    history: Path = HistoryOpt,
    fmt: str = FormatOpt,
    output: Path = OutputOpt,
    as_json: bool = JsonOpt,
) -> None:
    import socket

    from gpuwise.commands.output import check_output, emit, output_format
    from gpuwise.errors import UserInputError
    from gpuwise.report.views.history import trend_view
    from gpuwise.store.identity import LIVE, mask_host

    fmt = output_format(fmt, as_json)
    check_output(output)
    if host is None and metric.startswith("fleet/"):  # recorded under each fleet's node set, not a host
        host_id, origin, label = None, LIVE, None
    elif host is None:
        host_id, origin, label = mask_host(socket.gethostname()), LIVE, _("this host")
    elif host == "all":
        host_id, origin, label = None, None, _("all hosts")
    else:
        host_id, origin, label = _host_id(host), None, host
    with _open(history) as db:
        points = db.trend(metric, host_id, origin)
        if not points:
            import difflib

            names = db.metric_names()
            near = difflib.get_close_matches(metric, names, n=1)
            elsewhere = len(db.trend(metric)) if host_id is not None else 0
            message = (
                _("no recorded values of {metric!r} on {host} in {path}").format(
                    metric=metric, host=label, path=db.path
                )
                if host_id is not None
                else _("no recorded values of {metric!r} in {path}").format(metric=metric, path=db.path)
            )
            fix = _("recorded metrics: {names}").format(
                names=", ".join(names[:12]) or _("none yet (run gpuwise bench)")
            )
            if elsewhere:
                fix = _("{n} value(s) were recorded on other hosts or replayed: add --host all").format(
                    n=elsewhere
                )
            elif near:
                fix = _("did you mean {name!r}? {fix}").format(name=near[0], fix=fix)
            raise UserInputError(message, fix)
        emit(trend_view(metric, points, host_id, label), fmt, output)


def register(app: typer.Typer) -> None:
    app.add_typer(history_app, name="history")
