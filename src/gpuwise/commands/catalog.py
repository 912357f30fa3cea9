"""`gpuwise catalog`: the GPUs, fabrics and cloud offers gpuwise knows, with their sources.

gpuwise catalog gpus|fabrics [--format text|json|md] [-o FILE]
gpuwise catalog offers [--gpu A100] [--provider tencent] [--min-network-gbps 100] [--catalog DIR] [--json]
gpuwise catalog show NAME [--json]          NAME: a reported GPU name, a GPU key, an instance type or a fabric
gpuwise catalog import-skypilot FILE [-o OUT] [--provider aws]
gpuwise catalog fetch tencent --region ap-guangzhou [--zone Z] [--family GT4] [-o OUT]
"""

from __future__ import annotations

from pathlib import Path

import typer

from gpuwise.commands.output import FormatOpt, JsonOpt, OutputOpt
from gpuwise.i18n import N_, _

catalog_app = typer.Typer(
    name="catalog",
    help=N_(
        "What GPUs, links and cloud offers gpuwise knows, "
        "each with its source and date.\n\n--format json (or --json) prints one document with schema "
        "gpuwise-catalog/1. "
        "Exit codes: 0 = ok; 3 = a name, file or option is wrong (the message says how to fix it)."
    ),
    no_args_is_help=True,
)
fetch_app = typer.Typer(
    name="fetch", help=N_("Fetch live prices from a cloud API into an offers file."), no_args_is_help=True
)
catalog_app.add_typer(fetch_app)


def _emit(doc, fmt: str, as_json: bool, output: Path | None) -> None:
    from gpuwise.commands.output import emit, output_format

    emit(doc, output_format(fmt, as_json), output)


def _check(fmt: str, as_json: bool, output: Path | None) -> None:
    """Before loading anything: a bad --format or -o fails first."""
    from gpuwise.commands.output import check_output, output_format

    output_format(fmt, as_json)
    check_output(output)


def _write_offers(target: Path, rows, written_by: str, force: bool) -> None:
    """offers_io.write_offers_file with OS errors (permissions, disk full) turned into a clean message."""
    from gpuwise.catalog import offers_io
    from gpuwise.errors import UserInputError

    try:
        offers_io.write_offers_file(target, rows, written_by=written_by, force=force)
    except OSError as exc:
        raise UserInputError(
            _("could not write {target} ({value}); nothing was written").format(
                target=target, value=exc.strerror or exc
            ),
            _("choose another output file with -o"),
        ) from None


GPUS_HELP = N_(
    """\
List the GPU spec rows: dense peaks, memory, links, achievable fractions, verified flag."""
)


@catalog_app.command("gpus", help=GPUS_HELP)
def gpus_command(fmt: str = FormatOpt, output: Path = OutputOpt, as_json: bool = JsonOpt) -> None:
    from gpuwise.catalog import gpus
    from gpuwise.report.views import catalog as view

    _check(fmt, as_json, output)
    _emit(view.gpus_view(gpus.load_gpu_specs()), fmt, as_json, output)


FABRICS_HELP = N_(
    """\
List links and fabrics: nominal bandwidth per direction, latency, typical achieved fraction."""
)


@catalog_app.command("fabrics", help=FABRICS_HELP)
def fabrics_command(fmt: str = FormatOpt, output: Path = OutputOpt, as_json: bool = JsonOpt) -> None:
    from gpuwise.catalog import fabrics
    from gpuwise.report.views import catalog as view

    _check(fmt, as_json, output)
    _emit(view.fabrics_view(fabrics.load_fabrics()), fmt, as_json, output)


OFFERS_HELP = N_(
    """\
List cloud GPU offers: shipped, ~/.config/gpuwise/offers/*.csv and --catalog folders."""
)


@catalog_app.command("offers", help=OFFERS_HELP)
def offers_command(
    gpu: str = typer.Option(
        None, "--gpu", help=N_("GPU name as offers list it (A100 matches A100 and A100-80GB, not A10).")
    ),
    provider: str = typer.Option(None, "--provider", help=N_("Only this provider, e.g. tencent or aws.")),
    min_network_gbps: float = typer.Option(
        None,
        "--min-network-gbps",
        min=0,
        help=N_("At least this much per-instance network or RDMA bandwidth (Gbit/s)."),
    ),
    catalog_dirs: list[Path] = typer.Option(
        None,
        "--catalog",
        metavar="DIR",
        help=N_("Extra folder of offers *.csv files (repeatable); overrides shipped rows."),
    ),
    fmt: str = FormatOpt,
    output: Path = OutputOpt,
    as_json: bool = JsonOpt,
) -> None:
    from gpuwise.catalog import offers
    from gpuwise.report.views import catalog as view

    _check(fmt, as_json, output)
    rows = offers.filter_offers(offers.load_offers(catalog_dirs or []), gpu, provider, min_network_gbps)
    _emit(view.offers_view(rows), fmt, as_json, output)


SHOW_HELP = N_(
    """\
Show one catalog row with its source: a GPU, an instance type (every region) or a fabric."""
)


@catalog_app.command("show", help=SHOW_HELP)
def show_command(
    name: str = typer.Argument(
        ..., help=N_("A GPU name as nvidia-smi reports it, a GPU key, an instance type or a fabric key.")
    ),
    catalog_dirs: list[Path] = typer.Option(
        None, "--catalog", metavar="DIR", help=N_("Extra folder of offers *.csv files (repeatable).")
    ),
    fmt: str = FormatOpt,
    output: Path = OutputOpt,
    as_json: bool = JsonOpt,
) -> None:
    from gpuwise.catalog import fabrics, gpus, offers
    from gpuwise.datafiles import did_you_mean
    from gpuwise.errors import UserInputError
    from gpuwise.report.views import catalog as view

    _check(fmt, as_json, output)
    spec = gpus.match_gpu(name, warn=False)
    if spec is not None:
        return _emit(view.gpu_view(spec, name), fmt, as_json, output)
    all_offers = offers.load_offers(catalog_dirs or [])
    found = offers.find_offer(name, all_offers)
    if found:
        return _emit(view.offer_view(found, name), fmt, as_json, output)
    fabric = next((f for f in fabrics.load_fabrics() if f.key == name.strip().lower()), None)
    if fabric is not None:
        return _emit(view.fabric_view(fabric, name), fmt, as_json, output)
    known = [s.key for s in gpus.load_gpu_specs()] + [o.instance_type for o in all_offers]
    known += [f.key for f in fabrics.load_fabrics()]
    raise UserInputError(
        _("{name!r} is not a GPU, instance type or fabric the catalog knows{did_you_mean_name}").format(
            name=name, did_you_mean_name=did_you_mean(name, known)
        ),
        _(
            "see `gpuwise catalog gpus` and `gpuwise catalog offers`; gpuwise never guesses a GPU "
            "(e.g. 'H100' alone could be SXM, PCIe or NVL: use the name nvidia-smi reports)"
        ),
    )


IMPORT_SKYPILOT_HELP = N_(
    """\
Convert a SkyPilot vms.csv into a gpuwise offers file (SkyPilot columns plus ours)."""
)


@catalog_app.command("import-skypilot", help=IMPORT_SKYPILOT_HELP)
def import_skypilot_command(
    source: Path = typer.Argument(..., help=N_("A SkyPilot catalog file, e.g. catalogs/v8/aws/vms.csv.")),
    output: Path = typer.Option(
        None,
        "-o",
        "--output",
        help=N_("Offers file to write (default: ~/.config/gpuwise/offers/<provider>-skypilot.csv)."),
    ),
    provider: str = typer.Option(
        None, "--provider", help=N_("Cloud name (default: the file's folder name).")
    ),
    all_rows: bool = typer.Option(False, "--all", help=N_("Keep rows without GPUs too.")),
    force: bool = typer.Option(False, "--force", help=N_("Replace OUTPUT even if gpuwise did not write it.")),
) -> None:
    from gpuwise.catalog import offers_io
    from gpuwise.commands import check_output_path

    if output is not None:
        check_output_path(output, "-o")
    imported = offers_io.import_skypilot(source, provider, gpu_only=not all_rows)
    target = output or offers_io.default_import_path(imported[0].provider)
    _write_offers(target, imported, "SkyPilot catalog", force)
    typer.echo(_("wrote {n} offers to {target}").format(n=len(imported), target=target))


FETCH_TENCENT_HELP = N_(
    """\
Fetch live Tencent Cloud GPU prices and stock (credentials: TENCENTCLOUD_SECRET_ID / _KEY)."""
)


@fetch_app.command("tencent", help=FETCH_TENCENT_HELP)
def fetch_tencent_command(
    region: str = typer.Option(
        ..., "--region", help=N_("Tencent Cloud region, e.g. ap-guangzhou, ap-shanghai, ap-beijing.")
    ),
    zones: list[str] = typer.Option(
        None, "--zone", metavar="ZONE", help=N_("Only these zones, e.g. ap-guangzhou-4 (repeatable).")
    ),
    families: list[str] = typer.Option(
        None, "--family", metavar="FAMILY", help=N_("Only these instance families, e.g. GT4 (repeatable).")
    ),
    image_id: str = typer.Option(
        None,
        "--image-id",
        help=N_("An image id (img-...) to ask InquiryPriceRunInstances for types listed without a price."),
    ),
    output: Path = typer.Option(
        None,
        "-o",
        "--output",
        help=N_("Offers file (default: ~/.config/gpuwise/offers/tencent-<region>.csv)."),
    ),
    force: bool = typer.Option(False, "--force", help=N_("Replace OUTPUT even if gpuwise did not write it.")),
) -> None:
    from gpuwise import providers
    from gpuwise.catalog import offers, tencent
    from gpuwise.commands import check_output_path

    if output is not None:
        check_output_path(output, "-o")
    fetch = providers.get("tencent").load_fetcher()  # the live source gpuwise/providers/tencent.py names
    found = fetch(region, zones or (), families or (), image_id)
    if not found:
        typer.echo(
            _(
                "the API listed no GPU instance types for {region} (with these filters); nothing written"
            ).format(region=region)
        )
        return
    target = output or offers.user_offers_dir() / f"tencent-{region}.csv"
    _write_offers(target, found, tencent.PRICE_SOURCE, force)
    priced = sum(1 for o in found if o.price is not None)
    typer.echo(
        _("wrote {n} GPU offers ({priced} with an on-demand price) to {target}").format(
            n=len(found), priced=priced, target=target
        )
    )


def register(app: typer.Typer) -> None:
    app.add_typer(catalog_app)
