"""`gpuwise catalog`: the GPUs, fabrics and cloud offers gpuwise knows, with their sources.

gpuwise catalog gpus [--json]
gpuwise catalog offers [--gpu A100] [--provider tencent] [--min-network-gbps 100] [--catalog DIR] [--json]
gpuwise catalog show NAME [--json]          NAME: a reported GPU name, a GPU key, an instance type or a fabric
gpuwise catalog import-skypilot FILE [-o OUT] [--provider aws]
gpuwise catalog fetch tencent --region ap-guangzhou [--zone Z] [--family GT4] [-o OUT]
"""

from __future__ import annotations

from pathlib import Path

import typer

catalog_app = typer.Typer(
    name="catalog",
    help="What GPUs, links and cloud offers gpuwise knows, "
    "each with its source and date.\n\n--json prints one document with schema gpuwise-catalog/1. "
    "Exit codes: 0 = ok; 3 = a name, file or option is wrong (the message says how to fix it).",
    no_args_is_help=True,
)
fetch_app = typer.Typer(
    name="fetch", help="Fetch live prices from a cloud API into an offers file.", no_args_is_help=True
)
catalog_app.add_typer(fetch_app)


CATALOG_SCHEMA = "gpuwise-catalog/1"


def _echo_json(data: dict) -> None:
    """Print one JSON document on stdout, tagged with its schema like every gpuwise --json output."""
    import json

    typer.echo(json.dumps({"schema": CATALOG_SCHEMA, **data}, indent=2, ensure_ascii=False))


def _write_offers(target: Path, rows, written_by: str, force: bool) -> None:
    """offers_io.write_offers_file with OS errors (permissions, disk full) turned into a clean message."""
    from gpuwise.catalog import offers_io
    from gpuwise.errors import UserInputError

    try:
        offers_io.write_offers_file(target, rows, written_by=written_by, force=force)
    except OSError as exc:
        raise UserInputError(
            f"could not write {target} ({exc.strerror or exc}); nothing was written",
            "choose another output file with -o",
        ) from None


@catalog_app.command("gpus")
def gpus_command(as_json: bool = typer.Option(False, "--json", help="Print the rows as JSON.")) -> None:
    """List the GPU spec rows: dense peaks, memory, links, achievable fractions, verified flag."""
    from gpuwise.catalog import gpus
    from gpuwise.report import catalog_view as view

    specs = gpus.load_gpu_specs()
    if as_json:
        _echo_json({"kind": "gpus", "gpus": [view.gpu_dict(s) for s in specs]})
        return
    view.print_tables(view.gpus_table(specs))


@catalog_app.command("fabrics")
def fabrics_command(as_json: bool = typer.Option(False, "--json", help="Print the rows as JSON.")) -> None:
    """List links and fabrics: nominal bandwidth per direction, latency, typical achieved fraction."""
    from gpuwise.catalog import fabrics
    from gpuwise.report import catalog_view as view

    rows = fabrics.load_fabrics()
    if as_json:
        _echo_json({"kind": "fabrics", "fabrics": [view.fabric_dict(f) for f in rows]})
        return
    view.print_tables(view.fabrics_table(rows))


@catalog_app.command("offers")
def offers_command(
    gpu: str = typer.Option(
        None, "--gpu", help="GPU name as offers list it (A100 matches A100 and A100-80GB, not A10)."
    ),
    provider: str = typer.Option(None, "--provider", help="Only this provider, e.g. tencent or aws."),
    min_network_gbps: float = typer.Option(
        None,
        "--min-network-gbps",
        min=0,
        help="At least this much per-instance network or RDMA bandwidth (Gbit/s).",
    ),
    catalog_dirs: list[Path] = typer.Option(
        None,
        "--catalog",
        metavar="DIR",
        help="Extra folder of offers *.csv files (repeatable); overrides shipped rows.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the offers as JSON."),
) -> None:
    """List cloud GPU offers: shipped, ~/.config/gpuwise/offers/*.csv and --catalog folders."""
    from gpuwise.catalog import offers
    from gpuwise.report import catalog_view as view

    rows = offers.filter_offers(offers.load_offers(catalog_dirs or []), gpu, provider, min_network_gbps)
    if as_json:
        _echo_json({"kind": "offers", "offers": [view.offer_dict(o) for o in rows]})
        return
    if not rows:
        typer.echo("no offers match (try without filters; `gpuwise catalog offers --json` lists every field)")
        return
    view.print_tables(view.offers_table(rows))


@catalog_app.command("show")
def show_command(
    name: str = typer.Argument(
        ..., help="A GPU name as nvidia-smi reports it, a GPU key, an instance type or a fabric key."
    ),
    catalog_dirs: list[Path] = typer.Option(
        None, "--catalog", metavar="DIR", help="Extra folder of offers *.csv files (repeatable)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the resolved row(s) as JSON."),
) -> None:
    """Show one catalog row with its source: a GPU, an instance type (every region) or a fabric."""
    from gpuwise.catalog import fabrics, gpus, offers
    from gpuwise.catalog.validate import did_you_mean
    from gpuwise.errors import UserInputError
    from gpuwise.report import catalog_view as view

    spec = gpus.match_gpu(name, warn=False)
    if spec is not None:
        if as_json:
            _echo_json({"kind": "gpu", "query": name, "gpu": view.gpu_dict(spec)})
        else:
            view.print_tables(view.gpu_detail(spec, name))
        return
    all_offers = offers.load_offers(catalog_dirs or [])
    found = offers.find_offer(name, all_offers)
    if found:
        if as_json:
            _echo_json({"kind": "offer", "query": name, "offers": [view.offer_dict(o) for o in found]})
        else:
            view.print_tables(*[view.offer_detail(o) for o in found])
        return
    fabric = next((f for f in fabrics.load_fabrics() if f.key == name.strip().lower()), None)
    if fabric is not None:
        if as_json:
            _echo_json({"kind": "fabric", "query": name, "fabric": view.fabric_dict(fabric)})
        else:
            view.print_tables(view.fabric_detail(fabric))
        return
    known = [s.key for s in gpus.load_gpu_specs()] + [o.instance_type for o in all_offers]
    known += [f.key for f in fabrics.load_fabrics()]
    raise UserInputError(
        f"{name!r} is not a GPU, instance type or fabric the catalog knows{did_you_mean(name, known)}",
        "see `gpuwise catalog gpus` and `gpuwise catalog offers`; gpuwise never guesses a GPU (e.g. "
        "'H100' alone could be SXM, PCIe or NVL: use the name nvidia-smi reports)",
    )


@catalog_app.command("import-skypilot")
def import_skypilot_command(
    source: Path = typer.Argument(..., help="A SkyPilot catalog file, e.g. catalogs/v8/aws/vms.csv."),
    output: Path = typer.Option(
        None,
        "-o",
        "--output",
        help="Offers file to write (default: ~/.config/gpuwise/offers/<provider>-skypilot.csv).",
    ),
    provider: str = typer.Option(None, "--provider", help="Cloud name (default: the file's folder name)."),
    all_rows: bool = typer.Option(False, "--all", help="Keep rows without GPUs too."),
    force: bool = typer.Option(False, "--force", help="Replace OUTPUT even if gpuwise did not write it."),
) -> None:
    """Convert a SkyPilot vms.csv into a gpuwise offers file (SkyPilot columns plus ours)."""
    from gpuwise.catalog import offers_io
    from gpuwise.commands import check_output_path

    if output is not None:
        check_output_path(output, "-o")
    imported = offers_io.import_skypilot(source, provider, gpu_only=not all_rows)
    target = output or offers_io.default_import_path(imported[0].provider)
    _write_offers(target, imported, "SkyPilot catalog", force)
    typer.echo(f"wrote {len(imported)} offers to {target}")


@fetch_app.command("tencent")
def fetch_tencent_command(
    region: str = typer.Option(
        ..., "--region", help="Tencent Cloud region, e.g. ap-guangzhou, ap-shanghai, ap-beijing."
    ),
    zones: list[str] = typer.Option(
        None, "--zone", metavar="ZONE", help="Only these zones, e.g. ap-guangzhou-4 (repeatable)."
    ),
    families: list[str] = typer.Option(
        None, "--family", metavar="FAMILY", help="Only these instance families, e.g. GT4 (repeatable)."
    ),
    image_id: str = typer.Option(
        None,
        "--image-id",
        help="An image id (img-...) to ask InquiryPriceRunInstances for types listed without a price.",
    ),
    output: Path = typer.Option(
        None, "-o", "--output", help="Offers file (default: ~/.config/gpuwise/offers/tencent-<region>.csv)."
    ),
    force: bool = typer.Option(False, "--force", help="Replace OUTPUT even if gpuwise did not write it."),
) -> None:
    """Fetch live Tencent Cloud GPU prices and stock (credentials: TENCENTCLOUD_SECRET_ID / _KEY)."""
    from gpuwise import providers
    from gpuwise.catalog import offers, tencent
    from gpuwise.commands import check_output_path

    if output is not None:
        check_output_path(output, "-o")
    fetch = providers.get("tencent").load_fetcher()  # the live source gpuwise/providers/tencent.py names
    found = fetch(region, zones or (), families or (), image_id)
    if not found:
        typer.echo(f"the API listed no GPU instance types for {region} (with these filters); nothing written")
        return
    target = output or offers.user_offers_dir() / f"tencent-{region}.csv"
    _write_offers(target, found, tencent.PRICE_SOURCE, force)
    priced = sum(1 for o in found if o.price is not None)
    typer.echo(f"wrote {len(found)} GPU offers ({priced} with an on-demand price) to {target}")


def register(app: typer.Typer) -> None:
    app.add_typer(catalog_app)
