"""`gpuwise export`: a Prometheus exporter (dcgm-exporter-compatible names plus tuning signals)."""

from __future__ import annotations

from pathlib import Path

import typer

from gpuwise.i18n import N_, _

DEFAULT_LISTEN = "127.0.0.1:9401"


EXPORT_HELP = N_(
    """\
Serve GPU metrics and tuning signals to Prometheus (dcgm-exporter-compatible names).

DCGM_FI_* metrics carry dcgm-exporter's names and labels, so its dashboards work unchanged; gpuwise_*
metrics add clock-event reasons, per-process GPU memory, driver/CUDA/PCIe facts and the tuning
signals (gpuwise_signal). Each scrape reads the GPUs once; no background polling.

Ships with dashboards/gpuwise.json (Grafana) and dashboards/gpuwise-rules.yml (alerting rules).
Exit codes: 130 = stopped by Ctrl-C (SIGINT), 143 = stopped by SIGTERM (after a clean shutdown);
3 = could not run (bad option, port taken, bad recording)."""
)


def export(
    source: Path = typer.Option(
        None,
        "--from",
        help=N_(
            "Replay a recording instead of reading this machine's GPUs: a capture (dir or .tar.gz), "
            "a `watch --record` file, or nvidia-smi --query-gpu CSV / dmon output."
        ),
    ),
    listen: str = typer.Option(
        DEFAULT_LISTEN, "--listen", help=N_("ADDRESS:PORT to serve /metrics on (':PORT' = all interfaces).")
    ),
    textfile: Path = typer.Option(
        None,
        "--textfile",
        help=N_(
            "Write DIR/gpuwise.prom for node_exporter's textfile collector (atomically) instead of serving."
        ),
    ),
    interval: float = typer.Option(
        15.0, "--interval", min=0.5, help=N_("Seconds between --textfile writes.")
    ),
    once: bool = typer.Option(False, "--once", help=N_("With --textfile: write one file and exit.")),
    basic_auth_file: Path = typer.Option(
        None, "--basic-auth-file", help=N_("Require HTTP basic auth; FILE holds one line USER:PASSWORD.")
    ),
    tls_cert: Path = typer.Option(None, "--tls-cert", help=N_("Serve HTTPS with this PEM certificate.")),
    tls_key: Path = typer.Option(
        None, "--tls-key", help=N_("The certificate's PEM key (if not in --tls-cert).")
    ),
    job_labels: bool = typer.Option(
        False,
        "--job-labels",
        help=N_(
            "Label every GPU series with the job it runs (hpc_job, hpc_job_name, rank, local_rank, "
            "world_size, node_rank) from Slurm, torchrun or SkyPilot variables in this environment."
        ),
    ),
) -> None:
    import os
    import sys
    import threading

    from prometheus_client import CollectorRegistry

    from gpuwise.errors import UserInputError
    from gpuwise.export import job_labels as job_env
    from gpuwise.export import serve
    from gpuwise.export.collector import GpuCollector
    from gpuwise.export.sources import open_source

    if tls_key is not None and tls_cert is None:
        raise UserInputError(_("--tls-key needs --tls-cert"), _("pass both, or neither for plain HTTP"))
    if textfile is not None and (basic_auth_file or tls_cert):
        raise UserInputError(
            _("--basic-auth-file and --tls-cert apply to the HTTP server, not to --textfile"),
            _("drop them, or drop --textfile"),
        )
    if once and textfile is None:
        raise UserInputError(_("--once needs --textfile"), _("add --textfile DIR"))
    address, port = serve.parse_listen(listen)
    auth = serve.read_basic_auth(basic_auth_file) if basic_auth_file else None
    if textfile is not None:
        _check_dir(textfile)

    labels = job_env.from_environment(os.environ) if job_labels else {}
    src = open_source(source)
    registry = CollectorRegistry()
    registry.register(GpuCollector(src, labels))
    stop = threading.Event()  # never set: SIGINT/SIGTERM raise here (gpuwise.interrupts) and exit 130/143
    try:
        if textfile is not None:
            if once:
                path = serve.write_textfile(registry, textfile)
                typer.echo(_("wrote {path} ({source})").format(path=path, source=src.description), err=True)
                if job_labels:
                    _echo_job_labels(labels)
                return
            typer.echo(
                _("gpuwise export: writing {path} every {interval} s ({source}); Ctrl-C stops").format(
                    path=textfile / serve.TEXTFILE_NAME, interval=f"{interval:g}", source=src.description
                ),
                err=True,
            )
            if job_labels:
                _echo_job_labels(labels)
            serve.textfile_loop(registry, textfile, interval, stop)
            return
        httpd, _thread = serve.start_server(
            registry, address, port, auth=auth, certfile=tls_cert, keyfile=tls_key
        )
        scheme = "https" if tls_cert else "http"
        shown = f"[{address}]" if ":" in address else address
        typer.echo(
            _("gpuwise export: serving {url} ({source}); Ctrl-C stops").format(
                url=f"{scheme}://{shown}:{httpd.server_port}/metrics", source=src.description
            ),
            err=True,
        )
        if job_labels:
            _echo_job_labels(labels)
        sys.stderr.flush()
        try:
            while not stop.wait(3600):
                pass
        finally:
            httpd.shutdown()
            httpd.server_close()
    finally:
        src.close()


def _echo_job_labels(labels: dict[str, str]) -> None:
    """After the first line (scripts read the URL from it): which job labels every series carries."""
    if labels:
        shown = ", ".join(f"{k}={v}" for k, v in labels.items())
        typer.echo(_("job labels: {labels}").format(labels=shown), err=True)
    else:
        typer.echo(
            _(
                "--job-labels: no Slurm, torchrun or SkyPilot job variables in this environment; no job labels"
            ),
            err=True,
        )


def _check_dir(directory: Path) -> None:
    from gpuwise.errors import UserInputError

    if not directory.is_dir():
        raise UserInputError(
            _("--textfile {directory} is not a directory").format(directory=directory),
            _("create it, or pass node_exporter's --collector.textfile.directory"),
        )


def register(app: typer.Typer) -> None:
    app.command("export", help=EXPORT_HELP)(export)
